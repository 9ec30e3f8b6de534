//! The return sweep of `with_acc` (accumulators in the code being
//! differentiated: the adjoint code of an inner `vjp`, whose maps send the
//! adjoints of their free arrays to accumulators, differentiated again by
//! an outer `vjp`, as in a Hessian by `vjp ∘ vjp`; and the source
//! language's `scatter_stream`/`hist_stream`).
//!
//! With `+` accumulators the result of `with_acc` is linear in what the
//! updates add: `R = A + Σᵤ e(iᵤ) vᵤ` over the updates `u` (`e(i)` the cell
//! or row at `i`). So `Ā += R̄`, and every value `vᵤ` gets `R̄[iᵤ]`. A
//! `write` accumulator replaces the cells it writes: `Ā` gets `R̄` with
//! those cells zeroed (the lambda run again on a copy of `R̄`, each of its
//! updates writing zeros, as Futhark does), and every written value
//! `R̄[iᵤ]` (a cell written twice gives both values its adjoint; which
//! write wins is unspecified, as for `scatter`). Instead
//! of a rule for each construct that threads accumulators, the lambda is
//! rewritten into a surrogate without them: each accumulator becomes a
//! running sum of its element type, and `update_acc acc i v` becomes
//! `acc + R̄[i] · v` (zero where `i` is out of bounds, as the update does
//! nothing there). The surrogate's sums have the adjoint `R̄ · vᵤ`'s
//! derivative in every value that reaches the updates, so the `vjp` of the
//! surrogate with seed 1 for each sum (and the adjoints of the lambda's
//! other results) gives the adjoints of the lambda's free variables; it is
//! expanded statically like the operator vjps of the generic rules.

use super::adjoints::{Adjoints, Reverse};
use crate::error;
use crate::util::type_of;
use crate::AdError;
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    AccInput, AccOp, Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, Lambda, Param, PrimType,
    PrimValue, Soac, Stm, Type, Var,
};
use std::collections::HashMap;

impl Reverse<'_> {
    /// The return sweep of `pat = with_acc(inputs, lam)` with `+`
    /// accumulators; `ybar` holds the adjoints of `pat`.
    pub(super) fn with_acc(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        pat: &[Param],
        inputs: &[AccInput],
        lam: &Lambda,
        ybar: &[Option<Atom>],
    ) -> Result<(), AdError> {
        let k = inputs.len();
        if inputs
            .iter()
            .any(|i| !matches!(i.op, AccOp::Add | AccOp::Write))
        {
            return self.unsupported("accumulators with an operator other than +");
        }
        if lam.params.len() != k || pat.len() != lam.ret.len() || ybar.len() != pat.len() {
            return error(self.span, "internal error: malformed with_acc");
        }
        // Ā += R̄ (with the written cells zeroed for `write`).
        let abar = self.written_cells_zeroed(b, pat, inputs, lam, ybar)?;
        for (input, g) in inputs.iter().zip(abar) {
            if let Some(g) = g {
                self.add_shared(b, adj, input.array, g)?;
            }
        }
        // The active free variables of numeric types: only they have
        // adjoints.
        let mut free = Vec::new();
        let mut param_types = Vec::new();
        for v in nabla_ir::free_vars_lambda(lam) {
            let t = type_of(b, self.span, v)?;
            if self.active.contains(&v) && t.elem().is_numeric() {
                free.push(v);
                param_types.push(crate::util::existential(&t));
            }
        }
        if free.is_empty() || ybar.iter().all(Option::is_none) {
            return Ok(());
        }
        // R̄ for each accumulator (zeros where it has no adjoint).
        let mut rbars = Vec::with_capacity(k);
        for (p, g) in pat.iter().zip(ybar) {
            rbars.push(match g {
                Some(Atom::Var(g)) => *g,
                Some(Atom::Const(_)) => {
                    return error(self.span, "internal error: a constant array adjoint")
                }
                None => match crate::util::zero_like(b, self.span, p.var)? {
                    Atom::Var(z) => z,
                    Atom::Const(_) => return error(self.span, "internal error: scalar R̄"),
                },
            });
        }
        let mut ret = Vec::with_capacity(lam.ret.len());
        let mut seeds = Vec::with_capacity(lam.ret.len());
        for (j, t) in lam.ret.iter().enumerate() {
            match t {
                Type::Acc(e, _) => {
                    ret.push(Type::Prim(*e));
                    seeds.push(Atom::Const(nabla_ir::derivatives::constant(*e, 1.0)));
                }
                t => {
                    ret.push(crate::util::existential(t));
                    seeds.push(match ybar[j] {
                        Some(g) => g,
                        None => match t {
                            Type::Prim(e) => zero(*e),
                            _ => crate::util::zero_like(b, self.span, pat[j].var)?,
                        },
                    });
                }
            }
        }
        let primals = free.iter().map(|v| Atom::Var(*v)).collect();
        let adjoints = self.local_vjp(b, &param_types, &ret, primals, seeds, |this, b, args| {
            // The lambda's body with the free variables as the surrogate's
            // parameters and each accumulator parameter a sum from 0.
            let mut map: HashMap<Var, Atom> =
                free.iter().copied().zip(args.iter().copied()).collect();
            let mut start = Vec::with_capacity(k);
            let mut roots = HashMap::new();
            for (p, rbar) in lam.params.iter().zip(&rbars) {
                let e = p.ty.elem();
                let z = b.vars.fresh("acc_sum", Type::Prim(e));
                map.insert(p.var, Atom::Var(z));
                start.push(Stm {
                    pat: vec![Param::new(z, Type::Prim(e))],
                    exp: Exp::Atoms(vec![zero(e)]),
                    span: this.span,
                });
                roots.insert(z, *rbar);
            }
            let mut body = this.fresh_copy(b, &lam.body, map)?;
            this.surrogate(b, &mut body, &mut roots)?;
            start.append(&mut body.stms);
            body.stms = start;
            Ok(body)
        })?;
        for (v, a) in free.iter().zip(adjoints) {
            self.add_shared(b, adj, *v, a)?;
        }
        Ok(())
    }

    /// The adjoints of a `with_acc`'s input arrays: `R̄` for an `add`
    /// accumulator; for a `write` accumulator, `R̄` with the cells its
    /// updates write set to zero (what was there before does not reach the
    /// result): the lambda runs again on a copy of `R̄`, its updates of
    /// these accumulators writing zeros.
    fn written_cells_zeroed(
        &mut self,
        b: &mut FunctionBuilder,
        pat: &[Param],
        inputs: &[AccInput],
        lam: &Lambda,
        ybar: &[Option<Atom>],
    ) -> Result<Vec<Option<Atom>>, AdError> {
        let k = inputs.len();
        let writes = |i: usize| matches!(inputs[i].op, AccOp::Write) && ybar[i].is_some();
        if !(0..k).any(writes) {
            return Ok(ybar[..k].to_vec());
        }
        let mut arrays = Vec::with_capacity(k);
        for (i, g) in ybar[..k].iter().enumerate() {
            let a = match g {
                Some(Atom::Var(g)) => b.let1_existential("adj_copy", Exp::Copy(*g))?,
                Some(Atom::Const(_)) => {
                    return error(self.span, "internal error: a constant array adjoint")
                }
                None => match crate::util::zero_like(b, self.span, pat[i].var)? {
                    Atom::Var(z) => z,
                    Atom::Const(_) => return error(self.span, "internal error: scalar R̄"),
                },
            };
            arrays.push(a);
        }
        let mut map = HashMap::new();
        let mut ours = std::collections::HashSet::new();
        let mut params = Vec::with_capacity(k);
        for p in &lam.params {
            let v = b.vars.fresh("acc", p.ty.clone());
            map.insert(p.var, Atom::Var(v));
            ours.insert(v);
            params.push(Param::new(v, p.ty.clone()));
        }
        let mut body = self.fresh_copy(b, &lam.body, map)?;
        self.zero_updates(b, &mut body, &mut ours)?;
        let ret: Vec<Type> = lam.ret.iter().map(crate::util::existential).collect();
        let masked = b.let_(
            "adj_masked",
            Exp::WithAcc {
                inputs: arrays
                    .iter()
                    .zip(inputs)
                    .map(|(a, i)| AccInput {
                        array: *a,
                        op: i.op.clone(),
                    })
                    .collect(),
                lam: Lambda { params, body, ret },
            },
        )?;
        Ok((0..k)
            .map(|i| {
                if writes(i) {
                    Some(Atom::Var(masked[i]))
                } else {
                    ybar[i]
                }
            })
            .collect())
    }

    /// Makes every update of the accumulators in `ours` (and of those
    /// that come from them through maps, loops, branches and copies) in
    /// `body` write zeros.
    fn zero_updates(
        &self,
        b: &mut FunctionBuilder,
        body: &mut Body,
        ours: &mut std::collections::HashSet<Var>,
    ) -> Result<(), AdError> {
        let is_ours = |ours: &std::collections::HashSet<Var>, a: &Atom| matches!(a, Atom::Var(v) if ours.contains(v));
        let old = std::mem::take(&mut body.stms);
        let mut out = Vec::with_capacity(old.len());
        for mut s in old {
            // Which of the statement's results are accumulators of ours.
            let mut marks: Vec<bool> = vec![false; s.pat.len()];
            match &mut s.exp {
                Exp::UpdateAcc { acc, value, .. } if ours.contains(acc) => {
                    marks = vec![true];
                    *value = match *value {
                        Atom::Const(c) => Atom::Const(PrimValue::zero(c.prim_type())),
                        Atom::Var(v) => {
                            b.begin();
                            let z = crate::util::zero_like(b, self.span, v);
                            out.extend(b.end(vec![]).stms);
                            z?
                        }
                    };
                }
                Exp::Soac(Soac::Map { lam, arrs, .. }) => {
                    // The k-th accumulator result continues the k-th
                    // accumulator input.
                    let mut threaded = Vec::new();
                    for (p, a) in lam.params.iter().zip(arrs.iter()) {
                        if p.ty.is_acc() {
                            threaded.push(ours.contains(a));
                            if ours.contains(a) {
                                ours.insert(p.var);
                            }
                        }
                    }
                    self.zero_updates(b, &mut lam.body, ours)?;
                    let mut next = threaded.into_iter();
                    for (m, p) in marks.iter_mut().zip(&s.pat) {
                        if p.ty.is_acc() {
                            *m = next.next().unwrap_or(false);
                        }
                    }
                }
                Exp::Loop {
                    params,
                    init,
                    body: lb,
                    ..
                } => {
                    for ((p, a), m) in params.iter().zip(init.iter()).zip(marks.iter_mut()) {
                        if is_ours(ours, a) {
                            ours.insert(p.var);
                            *m = true;
                        }
                    }
                    self.zero_updates(b, lb, ours)?;
                }
                Exp::If { then_, else_, .. } => {
                    self.zero_updates(b, then_, ours)?;
                    self.zero_updates(b, else_, ours)?;
                    for (k, m) in marks.iter_mut().enumerate() {
                        *m = [&then_.result, &else_.result]
                            .iter()
                            .any(|r| r.get(k).is_some_and(|a| is_ours(ours, a)));
                    }
                }
                Exp::Atoms(atoms) => {
                    for (m, a) in marks.iter_mut().zip(atoms.iter()) {
                        *m = is_ours(ours, a);
                    }
                }
                Exp::WithAcc { lam, .. } => self.zero_updates(b, &mut lam.body, ours)?,
                _ => {}
            }
            for (p, m) in s.pat.iter().zip(marks) {
                if m && p.ty.is_acc() {
                    ours.insert(p.var);
                }
            }
            out.push(s);
        }
        body.stms = out;
        Ok(())
    }

    /// Rewrites `body` (a fresh copy, its variables its own) so that every
    /// accumulator becomes a running sum of its element type; `roots` maps
    /// each accumulator variable to the adjoint `R̄` of the array it
    /// accumulates into.
    fn surrogate(
        &self,
        b: &mut FunctionBuilder,
        body: &mut Body,
        roots: &mut HashMap<Var, Var>,
    ) -> Result<(), AdError> {
        let span = self.span;
        let root = |roots: &HashMap<Var, Var>, a: &Atom| -> Result<Var, AdError> {
            match a {
                Atom::Var(v) => match roots.get(v) {
                    Some(r) => Ok(*r),
                    None => error(span, "internal error: an accumulator of unknown origin"),
                },
                Atom::Const(_) => error(span, "internal error: a constant accumulator"),
            }
        };
        // A binder of an accumulator becomes a scalar of its element type.
        let scalar = |b: &mut FunctionBuilder, p: &mut Param| {
            if let Type::Acc(e, _) = p.ty {
                p.ty = Type::Prim(e);
                b.vars.set_type(p.var, p.ty.clone());
            }
        };
        let old = std::mem::take(&mut body.stms);
        let mut out = Vec::with_capacity(old.len());
        for mut s in old {
            match &mut s.exp {
                Exp::UpdateAcc {
                    acc,
                    indices,
                    value,
                } => {
                    let rbar = root(roots, &Atom::Var(*acc))?;
                    let [p] = &mut s.pat[..] else {
                        return error(span, "internal error: update_acc binds one value");
                    };
                    scalar(b, p);
                    b.begin();
                    let term = self.update_term(b, rbar, indices, *value, p.ty.elem());
                    let sum = match term {
                        Ok(t) => b
                            .binop(BinOp::Add, Atom::Var(*acc), t)
                            .map_err(|u| self.unknown(u)),
                        Err(e) => Err(e),
                    };
                    let stms = b.end(vec![]).stms;
                    let sum = sum?;
                    out.extend(stms);
                    roots.insert(p.var, rbar);
                    s.exp = Exp::Atoms(vec![sum]);
                }
                Exp::Soac(Soac::Map { w, lam, arrs })
                    if lam.params.iter().any(|p| p.ty.is_acc()) =>
                {
                    // Each element starts its own sums at 0; the map's
                    // accumulator results become arrays of the elements'
                    // sums, added to the sums the map was given.
                    let mut kept = (Vec::new(), Vec::new());
                    let mut start = Vec::new();
                    let mut given = Vec::new();
                    for (p, a) in lam.params.iter().zip(arrs.iter()) {
                        if let Type::Acc(e, _) = p.ty {
                            let mut p = p.clone();
                            scalar(b, &mut p);
                            roots.insert(p.var, root(roots, &Atom::Var(*a))?);
                            start.push(Stm {
                                pat: vec![p],
                                exp: Exp::Atoms(vec![zero(e)]),
                                span,
                            });
                            given.push(*a);
                        } else {
                            kept.0.push(p.clone());
                            kept.1.push(*a);
                        }
                    }
                    self.surrogate(b, &mut lam.body, roots)?;
                    start.append(&mut lam.body.stms);
                    lam.body.stms = start;
                    (lam.params, *arrs) = kept;
                    let width = *w;
                    let mut after = Vec::new();
                    let mut next = given.iter();
                    for (t, p) in lam.ret.iter_mut().zip(s.pat.iter_mut()) {
                        let Type::Acc(e, _) = *t else { continue };
                        let Some(a) = next.next() else {
                            return error(
                                span,
                                "internal error: a map returns more accumulators than it takes",
                            );
                        };
                        *t = Type::Prim(e);
                        let sums = b.vars.fresh("acc_sums", Type::Array(e, vec![Dim::Ext]));
                        let total =
                            std::mem::replace(p, Param::new(sums, Type::Array(e, vec![Dim::Ext])));
                        after.push((total, *a, sums, e));
                    }
                    out.push(s);
                    for (mut total, a, sums, e) in after {
                        scalar(b, &mut total);
                        b.begin();
                        let r = self
                            .sum_rows(b, width, sums, &Type::Prim(e), zero(e))
                            .and_then(|t| {
                                b.binop(BinOp::Add, Atom::Var(a), t)
                                    .map_err(|u| self.unknown(u))
                            });
                        let stms = b.end(vec![]).stms;
                        let r = r?;
                        out.extend(stms);
                        roots.insert(total.var, root(roots, &Atom::Var(a))?);
                        out.push(Stm {
                            pat: vec![total],
                            exp: Exp::Atoms(vec![r]),
                            span,
                        });
                    }
                    continue;
                }
                Exp::Loop {
                    params,
                    init,
                    body: lb,
                    ..
                } => {
                    for (p, a) in params.iter_mut().zip(init.iter()) {
                        if p.ty.is_acc() {
                            scalar(b, p);
                            roots.insert(p.var, root(roots, a)?);
                        }
                    }
                    self.surrogate(b, lb, roots)?;
                    for (p, a) in s.pat.iter_mut().zip(init.iter()) {
                        if p.ty.is_acc() {
                            scalar(b, p);
                            roots.insert(p.var, root(roots, a)?);
                        }
                    }
                }
                Exp::If { then_, else_, .. } => {
                    self.surrogate(b, then_, roots)?;
                    self.surrogate(b, else_, roots)?;
                    for (p, a) in s.pat.iter_mut().zip(&then_.result) {
                        if p.ty.is_acc() {
                            scalar(b, p);
                            roots.insert(p.var, root(roots, a)?);
                        }
                    }
                }
                Exp::Atoms(atoms) => {
                    for (p, a) in s.pat.iter_mut().zip(atoms.iter()) {
                        if p.ty.is_acc() {
                            scalar(b, p);
                            roots.insert(p.var, root(roots, a)?);
                        }
                    }
                }
                _ if s.pat.iter().any(|p| p.ty.is_acc()) => {
                    return self.unsupported("this use of accumulators");
                }
                _ => {}
            }
            out.push(s);
        }
        body.stms = out;
        Ok(())
    }

    /// `R̄[indices] · value` (a product of cells, or the sum of the products
    /// of a row's cells), 0 where an index is out of bounds.
    fn update_term(
        &self,
        b: &mut FunctionBuilder,
        rbar: Var,
        indices: &[Atom],
        value: Atom,
        e: PrimType,
    ) -> Result<Atom, AdError> {
        let unknown = |u| self.unknown(u);
        let zero = zero(e);
        let rt = type_of(b, self.span, rbar)?;
        if indices.is_empty() {
            return self.dot(b, Atom::Var(rbar), value, &rt);
        }
        let mut inside: Option<Atom> = None;
        for (d, i) in indices.iter().enumerate() {
            let n = Atom::Var(b.let1("n", Exp::Size(rbar, d))?);
            let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), *i);
            let hi = b.cmp(CmpOp::Lt, *i, n);
            let both = b.binop(BinOp::LogAnd, lo, hi).map_err(unknown)?;
            inside = Some(match inside {
                None => both,
                Some(x) => b.binop(BinOp::LogAnd, x, both).map_err(unknown)?,
            });
        }
        let inside = inside.expect("at least one index");
        let cell_t = match &rt {
            Type::Array(_, dims) if dims.len() > indices.len() => {
                crate::util::existential(&Type::Array(e, dims[indices.len()..].to_vec()))
            }
            _ => Type::Prim(e),
        };
        b.begin();
        let cell = b.let1(
            "adj_cell",
            Exp::Index(rbar, indices.iter().map(|i| DimIndex::Fix(*i)).collect()),
        )?;
        let term = self.dot(b, Atom::Var(cell), value, &cell_t);
        let then_ = b.end(vec![term.clone().unwrap_or(zero)]);
        term?;
        let else_ = Body {
            stms: vec![],
            result: vec![zero],
        };
        Ok(Atom::Var(b.let1(
            "adj_term",
            Exp::If {
                cond: inside,
                then_,
                else_,
            },
        )?))
    }

    /// `Σ x · y` over all cells of two values of type `t` (their product,
    /// for scalars).
    fn dot(&self, b: &mut FunctionBuilder, x: Atom, y: Atom, t: &Type) -> Result<Atom, AdError> {
        let unknown = |u| self.unknown(u);
        let Some(row) = t.row().or(match t {
            Type::Array(e, _) => Some(Type::Prim(*e)),
            _ => None,
        }) else {
            return b.binop(BinOp::Mul, x, y).map_err(unknown);
        };
        let (Atom::Var(xv), Atom::Var(yv)) = (x, y) else {
            return error(self.span, "internal error: a constant array in an update");
        };
        let e = t.elem();
        let n = Atom::Var(b.let1("n", Exp::Size(xv, 0))?);
        let row2 = row.clone();
        let lam = b.lambda::<AdError>("c", vec![row.clone(), row], |b, ps| {
            Ok(vec![self.dot(
                b,
                Atom::Var(ps[0]),
                Atom::Var(ps[1]),
                &row2,
            )?])
        })?;
        let products = b.let1_existential(
            "products",
            Exp::Soac(Soac::Map {
                w: n,
                lam,
                arrs: vec![xv, yv],
            }),
        )?;
        self.sum_rows(b, n, products, &Type::Prim(e), zero(e))
    }
}

/// The zero of type `e`.
fn zero(e: PrimType) -> Atom {
    Atom::Const(PrimValue::zero(e))
}
