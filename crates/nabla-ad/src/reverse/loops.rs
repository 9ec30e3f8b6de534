//! Loops (Schenck, Rønning, Henriksen and Oancea, "AD for an Array Language
//! with Nested Parallelism" (SC22), §4.2–4.3 and §6.2): the forward sweep
//! checkpoints the parameters of every `for` loop at each iteration's entry
//! (one array per parameter); the return sweep runs the iterations backwards,
//! each from its checkpoint. A `while` loop first counts its iterations (the
//! inspector of §6.2) and is then reversed as a `for` loop. A loop whose array
//! sizes may change checkpoints only while they keep their initial shapes, and
//! otherwise reruns the loop from its initial values (the far end of §4.3's
//! time/space trade-off). There is no strip-mining yet.

use super::adjoints::{bound_vars, prune_recomputed, Adjoints, Results, Reverse};
use crate::util::{atom_type, type_of, zero_like, zero_of};
use crate::AdError;
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, ConvOp, Dim, DimIndex, Exp, LoopForm, Param, PrimType, PrimValue,
    Stm, Type, Var,
};
use std::collections::{HashMap, HashSet};

/// What the forward sweep kept of a loop: how to restore its parameters
/// at an iteration's entry, its trip count and index variable.
#[derive(Clone, Debug)]
pub(super) struct LoopCheckpoints {
    restore: Restore,
    bound: Atom,
    i: Var,
}

/// How the return sweep gets a loop's parameters at the entry of an
/// iteration.
#[derive(Clone, Debug)]
enum Restore {
    /// From checkpoint arrays, one per parameter, a row per iteration
    /// (Schenck et al. §4.2).
    Checkpoints(Vec<Var>),
    /// For a loop whose array sizes may change from one iteration to the
    /// next (its parameters' types have existential sizes): the
    /// checkpoints hold the states while every array keeps its initial
    /// shape, which the boolean `fits` records. Where a shape changed, no
    /// rectangular checkpoint array can hold the states, and the return
    /// sweep runs the loop again from its `initial` values up to the
    /// iteration (quadratic in the trip count, no memory per iteration:
    /// the far end of Schenck et al. §4.3's time/space trade-off; such loops
    /// usually halve or double their arrays, so they run few iterations).
    Guarded {
        checkpoints: Vec<Var>,
        fits: Var,
        initial: Vec<Atom>,
    },
}

/// Whether a loop parameter's array size may change from one iteration to
/// the next: a dimension that is existential or another parameter of the
/// same loop.
fn size_varies(t: &Type, params: &[Param]) -> bool {
    let dims: &[Dim] = match t {
        Type::Prim(_) => &[],
        Type::Array(_, dims) | Type::Acc(_, dims) => dims,
    };
    dims.iter().any(|d| match d {
        Dim::Ext => true,
        Dim::Var(v) => params.iter().any(|p| p.var == *v),
        Dim::Const(_) => false,
    })
}

/// The checkpoints of the loops of a forward sweep, by statement position.
pub(super) type Checkpoints = Vec<Option<LoopCheckpoints>>;

/// The parts of a loop statement (`loop params = init ... do body`) that
/// its rules read.
#[derive(Clone, Copy)]
pub(super) struct LoopParts<'a> {
    pub(super) params: &'a [Param],
    pub(super) init: &'a [Atom],
    pub(super) body: &'a Body,
}

impl Reverse<'_> {
    /// The forward sweep of the loop `stm` (its parts `parts`, its form
    /// `form`): a `for` loop runs checkpointing its parameters; a `while`
    /// loop first counts its iterations and then runs as a `for` loop of
    /// that many iterations (Schenck et al. §6.2).
    pub(super) fn checkpointed_loop(
        &mut self,
        b: &mut FunctionBuilder,
        stm: &Stm,
        parts: LoopParts,
        form: &LoopForm,
    ) -> Result<LoopCheckpoints, AdError> {
        match form {
            LoopForm::For { i, bound } => {
                let restore = self.checkpointing_loop(b, stm, parts, *i, *bound)?;
                Ok(LoopCheckpoints {
                    restore,
                    bound: *bound,
                    i: *i,
                })
            }
            LoopForm::While { cond } => {
                let LoopParts { params, init, body } = parts;
                let count = self.count_iterations(b, params, init, cond, body)?;
                let i = b.vars.fresh("i", Type::Prim(PrimType::I64));
                let restore = self.checkpointing_loop(b, stm, parts, i, count)?;
                Ok(LoopCheckpoints {
                    restore,
                    bound: count,
                    i,
                })
            }
        }
    }

    /// The loop, also writing each parameter's value at each iteration's
    /// entry into a checkpoint array (`[bound]` rows); returns the final
    /// checkpoint arrays. A loop whose array sizes may change writes a state
    /// only while every array keeps its initial shape, and also keeps its
    /// initial values (copies of those the loop consumes) for the return
    /// sweep to run it again from ([`Restore::Guarded`]).
    fn checkpointing_loop(
        &mut self,
        b: &mut FunctionBuilder,
        stm: &Stm,
        parts: LoopParts,
        i: Var,
        bound: Atom,
    ) -> Result<Restore, AdError> {
        let LoopParts { params, init, body } = parts;
        // Loops whose sizes may change keep their initial values (copies
        // of those the loop consumes) and the initial shapes.
        let varying = params.iter().any(|p| size_varies(&p.ty, params));
        let mut initial = Vec::new();
        let mut shapes: Vec<(Var, Vec<Atom>)> = Vec::new();
        if varying {
            for (p, a) in params.iter().zip(init) {
                match a {
                    Atom::Var(v) if p.ty.rank() > 0 => {
                        let rank = type_of(b, self.span, *v)?.rank();
                        let shape = (0..rank)
                            .map(|d| Ok(Atom::Var(b.let1("n", Exp::Size(*v, d))?)))
                            .collect::<Result<_, AdError>>()?;
                        shapes.push((p.var, shape));
                        initial.push(if p.unique {
                            Atom::Var(b.let1_existential("saved", Exp::Copy(*v))?)
                        } else {
                            *a
                        });
                    }
                    a => initial.push(*a),
                }
            }
        }
        let bound_t = atom_type(b, self.span, &bound)?.elem();
        let n = if bound_t == PrimType::I64 {
            bound
        } else {
            b.conv(ConvOp::Convert(bound_t, PrimType::I64), bound)
        };
        let n_dim = match n {
            Atom::Var(v) => Dim::Var(v),
            Atom::Const(PrimValue::I64(c)) => Dim::Const(c.max(0)),
            Atom::Const(_) => Dim::Ext,
        };
        let mut ck_init = Vec::with_capacity(params.len());
        for (p, a) in params.iter().zip(init) {
            let row = zero_of(b, self.span, a)?;
            let t = p.ty.array_of(n_dim);
            ck_init.push((b.bind1("checkpoints", t.clone(), Exp::Replicate(n, row)), t));
        }
        let mut all_params = params.to_vec();
        let mut ck_params = Vec::with_capacity(params.len());
        for (_, t) in &ck_init {
            let mut p = b.param("checkpoints", t.clone());
            p.unique = true;
            ck_params.push(p.clone());
            all_params.push(p);
        }
        let mut stms = Vec::new();
        let i64_i = if bound_t == PrimType::I64 {
            Atom::Var(i)
        } else {
            let v = b.vars.fresh("i", Type::Prim(PrimType::I64));
            stms.push(Stm {
                pat: vec![Param::new(v, Type::Prim(PrimType::I64))],
                exp: Exp::Conv(ConvOp::Convert(bound_t, PrimType::I64), Atom::Var(i)),
                span: self.span,
            });
            Atom::Var(v)
        };
        // A loop whose sizes may change: `ok` says every array still has
        // its initial shape (and had at every earlier iteration); only then
        // is the state written.
        let fits = varying.then(|| b.param("fits", Type::Prim(PrimType::Bool)));
        b.begin();
        let ok = match &fits {
            None => None,
            Some(fits) => {
                let mut ok = Atom::Var(fits.var);
                for (v, shape) in &shapes {
                    for (d, n) in shape.iter().enumerate() {
                        let now = Atom::Var(b.let1("n", Exp::Size(*v, d))?);
                        let same = b.cmp(CmpOp::Eq, now, *n);
                        ok = b.binop(BinOp::LogAnd, ok, same)?;
                    }
                }
                Some(ok)
            }
        };
        let mut new_cks = Vec::with_capacity(params.len() + 1);
        for (p, ck) in params.iter().zip(&ck_params) {
            let write = Exp::Update(ck.var, vec![DimIndex::Fix(i64_i)], Atom::Var(p.var));
            let v = match ok {
                None => b.let1("checkpoints", write)?,
                Some(ok) => {
                    b.begin();
                    let written = b.let1("checkpoints", write)?;
                    let then_ = b.end(vec![Atom::Var(written)]);
                    let else_ = Body {
                        stms: vec![],
                        result: vec![Atom::Var(ck.var)],
                    };
                    let cond = ok;
                    b.let1("checkpoints", Exp::If { cond, then_, else_ })?
                }
            };
            new_cks.push(Atom::Var(v));
        }
        stms.extend(b.end(vec![]).stms);
        if let (Some(fits), Some(ok)) = (&fits, ok) {
            all_params.push(fits.clone());
            new_cks.push(ok);
        }
        stms.extend(body.stms.iter().cloned());
        let mut result = body.result.clone();
        result.extend(new_cks);
        let mut init_all = init.to_vec();
        init_all.extend(ck_init.iter().map(|(v, _)| Atom::Var(*v)));
        let mut pat = stm.pat.clone();
        let mut finals = Vec::with_capacity(params.len());
        for (_, t) in &ck_init {
            let v = b.vars.fresh("checkpoints", t.clone());
            pat.push(Param::new(v, t.clone()));
            finals.push(v);
        }
        let mut fits_final = None;
        if fits.is_some() {
            init_all.push(Atom::Const(PrimValue::Bool(true)));
            let v = b.vars.fresh("fits", Type::Prim(PrimType::Bool));
            pat.push(Param::new(v, Type::Prim(PrimType::Bool)));
            fits_final = Some(v);
        }
        b.push(Stm {
            pat,
            exp: Exp::Loop {
                params: all_params,
                init: init_all,
                form: LoopForm::For { i, bound },
                body: Body { stms, result },
            },
            span: stm.span,
        });
        Ok(match fits_final {
            Some(fits) => Restore::Guarded {
                checkpoints: finals,
                fits,
                initial,
            },
            None => Restore::Checkpoints(finals),
        })
    }

    /// Runs a `while` loop (on fresh variables) counting its iterations;
    /// returns the count (an `i64`).
    fn count_iterations(
        &mut self,
        b: &mut FunctionBuilder,
        params: &[Param],
        init: &[Atom],
        cond: &Body,
        body: &Body,
    ) -> Result<Atom, AdError> {
        let mut map = HashMap::new();
        let mut new_params = Vec::with_capacity(params.len() + 1);
        for p in params {
            let np = Param::new(b.vars.fresh_like(p.var)?, p.ty.clone());
            map.insert(p.var, Atom::Var(np.var));
            new_params.push(np);
        }
        let counter = b.param("count", Type::Prim(PrimType::I64));
        let cond = self.fresh_copy(b, cond, map.clone())?;
        let mut body = self.fresh_copy(b, body, map)?;
        let next = b.vars.fresh("count", Type::Prim(PrimType::I64));
        body.stms.push(Stm {
            pat: vec![Param::new(next, Type::Prim(PrimType::I64))],
            exp: Exp::BinOp(
                BinOp::Add,
                Atom::Var(counter.var),
                Atom::Const(PrimValue::I64(1)),
            ),
            span: self.span,
        });
        body.result.push(Atom::Var(next));
        new_params.push(counter);
        let mut all_init = init.to_vec();
        all_init.push(Atom::Const(PrimValue::I64(0)));
        let mut pat: Vec<Param> = Vec::with_capacity(new_params.len());
        for p in &new_params {
            pat.push(Param::new(b.vars.fresh_like(p.var)?, p.ty.clone()));
        }
        let count = pat[pat.len() - 1].var;
        b.push(Stm {
            pat,
            exp: Exp::Loop {
                params: new_params,
                init: all_init,
                form: LoopForm::While {
                    cond: Box::new(cond),
                },
                body,
            },
            span: self.span,
        });
        Ok(Atom::Var(count))
    }

    /// The loop's parameters at the entry of iteration `iteration`, by
    /// running its first `iteration` iterations again from the initial
    /// values ([`Restore::Guarded`]); returns fresh variables that the
    /// caller owns (consumed parameters start from copies).
    fn rerun_loop(
        &mut self,
        b: &mut FunctionBuilder,
        params: &[Param],
        initial: &[Atom],
        i: Var,
        iteration: Atom,
        body: &Body,
    ) -> Result<Vec<Var>, AdError> {
        let index_t = atom_type(b, self.span, &iteration)?;
        let k = b.vars.fresh("k", index_t);
        let mut map = HashMap::new();
        map.insert(i, Atom::Var(k));
        let mut fresh = Vec::with_capacity(params.len());
        let mut init = Vec::with_capacity(params.len());
        for (p, a) in params.iter().zip(initial) {
            let t = crate::util::existential(&p.ty);
            let mut q = b.param("rerun", t.clone());
            q.unique = p.unique;
            map.insert(p.var, Atom::Var(q.var));
            fresh.push(q);
            init.push(match a {
                Atom::Var(v) if p.unique && t.rank() > 0 => {
                    Atom::Var(b.bind1("rerun", t, Exp::Copy(*v)))
                }
                a => *a,
            });
        }
        let copy = self.fresh_copy(b, body, map)?;
        let pat: Vec<Param> = fresh
            .iter()
            .map(|q| Param::new(b.vars.fresh("restored", q.ty.clone()), q.ty.clone()))
            .collect();
        let out = pat.iter().map(|p| p.var).collect();
        b.push(Stm {
            pat,
            exp: Exp::Loop {
                params: fresh,
                init,
                form: LoopForm::For {
                    i: k,
                    bound: iteration,
                },
                body: copy,
            },
            span: self.span,
        });
        Ok(out)
    }

    /// A `for` loop, reversed (Schenck et al. §4.2): iteration `n-1-j` of the
    /// adjoint loop restores the parameters from the checkpoints, runs the
    /// body again and then its return sweep, carrying the adjoints of the
    /// parameters and of the body's free variables.
    pub(super) fn for_loop(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        parts: LoopParts,
        ck: &LoopCheckpoints,
    ) -> Result<(), AdError> {
        let Results { pat, ybar } = res;
        let LoopParts { params, init, body } = parts;
        let (i, bound) = (ck.i, ck.bound);
        let mut exclude: Vec<Var> = params.iter().map(|p| p.var).collect();
        exclude.push(i);
        let all = self.candidates(b, nabla_ir::free_vars_body(body), &exclude)?;
        // Free arrays of an enclosing map lambda whose adjoints go to
        // accumulators: the adjoint loop threads each accumulator (a
        // parameter after the adjoints).
        let (accumulated, fvs): (Vec<Var>, Vec<Var>) =
            all.into_iter().partition(|v| self.redirect.contains_key(v));
        let bound_t = atom_type(b, self.span, &bound)?.elem();
        // Initial values of the adjoint loop's parameters.
        let mut adj_init = Vec::new();
        let mut adj_params = Vec::new();
        for (k, p) in params.iter().enumerate() {
            // Zeros shaped like the loop's result (the initial value may
            // have been consumed by the loop).
            let a = match ybar[k] {
                Some(a) => self.consumable(b, adj, a)?,
                None => zero_like(b, self.span, pat[k].var)?,
            };
            adj_init.push(a);
            adj_params.push(Self::adjoint_param(b, p.ty.clone()));
        }
        for v in &fvs {
            let fresh_zeros = adj.get(*v).is_none();
            let a = self.materialize(b, adj, *v)?;
            // The loop's result replaces this adjoint (below).
            let a = if fresh_zeros {
                a
            } else {
                self.consumable(b, adj, a)?
            };
            adj_init.push(a);
            let t = type_of(b, self.span, *v)?;
            adj_params.push(Self::adjoint_param(b, t));
        }
        let mut acc_params = Vec::with_capacity(accumulated.len());
        for v in &accumulated {
            let acc = self.redirect[v];
            let t = type_of(b, self.span, acc)?;
            adj_init.push(Atom::Var(acc));
            acc_params.push(b.param("acc", t));
        }
        adj_params.extend(acc_params.iter().cloned());
        let outer_redirect = self.redirect.clone();
        // What the adjoint loop's body recomputes of the primal.
        let mut recomputed = HashSet::new();
        let j = b.vars.fresh("j", Type::Prim(bound_t));
        b.begin();
        let r = (|| -> Result<Vec<Atom>, AdError> {
            let last = b
                .binop(
                    BinOp::Sub,
                    bound,
                    Atom::Const(nabla_ir::derivatives::constant(bound_t, 1.0)),
                )
                .map_err(|u| self.unknown(u))?;
            let iteration = b
                .binop(BinOp::Sub, last, Atom::Var(j))
                .map_err(|u| self.unknown(u))?;
            let index = b.conv(ConvOp::Convert(bound_t, PrimType::I64), iteration);
            let mut map = HashMap::new();
            map.insert(i, iteration);
            let from_checkpoints = |b: &mut FunctionBuilder, checkpoints: &[Var]| {
                let mut restored = Vec::with_capacity(params.len());
                for (p, ck) in params.iter().zip(checkpoints) {
                    let t = crate::util::existential(&p.ty);
                    let mut v = b.let1_existential(
                        "restored",
                        Exp::Index(*ck, vec![DimIndex::Fix(index)]),
                    )?;
                    if p.unique && t.rank() > 0 {
                        // The body consumes this parameter: give it its
                        // own copy, not a view of the checkpoints.
                        v = b.let1("restored", Exp::Copy(v))?;
                    }
                    restored.push(v);
                }
                Ok::<_, AdError>(restored)
            };
            let restored = match &ck.restore {
                Restore::Checkpoints(checkpoints) => from_checkpoints(b, checkpoints)?,
                Restore::Guarded {
                    checkpoints,
                    fits,
                    initial,
                } => {
                    b.begin();
                    let rows = from_checkpoints(b, checkpoints)?;
                    let then_ = b.end(rows.into_iter().map(Atom::Var).collect());
                    b.begin();
                    let rerun = self.rerun_loop(b, params, initial, i, iteration, body);
                    let else_ = b.end(vec![]);
                    let else_ = Body {
                        stms: else_.stms,
                        result: rerun?.into_iter().map(Atom::Var).collect(),
                    };
                    b.let_(
                        "restored",
                        Exp::If {
                            cond: Atom::Var(*fits),
                            then_,
                            else_,
                        },
                    )?
                }
            };
            for (p, v) in params.iter().zip(&restored) {
                map.insert(p.var, Atom::Var(*v));
                self.active.insert(*v);
            }
            let copy = self.fresh_copy(b, body, map)?;
            recomputed.extend(restored.iter().copied());
            recomputed.extend(bound_vars(&copy.stms));
            let cks = self.forward_sweep(b, &copy.stms)?;
            // The adjoint loop's array parameters are unique: the body
            // updates them in place (an index's adjoint is one element
            // update, not a copy of the array per iteration).
            let mut inner = Adjoints::default();
            for (v, a) in fvs.iter().zip(&adj_params[params.len()..]) {
                inner.map.insert(*v, Atom::Var(a.var));
                if a.unique {
                    inner.owned.insert(a.var);
                }
            }
            for (k, (r, a)) in copy
                .result
                .iter()
                .zip(&adj_params[..params.len()])
                .enumerate()
            {
                if let Atom::Var(r) = r {
                    // A result returned twice shares its adjoint parameters.
                    let once = !copy.result[..k].contains(&Atom::Var(*r));
                    let owned = a.unique && once && !inner.map.contains_key(r);
                    self.add(b, &mut inner, *r, Atom::Var(a.var), owned)?;
                }
            }
            for (v, p) in accumulated.iter().zip(&acc_params) {
                self.redirect.insert(*v, p.var);
            }
            self.return_sweep(b, &copy.stms, &cks, &mut inner)?;
            let mut results = Vec::new();
            for v in &restored {
                results.push(self.materialize(b, &inner, *v)?);
            }
            for v in &fvs {
                results.push(self.materialize(b, &inner, *v)?);
            }
            results.extend(accumulated.iter().map(|v| Atom::Var(self.redirect[v])));
            Ok(results)
        })();
        self.redirect = outer_redirect;
        let loop_body = b.end(vec![]);
        let results = r?;
        let mut loop_body = Body {
            stms: loop_body.stms,
            result: results,
        };
        // The iteration's primal code that the return sweep does not read
        // (e.g. the last map of the body, whose value only the next
        // iteration reads) is not recomputed.
        prune_recomputed(&mut loop_body, &recomputed);
        let mut out = Vec::new();
        for p in &adj_params {
            out.push(Param::new(b.vars.fresh("adj", p.ty.clone()), p.ty.clone()));
        }
        b.push(Stm {
            pat: out.clone(),
            exp: Exp::Loop {
                params: adj_params,
                init: adj_init,
                form: LoopForm::For { i: j, bound },
                body: loop_body,
            },
            span: self.span,
        });
        // The free variables' adjoints were carried through the loop (they
        // replace the old ones); then the initial values get theirs (a
        // variable may be both).
        for (v, p) in fvs.iter().zip(&out[params.len()..]) {
            if let Some(Atom::Var(old)) = adj.map.insert(*v, Atom::Var(p.var)) {
                adj.owned.remove(&old);
            }
        }
        for (v, p) in accumulated.iter().zip(&out[params.len() + fvs.len()..]) {
            self.redirect.insert(*v, p.var);
        }
        for (k, a) in init.iter().enumerate() {
            if let Atom::Var(x) = a {
                self.add(b, adj, *x, Atom::Var(out[k].var), true)?;
            }
        }
        Ok(())
    }

    /// A parameter for an adjoint carried by a loop: unique when it is an
    /// array (the loop body updates it in place).
    fn adjoint_param(b: &mut FunctionBuilder, t: Type) -> Param {
        let mut p = b.param("adj", t);
        p.unique = p.ty.rank() > 0;
        p
    }

    /// `a`, or a copy of it where it is an array that something else may
    /// still read (a loop consumes the initial values of its unique
    /// parameters).
    fn consumable(
        &self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        a: Atom,
    ) -> Result<Atom, AdError> {
        let Atom::Var(v) = a else { return Ok(a) };
        let t = type_of(b, self.span, v)?;
        if t.rank() == 0 || adj.owned.remove(&v) {
            return Ok(a);
        }
        Ok(Atom::Var(b.let1_existential("adj_copy", Exp::Copy(v))?))
    }
}
