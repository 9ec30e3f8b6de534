//! The state of a return sweep ([`Reverse`]) and the adjoint bookkeeping that
//! every rule uses: the map of adjoints ([`Adjoints`], absent: zero), adding a
//! contribution (in place where the adjoint array is owned, into an accumulator
//! for a free array of a map's lambda), zero seeds, summing rows, and small IR
//! helpers (`iota`, sequencing bodies, pruning recomputed statements). The
//! adjoint map and the redirection of free arrays to accumulators follow
//! Schenck, Rønning, Henriksen and Oancea, "AD for an Array Language with
//! Nested Parallelism" (SC22), §4.1 and §5.4.

use crate::util::{type_of, zero_like, zero_of};
use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::{FunctionBuilder, UnknownVariable};
use nabla_ir::{Atom, BinOp, Body, Exp, Param, PrimType, PrimValue, Soac, Span, Stm, Type, Var};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The adjoints accumulated so far (absent: zero).
#[derive(Clone, Default, Debug)]
pub struct Adjoints {
    pub(super) map: HashMap<Var, Atom>,
    /// Adjoint arrays made here and referred to by one entry only: they may
    /// be updated in place.
    pub(super) owned: HashSet<Var>,
}

impl Adjoints {
    /// The adjoint of `v` (`None`: zero).
    pub fn get(&self, v: Var) -> Option<Atom> {
        self.map.get(&v).copied()
    }
}

/// The return sweep of one function's code.
pub(super) struct Reverse<'a> {
    pub(super) ad: &'a mut Ad,
    pub(super) span: Span,
    /// Active variables (activity analysis): those that depend on the
    /// `vjp`'s parameters. Only they get adjoints; everything else is
    /// computed on primals only.
    pub(super) active: HashSet<Var>,
    /// Free arrays of the map lambda being reversed whose adjoints go to
    /// an accumulator: the accumulator variable now in scope.
    pub(super) redirect: HashMap<Var, Var>,
    /// The first variable bound by each `with_vjp` inside the rules the
    /// return sweep emitted (see [`super::expand_vjp`]).
    pub(super) in_rules: HashSet<Var>,
    /// Adjoint arrays that are zero except at one index (made by the rule
    /// of `reduce min`/`max`): the index (the array's width where there is
    /// none) and the value there. A `map` whose only result adjoint is one
    /// of them reverses that one element alone (see
    /// [`Reverse::map_one_hot`]).
    pub(super) one_hot: HashMap<Var, (Atom, Atom)>,
    /// Statements of a lambda being reversed whose values the primal map
    /// already stored (see [`Reverse::adjoint_map`]): by the first variable
    /// they bind, the copy from the adjoint map's parameters that the
    /// forward sweep emits instead of recomputing them.
    pub(super) precomputed: HashMap<Var, Exp>,
    /// How many lambdas of maps being reversed enclose the statement being
    /// reversed (0: the `vjp`'s own body, whose SOACs are outermost, so a
    /// parallel form of a rule runs in parallel there).
    pub(super) lambda_depth: usize,
}

/// Removes from `body`, at any depth, the statements that recompute primal
/// values (they bind only variables of `recomputed`) which nothing reads,
/// until none is left. Unlike dead-code elimination in general, this may
/// remove statements that could fail (an index, a division): they are
/// re-executions, in the return sweep, of statements that the forward sweep
/// already ran on the same values, so they cannot fail here (Schenck et al. §4:
/// redundant execution). Statements with accumulators stay (an
/// accumulator is used exactly once, by its successor).
pub(super) fn prune_recomputed(body: &mut Body, recomputed: &HashSet<Var>) {
    fn has_acc(s: &Stm) -> bool {
        s.pat.iter().any(|p| matches!(p.ty, Type::Acc(..)))
            || matches!(s.exp, Exp::WithAcc { .. } | Exp::UpdateAcc { .. })
    }
    fn prune(body: &mut Body, recomputed: &HashSet<Var>, uses: &HashMap<Var, usize>) -> bool {
        let before = body.stms.len();
        body.stms.retain(|s| {
            let dead = !s.pat.is_empty()
                && s.pat.iter().all(|p| recomputed.contains(&p.var))
                && s.pat.iter().all(|p| !uses.contains_key(&p.var))
                && !has_acc(s);
            !dead
        });
        let mut changed = body.stms.len() != before;
        for s in &mut body.stms {
            changed |= s
                .exp
                .nested_bodies_mut()
                .into_iter()
                .fold(false, |c, nb| prune(nb, recomputed, uses) | c);
        }
        changed
    }
    loop {
        let mut uses: HashMap<Var, usize> = HashMap::new();
        nabla_ir::visit::for_each_var(body, |v, _| *uses.entry(v).or_insert(0) += 1, |_| {});
        if !prune(body, recomputed, &uses) {
            return;
        }
    }
}

/// The variables the statements `stms` bind (at their top level).
pub(super) fn bound_vars(stms: &[Stm]) -> impl Iterator<Item = Var> + '_ {
    stms.iter().flat_map(|s| s.pat.iter().map(|p| p.var))
}

/// The statements of `bodies` one after the other, with the last one's
/// result (applications of an operator chained through their results).
pub(super) fn sequence(bodies: Vec<Body>) -> Body {
    let mut out = Body::default();
    for body in bodies {
        out.stms.extend(body.stms);
        out.result = body.result;
    }
    out
}

/// `iota w` (an `i64` array).
pub(super) fn iota(b: &mut FunctionBuilder, w: Atom) -> Result<Var, AdError> {
    Ok(b.let1_existential(
        "iota",
        Exp::Iota {
            n: w,
            start: Atom::Const(PrimValue::I64(0)),
            step: Atom::Const(PrimValue::I64(1)),
            ty: PrimType::I64,
        },
    )?)
}

/// `x + y` elementwise on values of type `t` (a nest of maps for arrays).
pub(crate) fn add_values(
    b: &mut FunctionBuilder,
    span: Span,
    t: &Type,
    x: Atom,
    y: Atom,
) -> Result<Atom, AdError> {
    match t {
        Type::Prim(_) => b
            .binop(BinOp::Add, x, y)
            .map_err(|u| AdError::unknown_variable(span, u)),
        Type::Acc(..) => unsupported(span, "static AD does not differentiate accumulators yet"),
        Type::Array(..) => {
            let (Atom::Var(xv), Atom::Var(yv)) = (x, y) else {
                return error(span, "internal error: an array adjoint that is a constant");
            };
            let row = t.row().unwrap_or(Type::Prim(t.elem()));
            let n = Atom::Var(b.let1("n", Exp::Size(xv, 0))?);
            let row2 = row.clone();
            let lam = b.lambda::<AdError>("a", vec![row.clone(), row], |b, ps| {
                Ok(vec![add_values(
                    b,
                    span,
                    &row2,
                    Atom::Var(ps[0]),
                    Atom::Var(ps[1]),
                )?])
            })?;
            let sum = b.bind1(
                "adj_sum",
                crate::util::existential(t),
                Exp::Soac(Soac::Map {
                    w: n,
                    lam,
                    arrs: vec![xv, yv],
                }),
            );
            Ok(Atom::Var(sum))
        }
    }
}

/// A statement's results in the return sweep: its pattern and their
/// adjoints (`None`: zero), taken out of the [`Adjoints`].
#[derive(Clone, Copy)]
pub(super) struct Results<'s> {
    pub(super) pat: &'s [Param],
    pub(super) ybar: &'s [Option<Atom>],
}

impl Reverse<'_> {
    pub(super) fn unsupported<T>(&self, what: &str) -> Result<T, AdError> {
        unsupported(
            self.span,
            format!("static AD does not differentiate {what} in vjp yet"),
        )
    }

    pub(super) fn unknown(&self, u: UnknownVariable) -> AdError {
        AdError::unknown_variable(self.span, u)
    }

    /// Whether adjoints of values of type `t` are tracked (numbers and
    /// arrays of numbers; not `bool`s or accumulators).
    pub(super) fn differentiable(t: &Type) -> bool {
        !matches!(t, Type::Acc(..)) && t.elem() != PrimType::Bool
    }

    /// The adjoint of `v`, made a value (zeros) if it is zero.
    pub(super) fn materialize(
        &self,
        b: &mut FunctionBuilder,
        adj: &Adjoints,
        v: Var,
    ) -> Result<Atom, AdError> {
        match adj.get(v) {
            Some(a) => Ok(a),
            None => zero_like(b, self.span, v),
        }
    }

    /// `x + y` elementwise on values of type `t`.
    pub(super) fn add_values(
        &self,
        b: &mut FunctionBuilder,
        t: &Type,
        x: Atom,
        y: Atom,
    ) -> Result<Atom, AdError> {
        add_values(b, self.span, t, x, y)
    }

    /// Adds a contribution that may be shared with other code to the adjoint
    /// of `v`.
    pub(super) fn add_shared(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Var,
        contribution: Atom,
    ) -> Result<(), AdError> {
        self.add(b, adj, v, contribution, false)
    }

    /// Adds `contribution` to the adjoint of `v`; `owned`: the contribution
    /// is a new array that nothing else refers to.
    pub(super) fn add(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Var,
        contribution: Atom,
        owned: bool,
    ) -> Result<(), AdError> {
        if !self.active.contains(&v) {
            return Ok(());
        }
        if let Some(acc) = self.redirect.get(&v).copied() {
            // A whole-array contribution to a free array of a map lambda.
            let next = b.let1(
                "acc",
                Exp::UpdateAcc {
                    acc,
                    indices: vec![],
                    value: contribution,
                },
            )?;
            self.redirect.insert(v, next);
            return Ok(());
        }
        let t = type_of(b, self.span, v)?;
        if !Self::differentiable(&t) {
            return Ok(());
        }
        match adj.map.get(&v).copied() {
            None => {
                adj.map.insert(v, contribution);
                if let (true, Atom::Var(c)) = (owned, contribution) {
                    adj.owned.insert(c);
                }
            }
            Some(old) => {
                let sum = self.add_values(b, &t, old, contribution)?;
                if let Atom::Var(o) = old {
                    adj.owned.remove(&o);
                }
                adj.map.insert(v, sum);
                if let Atom::Var(s) = sum {
                    if t.rank() > 0 {
                        adj.owned.insert(s);
                    }
                }
            }
        }
        Ok(())
    }

    /// The adjoint array of `v`, ready to be updated in place (taken out of
    /// the map: the caller puts the updated array back).
    pub(super) fn owned_adjoint(
        &self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Var,
    ) -> Result<Var, AdError> {
        if self.redirect.contains_key(&v) {
            return self.unsupported("this use of a free array inside a map");
        }
        match adj.map.remove(&v) {
            Some(Atom::Var(a)) if adj.owned.remove(&a) => Ok(a),
            Some(Atom::Var(a)) => Ok(b.let1_existential("adj_copy", Exp::Copy(a))?),
            _ => match zero_like(b, self.span, v)? {
                Atom::Var(z) => Ok(z),
                Atom::Const(_) => error(self.span, "internal error: scalar adjoint array"),
            },
        }
    }

    /// The adjoints `ybar` of a construct's results, a zero constant of
    /// the result type `ret[k]` where `ybar[k]` is absent.
    pub(super) fn seeds(&self, ret: &[Type], ybar: &[Option<Atom>]) -> Vec<Atom> {
        ret.iter()
            .zip(ybar)
            .map(|(t, y)| y.unwrap_or(Atom::Const(PrimValue::zero(t.elem()))))
            .collect()
    }

    /// The adjoints of a SOAC's array results as variables (absent: zero).
    pub(super) fn array_adjoints(
        &self,
        ybar: &[Option<Atom>],
    ) -> Result<Vec<Option<Var>>, AdError> {
        ybar.iter()
            .map(|y| match y {
                None => Ok(None),
                Some(Atom::Var(g)) => Ok(Some(*g)),
                Some(Atom::Const(_)) => error(self.span, "internal error: constant array adjoint"),
            })
            .collect()
    }

    /// Whether a statement binds an active variable.
    pub(super) fn is_active_stm(&self, stm: &Stm) -> bool {
        stm.pat.iter().any(|p| self.active.contains(&p.var))
    }

    /// The sum of the `n` rows of `g` (for the adjoint of `replicate`).
    pub(super) fn sum_rows(
        &self,
        b: &mut FunctionBuilder,
        n: Atom,
        g: Var,
        row: &Type,
        like: Atom,
    ) -> Result<Atom, AdError> {
        let span = self.span;
        let neutral = zero_of(b, span, &like)?;
        let row2 = row.clone();
        let lam = b.lambda::<AdError>("a", vec![row.clone(), row.clone()], |b, ps| {
            Ok(vec![add_values(
                b,
                span,
                &row2,
                Atom::Var(ps[0]),
                Atom::Var(ps[1]),
            )?])
        })?;
        let s = b.let1_existential(
            "adj_sum",
            Exp::Soac(Soac::Reduce {
                w: n,
                lam,
                neutral: vec![neutral],
                arrs: vec![g],
                commutative: true,
            }),
        )?;
        Ok(Atom::Var(s))
    }

    /// The differentiable free variables of some code, in a fixed order.
    pub(super) fn candidates(
        &self,
        b: &FunctionBuilder,
        free: impl IntoIterator<Item = Var>,
        exclude: &[Var],
    ) -> Result<Vec<Var>, AdError> {
        let set: BTreeSet<Var> = free
            .into_iter()
            .filter(|v| !exclude.contains(v) && self.active.contains(v))
            .collect();
        let mut out = Vec::new();
        for v in set {
            if Self::differentiable(&type_of(b, self.span, v)?) {
                out.push(v);
            }
        }
        Ok(out)
    }
}
