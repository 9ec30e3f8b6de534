//! Part of `acc-updates`: a whole-array accumulator update sinks into the
//! construct that produced the array, so the array is never built.
//!
//! Reverse-mode AD (Schenck et al., SC22, §5.4) returns the adjoint of a `map`'s input
//! as a result of the adjoint map, and the adjoint of a lambda's free array
//! through a `with_acc` over fresh zeros. When such an array is then added
//! whole into an enclosing accumulator (`update_acc acc I x`, `I` a prefix
//! of indices, often empty) every element is written twice: once into the
//! array (allocated, zeroed) and once into the accumulator. With `+` as the
//! accumulator's operator the sum is the same if the producer adds straight
//! into the accumulator:
//!
//! - **map**: `xs = map f …` then `update_acc acc I xs` becomes a map that
//!   also threads `acc` and, in iteration `i`, does `update_acc acc (I ++
//!   [i]) (f …)`;
//! - **if**: `x = if c then a else b` then `update_acc acc I x` updates in
//!   each branch (nothing in a branch whose value is zeros);
//! - **with_acc over zeros**: `x = with_acc [zeros] (\a -> …)` then
//!   `update_acc acc I x` runs the lambda on `acc` itself, every update
//!   of `a` (and of the accumulators threaded from it) prefixed by `I`.
//!
//! Accumulator updates out of bounds do nothing, and the prefix indices
//! stay the ones the original update used, so no rewrite adds or removes a
//! failure. Each rewrite needs `x` used only by the update, and `acc` and
//! `I` bound before the producer. Like the rest of the pass, this runs only
//! in functions whose accumulators all add.

use std::collections::HashSet;

use nabla_ir::rewrite::fresh_var;
use nabla_ir::{
    AccOp, Atom, Body, Exp, Function, Lambda, Param, PrimType, PrimValue, Soac, Stm, Type, Var,
};

use crate::walk;
use crate::walk::is_zero;

/// Applies the rewrites of the module docs until none applies; returns
/// whether anything changed. Expects every accumulator of `f` to add.
/// `analysis`: the function's analysis when `f` is as analysed.
pub(crate) fn sink_whole_updates(
    f: &mut Function,
    analysis: Option<&nabla_ir::FunctionAnalysis>,
) -> bool {
    let mut changed = false;
    // Each round rewrites one match with fresh use counts (the received
    // analysis's in the first); a rewrite removes an array or a statement,
    // so the rounds are few.
    let mut received = analysis;
    for _ in 0..10_000 {
        let uses = walk::use_counts(f, received);
        let types = walk::var_types(f, received);
        received = None;
        let mut cx = Cx {
            uses,
            types,
            var_names: &mut f.var_names,
            done: false,
        };
        cx.body(&mut f.body);
        if !cx.done {
            break;
        }
        changed = true;
    }
    changed
}

struct Cx<'a> {
    uses: Vec<u32>,
    types: Vec<Option<Type>>,
    var_names: &'a mut Vec<String>,
    /// Set by the first rewrite; the walk then stops.
    done: bool,
}

/// A whole-array update `let u = update_acc acc I x` and where `x` comes from.
struct Sink {
    update: usize,
    producer: usize,
    /// The position of `x` in the producer's pattern.
    slot: usize,
    acc: Var,
    acc_ty: Type,
    indices: Vec<Atom>,
    result: Param,
}

impl Cx<'_> {
    fn used_once(&self, v: Var) -> bool {
        self.uses.get(v.0 as usize) == Some(&1)
    }

    fn ty(&self, v: Var) -> Option<&Type> {
        self.types.get(v.0 as usize).and_then(Option::as_ref)
    }

    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            for s in &mut b.stms {
                for nb in s.exp.nested_bodies_mut() {
                    self.body(nb);
                    if self.done {
                        return;
                    }
                }
            }
            for update in 0..b.stms.len() {
                if let Some(sink) = self.sink_at(b, update) {
                    if self.rewrite(b, sink) {
                        self.done = true;
                        return;
                    }
                }
            }
        })
    }

    /// The match whose update is statement `update` of `b`, if any.
    fn sink_at(&self, b: &Body, update: usize) -> Option<Sink> {
        let s = &b.stms[update];
        let Exp::UpdateAcc {
            acc,
            indices,
            value: Atom::Var(x),
        } = &s.exp
        else {
            return None;
        };
        if s.pat.len() != 1 || !self.used_once(*x) {
            return None;
        }
        let producer = b.stms[..update]
            .iter()
            .position(|t| t.pat.iter().any(|p| p.var == *x))?;
        let slot = b.stms[producer].pat.iter().position(|p| p.var == *x)?;
        // `acc` and the indices must exist before the producer.
        let late: HashSet<Var> = b.stms[producer..update]
            .iter()
            .flat_map(|t| t.pat.iter().map(|p| p.var))
            .collect();
        if late.contains(acc)
            || indices
                .iter()
                .any(|a| matches!(a, Atom::Var(v) if late.contains(v)))
        {
            return None;
        }
        let acc_ty = self.ty(*acc)?.clone();
        let x_ty = self.ty(*x)?;
        match &acc_ty {
            Type::Acc(p, dims)
                if *p == x_ty.elem() && dims.len() == indices.len() + x_ty.rank() => {}
            _ => return None,
        }
        Some(Sink {
            update,
            producer,
            slot,
            acc: *acc,
            acc_ty,
            indices: indices.clone(),
            result: s.pat[0].clone(),
        })
    }

    /// Rewrites `m` if its producer is one the module handles.
    fn rewrite(&mut self, b: &mut Body, m: Sink) -> bool {
        // The update goes first (it follows the producer, so the producer
        // keeps its position); the `sink_into_*` fail only before they change
        // anything, and then it comes back.
        let update = b.stms.remove(m.update);
        let ok = match &b.stms[m.producer].exp {
            Exp::Soac(Soac::Map { .. }) => self.sink_into_map(b, &m),
            Exp::If { .. } => self.sink_into_if(b, &m),
            Exp::WithAcc { .. } => self.sink_into_with_acc(b, &m),
            _ => false,
        };
        if !ok {
            b.stms.insert(m.update, update);
        }
        ok
    }

    /// `xs = map w f arrs`: the map threads `acc` and updates row `i`.
    fn sink_into_map(&mut self, b: &mut Body, m: &Sink) -> bool {
        let span = b.stms[m.producer].span;
        // The `iota n 0 1` bound before the map, with their lengths.
        let b_iotas: Vec<(Var, Atom)> = b.stms[..m.producer]
            .iter()
            .filter_map(|s| match (&s.exp, &s.pat[..]) {
                (
                    Exp::Iota {
                        n,
                        start: Atom::Const(PrimValue::I64(0)),
                        step: Atom::Const(PrimValue::I64(1)),
                        ty: PrimType::I64,
                    },
                    [p],
                ) => Some((p.var, *n)),
                _ => None,
            })
            .collect();
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut b.stms[m.producer].exp else {
            return false;
        };
        if lam.ret.get(m.slot).is_none_or(Type::is_acc) {
            return false;
        }
        let w = *w;
        // A row index the map already reads (an earlier rewrite's `iota`).
        let existing = arrs
            .iter()
            .position(|v| b_iotas.iter().any(|(x, n)| x == v && *n == w));
        let iota = fresh_var(self.var_names, "iota");
        let i = match existing {
            Some(k) => lam.params[k].var,
            None => fresh_var(self.var_names, "row"),
        };
        let a = fresh_var(self.var_names, "acc");
        let a2 = fresh_var(self.var_names, "acc");
        let mut indices = m.indices.clone();
        indices.push(Atom::Var(i));
        // The accumulator goes last among the inputs and the results (the
        // k-th accumulator result is the k-th accumulator input's).
        if existing.is_none() {
            arrs.push(iota);
            lam.params.push(Param::new(i, Type::Prim(PrimType::I64)));
        }
        arrs.push(m.acc);
        lam.params.push(Param::new(a, m.acc_ty.clone()));
        let value = lam.body.result.remove(m.slot);
        lam.ret.remove(m.slot);
        lam.body.stms.push(Stm {
            pat: vec![Param::new(a2, m.acc_ty.clone())],
            exp: Exp::UpdateAcc {
                acc: a,
                indices,
                value,
            },
            span,
        });
        lam.body.result.push(Atom::Var(a2));
        lam.ret.push(m.acc_ty.clone());
        let pat = &mut b.stms[m.producer].pat;
        pat.remove(m.slot);
        pat.push(m.result.clone());
        if existing.is_some() {
            return true;
        }
        b.stms.insert(
            m.producer,
            Stm {
                pat: vec![Param::new(
                    iota,
                    Type::Array(PrimType::I64, vec![nabla_ir::rewrite::dim_of_atom(w)]),
                )],
                exp: Exp::Iota {
                    n: w,
                    start: Atom::Const(PrimValue::I64(0)),
                    step: Atom::Const(PrimValue::I64(1)),
                    ty: PrimType::I64,
                },
                span,
            },
        );
        true
    }

    /// `x = if c then … else …`: each branch updates `acc` with its value
    /// (a branch whose value is a zeros array it made just passes `acc`).
    fn sink_into_if(&mut self, b: &mut Body, m: &Sink) -> bool {
        let span = b.stms[m.producer].span;
        let Exp::If { then_, else_, .. } = &mut b.stms[m.producer].exp else {
            return false;
        };
        for branch in [then_, else_] {
            let value = branch.result[m.slot];
            let zeros = match value {
                Atom::Var(v) if self.used_once(v) => zeros_at(branch, v),
                Atom::Const(c) if is_zero(&c) => Some(Vec::new()),
                _ => None,
            };
            match zeros {
                Some(drop) => {
                    for k in drop.into_iter().rev() {
                        branch.stms.remove(k);
                    }
                    branch.result[m.slot] = Atom::Var(m.acc);
                }
                None => {
                    let a2 = fresh_var(self.var_names, "acc");
                    branch.stms.push(Stm {
                        pat: vec![Param::new(a2, m.acc_ty.clone())],
                        exp: Exp::UpdateAcc {
                            acc: m.acc,
                            indices: m.indices.clone(),
                            value,
                        },
                        span,
                    });
                    branch.result[m.slot] = Atom::Var(a2);
                }
            }
        }
        b.stms[m.producer].pat[m.slot] = m.result.clone();
        true
    }

    /// `x = with_acc [zeros, …] (\a … -> …)`: the lambda runs on `acc`
    /// (bound to `a`), its updates prefixed by the indices; its final
    /// accumulator becomes an extra result of the `with_acc`.
    fn sink_into_with_acc(&mut self, b: &mut Body, m: &Sink) -> bool {
        let span = b.stms[m.producer].span;
        let Exp::WithAcc { inputs, lam } = &b.stms[m.producer].exp else {
            return false;
        };
        if m.slot >= inputs.len() || !matches!(inputs[m.slot].op, AccOp::Add) {
            return false;
        }
        let z = inputs[m.slot].array;
        if !self.used_once(z) {
            return false;
        }
        let Some(drop) = zeros_at(b, z) else {
            return false;
        };
        let a = lam.params[m.slot].var;
        let mut new_lam = lam.clone();
        let mut derived = HashSet::from([a]);
        if !reroute(&mut new_lam.body, &mut derived, &m.indices, &m.acc_ty) {
            return false;
        }
        match new_lam.body.result.get(m.slot) {
            Some(Atom::Var(v)) if derived.contains(v) => {}
            _ => return false,
        }
        new_lam.params.remove(m.slot);
        let last = new_lam.body.result.remove(m.slot);
        new_lam.body.result.push(last);
        new_lam.ret.remove(m.slot);
        new_lam.ret.push(m.acc_ty.clone());
        let stm = &mut b.stms[m.producer];
        let Exp::WithAcc { inputs, lam } = &mut stm.exp else {
            return false;
        };
        inputs.remove(m.slot);
        *lam = new_lam;
        stm.pat.remove(m.slot);
        stm.pat.push(m.result.clone());
        let nothing_left = inputs.is_empty();
        // `a` now names `acc` itself, bound just before.
        b.stms.insert(
            m.producer,
            Stm {
                pat: vec![Param::new(a, m.acc_ty.clone())],
                exp: Exp::Atoms(vec![Atom::Var(m.acc)]),
                span,
            },
        );
        if nothing_left {
            // A `with_acc` of nothing is its lambda's body.
            let stm = &mut b.stms[m.producer + 1];
            let pat = std::mem::take(&mut stm.pat);
            let Exp::WithAcc { lam, .. } = &mut stm.exp else {
                return false;
            };
            let body = std::mem::take(&mut lam.body);
            let bind = Stm {
                pat,
                exp: Exp::Atoms(body.result),
                span,
            };
            let at = m.producer + 1;
            b.stms.splice(at..=at, body.stms.into_iter().chain([bind]));
        }
        // The zeros came before the producer, which moved down by one.
        for k in drop.into_iter().rev() {
            b.stms.remove(k);
        }
        true
    }
}

/// If `v` is a zeros array made in `b` (`replicate n 0.0`, or a replicate
/// of such a row used only there), the positions of the statements that
/// make it, in increasing order.
fn zeros_at(b: &Body, v: Var) -> Option<Vec<usize>> {
    let at = b
        .stms
        .iter()
        .position(|s| s.pat.len() == 1 && s.pat[0].var == v)?;
    match &b.stms[at].exp {
        Exp::Replicate(_, Atom::Const(c)) if is_zero(c) => Some(vec![at]),
        Exp::Replicate(_, Atom::Var(row)) => {
            let uses = b
                .stms
                .iter()
                .filter(|s| nabla_ir::free_vars_stm(s).contains(row))
                .count();
            let in_result = b.result.contains(&Atom::Var(*row));
            if uses != 1 || in_result {
                return None;
            }
            let mut inner = zeros_at(b, *row)?;
            inner.push(at);
            inner.sort_unstable();
            Some(inner)
        }
        _ => None,
    }
}

/// Makes the accumulators of `derived` (and every accumulator threaded
/// from them in `b`) the outer accumulator of type `ty`: each of their
/// updates gets `prefix` in front of its indices, and their types become
/// `ty`. `false` (with `b` partly rewritten: callers work on a copy) when
/// one is used in a way this does not follow.
fn reroute(b: &mut Body, derived: &mut HashSet<Var>, prefix: &[Atom], ty: &Type) -> bool {
    for s in &mut b.stms {
        let free = nabla_ir::free_vars_stm(s);
        if !free.iter().any(|v| derived.contains(v)) {
            continue;
        }
        match &mut s.exp {
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } if derived.contains(acc) && value.as_var().is_none_or(|v| !derived.contains(&v)) => {
                let mut full = prefix.to_vec();
                full.append(indices);
                *indices = full;
                s.pat[0].ty = ty.clone();
                derived.insert(s.pat[0].var);
            }
            Exp::Atoms(xs) => {
                for (p, x) in s.pat.iter_mut().zip(xs.iter()) {
                    if matches!(x, Atom::Var(v) if derived.contains(v)) {
                        p.ty = ty.clone();
                        derived.insert(p.var);
                    }
                }
            }
            Exp::Soac(Soac::Map { lam, arrs, .. }) => {
                if !reroute_map(lam, arrs, &mut s.pat, derived, prefix, ty) {
                    return false;
                }
            }
            Exp::If { then_, else_, .. } => {
                if !reroute(then_, derived, prefix, ty) || !reroute(else_, derived, prefix, ty) {
                    return false;
                }
                for (k, p) in s.pat.iter_mut().enumerate() {
                    let d = |r: &Body| matches!(r.result[k], Atom::Var(v) if derived.contains(&v));
                    match (d(then_), d(else_)) {
                        (true, true) => {
                            p.ty = ty.clone();
                            derived.insert(p.var);
                        }
                        (false, false) => {}
                        _ => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// [`reroute`] through a map that threads some of the accumulators.
fn reroute_map(
    lam: &mut Lambda,
    arrs: &[Var],
    pat: &mut [Param],
    derived: &mut HashSet<Var>,
    prefix: &[Atom],
    ty: &Type,
) -> bool {
    // Accumulator inputs and results pair up in order.
    let mut acc_inputs = Vec::new();
    for (k, v) in arrs.iter().enumerate() {
        if lam.params[k].ty.is_acc() {
            acc_inputs.push(derived.contains(v));
        }
        if derived.contains(v) {
            if !lam.params[k].ty.is_acc() {
                return false;
            }
            lam.params[k].ty = ty.clone();
            derived.insert(lam.params[k].var);
        }
    }
    if !reroute(&mut lam.body, derived, prefix, ty) {
        return false;
    }
    let mut q = 0;
    for (k, t) in lam.ret.iter_mut().enumerate() {
        if !t.is_acc() {
            continue;
        }
        let Some(&is_derived) = acc_inputs.get(q) else {
            return false;
        };
        q += 1;
        if is_derived {
            *t = ty.clone();
            pat[k].ty = ty.clone();
            derived.insert(pat[k].var);
        }
    }
    true
}
