//! Reverse mode by redundant execution (Schenck, Rønning, Henriksen and
//! Oancea, "AD for an Array Language with Nested Parallelism", SC22, §4): a
//! forward sweep that runs the primal code, then a return sweep that visits
//! the statements backwards and accumulates adjoints. Inside nested scopes
//! (a branch, a loop body, a map's lambda) the primal code of the scope is
//! run again in the return sweep, on fresh variables, instead of being
//! stored; only the values carried by `for` loops are checkpointed (one
//! array per loop parameter, written at each iteration's entry, §4.2).
//!
//! Adjoints are kept in a map from primal variables to atoms ([`Adjoints`]);
//! a variable without an entry has a zero adjoint, so a zero adjoint is
//! never multiplied by a partial derivative (an infinite or NaN partial
//! cannot turn it into NaN). Adjoint arrays that this code created and that
//! nothing else refers to are updated in place (an index's adjoint is one
//! element update, not a one-hot array).
//!
//! This file holds the driver ([`expand_vjp`], the two sweeps) and the
//! dispatch of the return sweep over the constructs; the rules are in one
//! file per construct:
//!
//! - `scalar.rs`: scalar operations, indexing, in-place updates and the
//!   other array operations without a lambda;
//! - `map.rs`: `map` (free variables through accumulators);
//! - `reduce.rs`, `scan.rs`, `reduce_by_index.rs`, `scatter.rs`: the SOACs'
//!   rules, generic and special cases;
//! - `loops.rs`: `for` and `while` loops (checkpoints);
//! - `branch.rs`: `if`;
//! - `custom.rs`: user-given rules (`with_vjp`);
//! - `accumulators.rs`: accumulators in the differentiated code (an inner
//!   `vjp`'s adjoint code, under an outer `vjp`), differentiated through a
//!   surrogate without them;
//! - `histograms.rs`: histograms lowered to the forms the rules take;
//! - shared by the rules: `adjoints.rs` (the [`Reverse`] state and the
//!   adjoint bookkeeping), `copier.rs` (copying code with fresh
//!   variables, inlining calls), `operators.rs` (recognising and applying
//!   the operators of reductions, scans and histograms).
//!
//! Constructs without a rule here yet (a free array of a map's lambda
//! sliced in several dimensions, or read whole where the map also reads
//! arrays bound in an enclosing lambda; accumulators with an operator other
//! than `+`) make the `vjp` fall back to the dynamic AD
//! ([`crate::AdError::unsupported`]).

mod accumulators;
mod adjoints;
mod branch;
mod copier;
mod custom;
mod histograms;
mod loops;
mod map;
mod operators;
mod reduce;
mod reduce_by_index;
mod scalar;
mod scan;
mod scatter;

pub use adjoints::Adjoints;

use crate::util::{shape_of, type_of, zero_like, zero_of};
use crate::{error, Ad, AdError};
use adjoints::Reverse;
use loops::{Checkpoints, LoopCheckpoints};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::derivatives::ScalarOp;
use nabla_ir::{
    Atom, BinOp, Dim, DimIndex, Exp, Lambda, LoopForm, Param, PrimType, PrimValue, Soac, Span, Stm,
    Type, UnOp, Var,
};
use operators::{is_min_or_max, is_plus, single_binop, vectorised_operator};
use scalar::Slice;
use scan::ScanAdjoint;
use std::collections::{HashMap, HashSet};

/// `let pat = vjp lam primals adjoints`: the forward sweep and the return
/// sweep of the lambda's body, inlined; `pat` binds the primal results, then
/// one adjoint per parameter. Returns the first variable bound by each
/// `with_vjp` in the rules it emitted (the caller inlines the other
/// `with_vjp`s, which are primal code now).
pub(crate) fn expand_vjp(
    ad: &mut Ad,
    b: &mut FunctionBuilder,
    pat: &[Param],
    lam: Lambda,
    primals: Vec<Atom>,
    adjoints: Vec<Atom>,
    span: Span,
) -> Result<HashSet<Var>, AdError> {
    let k = lam.body.result.len();
    let m = lam.params.len();
    if pat.len() != k + m || primals.len() != m || adjoints.len() != k {
        return error(span, "internal error: malformed vjp (arities differ)");
    }
    b.push(Stm {
        pat: lam
            .params
            .iter()
            .map(|p| Param::new(p.var, p.ty.clone()))
            .collect(),
        exp: Exp::Atoms(primals),
        span,
    });
    let mut rev = Reverse {
        ad,
        span,
        active: lam.params.iter().map(|p| p.var).collect(),
        redirect: HashMap::new(),
        in_rules: HashSet::new(),
        one_hot: HashMap::new(),
        precomputed: HashMap::new(),
    };
    let body = rev.inline_calls(b, lam.body)?;
    let body = rev.lower_histograms(b, body)?;
    let checkpoints = rev.forward_sweep(b, &body.stms)?;
    let mut adj = Adjoints::default();
    for (r, a) in body.result.iter().zip(&adjoints) {
        if let Atom::Var(r) = r {
            rev.add_shared(b, &mut adj, *r, *a)?;
        }
    }
    rev.return_sweep(b, &body.stms, &checkpoints, &mut adj)?;
    let mut results = body.result.clone();
    for p in &lam.params {
        let a = rev.materialize(b, &adj, p.var)?;
        results.push(a);
    }
    b.set_span(span);
    b.push(Stm {
        pat: pat.to_vec(),
        exp: Exp::Atoms(results),
        span,
    });
    Ok(rev.in_rules)
}

impl Reverse<'_> {
    /// Emits `stms` (the forward sweep); `for` loops also checkpoint their
    /// parameters at each iteration's entry.
    pub(super) fn forward_sweep(
        &mut self,
        b: &mut FunctionBuilder,
        stms: &[Stm],
    ) -> Result<Checkpoints, AdError> {
        let mut out = Vec::with_capacity(stms.len());
        for stm in stms {
            self.span = stm.span;
            b.set_span(stm.span);
            if nabla_ir::free_vars_stm(stm)
                .iter()
                .any(|v| self.active.contains(v))
            {
                self.active.extend(stm.pat.iter().map(|p| p.var));
            }
            match &stm.exp {
                Exp::Loop {
                    params,
                    init,
                    form: LoopForm::For { i, bound },
                    body,
                } => {
                    let restore =
                        self.checkpointing_loop(b, stm, params, init, *i, *bound, body)?;
                    out.push(Some(LoopCheckpoints {
                        restore,
                        bound: *bound,
                        i: *i,
                    }));
                }
                Exp::Loop {
                    params,
                    init,
                    form: LoopForm::While { cond },
                    body,
                } if self.is_active_stm(stm) => {
                    // Seed 003 §6.2: count the iterations first, then run
                    // the loop as a `for` loop of that many iterations.
                    let count = self.count_iterations(b, params, init, cond, body)?;
                    let i = b.vars.fresh("i", Type::Prim(PrimType::I64));
                    let restore = self.checkpointing_loop(b, stm, params, init, i, count, body)?;
                    out.push(Some(LoopCheckpoints {
                        restore,
                        bound: count,
                        i,
                    }));
                }
                Exp::Soac(soac @ (Soac::Hist { dest, .. } | Soac::Scatter { dest, .. })) => {
                    // As for updates: the return sweep may read the old
                    // destinations, so the primal writes into copies.
                    let mut soac = soac.clone();
                    let mut copies = Vec::with_capacity(dest.len());
                    for d in dest {
                        let t = crate::util::existential(&type_of(b, self.span, *d)?);
                        copies.push(b.bind1("fwd_copy", t, Exp::Copy(*d)));
                    }
                    match &mut soac {
                        Soac::Hist { dest, .. } | Soac::Scatter { dest, .. } => *dest = copies,
                        _ => {}
                    }
                    b.push(Stm {
                        pat: stm.pat.clone(),
                        exp: Exp::Soac(soac),
                        span: stm.span,
                    });
                    out.push(None);
                }
                Exp::Update(arr, idx, v) => {
                    // The return sweep still reads the old array (and views
                    // of it): update a copy instead of consuming it.
                    let t = crate::util::existential(&type_of(b, self.span, *arr)?);
                    let c = b.bind1("fwd_copy", t, Exp::Copy(*arr));
                    b.push(Stm {
                        pat: stm.pat.clone(),
                        exp: Exp::Update(c, idx.clone(), *v),
                        span: stm.span,
                    });
                    out.push(None);
                }
                _ => {
                    let mut stm = stm.clone();
                    if let Some(exp) = stm.pat.first().and_then(|p| self.precomputed.get(&p.var)) {
                        stm.exp = exp.clone();
                    }
                    b.push(stm);
                    out.push(None);
                }
            }
        }
        Ok(out)
    }

    /// Visits `stms` backwards, accumulating adjoints.
    pub(super) fn return_sweep(
        &mut self,
        b: &mut FunctionBuilder,
        stms: &[Stm],
        checkpoints: &Checkpoints,
        adj: &mut Adjoints,
    ) -> Result<(), AdError> {
        for (k, stm) in stms.iter().enumerate().rev() {
            self.span = stm.span;
            b.set_span(stm.span);
            let ck = checkpoints.get(k).and_then(|c| c.as_ref());
            stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.stm(b, stm, ck, adj))?;
        }
        Ok(())
    }

    /// The adjoint contributions of one statement.
    fn stm(
        &mut self,
        b: &mut FunctionBuilder,
        stm: &Stm,
        checkpoints: Option<&LoopCheckpoints>,
        adj: &mut Adjoints,
    ) -> Result<(), AdError> {
        let pat = &stm.pat;
        // The adjoints of the statement's results are complete now (every
        // use is later in the code) and are not needed after it.
        let ybar: Vec<Option<Atom>> = pat.iter().map(|p| adj.map.remove(&p.var)).collect();
        if ybar.iter().all(|y| y.is_none()) {
            return Ok(());
        }
        let g = ybar[0];
        match &stm.exp {
            Exp::Atoms(xs) => {
                for (x, y) in xs.iter().zip(&ybar) {
                    if let (Atom::Var(x), Some(y)) = (x, y) {
                        self.add_shared(b, adj, *x, *y)?;
                    }
                }
            }
            Exp::BinOp(op, x, y) => self.scalar(b, adj, g, pat, ScalarOp::Bin(*op), &[*x, *y])?,
            Exp::UnOp(op, x) => self.scalar(b, adj, g, pat, ScalarOp::Un(*op), &[*x])?,
            Exp::TernOp(op, x, y, z) => {
                self.scalar(b, adj, g, pat, ScalarOp::Tern(*op), &[*x, *y, *z])?
            }
            Exp::Conv(op, x) => self.scalar(b, adj, g, pat, ScalarOp::Conv(*op), &[*x])?,
            Exp::CmpOp(..)
            | Exp::Iota { .. }
            | Exp::Size(..)
            | Exp::Assert(..)
            | Exp::AssertEqSizes(..) => {}
            Exp::Index(v, idx) if self.redirect.contains_key(v) => {
                let Some(g) = g else { return Ok(()) };
                if !self.active.contains(v) {
                    return Ok(());
                }
                let slices = idx
                    .iter()
                    .filter(|d| matches!(d, DimIndex::Slice { .. }))
                    .count();
                if slices > 1 {
                    return self.unsupported("a free array of a map sliced in several dimensions");
                }
                let mut indices = Vec::with_capacity(idx.len());
                for (k, d) in idx.iter().enumerate() {
                    match d {
                        DimIndex::Fix(a) => indices.push(*a),
                        DimIndex::Slice { start, len, stride } => {
                            let mut after = Vec::with_capacity(idx.len() - k - 1);
                            for d in &idx[k + 1..] {
                                match d {
                                    DimIndex::Fix(a) => after.push(*a),
                                    DimIndex::Slice { .. } => {
                                        return error(self.span, "internal error: two slices")
                                    }
                                }
                            }
                            let slice = Slice {
                                before: indices,
                                start: *start,
                                len: *len,
                                stride: *stride,
                                after,
                            };
                            return self.slice_into_accumulator(b, *v, slice, g, &pat[0].ty);
                        }
                    }
                }
                let acc = self.redirect[v];
                let t = type_of(b, self.span, acc)?;
                let next = b.bind1(
                    "acc",
                    t,
                    Exp::UpdateAcc {
                        acc,
                        indices,
                        value: g,
                    },
                );
                self.redirect.insert(*v, next);
            }
            Exp::Index(v, idx) => {
                let Some(g) = g else { return Ok(()) };
                if !Self::differentiable(&type_of(b, self.span, *v)?) {
                    return Ok(());
                }
                let a = self.owned_adjoint(b, adj, *v)?;
                let t = pat[0].ty.clone();
                let old = Atom::Var(b.bind1(
                    "adj_elem",
                    crate::util::existential(&t.clone()),
                    Exp::Index(a, idx.clone()),
                ));
                let new = self.add_values(b, &t, old, g)?;
                let at = type_of(b, self.span, a)?;
                let updated = b.bind1(
                    "adj_upd",
                    crate::util::existential(&at),
                    Exp::Update(a, idx.clone(), new),
                );
                adj.map.insert(*v, Atom::Var(updated));
                adj.owned.insert(updated);
            }
            Exp::Update(arr, idx, val) => {
                let Some(g) = g else { return Ok(()) };
                let Atom::Var(gv) = g else {
                    return error(self.span, "internal error: scalar adjoint of an array");
                };
                if let Atom::Var(val) = val {
                    let vt = type_of(b, self.span, *val)?;
                    if Self::differentiable(&vt) {
                        let mut part = b.bind1(
                            "adj_part",
                            crate::util::existential(&vt),
                            Exp::Index(gv, idx.clone()),
                        );
                        // ȳ is about to be updated in place: a row read
                        // from it must be a copy, not a view.
                        let copied = vt.rank() > 0 && adj.owned.contains(&gv);
                        if copied {
                            part =
                                b.bind1("adj_part", crate::util::existential(&vt), Exp::Copy(part));
                        }
                        self.add(b, adj, *val, Atom::Var(part), copied)?;
                    }
                }
                // The adjoint of the old array: ȳ with the overwritten part
                // zeroed (in place when ȳ is ours alone).
                let gt = type_of(b, self.span, gv)?;
                let owned = if adj.owned.remove(&gv) {
                    gv
                } else {
                    b.bind1(
                        "adj_copy",
                        crate::util::existential(&gt.clone()),
                        Exp::Copy(gv),
                    )
                };
                let zero = zero_of(b, self.span, val)?;
                let cleared = b.bind1(
                    "adj_cleared",
                    crate::util::existential(&gt),
                    Exp::Update(owned, idx.clone(), zero),
                );
                self.add(b, adj, *arr, Atom::Var(cleared), true)?;
            }
            Exp::ArrayLit(xs, row) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                for (i, x) in xs.iter().enumerate() {
                    if let Atom::Var(x) = x {
                        let part = b.bind1(
                            "adj_row",
                            crate::util::existential(&row.clone()),
                            Exp::Index(
                                gv,
                                vec![DimIndex::Fix(Atom::Const(PrimValue::I64(i as i64)))],
                            ),
                        );
                        self.add(b, adj, *x, Atom::Var(part), false)?;
                    }
                }
            }
            Exp::Replicate(n, x) => {
                let (Some(Atom::Var(gv)), Atom::Var(x)) = (g, x) else {
                    return Ok(());
                };
                let xt = type_of(b, self.span, *x)?;
                if !Self::differentiable(&xt) {
                    return Ok(());
                }
                let sum = self.sum_rows(b, *n, gv, &xt, Atom::Var(*x))?;
                self.add(b, adj, *x, sum, true)?;
            }
            Exp::Copy(v) => {
                if let Some(g) = g {
                    self.add_shared(b, adj, *v, g)?;
                }
            }
            Exp::Reshape(_, v) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                let vt = type_of(b, self.span, *v)?;
                let shape: Vec<Atom> = shape_of(b, self.span, *v)?
                    .into_iter()
                    .map(|s| s.0)
                    .collect();
                let r = b.bind1(
                    "adj_reshape",
                    crate::util::existential(&vt),
                    Exp::Reshape(shape, gv),
                );
                self.add(b, adj, *v, Atom::Var(r), false)?;
            }
            Exp::Rearrange(perm, v) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                let mut inverse = vec![0; perm.len()];
                for (k, &p) in perm.iter().enumerate() {
                    if p < inverse.len() {
                        inverse[p] = k;
                    }
                }
                let vt = type_of(b, self.span, *v)?;
                let r = b.bind1(
                    "adj_rearrange",
                    crate::util::existential(&vt),
                    Exp::Rearrange(inverse, gv),
                );
                self.add(b, adj, *v, Atom::Var(r), false)?;
            }
            Exp::Reverse(v) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                let vt = type_of(b, self.span, *v)?;
                let r = b.bind1(
                    "adj_reverse",
                    crate::util::existential(&vt),
                    Exp::Reverse(gv),
                );
                self.add(b, adj, *v, Atom::Var(r), false)?;
            }
            Exp::Rotate(r, v) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                let vt = type_of(b, self.span, *v)?;
                let neg = b.unop(UnOp::Neg, *r).map_err(|u| self.unknown(u))?;
                let x = b.bind1(
                    "adj_rotate",
                    crate::util::existential(&vt),
                    Exp::Rotate(neg, gv),
                );
                self.add(b, adj, *v, Atom::Var(x), false)?;
            }
            Exp::Concat(vs) => {
                let Some(Atom::Var(gv)) = g else {
                    return Ok(());
                };
                let mut offset = Atom::Const(PrimValue::I64(0));
                for v in vs {
                    let vt = type_of(b, self.span, *v)?;
                    let n = Atom::Var(b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(*v, 0)));
                    let part = b.bind1(
                        "adj_part",
                        crate::util::existential(&vt.clone()),
                        Exp::Index(
                            gv,
                            vec![DimIndex::Slice {
                                start: offset,
                                len: n,
                                stride: Atom::Const(PrimValue::I64(1)),
                            }],
                        ),
                    );
                    if Self::differentiable(&vt) {
                        self.add(b, adj, *v, Atom::Var(part), false)?;
                    }
                    offset = b
                        .binop(BinOp::Add, offset, n)
                        .map_err(|u| self.unknown(u))?;
                }
            }
            Exp::If { cond, then_, else_ } => self.branch(b, adj, &ybar, *cond, then_, else_)?,
            Exp::Loop {
                params, init, body, ..
            } => {
                let Some(ck) = checkpoints else {
                    return error(self.span, "internal error: loop without checkpoints");
                };
                self.for_loop(b, adj, &ybar, pat, params, init, ck, body)?
            }
            Exp::Soac(Soac::Map { w, lam, arrs }) => self.map(b, adj, &ybar, *w, lam, arrs, pat)?,
            Exp::Soac(Soac::Reduce { w, lam, arrs, .. })
                if arrs.len() == 1 && is_min_or_max(lam) =>
            {
                let Some(g) = g else { return Ok(()) };
                self.reduce_min_max(b, adj, *w, arrs[0], pat[0].var, g)?;
            }
            Exp::Soac(Soac::Reduce {
                w,
                lam,
                arrs,
                neutral,
                ..
            }) if arrs.len() == 1
                && lam.ret[0].rank() == 1
                && vectorised_operator(lam).is_some() =>
            {
                let Some(Atom::Var(g)) = g else { return Ok(()) };
                if !self.active.contains(&arrs[0]) {
                    return Ok(());
                }
                let Some(op) = vectorised_operator(lam) else {
                    return Ok(());
                };
                self.reduce_vectorised(b, adj, *w, &op, neutral[0], arrs[0], pat[0].var, g)?;
            }
            Exp::Soac(Soac::Reduce {
                w,
                lam,
                arrs,
                neutral,
                ..
            }) if arrs.len() == 1
                && single_binop(lam) == Some(BinOp::Mul)
                && lam.ret[0].elem().is_float()
                && neutral[0]
                    == Atom::Const(nabla_ir::derivatives::constant(lam.ret[0].elem(), 1.0)) =>
            {
                let Some(g) = g else { return Ok(()) };
                if !self.active.contains(&arrs[0]) {
                    return Ok(());
                }
                self.reduce_product(b, adj, *w, arrs[0], &lam.ret[0], g)?;
            }
            Exp::Soac(Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            }) if arrs.len() > 1 || !is_plus(lam) => {
                if !arrs.iter().any(|a| self.active.contains(a)) {
                    return Ok(());
                }
                // Zero seeds for results without an adjoint (arrays of
                // zeros for array results: rows of arrays of arrays).
                let mut seeds = self.seeds(&lam.ret, &ybar);
                for (j, t) in lam.ret.iter().enumerate() {
                    if ybar[j].is_none() && t.rank() > 0 {
                        seeds[j] = zero_like(b, self.span, pat[j].var)?;
                    }
                }
                self.reduce_generic(b, adj, *w, lam, neutral, arrs, seeds)?;
            }
            Exp::Soac(Soac::Reduce { w, arrs, .. }) => {
                let Some(g) = g else { return Ok(()) };
                let at = type_of(b, self.span, arrs[0])?;
                // The adjoint of every element is the result's (seed 003
                // §5.1, the special case of +).
                let bc = b.bind1(
                    "adj_bcast",
                    crate::util::existential(&at),
                    Exp::Replicate(*w, g),
                );
                self.add(b, adj, arrs[0], Atom::Var(bc), true)?;
            }
            Exp::Soac(Soac::Scan {
                w,
                lam,
                arrs,
                neutral,
            }) if arrs.len() == 1
                && lam.ret[0].rank() == 1
                && vectorised_operator(lam).is_some() =>
            {
                let Some(Atom::Var(g)) = g else { return Ok(()) };
                if !self.active.contains(&arrs[0]) {
                    return Ok(());
                }
                let Some(op) = vectorised_operator(lam) else {
                    return Ok(());
                };
                self.scan_vectorised(b, adj, *w, &op, neutral[0], arrs[0], pat[0].var, g)?;
            }
            Exp::Soac(Soac::Scan { w, lam, arrs, .. }) if arrs.len() == 1 && is_plus(lam) => {
                let Some(Atom::Var(g)) = g else { return Ok(()) };
                if !self.active.contains(&arrs[0]) {
                    return Ok(());
                }
                let x = self.plus_scan_adjoint(b, *w, lam, g)?;
                self.add(b, adj, arrs[0], Atom::Var(x), true)?;
            }
            Exp::Soac(Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            }) => {
                if !arrs.iter().any(|a| self.active.contains(a)) {
                    return Ok(());
                }
                let k = arrs.len();
                if lam.params.len() != 2 * k
                    || lam.ret.len() != k
                    || neutral.len() != k
                    || pat.len() != k
                {
                    return error(self.span, "internal error: malformed scan operator");
                }
                let scan = ScanAdjoint {
                    w: *w,
                    op: lam,
                    neutral,
                    arrs,
                    ys: pat.iter().map(|p| p.var).collect(),
                    gs: self.array_adjoints(&ybar)?,
                };
                // Scalar components: seed 002's rule; rows: the sequential
                // one.
                if lam.ret.iter().all(|t| t.rank() == 0) {
                    self.scan_generic(b, adj, &scan)?;
                } else {
                    self.scan_sequential(b, adj, &scan)?;
                }
            }
            Exp::Soac(Soac::Hist {
                w,
                dest,
                lam,
                indices,
                values,
                ..
            }) if dest.len() == 1 && is_plus(lam) => {
                // `+` histogram (seed 002): the destination's adjoint passes
                // through; each value gets the adjoint of its bucket.
                let Some(Atom::Var(g)) = g else { return Ok(()) };
                if type_of(b, self.span, g)?.rank() != 1 {
                    return self.unsupported("reduce_by_index into arrays of rank > 1");
                }
                self.add_shared(b, adj, dest[0], Atom::Var(g))?;
                if self.active.contains(&values[0]) {
                    let gathered = self.gather(b, g, &[*indices], *w, false)?;
                    self.add(b, adj, values[0], Atom::Var(gathered), true)?;
                }
            }
            Exp::Soac(Soac::Hist {
                w,
                dest,
                lam,
                indices,
                values,
                ..
            }) if dest.len() == 1 && is_min_or_max(lam) => {
                let Some(Atom::Var(g)) = g else { return Ok(()) };
                if type_of(b, self.span, g)?.rank() != 1 {
                    return self.unsupported("reduce_by_index into arrays of rank > 1");
                }
                self.hist_min_max(b, adj, *w, dest[0], pat[0].var, *indices, values[0], g)?;
            }
            Exp::Soac(Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            }) if dest.len() == lam.ret.len() => {
                if ybar.iter().all(|a| a.is_none()) {
                    return Ok(());
                }
                // Components without an adjoint get zeros.
                let mut gs = Vec::with_capacity(dest.len());
                for (k, p) in pat.iter().enumerate() {
                    let g = match ybar[k] {
                        Some(Atom::Var(g)) => g,
                        _ => match zero_like(b, self.span, p.var)? {
                            Atom::Var(z) => z,
                            Atom::Const(_) => {
                                return error(self.span, "internal error: a scalar histogram")
                            }
                        },
                    };
                    if type_of(b, self.span, g)?.rank() != 1 + lam.ret[k].rank() {
                        return error(self.span, "internal error: a histogram's adjoint");
                    }
                    gs.push(g);
                }
                self.hist_generic(b, adj, *w, lam, neutral, dest, *indices, values, &gs)?;
            }
            Exp::Soac(Soac::Hist { .. }) => {
                return error(self.span, "internal error: a histogram of the wrong arity")
            }
            Exp::Soac(Soac::Scatter {
                w,
                dest,
                indices,
                values,
            }) => {
                // Seed 003 §5.3: each written value gets the adjoint of the
                // cell it wrote; the destination's adjoint is the result's
                // with the written cells zeroed.
                for (k, (d, v)) in dest.iter().zip(values).enumerate() {
                    let Some(Atom::Var(g)) = ybar[k] else {
                        continue;
                    };
                    let gt = type_of(b, self.span, g)?;
                    if gt.rank() < indices.len() {
                        return error(
                            self.span,
                            "internal error: scatter with more indices than dimensions",
                        );
                    }
                    if self.active.contains(v) {
                        let gathered = self.gather(b, g, indices, *w, true)?;
                        self.add(b, adj, *v, Atom::Var(gathered), true)?;
                    }
                    if self.active.contains(d) {
                        let t = crate::util::existential(&gt);
                        let copy = b.bind1("adj_copy", t.clone(), Exp::Copy(g));
                        // One zero (a row of zeros, for rows) per write.
                        let sizes = shape_of(b, self.span, g)?;
                        let mut sizes = sizes[indices.len()..].to_vec();
                        sizes.insert(0, (*w, Dim::Ext));
                        let zero = Atom::Const(PrimValue::zero(gt.elem()));
                        let Atom::Var(zeros) = crate::util::replicated(
                            b,
                            "zero_row",
                            &sizes,
                            zero,
                            Type::Prim(gt.elem()),
                        ) else {
                            return error(self.span, "internal error: scatter without writes");
                        };
                        let cleared = b.bind1(
                            "adj_cleared",
                            t,
                            Exp::Soac(Soac::Scatter {
                                w: *w,
                                dest: vec![copy],
                                indices: indices.clone(),
                                values: vec![zeros],
                            }),
                        );
                        self.add(b, adj, *d, Atom::Var(cleared), true)?;
                    }
                }
            }
            Exp::Apply(..) => return error(self.span, "internal error: a call left in a vjp"),
            Exp::WithAcc { inputs, lam } => self.with_acc(b, adj, pat, inputs, lam, &ybar)?,
            Exp::UpdateAcc { .. } => return self.unsupported("accumulators"),
            Exp::Jvp { .. } | Exp::Vjp { .. } => return self.unsupported("a nested jvp/vjp"),
            Exp::WithVjp {
                rule, args, tape, ..
            } => self.custom_rule(b, adj, pat, &ybar, rule, args, *tape)?,
        }
        Ok(())
    }
}
