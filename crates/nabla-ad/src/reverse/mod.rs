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

use crate::{error, Ad, AdError};
use adjoints::{Results, Reverse};
use loops::{Checkpoints, LoopCheckpoints, LoopParts};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::derivatives::ScalarOp;
use nabla_ir::{Atom, Exp, Lambda, LoopForm, Param, Soac, Span, Stm, Var};
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
        lambda_depth: 0,
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
    fn forward_sweep(
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
                    form,
                    body,
                } if matches!(form, LoopForm::For { .. }) || self.is_active_stm(stm) => {
                    let parts = LoopParts { params, init, body };
                    out.push(Some(self.checkpointed_loop(b, stm, parts, form)?));
                }
                Exp::Soac(soac @ (Soac::Hist { dest, .. } | Soac::Scatter { dest, .. })) => {
                    // As for updates: the return sweep may read the old
                    // destinations, so the primal writes into copies.
                    let mut soac = soac.clone();
                    let mut copies = Vec::with_capacity(dest.len());
                    for d in dest {
                        copies.push(b.let1_existential("fwd_copy", Exp::Copy(*d))?);
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
                    let c = b.let1_existential("fwd_copy", Exp::Copy(*arr))?;
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
    fn return_sweep(
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

    /// The return sweep of one statement: the adjoints of its results
    /// (taken out of `adj`) go to the variables it reads, by the rule of
    /// its construct.
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
        let res = Results { pat, ybar: &ybar };
        let g = ybar[0];
        match &stm.exp {
            Exp::Atoms(xs) => self.atoms(b, adj, xs, &ybar),
            Exp::BinOp(op, x, y) => self.scalar(b, adj, g, pat, ScalarOp::Bin(*op), &[*x, *y]),
            Exp::UnOp(op, x) => self.scalar(b, adj, g, pat, ScalarOp::Un(*op), &[*x]),
            Exp::TernOp(op, x, y, z) => {
                self.scalar(b, adj, g, pat, ScalarOp::Tern(*op), &[*x, *y, *z])
            }
            Exp::Conv(op, x) => self.scalar(b, adj, g, pat, ScalarOp::Conv(*op), &[*x]),
            Exp::CmpOp(..)
            | Exp::Iota { .. }
            | Exp::Size(..)
            | Exp::Assert(..)
            | Exp::AssertEqSizes(..) => Ok(()),
            Exp::Index(v, idx) => self.index(b, adj, res, v, idx),
            Exp::Update(arr, idx, val) => self.update(b, adj, arr, idx, val, g),
            Exp::ArrayLit(xs, _) => self.array_lit(b, adj, xs, g),
            Exp::Replicate(n, x) => self.replicate(b, adj, n, x, g),
            Exp::Copy(v) => match g {
                Some(g) => self.add_shared(b, adj, *v, g),
                None => Ok(()),
            },
            Exp::Reshape(_, v) => self.reshape(b, adj, v, g),
            Exp::Rearrange(perm, v) => self.rearrange(b, adj, perm, v, g),
            Exp::Reverse(v) => self.reverse(b, adj, v, g),
            Exp::Rotate(r, v) => self.rotate(b, adj, r, v, g),
            Exp::Concat(vs) => self.concat(b, adj, vs, g),
            Exp::If { cond, then_, else_ } => self.branch(b, adj, &ybar, *cond, then_, else_),
            Exp::Loop {
                params, init, body, ..
            } => {
                let Some(ck) = checkpoints else {
                    return error(self.span, "internal error: loop without checkpoints");
                };
                self.for_loop(b, adj, res, LoopParts { params, init, body }, ck)
            }
            Exp::Soac(Soac::Map { w, lam, arrs }) => self.map(b, adj, res, *w, lam, arrs),
            Exp::Soac(soac @ Soac::Reduce { .. }) => self.reduce(b, adj, res, soac),
            Exp::Soac(soac @ Soac::Scan { .. }) => self.scan(b, adj, res, soac),
            Exp::Soac(soac @ Soac::Hist { .. }) => self.reduce_by_index(b, adj, res, soac),
            Exp::Soac(soac @ Soac::Scatter { .. }) => self.scatter(b, adj, res, soac),
            Exp::Apply(..) => error(self.span, "internal error: a call left in a vjp"),
            Exp::WithAcc { inputs, lam } => self.with_acc(b, adj, pat, inputs, lam, &ybar),
            Exp::UpdateAcc { .. } => self.unsupported("accumulators"),
            Exp::Jvp { .. } | Exp::Vjp { .. } => self.unsupported("a nested jvp/vjp"),
            Exp::WithVjp {
                rule, args, tape, ..
            } => self.custom_rule(b, adj, res, rule, args, *tape),
        }
    }
}
