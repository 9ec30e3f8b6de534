//! Forward mode: the tangent of every statement, emitted after it
//! (Schenck, Rønning, Henriksen and Oancea, "AD for an Array Language with
//! Nested Parallelism", SC22, §3; Shaikhha, Fitzgibbon, Vytiniotis and
//! Peyton Jones, "Efficient Differentiable Programming in a Functional
//! Array-Processing Language", ICFP 2019, §3; the rules of the constructs
//! are those of dual numbers lifted to the IR's statements).
//!
//! The transformation walks a body in order and keeps a map from each
//! primal variable to the atom holding its tangent ([`Tangents`]); a
//! variable without an entry has a zero tangent. This file holds the
//! drivers ([`expand_jvp`], [`expand_batched_jvp`] for vector mode) and the
//! dispatch over the constructs; each construct's rule is one function in
//! the file of its kind:
//!
//! - `tangents.rs`: the [`Tangents`] map, the transformation's state and
//!   the helpers every rule uses (zeros, tangent types, vector mode's
//!   batches of tangents);
//! - `scalar.rs`: scalar operations and the array operations without a
//!   lambda;
//! - `calls.rs`: calls, to derived `f_jvp` functions;
//! - `control.rs`: `if` and loops (tangent parameters);
//! - `soac.rs`: the SOACs, with lifted operators;
//! - `accumulators.rs`: accumulators, with tangent accumulators.

mod accumulators;
mod calls;
mod control;
mod scalar;
mod soac;
mod tangents;

pub use tangents::Tangents;

use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::derivatives::ScalarOp;
use nabla_ir::{Atom, Body, Dim, Exp, Lambda, Param, Soac, Span, Stm, Type, Var};
use tangents::{Batch, Forward};

/// `let pat = jvp lam primals tangents`: the lambda's body inlined with its
/// tangent code; `pat` binds the primal results, then their tangents.
pub(crate) fn expand_jvp(
    ad: &mut Ad,
    b: &mut FunctionBuilder,
    pat: &[Param],
    lam: Lambda,
    primals: Vec<Atom>,
    tangents: Vec<Atom>,
    span: Span,
) -> Result<(), AdError> {
    let k = lam.body.result.len();
    if pat.len() != 2 * k || lam.params.len() != primals.len() || tangents.len() != primals.len() {
        return error(span, "internal error: malformed jvp (arities differ)");
    }
    let params: Vec<Param> = lam
        .params
        .iter()
        .map(|p| Param::new(p.var, p.ty.clone()))
        .collect();
    b.push(Stm {
        pat: params,
        exp: Exp::Atoms(primals),
        span,
    });
    let mut tans = Tangents::default();
    for (p, t) in lam.params.iter().zip(tangents) {
        // A seed known to be zero (a literal zero, or an array of zeros
        // built by `replicate`, an array literal or a `map` returning
        // zeros) is a symbolic zero: no tangent code is made for it.
        if !ad.is_known_zero(&t) {
            tans.set(p.var, Some(t));
        }
    }
    let mut fwd = Forward {
        ad,
        span,
        batch: None,
    };
    fwd.stms(b, lam.body.stms, &mut tans)?;
    let mut results = lam.body.result.clone();
    for a in &lam.body.result {
        let t = fwd.materialize(b, &tans, a)?;
        results.push(t);
    }
    b.set_span(span);
    b.push(Stm {
        pat: pat.to_vec(),
        exp: Exp::Atoms(results),
        span,
    });
    Ok(())
}

/// The vector form of forward mode (`jmp`): for a statement
/// `pat = map (\s… -> pre; let (ys, dys) = jvp f xs (dxs s…) in …) seeds…`
/// whose primal arguments `xs` do not depend on the seeds, `f`'s primal is
/// computed once and every tangent carries the whole batch of seeds as an
/// innermost dimension (a scalar's tangent is a `[w]` array): a scalar
/// operation's partials are computed once and a map over the seeds
/// combines them with the seeds' tangents, and an array operation applies
/// to the batch as to one tangent. The seeds are computed by a map of
/// `pre` and moved innermost (`rearrange`); the results move the seed
/// dimension back outermost. Returns `Ok(false)`, emitting nothing, when
/// the statement is not of this shape; an error with `unsupported` set
/// when its function uses something vector mode does not handle (the
/// caller then differentiates one seed at a time).
pub(crate) fn expand_batched_jvp(
    ad: &mut Ad,
    b: &mut FunctionBuilder,
    stm: &Stm,
) -> Result<bool, AdError> {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &stm.exp else {
        return Ok(false);
    };
    let Some((last, pre)) = lam.body.stms.split_last() else {
        return Ok(false);
    };
    let Exp::Jvp {
        lam: jlam,
        primals,
        tangents,
    } = &last.exp
    else {
        return Ok(false);
    };
    let span = last.span;
    let nres = jlam.body.result.len();
    // Variables bound in the map's lambda (its parameters and the seed
    // computations): the primal arguments must not read them.
    let mut bound: std::collections::HashSet<Var> = lam.params.iter().map(|p| p.var).collect();
    for s in pre {
        if matches!(s.exp, Exp::Jvp { .. } | Exp::Vjp { .. }) {
            return Ok(false);
        }
        bound.extend(s.pat.iter().map(|p| p.var));
    }
    if primals
        .iter()
        .any(|a| matches!(a, Atom::Var(v) if bound.contains(v)))
        || jlam.params.len() != primals.len()
        || tangents.len() != primals.len()
        || last.pat.len() != 2 * nres
    {
        return Ok(false);
    }
    // Each result of the map is one of the jvp's results.
    let mut sources = Vec::with_capacity(lam.body.result.len());
    for r in &lam.body.result {
        match r {
            Atom::Var(v) => match last.pat.iter().position(|p| p.var == *v) {
                Some(q) => sources.push(q),
                None => return Ok(false),
            },
            Atom::Const(_) => return Ok(false),
        }
    }
    if sources.len() != stm.pat.len() {
        return Ok(false);
    }
    let dim = match w {
        Atom::Const(c) => Dim::Const(c.as_i64()),
        Atom::Var(v) => Dim::Var(*v),
    };
    let batch = Batch { width: *w, dim };
    // Nested jvps and vjps of `f` first.
    let mut jlam = jlam.clone();
    if crate::body_has_ad(&jlam.body) {
        let body = std::mem::take(&mut jlam.body);
        jlam.body = ad.eliminate_in_body(b, body)?;
    }
    b.set_span(span);
    let mut fwd = Forward {
        ad,
        span,
        batch: Some(batch),
    };
    let mut tans = Tangents::default();
    // The seeds: tangents that depend on the map's element are computed by
    // a map of `pre`; the others are the same for every seed.
    let mut per_seed = Vec::new();
    for (j, t) in tangents.iter().enumerate() {
        if fwd.ad.is_known_zero(t) {
            continue;
        }
        match t {
            Atom::Var(v) if bound.contains(v) => per_seed.push((j, *v)),
            _ => {
                let ty = crate::util::atom_type(b, span, t)?;
                let all = b.let1("seeds", Exp::Replicate(*w, *t))?;
                let inner = fwd.seed_dimension_inward(b, all, &ty)?;
                tans.set(jlam.params[j].var, Some(Atom::Var(inner)));
            }
        }
    }
    // A seed that is the map's element itself needs no map.
    let mut computed = Vec::with_capacity(per_seed.len());
    for (j, v) in per_seed {
        match lam.params.iter().position(|p| p.var == v) {
            Some(i) => {
                let inner = fwd.seed_dimension_inward(b, arrs[i], &lam.params[i].ty)?;
                tans.set(jlam.params[j].var, Some(Atom::Var(inner)));
            }
            None => computed.push((j, v)),
        }
    }
    let per_seed = computed;
    if !per_seed.is_empty() {
        let mut types = Vec::with_capacity(per_seed.len());
        for (_, v) in &per_seed {
            let ty = crate::util::type_of(b, span, *v)?;
            // Sizes bound inside the lambda are unknown outside it.
            types.push(ty.map_dims(|d| match d {
                Dim::Var(x) if bound.contains(&x) => Dim::Ext,
                d => d,
            }));
        }
        let seed_lam = Lambda {
            params: lam.params.clone(),
            body: Body {
                stms: pre.to_vec(),
                result: per_seed.iter().map(|(_, v)| Atom::Var(*v)).collect(),
            },
            ret: types.clone(),
        };
        let seeds = b.let_(
            "seeds",
            Exp::Soac(Soac::Map {
                w: *w,
                lam: seed_lam,
                arrs: arrs.clone(),
            }),
        )?;
        for ((j, _), (all, ty)) in per_seed.iter().zip(seeds.into_iter().zip(&types)) {
            let inner = fwd.seed_dimension_inward(b, all, ty)?;
            tans.set(jlam.params[*j].var, Some(Atom::Var(inner)));
        }
    }
    b.push(Stm {
        pat: jlam
            .params
            .iter()
            .map(|p| Param::new(p.var, p.ty.clone()))
            .collect(),
        exp: Exp::Atoms(primals.clone()),
        span,
    });
    fwd.stms(b, jlam.body.stms, &mut tans)?;
    for (p, &q) in stm.pat.iter().zip(&sources) {
        let exp = if q < nres {
            // A primal result: the same for every seed.
            Exp::Replicate(*w, jlam.body.result[q])
        } else {
            let r = jlam.body.result[q - nres];
            let t = fwd.materialize(b, &tans, &r)?;
            let (Atom::Var(t), Type::Array(_, dims)) = (t, crate::util::atom_type(b, span, &t)?)
            else {
                return error(
                    span,
                    "internal error: a batch of tangents that is not an array",
                );
            };
            if dims.len() == 1 {
                Exp::Atoms(vec![Atom::Var(t)])
            } else {
                // The seed dimension back outermost (and copied, so that
                // each seed's tangent is contiguous).
                let rank = dims.len();
                let perm: Vec<usize> = [rank - 1].into_iter().chain(0..rank - 1).collect();
                let outer = b.let1("tan_outer", Exp::Rearrange(perm, t))?;
                Exp::Copy(outer)
            }
        };
        b.push(Stm {
            pat: vec![p.clone()],
            exp,
            span,
        });
    }
    Ok(true)
}

impl Forward<'_> {
    /// The statements with their tangents.
    pub(super) fn stms(
        &mut self,
        b: &mut FunctionBuilder,
        stms: Vec<Stm>,
        tans: &mut Tangents,
    ) -> Result<(), AdError> {
        for stm in stms {
            self.span = stm.span;
            b.set_span(stm.span);
            stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.stm(b, stm, tans))?;
        }
        Ok(())
    }

    /// A nested body transformed in a new scope: the body (same results)
    /// and the tangent of each result.
    pub(super) fn nested_body(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
        mut tans: Tangents,
    ) -> Result<(Body, Vec<Option<Atom>>), AdError> {
        b.begin();
        if let Err(e) = self.stms(b, body.stms, &mut tans) {
            b.end(vec![]);
            return Err(e);
        }
        let result_tangents = body.result.iter().map(|a| tans.get(a)).collect();
        Ok((b.end(body.result), result_tangents))
    }

    /// One statement and its tangent.
    fn stm(
        &mut self,
        b: &mut FunctionBuilder,
        stm: Stm,
        tans: &mut Tangents,
    ) -> Result<(), AdError> {
        let Stm { pat, exp, span } = stm;
        let primal = |b: &mut FunctionBuilder, exp: Exp| {
            b.push(Stm {
                pat: pat.clone(),
                exp,
                span,
            })
        };
        match exp {
            Exp::Atoms(xs) => {
                let ts: Vec<Option<Atom>> = xs.iter().map(|x| tans.get(x)).collect();
                primal(b, Exp::Atoms(xs));
                for (p, t) in pat.iter().zip(ts) {
                    tans.set(p.var, t);
                }
            }
            Exp::BinOp(op, x, y) => {
                primal(b, Exp::BinOp(op, x, y));
                self.scalar(b, tans, &pat, ScalarOp::Bin(op), &[x, y])?;
            }
            Exp::UnOp(op, x) => {
                primal(b, Exp::UnOp(op, x));
                self.scalar(b, tans, &pat, ScalarOp::Un(op), &[x])?;
            }
            Exp::TernOp(op, x, y, z) => {
                primal(b, Exp::TernOp(op, x, y, z));
                self.scalar(b, tans, &pat, ScalarOp::Tern(op), &[x, y, z])?;
            }
            Exp::Conv(op, x) => {
                primal(b, Exp::Conv(op, x));
                self.scalar(b, tans, &pat, ScalarOp::Conv(op), &[x])?;
            }
            e @ (Exp::CmpOp(..)
            | Exp::Iota { .. }
            | Exp::Size(..)
            | Exp::Assert(..)
            | Exp::AssertEqSizes(..)) => {
                primal(b, e);
                for p in &pat {
                    tans.set(p.var, None);
                }
            }
            Exp::Apply(f, args) => self.apply(b, tans, pat, f, args)?,
            Exp::If { cond, then_, else_ } => self.branch(b, tans, pat, cond, then_, else_)?,
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => self.loop_(b, tans, pat, params, init, form, body)?,
            Exp::Index(v, idx) => {
                let t = tans.get(&Atom::Var(v));
                primal(b, Exp::Index(v, idx.clone()));
                if let Some(Atom::Var(t)) = t {
                    self.bind_tangent(b, tans, &pat[0], Exp::Index(t, idx));
                } else {
                    tans.set(pat[0].var, None);
                }
            }
            Exp::Update(arr, idx, val) => {
                let need = tans.get(&Atom::Var(arr)).is_some() || tans.get(&val).is_some();
                // The tangent array is prepared before the primal update
                // consumes `arr`: a copy, since the tangent may be shared.
                let prepared = if need {
                    let ta = match tans.get(&Atom::Var(arr)) {
                        Some(Atom::Var(t)) => Atom::Var(b.let1("tan_copy", Exp::Copy(t))?),
                        _ => self.zero_like(b, arr)?,
                    };
                    let tv = self.materialize(b, tans, &val)?;
                    Some((ta, tv))
                } else {
                    None
                };
                primal(b, Exp::Update(arr, idx.clone(), val));
                match prepared {
                    Some((Atom::Var(ta), tv)) => {
                        self.bind_tangent(b, tans, &pat[0], Exp::Update(ta, idx, tv))
                    }
                    _ => tans.set(pat[0].var, None),
                }
            }
            Exp::ArrayLit(xs, row) => {
                let any = xs.iter().any(|x| tans.get(x).is_some());
                primal(b, Exp::ArrayLit(xs.clone(), row.clone()));
                if any {
                    let mut ts = Vec::with_capacity(xs.len());
                    for x in &xs {
                        ts.push(self.materialize(b, tans, x)?);
                    }
                    let row = self.tangent_type(&row);
                    self.bind_tangent(b, tans, &pat[0], Exp::ArrayLit(ts, row));
                } else {
                    tans.set(pat[0].var, None);
                }
            }
            Exp::Replicate(n, x) => {
                let t = tans.get(&x);
                primal(b, Exp::Replicate(n, x));
                match t {
                    Some(t) => self.bind_tangent(b, tans, &pat[0], Exp::Replicate(n, t)),
                    None => tans.set(pat[0].var, None),
                }
            }
            Exp::Copy(v) => self.unary_array(b, tans, &pat, v, Exp::Copy(v), Exp::Copy)?,
            Exp::Reshape(shape, v) => {
                // A batch of tangents keeps its seed dimension innermost.
                let mut s2 = shape.clone();
                if let Some(batch) = self.batch {
                    s2.push(batch.width);
                }
                self.unary_array(b, tans, &pat, v, Exp::Reshape(shape, v), move |t| {
                    Exp::Reshape(s2.clone(), t)
                })?
            }
            Exp::Rearrange(perm, v) => {
                let mut p2 = perm.clone();
                if self.batch.is_some() {
                    p2.push(perm.len());
                }
                self.unary_array(b, tans, &pat, v, Exp::Rearrange(perm, v), move |t| {
                    Exp::Rearrange(p2.clone(), t)
                })?
            }
            Exp::Reverse(v) => self.unary_array(b, tans, &pat, v, Exp::Reverse(v), Exp::Reverse)?,
            Exp::Rotate(r, v) => {
                self.unary_array(b, tans, &pat, v, Exp::Rotate(r, v), move |t| {
                    Exp::Rotate(r, t)
                })?
            }
            Exp::Concat(vs) => {
                let any = vs.iter().any(|v| tans.has(*v));
                primal(b, Exp::Concat(vs.clone()));
                if any {
                    let mut ts = Vec::with_capacity(vs.len());
                    for v in &vs {
                        ts.push(self.materialize_var(b, tans, *v)?);
                    }
                    self.bind_tangent(b, tans, &pat[0], Exp::Concat(ts));
                } else {
                    tans.set(pat[0].var, None);
                }
            }
            Exp::Soac(soac) => self.soac(b, tans, pat, soac)?,
            Exp::WithAcc { inputs, lam } => self.with_acc(b, tans, pat, inputs, lam)?,
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => {
                // The tangent accumulator gets the value's tangent at the
                // same place (both are linear: the old ones are consumed).
                let tacc = tans.get(&Atom::Var(acc));
                let tv = tans.get(&value);
                primal(
                    b,
                    Exp::UpdateAcc {
                        acc,
                        indices: indices.clone(),
                        value,
                    },
                );
                match (tacc, tv) {
                    (Some(Atom::Var(ta)), Some(tv)) => self.bind_tangent(
                        b,
                        tans,
                        &pat[0],
                        Exp::UpdateAcc {
                            acc: ta,
                            indices,
                            value: tv,
                        },
                    ),
                    (Some(ta), None) => tans.set(pat[0].var, Some(ta)),
                    (None, Some(_)) => {
                        return unsupported(
                            span,
                            "an update of an accumulator without a tangent by a value with one",
                        )
                    }
                    _ => tans.set(pat[0].var, None),
                }
            }
            // A nested jvp left here could not be transformed, nor can the
            // enclosing one be.
            Exp::Jvp { .. } => return unsupported(span, "a nested jvp is left to the dynamic AD"),
            Exp::Vjp { .. } => {
                return unsupported(span, "static AD does not differentiate vjp yet")
            }
            // Forward mode ignores a custom reverse-mode rule (Futhark's
            // `with_vjp`, futhark-internals.md §2): `f` is inlined (its
            // parameters bound to the arguments) and differentiated.
            Exp::WithVjp { lam, args, .. } => {
                let Lambda { params, body, .. } = lam;
                self.stm(
                    b,
                    Stm {
                        pat: params,
                        exp: Exp::Atoms(args),
                        span,
                    },
                    tans,
                )?;
                for s in body.stms {
                    self.stm(b, s, tans)?;
                }
                self.stm(
                    b,
                    Stm {
                        pat,
                        exp: Exp::Atoms(body.result),
                        span,
                    },
                    tans,
                )?;
            }
        }
        Ok(())
    }
}
