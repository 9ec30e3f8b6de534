//! The rule of `map` (Schenck, Rønning, Henriksen and Oancea, "AD for an Array
//! Language with Nested Parallelism" (SC22), §5.4): the adjoint is a map over
//! the inputs and the results' adjoints whose lambda is the reversed lambda;
//! the adjoints of the lambda's free arrays are accumulated through a
//! `with_acc` around it (§6.1, accumulators). A map whose only result adjoint
//! is one-hot (from `reduce min`/`max`) reverses one element only; values the
//! primal map already stored are not recomputed.

use super::adjoints::{prune_recomputed, Adjoints, Results, Reverse};
use crate::util::{type_of, zero_like};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, Lambda, Param, PrimValue, Soac, Stm, Type, Var,
};
use std::collections::{HashMap, HashSet};

/// The parts of a `map` statement that [`Reverse::adjoint_map`] reverses.
#[derive(Clone, Copy)]
struct MapParts<'a> {
    /// The adjoints of the map's results (absent: zero).
    ybar: &'a [Option<Atom>],
    lam: &'a Lambda,
    arrs: &'a [Var],
    /// The map's primal results (one array per result of `lam`).
    results: &'a [Var],
    scalar_fvs: &'a [Var],
    array_fvs: &'a [Var],
    /// One accumulator per free array in `array_fvs`.
    accs: &'a [Var],
}

/// An adjoint lambda built by [`Reverse::adjoint_lambda`].
struct AdjointLambda {
    lam: Lambda,
    /// The arrays the adjoint map reads (its lambda's parameters, in order).
    inputs: Vec<Var>,
    /// The lambda's result types.
    returned_types: Vec<Type>,
    /// For each stored statement asked for: whether reading it saved no
    /// recomputation (see [`Reverse::adjoint_map`]).
    wasteful: Vec<bool>,
}

/// The variables bound by the statements of `stms` (one body's top level)
/// that statement `i` is computed from, directly or not.
fn computed_from(stms: &[Stm], i: usize) -> HashSet<Var> {
    let mut binder: HashMap<Var, usize> = HashMap::new();
    for (j, s) in stms[..i].iter().enumerate() {
        for p in &s.pat {
            binder.insert(p.var, j);
        }
    }
    let mut out = HashSet::new();
    let mut todo = vec![i];
    let mut seen = HashSet::new();
    while let Some(j) = todo.pop() {
        for v in nabla_ir::free_vars_stm(&stms[j]) {
            if let Some(&k) = binder.get(&v) {
                if seen.insert(k) {
                    out.extend(stms[k].pat.iter().map(|p| p.var));
                    todo.push(k);
                }
            }
        }
    }
    out
}

/// The statements of a map lambda's body whose values the map returns (so
/// the map's result arrays hold them): the statement's position and, for
/// each variable it binds, the position of that variable among the
/// lambda's results. Only statements that the return sweep can
/// take from a copy: no loops (their checkpoints are made by running them),
/// no in-place updates, histograms or scatters (their forward sweep copies
/// the destination), no accumulators, and no plain copies or indexing
/// (as cheap to recompute as to read).
fn stored_results(lam: &Lambda) -> Vec<(usize, Vec<usize>)> {
    let body = &lam.body;
    let mut out = Vec::new();
    for (i, s) in body.stms.iter().enumerate() {
        let eligible = matches!(
            s.exp,
            Exp::BinOp(..)
                | Exp::UnOp(..)
                | Exp::TernOp(..)
                | Exp::Conv(..)
                | Exp::Apply(..)
                | Exp::If { .. }
                | Exp::Soac(Soac::Map { .. } | Soac::Reduce { .. } | Soac::Scan { .. })
        ) && !s.pat.is_empty()
            && s.pat.iter().all(|p| !p.ty.is_acc());
        if !eligible {
            continue;
        }
        let ks: Option<Vec<usize>> = s
            .pat
            .iter()
            .map(|p| body.result.iter().position(|r| *r == Atom::Var(p.var)))
            .collect();
        if let Some(ks) = ks {
            out.push((i, ks));
        }
    }
    out
}

impl Reverse<'_> {
    /// A `map` whose only result adjoint is one-hot (`one_hot`: zero except
    /// at `index`, where it is `g`; no element when `index` is out of
    /// bounds): only that element's lambda is reversed, as the branch
    /// `if index < w then (the lambda on the rows arrs[index]) else 0` with
    /// adjoint `g` — its reads `arrs[index]` give the inputs sparse
    /// adjoints (one-row updates, or accumulator updates inside an
    /// enclosing map) and its free variables their adjoints directly, with
    /// no per-element adjoint arrays (Schenck et al. §5.1's min/max rule carried
    /// through the map that computed the reduced values).
    fn map_one_hot(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        ybar: &[Option<Atom>],
        w: Atom,
        lam: &Lambda,
        arrs: &[Var],
    ) -> Result<bool, AdError> {
        let seeded: Vec<usize> = (0..ybar.len()).filter(|&k| ybar[k].is_some()).collect();
        let [k] = seeded[..] else {
            return Ok(false);
        };
        let Some(Atom::Var(r)) = ybar[k] else {
            return Ok(false);
        };
        let Some(&(index, g)) = self.one_hot.get(&r) else {
            return Ok(false);
        };
        let Some(Atom::Var(result)) = lam.body.result.get(k).copied() else {
            return Ok(false);
        };
        if lam.ret[k].rank() != 0 || lam.params.len() != arrs.len() {
            return Ok(false);
        }
        let mut stms = Vec::with_capacity(arrs.len() + lam.body.stms.len());
        for (p, a) in lam.params.iter().zip(arrs) {
            stms.push(Stm {
                pat: vec![Param::new(p.var, p.ty.clone())],
                exp: Exp::Index(*a, vec![DimIndex::Fix(index)]),
                span: self.span,
            });
        }
        stms.extend(lam.body.stms.iter().cloned());
        let then_ = Body {
            stms,
            result: vec![Atom::Var(result)],
        };
        let else_ = Body {
            stms: vec![],
            result: vec![Atom::Const(PrimValue::zero(lam.ret[k].elem()))],
        };
        let inside = b.cmp(CmpOp::Lt, index, w);
        self.branch(b, adj, &[Some(g)], inside, &then_, &else_)?;
        Ok(true)
    }

    /// `map`: the adjoint is a map (Schenck et al. §5.4) over the inputs and the
    /// results' adjoints whose lambda runs the primal lambda again and then
    /// its return sweep, returning the adjoints of its parameters (rows of
    /// the inputs' adjoints) and its contributions to free scalars (summed
    /// afterwards). Free arrays receive their adjoints through accumulators
    /// (Schenck et al. §5.4): a `with_acc` around the adjoint map at the outermost
    /// map, the enclosing accumulators threaded through nested maps.
    pub(super) fn map(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        w: Atom,
        lam: &Lambda,
        arrs: &[Var],
    ) -> Result<(), AdError> {
        let Results { pat, ybar } = res;
        if self.map_one_hot(b, adj, ybar, w, lam, arrs)? {
            return Ok(());
        }
        let fvs = self.candidates(b, nabla_ir::free_vars_lambda(lam), &[])?;
        let mut scalar_fvs = Vec::new();
        let mut array_fvs = Vec::new();
        for v in fvs {
            if type_of(b, self.span, v)?.rank() > 0 {
                array_fvs.push(v);
            } else {
                scalar_fvs.push(v);
            }
        }
        for a in arrs {
            if type_of(b, self.span, *a)?.is_acc() {
                return self.unsupported("accumulators");
            }
        }
        let redirected = array_fvs
            .iter()
            .filter(|v| self.redirect.contains_key(v))
            .count();
        let results: Vec<Var> = pat.iter().map(|p| p.var).collect();
        let parts = MapParts {
            ybar,
            lam,
            arrs,
            results: &results,
            scalar_fvs: &scalar_fvs,
            array_fvs: &[],
            accs: &[],
        };
        let (outs, new_arrays) = if array_fvs.is_empty() {
            (self.adjoint_map(b, w, parts)?.0, vec![])
        } else if redirected == array_fvs.len() {
            // Inside an enclosing adjoint map: thread its accumulators.
            let accs: Vec<Var> = array_fvs.iter().map(|v| self.redirect[v]).collect();
            let parts = MapParts {
                array_fvs: &array_fvs,
                accs: &accs,
                ..parts
            };
            let (outs, acc_outs) = self.adjoint_map(b, w, parts)?;
            for (v, a) in array_fvs.iter().zip(acc_outs) {
                self.redirect.insert(*v, a);
            }
            (outs, vec![])
        } else if redirected == 0 {
            // The outermost map: accumulators for the free arrays' adjoints.
            let mut inputs = Vec::new();
            let mut acc_types = Vec::new();
            let mut array_types = Vec::new();
            for v in &array_fvs {
                let a = self.owned_adjoint(b, adj, *v)?;
                let t = type_of(b, self.span, a)?;
                let Type::Array(p, dims) = &t else {
                    return error(self.span, "internal error: array adjoint");
                };
                acc_types.push(Type::Acc(*p, dims.clone()));
                array_types.push(crate::util::existential(&t));
                inputs.push(nabla_ir::AccInput {
                    array: a,
                    op: nabla_ir::AccOp::Add,
                });
            }
            let mut other_types = Vec::new();
            let with_lam = b.lambda::<AdError>("acc", acc_types, |b, ps| {
                let parts = MapParts {
                    array_fvs: &array_fvs,
                    accs: ps,
                    ..parts
                };
                let (outs, acc_outs) = self.adjoint_map(b, w, parts)?;
                for o in &outs {
                    other_types.push(type_of(b, self.span, *o)?);
                }
                let mut results: Vec<Atom> = acc_outs.into_iter().map(Atom::Var).collect();
                results.extend(outs.into_iter().map(Atom::Var));
                Ok(results)
            })?;
            let mut types = array_types;
            types.extend(other_types);
            let bound = b.bind(
                "adj_acc",
                types,
                Exp::WithAcc {
                    inputs,
                    lam: with_lam,
                },
            );
            let (arrays, outs) = bound.split_at(array_fvs.len());
            (outs.to_vec(), arrays.to_vec())
        } else {
            return self.unsupported("maps reading both enclosing and local free arrays");
        };
        for (v, a) in array_fvs.iter().zip(new_arrays) {
            adj.map.insert(*v, Atom::Var(a));
            adj.owned.insert(a);
        }
        let mut k = 0;
        for a in arrs {
            if Self::differentiable(&type_of(b, self.span, *a)?) {
                self.add(b, adj, *a, Atom::Var(outs[k]), true)?;
                k += 1;
            }
        }
        for v in &scalar_fvs {
            let t = type_of(b, self.span, *v)?;
            let s = self.sum_rows(b, w, outs[k], &t, Atom::Var(*v))?;
            self.add(b, adj, *v, s, true)?;
            k += 1;
        }
        Ok(())
    }

    /// Emits the adjoint map of [`Reverse::map`] (its parts: `parts`):
    /// inputs the primal inputs, the results' adjoints, rows of the primal
    /// map's results that the lambda's recomputation may read instead of
    /// recomputing them, and the accumulators (one per free array);
    /// returns the non-accumulator results (adjoints of the differentiable
    /// inputs, then per-element contributions to `scalar_fvs`) and the
    /// final accumulators.
    ///
    /// Schenck et al. §4 re-executes the lambda's body in the return sweep; a
    /// statement whose values the lambda returns is not re-executed: the
    /// forward sweep's map already stored them (so `vjp` of
    /// `sum (map exp xs)` evaluates `exp` once per element, not twice).
    /// Its derivative rule still sees the original statement. This is
    /// done only where it saves all the recomputation: a statement whose
    /// inputs the return sweep recomputes anyway is recomputed too, since
    /// the primal map may be kept alive only for it (the primal of a
    /// `vjp` whose result is discarded is otherwise dead code).
    fn adjoint_map(
        &mut self,
        b: &mut FunctionBuilder,
        w: Atom,
        parts: MapParts<'_>,
    ) -> Result<(Vec<Var>, Vec<Var>), AdError> {
        let candidates = stored_results(parts.lam);
        let mut built = self.adjoint_lambda(b, &parts, &candidates)?;
        if built.wasteful.iter().any(|w| *w) {
            // Reading a stored value saves work only if the statements it
            // was computed from are not recomputed anyway: otherwise the
            // forward map may be kept alive just for it. Build it again
            // without those.
            let kept: Vec<(usize, Vec<usize>)> = candidates
                .into_iter()
                .zip(&built.wasteful)
                .filter(|(_, w)| !**w)
                .map(|(c, _)| c)
                .collect();
            built = self.adjoint_lambda(b, &parts, &kept)?;
        }
        let AdjointLambda {
            lam: new_lam,
            inputs,
            returned_types,
            ..
        } = built;
        let w_dim = match w {
            Atom::Var(v) => Dim::Var(v),
            Atom::Const(PrimValue::I64(c)) => Dim::Const(c),
            _ => Dim::Ext,
        };
        let mut pat = Vec::new();
        for t in &returned_types {
            let at = t.array_of(w_dim);
            pat.push(Param::new(b.vars.fresh("adj_map", at.clone()), at));
        }
        b.push(Stm {
            pat: pat.clone(),
            exp: Exp::Soac(Soac::Map {
                w,
                lam: new_lam,
                arrs: inputs,
            }),
            span: self.span,
        });
        let n_acc = parts.accs.len();
        let n = pat.len();
        let outs = pat[..n - n_acc].iter().map(|p| p.var).collect();
        let acc_outs = pat[n - n_acc..].iter().map(|p| p.var).collect();
        Ok((outs, acc_outs))
    }

    /// The lambda of [`Reverse::adjoint_map`] and its inputs, reading the
    /// statements `stored` (see [`stored_results`]) from the primal map's
    /// results.
    fn adjoint_lambda(
        &mut self,
        b: &mut FunctionBuilder,
        parts: &MapParts<'_>,
        stored: &[(usize, Vec<usize>)],
    ) -> Result<AdjointLambda, AdError> {
        let MapParts {
            ybar,
            lam,
            arrs,
            results,
            scalar_fvs,
            array_fvs,
            accs,
        } = *parts;
        let mut inputs = arrs.to_vec();
        let mut seeds = Vec::new();
        for (k, y) in ybar.iter().enumerate() {
            if let Some(Atom::Var(y)) = y {
                inputs.push(*y);
                seeds.push((k, lam.ret[k].clone()));
            }
        }
        let mut stored_types = Vec::new();
        for (_, ks) in stored {
            for k in ks {
                let t = type_of(b, self.span, results[*k])?;
                let Some(row) = t.row() else {
                    return error(
                        self.span,
                        "internal error: a map result that is not an array",
                    );
                };
                inputs.push(results[*k]);
                stored_types.push(row);
            }
        }
        inputs.extend(accs.iter().copied());
        let n_arrs = arrs.len();
        let n_seeds = seeds.len();
        let n_stored = stored_types.len();
        let mut param_types: Vec<Type> = lam.params.iter().map(|p| p.ty.clone()).collect();
        param_types.extend(seeds.iter().map(|(_, t)| t.clone()));
        param_types.extend(stored_types);
        for a in accs {
            param_types.push(type_of(b, self.span, *a)?);
        }
        let span = self.span;
        let mut returned_types = Vec::new();
        let saved = self.redirect.clone();
        let mut recomputed: HashSet<Var> = HashSet::new();
        let mut dependencies: Vec<HashSet<Var>> = Vec::new();
        self.lambda_depth += 1;
        let new_lam = b.lambda::<AdError>("x", param_types, |b, ps| {
            let mut map = HashMap::new();
            for ((p, v), a) in lam.params.iter().zip(ps).zip(arrs) {
                map.insert(p.var, Atom::Var(*v));
                if self.active.contains(a) {
                    self.active.insert(*v);
                }
            }
            let acc_params = &ps[n_arrs + n_seeds + n_stored..];
            for (f, a) in array_fvs.iter().zip(acc_params) {
                self.redirect.insert(*f, *a);
            }
            // Where every seed of the element is a scalar zero, its
            // adjoints are zero: skip the return sweep, so that no zero is
            // multiplied by an infinite or NaN partial derivative (the
            // element-wise form of symbolic zero adjoints).
            let guard = if n_seeds > 0 && seeds.iter().all(|(_, t)| t.rank() == 0) {
                let mut any = Atom::Const(PrimValue::Bool(false));
                for ((_, t), s) in seeds.iter().zip(&ps[n_arrs..n_arrs + n_seeds]) {
                    let zero = Atom::Const(PrimValue::zero(t.elem()));
                    let nonzero = b.cmp(CmpOp::Neq, Atom::Var(*s), zero);
                    any = b.binop(BinOp::LogOr, any, nonzero)?;
                }
                b.begin();
                Some(any)
            } else {
                None
            };
            let copy = self.fresh_copy(b, &lam.body, map)?;
            recomputed.extend(
                copy.stms
                    .iter()
                    .filter(|s| !matches!(s.exp, Exp::Loop { .. }))
                    .flat_map(|s| s.pat.iter().map(|p| p.var)),
            );
            dependencies = stored
                .iter()
                .map(|(i, _)| computed_from(&copy.stms, *i))
                .collect();
            let mut stored_params = ps[n_arrs + n_seeds..n_arrs + n_seeds + n_stored].iter();
            let mut replaced = Vec::new();
            for (i, ks) in stored {
                let first = copy.stms[*i].pat[0].var;
                let rows = stored_params
                    .by_ref()
                    .take(ks.len())
                    .map(|p| Atom::Var(*p))
                    .collect();
                self.precomputed.insert(first, Exp::Atoms(rows));
                replaced.push(first);
            }
            let cks = self.forward_sweep(b, &copy.stms);
            for v in replaced {
                self.precomputed.remove(&v);
            }
            let cks = cks?;
            let mut inner = Adjoints::default();
            for ((k, _), s) in seeds.iter().zip(&ps[n_arrs..]) {
                if let Atom::Var(r) = copy.result[*k] {
                    self.add_shared(b, &mut inner, r, Atom::Var(*s))?;
                }
            }
            self.return_sweep(b, &copy.stms, &cks, &mut inner)?;
            let mut results = Vec::new();
            for v in &ps[..n_arrs] {
                let t = type_of(b, span, *v)?;
                if Self::differentiable(&t) {
                    results.push(self.materialize(b, &inner, *v)?);
                    returned_types.push(crate::util::existential(&t));
                }
            }
            for v in scalar_fvs {
                results.push(self.materialize(b, &inner, *v)?);
                returned_types.push(type_of(b, span, *v)?);
            }
            for f in array_fvs {
                let a = self.redirect[f];
                results.push(Atom::Var(a));
                returned_types.push(type_of(b, span, a)?);
            }
            let Some(cond) = guard else {
                return Ok(results);
            };
            let then_ = b.end(results);
            b.begin();
            let mut zeros = Vec::new();
            for v in &ps[..n_arrs] {
                let t = type_of(b, span, *v)?;
                if Self::differentiable(&t) {
                    zeros.push(zero_like(b, span, *v)?);
                }
            }
            for v in scalar_fvs {
                zeros.push(zero_like(b, span, *v)?);
            }
            // The accumulators, untouched.
            zeros.extend(acc_params.iter().map(|a| Atom::Var(*a)));
            let else_ = b.end(zeros);
            let out = b.bind(
                "adj_elem",
                returned_types.clone(),
                Exp::If { cond, then_, else_ },
            );
            Ok(out.into_iter().map(Atom::Var).collect())
        });
        self.lambda_depth -= 1;
        self.redirect = saved;
        let mut new_lam = new_lam?;
        prune_recomputed(&mut new_lam.body, &recomputed);
        let read: HashSet<Var> = nabla_ir::free_vars_body(&new_lam.body)
            .into_iter()
            .collect();
        let mut bound = HashSet::new();
        nabla_ir::visit::for_each_var(
            &new_lam.body,
            |_, _| {},
            |v| {
                bound.insert(v);
            },
        );
        // A stored statement is wasteful when the return sweep reads it but
        // still recomputes something it was computed from.
        let first_stored = n_arrs + n_seeds;
        let mut wasteful = Vec::with_capacity(stored.len());
        let mut j = first_stored;
        for ((_, ks), deps) in stored.iter().zip(&dependencies) {
            let params = &new_lam.params[j..j + ks.len()];
            let used = params.iter().any(|p| read.contains(&p.var));
            wasteful.push(used && deps.iter().any(|v| bound.contains(v)));
            j += ks.len();
        }
        // Stored results that the return sweep did not read: not inputs.
        for j in (first_stored..first_stored + n_stored).rev() {
            if !read.contains(&new_lam.params[j].var) {
                new_lam.params.remove(j);
                inputs.remove(j);
            }
        }
        Ok(AdjointLambda {
            lam: new_lam,
            inputs,
            returned_types,
            wasteful,
        })
    }
}
