//! `acc-updates`: a dense adjoint array that a `for` loop builds element by
//! element and that is then added whole into an accumulator becomes
//! element updates of the accumulator inside the loop.
//!
//! Reverse-mode AD (Schenck et al., SC22, §5.4) gives a free array of a loop its own
//! adjoint array: zeros before the return sweep, `a[k] += v` in it, and
//! after it one `update_acc acc [] a` (after a `reverse` when the primal
//! read the array reversed). Inside a map over many points that costs,
//! per point, an allocation, a pass of zeros, the loop's read-modify-writes,
//! a reversed copy and a whole-array addition. When the accumulator's
//! operator is `+` the sum is the same if each `v` goes straight into the
//! accumulator (`update_acc acc [k] v`, at `n - 1 - k` for a reversed
//! array), which needs no temporary at all. Accumulator updates out of
//! bounds do nothing, so the rewrite cannot introduce a failure; it removes
//! none either, since the loop's indices stay in the array's bounds only
//! when they were (the original reads `a[k]` are checked, the updates are
//! not — an index out of bounds there failed before and does nothing now,
//! which is why the rewrite requires the index to be provably in bounds).
//!
//! The pattern, all in one body, every intermediate used once:
//!
//! ```text
//! let z = replicate(n, 0)
//! let (…, out, …) = loop (…, a: *[n]t = z, …) for j < m do {
//!   … let e = a[k]  let s = e + v  let a' = a with [k] = s … in (…, a', …)
//! }
//! let r = reverse(out)            -- optional
//! let acc' = update_acc(acc, [], r)
//! ```
//!
//! It applies only in functions whose accumulators all add (every
//! `with_acc` input has the operator `add`, and no parameter is an
//! accumulator), and only when `acc` is bound before the loop.
//!
//! The pass then sinks whole-array updates into maps, branches and
//! `with_acc`s over zeros (`sink_updates.rs`).

use std::collections::HashMap;

use nabla_ir::{
    AccOp, Atom, BinOp, Body, DimIndex, Exp, Function, LoopForm, Param, PrimType, PrimValue, Stm,
    Type, Var,
};

use crate::walk;

/// Rewrites every match of the pattern in `f` (see the module docs), given
/// its analysis. Returns whether anything changed.
pub fn acc_updates_function(f: &mut Function, analysis: &nabla_ir::FunctionAnalysis) -> bool {
    if !all_accumulators_add(f) {
        return false;
    }
    let types = walk::var_types(f, Some(analysis));
    let facts = crate::simplify::SizeFacts::of_function(f, types.clone());
    let mut cx = Cx {
        uses: walk::use_counts(f, Some(analysis)),
        types,
        facts,
        var_names: &mut f.var_names,
        changed: false,
    };
    cx.body(&mut f.body);
    let changed = cx.changed;
    crate::sink_updates::sink_whole_updates(f, (!changed).then_some(analysis)) || changed
}

/// Whether every accumulator of `f` adds: no parameter is an accumulator
/// and every `with_acc` input has the operator `add`.
fn all_accumulators_add(f: &Function) -> bool {
    if f.params.iter().any(|p| matches!(p.ty, Type::Acc(..))) {
        return false;
    }
    let mut ok = true;
    walk::for_each_stm(&f.body, &mut |s| {
        if let Exp::WithAcc { inputs, .. } = &s.exp {
            ok &= inputs.iter().all(|i| matches!(i.op, AccOp::Add));
        }
    });
    ok
}

struct Cx<'a> {
    /// How many times each variable is read. A rewrite changes the counts
    /// only of the variables of its own match, so they stay right for the
    /// others.
    uses: Vec<u32>,
    types: Vec<Option<Type>>,
    facts: crate::simplify::SizeFacts,
    var_names: &'a mut Vec<String>,
    changed: bool,
}

/// One match of the pattern in a body: statement positions and pieces.
struct Match {
    zeros: usize,
    lp: usize,
    /// The loop parameter (and result) that carries the adjoint array.
    slot: usize,
    reverse: Option<usize>,
    update: usize,
    /// The replicate's length (for the reversed index).
    n: Atom,
    acc: Var,
    acc_ty: Type,
    result: Param,
    /// The loop body's `a[k] += v`.
    add: LoopAdd,
}

/// The pieces of `e = a[k]`, `s = e + v`, `a' = a with [k] = s` in a loop
/// body.
struct LoopAdd {
    read: Var,
    k: Atom,
    sum: Var,
    value: Atom,
}

impl Cx<'_> {
    fn uses(&self, v: Var) -> u32 {
        self.uses.get(v.0 as usize).copied().unwrap_or(0)
    }

    fn used_once(&self, v: Var) -> bool {
        self.uses(v) == 1
    }

    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            for s in &mut b.stms {
                for nb in s.exp.nested_bodies_mut() {
                    self.body(nb);
                }
            }
            while let Some(m) = self.find(b) {
                self.rewrite(b, m);
                self.changed = true;
            }
        })
    }

    /// The first match of the pattern among `b`'s statements.
    fn find(&self, b: &Body) -> Option<Match> {
        let def: HashMap<Var, usize> = b
            .stms
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.pat.iter().map(move |p| (p.var, i)))
            .collect();
        for (update, s) in b.stms.iter().enumerate() {
            let Exp::UpdateAcc {
                acc,
                indices,
                value: Atom::Var(src),
            } = &s.exp
            else {
                continue;
            };
            if !indices.is_empty() || s.pat.len() != 1 || !self.used_once(*src) {
                continue;
            }
            let Some(&src_at) = def.get(src) else {
                continue;
            };
            let (out, reverse) = match &b.stms[src_at].exp {
                Exp::Reverse(out) if self.used_once(*out) => (*out, Some(src_at)),
                Exp::Loop { .. } => (*src, None),
                _ => continue,
            };
            let Some(&lp) = def.get(&out) else {
                continue;
            };
            // The accumulator must exist before the loop.
            if def.get(acc).is_some_and(|&at| at >= lp) {
                continue;
            }
            let Exp::Loop {
                params,
                init,
                form: LoopForm::For { .. },
                body,
            } = &b.stms[lp].exp
            else {
                continue;
            };
            let Some(slot) = b.stms[lp].pat.iter().position(|p| p.var == out) else {
                continue;
            };
            let Atom::Var(z) = init[slot] else {
                continue;
            };
            let Some(&zeros) = def.get(&z) else {
                continue;
            };
            let n = match &b.stms[zeros].exp {
                Exp::Replicate(n, Atom::Const(c)) if walk::is_zero(c) && self.used_once(z) => *n,
                _ => continue,
            };
            let Some(Some(acc_ty @ Type::Acc(_, acc_dims))) = self.types.get(acc.0 as usize) else {
                continue;
            };
            if acc_dims.len() != 1 {
                continue;
            }
            let Some(add) = self.loop_adds_into(&params[slot], body, slot) else {
                continue;
            };
            return Some(Match {
                zeros,
                lp,
                slot,
                reverse,
                update,
                n,
                acc: *acc,
                acc_ty: acc_ty.clone(),
                result: s.pat[0].clone(),
                add,
            });
        }
        None
    }

    /// The `a[k] += v` of a loop body, if loop parameter `a` (result
    /// `slot`) is used only as `e = a[k]`, `s = e + v` (or `v + e`),
    /// `a' = a with [k] = s`, with `a'` the body's result `slot`, `e` and
    /// `s` used once, and `k` provably in `a`'s bounds.
    fn loop_adds_into(&self, a: &Param, body: &Body, slot: usize) -> Option<LoopAdd> {
        if self.uses(a.var) != 2 {
            return None;
        }
        let (read, idx) = body.stms.iter().find_map(|s| match (&s.exp, &s.pat[..]) {
            (Exp::Index(x, idx), [e]) if *x == a.var => Some((e.var, idx.clone())),
            _ => None,
        })?;
        let [DimIndex::Fix(k)] = idx[..] else {
            return None;
        };
        if !self.used_once(read) || !self.facts.index_in_bounds(a.var, &idx) {
            return None;
        }
        let (sum, value) = body.stms.iter().find_map(|s| match (&s.exp, &s.pat[..]) {
            (Exp::BinOp(BinOp::Add, x, y), [p]) if *x == Atom::Var(read) => Some((p.var, *y)),
            (Exp::BinOp(BinOp::Add, x, y), [p]) if *y == Atom::Var(read) => Some((p.var, *x)),
            _ => None,
        })?;
        if !self.used_once(sum) {
            return None;
        }
        let updated = body.stms.iter().any(|s| match (&s.exp, &s.pat[..]) {
            (Exp::Update(x, idx2, Atom::Var(v)), [p]) => {
                *x == a.var
                    && *idx2 == idx
                    && *v == sum
                    && body.result.get(slot) == Some(&Atom::Var(p.var))
                    && self.used_once(p.var)
            }
            _ => false,
        });
        updated.then_some(LoopAdd {
            read,
            k,
            sum,
            value,
        })
    }

    fn rewrite(&mut self, b: &mut Body, m: Match) {
        // `n - 1`, before the loop, for a reversed array.
        let last = m.reverse.map(|_| {
            let v = nabla_ir::rewrite::fresh_var(self.var_names, "last");
            let span = b.stms[m.lp].span;
            (
                v,
                Stm {
                    pat: vec![Param::new(v, Type::Prim(PrimType::I64))],
                    exp: Exp::BinOp(BinOp::Sub, m.n, Atom::Const(PrimValue::I64(1))),
                    span,
                },
            )
        });
        let Exp::Loop {
            params, init, body, ..
        } = &mut b.stms[m.lp].exp
        else {
            return;
        };
        let a = params[m.slot].var;
        params[m.slot] = Param::new(a, m.acc_ty.clone());
        init[m.slot] = Atom::Var(m.acc);
        // Inside: drop the read and the sum, update the accumulator.
        let LoopAdd {
            read,
            k,
            sum,
            value,
        } = m.add;
        let mut stms = Vec::with_capacity(body.stms.len() + 1);
        for mut s in std::mem::take(&mut body.stms) {
            if s.pat.len() == 1 && (s.pat[0].var == read || s.pat[0].var == sum) {
                continue;
            }
            if matches!(&s.exp, Exp::Update(x, _, _) if *x == a) {
                let index = match &last {
                    Some((last, _)) => {
                        let r = nabla_ir::rewrite::fresh_var(self.var_names, "index");
                        stms.push(Stm {
                            pat: vec![Param::new(r, Type::Prim(PrimType::I64))],
                            exp: Exp::BinOp(BinOp::Sub, Atom::Var(*last), k),
                            span: s.span,
                        });
                        Atom::Var(r)
                    }
                    None => k,
                };
                s.pat[0].ty = m.acc_ty.clone();
                s.exp = Exp::UpdateAcc {
                    acc: a,
                    indices: vec![index],
                    value,
                };
            }
            stms.push(s);
        }
        body.stms = stms;
        // The loop now yields the updated accumulator itself.
        b.stms[m.lp].pat[m.slot] = m.result;
        // Drop the whole-array update, the reverse and the zeros (in
        // decreasing positions), and put `n - 1` before the loop.
        let mut drop = vec![m.update, m.zeros];
        drop.extend(m.reverse);
        drop.sort_unstable_by(|x, y| y.cmp(x));
        for i in drop {
            b.stms.remove(i);
        }
        if let Some((_, stm)) = last {
            // The zeros came before the loop, so the loop moved up by one.
            b.stms.insert(m.lp - 1, stm);
        }
    }
}
