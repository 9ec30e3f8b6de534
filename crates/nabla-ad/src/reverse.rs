//! Reverse mode by redundant execution (seed 003 §4): a forward sweep that
//! runs the primal code, then a return sweep that visits the statements
//! backwards and accumulates adjoints. Inside nested scopes (a branch, a
//! loop body, a map's lambda) the primal code of the scope is run again in
//! the return sweep, on fresh variables, instead of being stored; only the
//! values carried by `for` loops are checkpointed (one array per loop
//! parameter, written at each iteration's entry, seed 003 §4.2).
//!
//! Adjoints are kept in a map from primal variables to atoms ([`Adjoints`]);
//! a variable without an entry has a zero adjoint, so a zero adjoint is
//! never multiplied by a partial derivative (an infinite or NaN partial
//! cannot turn it into NaN). Adjoint arrays that this code created and that
//! nothing else refers to are updated in place (an index's adjoint is one
//! element update, not a one-hot array).
//!
//! Accumulators in the differentiated code (an inner `vjp`'s adjoint code,
//! under an outer `vjp`) are differentiated through a surrogate without
//! them (`reverse/accumulators.rs`). Constructs without a rule here yet (a
//! free array of a map's lambda sliced in several dimensions, or read
//! whole where the map also reads arrays bound in an enclosing lambda;
//! accumulators with an operator other than `+`) make the `vjp` fall back
//! to the dynamic AD ([`crate::AdError::unsupported`]).

use crate::util::{
    atom_type, nested_bodies_mut, shape_of, type_of, zero_like, zero_of, Emit, EmitError,
};
use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::{FunctionBuilder, UnknownVariable};
use nabla_ir::derivatives::{eval_partials, Derivative, ScalarOp};
use nabla_ir::rewrite::{dim_of_atom, walk_body_deep, Visitor};
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, ConvOp, Dim, DimIndex, Exp, Lambda, LoopForm, Param, PrimType,
    PrimValue, Soac, Span, Stm, Type, UnOp, Var,
};
use std::collections::{BTreeSet, HashMap, HashSet};

mod accumulators;
mod histograms;

/// A scan `ys = scan op neutral arrs` (`w` elements, `k` components) in
/// the return sweep, with the adjoints `gs` of its results (absent: zero);
/// its arities are checked where it is made.
struct ScanAdjoint<'a> {
    w: Atom,
    op: &'a Lambda,
    neutral: &'a [Atom],
    arrs: &'a [Var],
    ys: Vec<Var>,
    gs: Vec<Option<Var>>,
}

/// A slice in one dimension of an array, the other dimensions indexed:
/// `v[before..., start:+len*stride, after...]`.
struct Slice {
    before: Vec<Atom>,
    start: Atom,
    len: Atom,
    stride: Atom,
    after: Vec<Atom>,
}

/// The adjoints accumulated so far (absent: zero).
#[derive(Clone, Default, Debug)]
pub struct Adjoints {
    map: HashMap<Var, Atom>,
    /// Adjoint arrays made here and referred to by one entry only: they may
    /// be updated in place.
    owned: HashSet<Var>,
}

impl Adjoints {
    /// The adjoint of `v` (`None`: zero).
    pub fn get(&self, v: Var) -> Option<Atom> {
        self.map.get(&v).copied()
    }
}

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

/// Copies code with fresh variables for everything it binds; `map` gives
/// the atoms that free variables (e.g. loop parameters) become. Code from
/// the same function keeps its other free variables; code from another
/// function (`source`: that function's variables) may have none, and its
/// binders take their names and types from `source`.
struct Copier<'a> {
    b: &'a mut FunctionBuilder,
    source: Option<&'a nabla_ir::builder::VarTable>,
    map: HashMap<Var, Atom>,
    failed: Option<String>,
}

impl Copier<'_> {
    fn unmapped(&mut self, v: Var) {
        if self.source.is_some() {
            self.failed = Some(format!(
                "internal error: free variable #{} in a callee",
                v.0
            ));
        }
    }
}

impl Visitor for Copier<'_> {
    fn atom(&mut self, a: &mut Atom) {
        if let Atom::Var(v) = a {
            match self.map.get(v) {
                Some(x) => *a = *x,
                None => self.unmapped(*v),
            }
        }
    }
    fn var(&mut self, v: &mut Var) {
        match self.map.get(v) {
            Some(Atom::Var(x)) => *v = *x,
            Some(Atom::Const(_)) => {
                self.failed = Some("internal error: a constant where an array is needed".into())
            }
            None => self.unmapped(*v),
        }
    }
    fn bind(&mut self, v: &mut Var) {
        let fresh = match self.source {
            None => self.b.vars.fresh_like(*v),
            Some(source) => source.type_of(*v).map(|t| {
                let name = nabla_ir::builder::base_name(source.name(*v)).to_string();
                self.b.vars.fresh(&name, t.clone())
            }),
        };
        match fresh {
            Ok(x) => {
                self.map.insert(*v, Atom::Var(x));
                *v = x;
            }
            Err(u) => self.failed = Some(u.to_string()),
        }
    }
    fn dim(&mut self, d: &mut Dim) {
        if let Dim::Var(v) = d {
            match self.map.get(v) {
                Some(x) => *d = dim_of_atom(*x),
                None if self.source.is_some() => *d = Dim::Ext,
                None => {}
            }
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || walk_body_deep(b, self))
    }
}

/// The return sweep of one function's code.
struct Reverse<'a> {
    ad: &'a mut Ad,
    span: Span,
    /// Active variables (activity analysis): those that depend on the
    /// `vjp`'s parameters. Only they get adjoints; everything else is
    /// computed on primals only.
    active: HashSet<Var>,
    /// Free arrays of the map lambda being reversed whose adjoints go to
    /// an accumulator: the accumulator variable now in scope.
    redirect: HashMap<Var, Var>,
    /// The first variable bound by each `with_vjp` inside the rules the
    /// return sweep emitted (see [`expand_vjp`]).
    in_rules: HashSet<Var>,
    /// Adjoint arrays that are zero except at one index (made by the rule
    /// of `reduce min`/`max`): the index (the array's width where there is
    /// none) and the value there. A `map` whose only result adjoint is one
    /// of them reverses that one element alone (see
    /// [`Reverse::map_one_hot`]).
    one_hot: HashMap<Var, (Atom, Atom)>,
    /// Statements of a lambda being reversed whose values the primal map
    /// already stored (see [`Reverse::adjoint_map`]): by the first variable
    /// they bind, the copy from the adjoint map's parameters that the
    /// forward sweep emits instead of recomputing them.
    precomputed: HashMap<Var, Exp>,
}

/// What the forward sweep kept of a loop: how to restore its parameters
/// at an iteration's entry, its trip count and index variable.
#[derive(Clone, Debug)]
struct LoopCheckpoints {
    restore: Restore,
    bound: Atom,
    i: Var,
}

/// How the return sweep gets a loop's parameters at the entry of an
/// iteration.
#[derive(Clone, Debug)]
enum Restore {
    /// From checkpoint arrays, one per parameter, a row per iteration
    /// (seed 003 §4.2).
    Checkpoints(Vec<Var>),
    /// For a loop whose array sizes may change from one iteration to the
    /// next (its parameters' types have existential sizes): the
    /// checkpoints hold the states while every array keeps its initial
    /// shape, which the boolean `fits` records. Where a shape changed, no
    /// rectangular checkpoint array can hold the states, and the return
    /// sweep runs the loop again from its `initial` values up to the
    /// iteration (quadratic in the trip count, no memory per iteration:
    /// the far end of seed 003 §4.3's time/space trade-off; such loops
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
type Checkpoints = Vec<Option<LoopCheckpoints>>;

impl Reverse<'_> {
    fn unsupported<T>(&self, what: &str) -> Result<T, AdError> {
        unsupported(
            self.span,
            format!("static AD does not differentiate {what} in vjp yet"),
        )
    }

    fn unknown(&self, u: UnknownVariable) -> AdError {
        AdError {
            message: u.to_string(),
            span: self.span,
            unsupported: false,
        }
    }

    /// A copy of `body` with fresh variables, free variables replaced by
    /// `map`; the types of the new variables are recorded.
    fn fresh_copy(
        &self,
        b: &mut FunctionBuilder,
        body: &Body,
        map: HashMap<Var, Atom>,
    ) -> Result<Body, AdError> {
        let mut copy = body.clone();
        let mut c = Copier {
            b,
            source: None,
            map,
            failed: None,
        };
        c.body(&mut copy);
        if let Some(m) = c.failed {
            return error(self.span, m);
        }
        b.vars.record_body(&copy);
        Ok(copy)
    }

    /// Whether adjoints of values of type `t` are tracked (numbers and
    /// arrays of numbers; not `bool`s or accumulators).
    fn differentiable(t: &Type) -> bool {
        !matches!(t, Type::Acc(..)) && t.elem() != PrimType::Bool
    }

    /// The adjoint of `v`, made a value (zeros) if it is zero.
    fn materialize(
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
    fn add_values(
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
    fn add_shared(
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
    fn add(
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
            let t = type_of(b, self.span, acc)?;
            let next = b.bind1(
                "acc",
                t,
                Exp::UpdateAcc {
                    acc,
                    indices: vec![],
                    value: contribution,
                },
            );
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

    /// The adjoint `g` of the slice `v[before..., start:+len*stride,
    /// after...]` of a free array `v` of a map lambda, added into `v`'s
    /// accumulator one row (or element) at a time: a sequential loop over
    /// the slice's `len` positions that threads the accumulator (slice of
    /// type `slice_t`, whose row `k` is `v[before..., start + k*stride,
    /// after...]`).
    fn slice_into_accumulator(
        &mut self,
        b: &mut FunctionBuilder,
        v: Var,
        slice: Slice,
        g: Atom,
        slice_t: &Type,
    ) -> Result<(), AdError> {
        let Slice {
            before,
            start,
            len,
            stride,
            after,
        } = slice;
        let Some(row_t) = slice_t.row() else {
            return error(self.span, "internal error: a slice of rank 0");
        };
        let row_t = crate::util::existential(&row_t);
        let acc0 = self.redirect[&v];
        let acc_t = type_of(b, self.span, acc0)?;
        let k = b.vars.fresh("k", Type::Prim(PrimType::I64));
        let p = b.param("acc", acc_t.clone());
        b.begin();
        let r = (|| -> Result<Var, AdError> {
            let offset = b
                .binop(BinOp::Mul, Atom::Var(k), stride)
                .map_err(|u| self.unknown(u))?;
            let position = b
                .binop(BinOp::Add, start, offset)
                .map_err(|u| self.unknown(u))?;
            let element = b.bind1(
                "adj_elem",
                row_t,
                Exp::Index(
                    match g {
                        Atom::Var(g) => g,
                        Atom::Const(_) => {
                            return error(self.span, "internal error: a constant slice adjoint")
                        }
                    },
                    vec![DimIndex::Fix(Atom::Var(k))],
                ),
            );
            let mut indices = before;
            indices.push(position);
            indices.extend(after);
            Ok(b.bind1(
                "acc",
                acc_t.clone(),
                Exp::UpdateAcc {
                    acc: p.var,
                    indices,
                    value: Atom::Var(element),
                },
            ))
        })();
        let body = b.end(vec![]);
        let next = r?;
        let out = b.bind1(
            "acc",
            acc_t,
            Exp::Loop {
                params: vec![p],
                init: vec![Atom::Var(acc0)],
                form: LoopForm::For { i: k, bound: len },
                body: Body {
                    stms: body.stms,
                    result: vec![Atom::Var(next)],
                },
            },
        );
        self.redirect.insert(v, out);
        Ok(())
    }

    /// The adjoint array of `v`, ready to be updated in place (taken out of
    /// the map: the caller puts the updated array back).
    fn owned_adjoint(
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
            Some(Atom::Var(a)) => {
                let t = type_of(b, self.span, a)?;
                Ok(b.bind1("adj_copy", crate::util::existential(&t), Exp::Copy(a)))
            }
            _ => match zero_like(b, self.span, v)? {
                Atom::Var(z) => Ok(z),
                Atom::Const(_) => error(self.span, "internal error: scalar adjoint array"),
            },
        }
    }

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

    /// The loop, also writing each parameter's value at each iteration's
    /// entry into a checkpoint array (`[bound]` rows); returns the final
    /// checkpoint arrays. A loop whose array sizes may change writes a state
    /// only while every array keeps its initial shape, and also keeps its
    /// initial values (copies of those the loop consumes) for the return
    /// sweep to run it again from ([`Restore::Guarded`]).
    #[allow(clippy::too_many_arguments)]
    fn checkpointing_loop(
        &mut self,
        b: &mut FunctionBuilder,
        stm: &Stm,
        params: &[Param],
        init: &[Atom],
        i: Var,
        bound: Atom,
        body: &Body,
    ) -> Result<Restore, AdError> {
        // Loops whose sizes may change keep their initial values (copies
        // of those the loop consumes) and the initial shapes.
        let varying = params.iter().any(|p| size_varies(&p.ty, params));
        let mut initial = Vec::new();
        let mut shapes: Vec<(Var, Vec<Atom>)> = Vec::new();
        if varying {
            for (p, a) in params.iter().zip(init) {
                match a {
                    Atom::Var(v) if p.ty.rank() > 0 => {
                        let t = crate::util::existential(&type_of(b, self.span, *v)?);
                        let shape = (0..t.rank())
                            .map(|d| {
                                Atom::Var(b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(*v, d)))
                            })
                            .collect();
                        shapes.push((p.var, shape));
                        initial.push(if p.unique {
                            Atom::Var(b.bind1("saved", t, Exp::Copy(*v)))
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
                        let now =
                            Atom::Var(b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(*v, d)));
                        let same = b.cmp(CmpOp::Eq, now, *n);
                        ok = b.binop(BinOp::LogAnd, ok, same)?;
                    }
                }
                Some(ok)
            }
        };
        let mut new_cks = Vec::with_capacity(params.len() + 1);
        for (p, ck) in params.iter().zip(&ck_params) {
            let t = ck.ty.clone();
            let write = Exp::Update(ck.var, vec![DimIndex::Fix(i64_i)], Atom::Var(p.var));
            let v = match ok {
                None => b.bind1("checkpoints", t, write),
                Some(ok) => {
                    b.begin();
                    let written = b.bind1("checkpoints", t.clone(), write);
                    let then_ = b.end(vec![Atom::Var(written)]);
                    let else_ = Body {
                        stms: vec![],
                        result: vec![Atom::Var(ck.var)],
                    };
                    let cond = ok;
                    b.bind1("checkpoints", t, Exp::If { cond, then_, else_ })
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

    /// The return sweep of `pat = with_vjp(tape, f, rule, args)` (Futhark's
    /// `with_vjp`, futhark-internals.md §2): the rule, copied with fresh
    /// variables, applied to the saved values (`pat[..tape]`, bound by the
    /// forward sweep, which keeps the statement) and the results' adjoints
    /// (zero where absent); its results are added to the arguments'
    /// adjoints. The free variables of `f` and the saved values get none.
    #[allow(clippy::too_many_arguments)]
    fn custom_rule(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        pat: &[Param],
        ybar: &[Option<Atom>],
        rule: &Lambda,
        args: &[Atom],
        tape: usize,
    ) -> Result<(), AdError> {
        if ybar[tape..].iter().all(|y| y.is_none()) {
            return Ok(());
        }
        if rule.params.len() != pat.len() || rule.body.result.len() != args.len() {
            return error(
                self.span,
                "internal error: malformed with_vjp (arities differ)",
            );
        }
        let mut map = HashMap::new();
        for (j, (p, r)) in rule.params.iter().zip(pat).enumerate() {
            let a = if j < tape {
                Atom::Var(r.var)
            } else {
                match ybar[j] {
                    Some(y) => y,
                    None => zero_like(b, self.span, r.var)?,
                }
            };
            map.insert(p.var, a);
        }
        let copy = self.fresh_copy(b, &rule.body, map)?;
        crate::util::for_each_stm_deep(&copy, &mut |s| {
            if let (Exp::WithVjp { .. }, Some(p)) = (&s.exp, s.pat.first()) {
                self.in_rules.insert(p.var);
            }
        });
        for s in copy.stms {
            b.push(s);
        }
        for (x, c) in args.iter().zip(copy.result) {
            let (Atom::Var(x), Atom::Var(cv)) = (x, c) else {
                if let Atom::Var(x) = x {
                    self.add_shared(b, adj, *x, c)?;
                }
                continue;
            };
            // The rule's adjoint must have the argument's shape (a run-time
            // check: the rule is user code).
            let rank = type_of(b, self.span, *x)?.rank();
            for d in 0..rank {
                let n_arg = b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(*x, d));
                let n_adj = b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(cv, d));
                b.push(Stm {
                    pat: vec![],
                    exp: Exp::AssertEqSizes(
                        vec![Atom::Var(n_arg), Atom::Var(n_adj)],
                        "with_vjp: the derivative rule's adjoint does not have the argument's shape"
                            .into(),
                    ),
                    span: self.span,
                });
            }
            self.add_shared(b, adj, *x, c)?;
        }
        Ok(())
    }

    /// The adjoints `ybar` of a construct's results, a zero constant of
    /// the result type `ret[k]` where `ybar[k]` is absent.
    fn seeds(&self, ret: &[Type], ybar: &[Option<Atom>]) -> Vec<Atom> {
        ret.iter()
            .zip(ybar)
            .map(|(t, y)| y.unwrap_or(Atom::Const(PrimValue::zero(t.elem()))))
            .collect()
    }

    /// The generic rule for `reduce op ne xs` on tuples of scalars (seed
    /// 003 §5.1): with `l[i]` the reduction of the elements before `i` and
    /// `r[i]` of those after it (exclusive scans from both ends), the result
    /// is `op(op(l[i], xs[i]), r[i])` for every `i`, so `x̄[i]` is the `vjp`
    /// of that function of `xs[i]` (itself differentiated statically).
    /// `arrs` are the `k` arrays of the operator's `k` components (of
    /// scalars, or of rows for an operator on arrays that is not a mapped
    /// scalar operator), `seeds` the `k` adjoints of the result.
    #[allow(clippy::too_many_arguments)]
    fn reduce_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        op: &Lambda,
        neutral: &[Atom],
        arrs: &[Var],
        seeds: Vec<Atom>,
    ) -> Result<(), AdError> {
        let k = arrs.len();
        if op.params.len() != 2 * k || op.ret.len() != k || neutral.len() != k {
            return error(self.span, "internal error: malformed reduce operator");
        }
        let ts: Vec<Type> = op.ret.iter().map(crate::util::existential).collect();
        let ats: Vec<Type> = ts.iter().map(|t| t.array_of(Dim::Ext)).collect();
        let i64t = Type::Prim(PrimType::I64);
        // Inclusive scans from the front, and from the back (on the
        // reversed arrays, with the operator's arguments swapped).
        let front_op = self.fresh_lambda(b, op)?;
        let front = b.bind(
            "prefix",
            ats.clone(),
            Exp::Soac(Soac::Scan {
                w,
                lam: front_op,
                neutral: neutral.to_vec(),
                arrs: arrs.to_vec(),
            }),
        );
        let reversed: Vec<Var> = arrs
            .iter()
            .zip(&ats)
            .map(|(a, at)| b.bind1("reversed", at.clone(), Exp::Reverse(*a)))
            .collect();
        let mut back_op = self.fresh_lambda(b, op)?;
        let (left, right) = back_op.params.split_at(k);
        back_op.params = right.iter().chain(left).cloned().collect();
        let back = b.bind(
            "suffix",
            ats.clone(),
            Exp::Soac(Soac::Scan {
                w,
                lam: back_op,
                neutral: neutral.to_vec(),
                arrs: reversed,
            }),
        );
        let iota = iota(b, w);
        let mut lam_types = ts.clone();
        lam_types.push(i64t.clone());
        let lam = b.lambda::<AdError>("x", lam_types, |b, ps| {
            let (xs, i) = (&ps[..k], Atom::Var(ps[k]));
            // l = i == 0 ? ne : prefix[i-1]; r = i == w-1 ? ne : suffix[w-2-i]
            let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
            let before = b.binop(BinOp::Sub, i, Atom::Const(PrimValue::I64(1)))?;
            let last_index = b.binop(BinOp::Sub, w, Atom::Const(PrimValue::I64(1)))?;
            let last = b.cmp(CmpOp::Eq, i, last_index);
            let w2 = b.binop(BinOp::Sub, w, Atom::Const(PrimValue::I64(2)))?;
            let after = b.binop(BinOp::Sub, w2, i)?;
            let mut ls = Vec::with_capacity(k);
            let mut rs = Vec::with_capacity(k);
            for j in 0..k {
                ls.push(exclusive(b, first, neutral[j], front[j], before, &ts[j])?);
                rs.push(exclusive(b, last, neutral[j], back[j], after, &ts[j])?);
            }
            // vjp (\x -> op (op l x) r) x g
            let primals = xs.iter().map(|x| Atom::Var(*x)).collect();
            self.local_vjp(b, &ts, &ts, primals, seeds.clone(), |this, b, x| {
                let first = this.applied(b, op, &[&ls[..], x].concat())?;
                let second = this.applied(b, op, &[&first.result[..], &rs[..]].concat())?;
                Ok(sequence(vec![first, second]))
            })
        })?;
        let mut map_arrs = arrs.to_vec();
        map_arrs.push(iota);
        let xbar = b.bind(
            "adj_reduce",
            ats,
            Exp::Soac(Soac::Map {
                w,
                lam,
                arrs: map_arrs,
            }),
        );
        for (a, x) in arrs.iter().zip(xbar) {
            self.add(b, adj, *a, Atom::Var(x), true)?;
        }
        Ok(())
    }

    /// The generic rule for an inclusive scan with any associative operator
    /// on tuples of `k` scalars (seed 002, scan as linear-function
    /// composition). Only the float components (all of one type) are
    /// linearised; integer and boolean ones (flags, indices) get no
    /// adjoint, so below `k` counts the float components. With `A[i]` the
    /// `k×k` Jacobian of `op` in its
    /// accumulator at `(ys[i-1], xs[i])` (rows from `k` vjps of the
    /// operator), the results' adjoints `r` satisfy
    /// `r[i] = ȳ[i] + A[i+1]ᵀ·r[i+1]`, a linear recurrence solved by a
    /// scan that composes the affine maps `r ↦ M·r + c` (`k×k` matrices
    /// flattened row-major into `k²` arrays); then `x̄[i]` is the operator's
    /// vjp in `x` at `(ys[i-1], xs[i])` with seed `r[i]`. `gs[p]` is the
    /// adjoint of result `p` (absent: zero).
    fn scan_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        scan: &ScanAdjoint<'_>,
    ) -> Result<(), AdError> {
        let ScanAdjoint {
            w,
            op,
            neutral,
            arrs,
            ref ys,
            ref gs,
        } = *scan;
        let k = arrs.len();
        let ts = op.ret.clone();
        // The float components: only they have adjoints. Integer and
        // boolean components (a segmented scan's flags, an arg-max's
        // index) are constants of the linearisation.
        let f: Vec<usize> = (0..k).filter(|&q| ts[q].elem().is_float()).collect();
        let Some(&first_float) = f.first() else {
            return Ok(());
        };
        let ft = ts[first_float].clone();
        if f.iter().any(|&q| ts[q] != ft) {
            // One Jacobian needs one float type: the sequential rule.
            return self.scan_sequential(b, adj, scan);
        }
        let kf = f.len();
        let fat = Type::Array(ft.elem(), vec![Dim::Ext]);
        let zero_of = |t: &Type| Atom::Const(PrimValue::zero(t.elem()));
        let ats: Vec<Type> = ts
            .iter()
            .map(|t| Type::Array(t.elem(), vec![Dim::Ext]))
            .collect();
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        let iota = iota(b, w);
        // `vjp op (prev, x) seed` as statements of the builder's open body:
        // the adjoints of the accumulator and of x, k each.
        let param_types: Vec<Type> = op.params.iter().map(|p| p.ty.clone()).collect();
        let op_vjp = |this: &mut Self,
                      b: &mut FunctionBuilder,
                      prev: &[Atom],
                      xs: &[Atom],
                      seed: Vec<Atom>|
         -> Result<(Vec<Atom>, Vec<Atom>), AdError> {
            let primals = prev.iter().chain(xs).copied().collect();
            let mut adjoints =
                this.local_vjp(b, &param_types, &ts, primals, seed, |this, b, args| {
                    this.applied(b, op, args)
                })?;
            let x = adjoints.split_off(k);
            Ok((adjoints, x))
        };
        // prev[i] = i == 0 ? ne : ys[i-1]
        let previous = |b: &mut FunctionBuilder, i: Atom| -> Result<Vec<Atom>, AdError> {
            let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
            let before = b.binop(BinOp::Sub, i, one)?;
            (0..k)
                .map(|j| exclusive(b, first, neutral[j], ys[j], before, &ts[j]))
                .collect()
        };
        let unit = |t: &Type, v: f64| Atom::Const(nabla_ir::derivatives::constant(t.elem(), v));
        // a[p*kf+q][i] = ∂y_p/∂acc_q at (prev[i], xs[i]), p and q float
        // components (numbered within `f`).
        let mut lam_types = ts.clone();
        lam_types.push(i64t.clone());
        let jacobian = b.lambda::<AdError>("x", lam_types.clone(), |b, ps| {
            let xs: Vec<Atom> = ps[..k].iter().map(|x| Atom::Var(*x)).collect();
            let prev = previous(b, Atom::Var(ps[k]))?;
            let mut entries = Vec::with_capacity(kf * kf);
            for &p in &f {
                let seed = (0..k)
                    .map(|q| match (f.contains(&q), p == q) {
                        (true, true) => unit(&ts[q], 1.0),
                        _ => zero_of(&ts[q]),
                    })
                    .collect();
                let (a, _) = op_vjp(self, b, &prev, &xs, seed)?;
                entries.extend(f.iter().map(|&q| a[q]));
            }
            Ok(entries)
        })?;
        let mut jac_arrs = arrs.to_vec();
        jac_arrs.push(iota);
        let jac_types: Vec<Type> = (0..kf * kf).map(|_| fat.clone()).collect();
        let jac = b.bind(
            "jacobian",
            jac_types.clone(),
            Exp::Soac(Soac::Map {
                w,
                lam: jacobian,
                arrs: jac_arrs,
            }),
        );
        // The affine maps in reverse order, j = 0 … w-1:
        // M_j = A[w-j]ᵀ (zero for j = 0), c_j = ȳ[w-1-j].
        let last = b.binop(BinOp::Sub, w, one)?;
        let maps = b.lambda::<AdError>("j", vec![i64t.clone()], |b, ps| {
            let j = Atom::Var(ps[0]);
            let idx = b.binop(BinOp::Sub, last, j)?;
            let first = b.cmp(CmpOp::Eq, j, Atom::Const(PrimValue::I64(0)));
            let next = b.binop(BinOp::Add, idx, one)?;
            let mut out = Vec::with_capacity(kf * kf + kf);
            // M[q][p] = a[p][q]
            for q in 0..kf {
                for p in 0..kf {
                    out.push(exclusive(
                        b,
                        first,
                        zero_of(&ft),
                        jac[p * kf + q],
                        next,
                        &ft,
                    )?);
                }
            }
            for &p in &f {
                out.push(match gs[p] {
                    None => zero_of(&ft),
                    Some(g) => Atom::Var(b.bind1(
                        "adj_elem",
                        ft.clone(),
                        Exp::Index(g, vec![DimIndex::Fix(idx)]),
                    )),
                });
            }
            Ok(out)
        })?;
        let mut affine_types = jac_types.clone();
        affine_types.extend((0..kf).map(|_| fat.clone()));
        let mc = b.bind(
            "affine",
            affine_types.clone(),
            Exp::Soac(Soac::Map {
                w,
                lam: maps,
                arrs: vec![iota],
            }),
        );
        // Compose: (M1, c1) then (M2, c2) is (M2·M1, M2·c1 + c2).
        let compose_types: Vec<Type> = (0..kf * kf + kf).map(|_| ft.clone()).collect();
        let both = [compose_types.clone(), compose_types].concat();
        let compose = b.lambda::<AdError>("f", both, |b, ps| {
            let half = kf * kf + kf;
            let (m1, c1) = (&ps[..kf * kf], &ps[kf * kf..half]);
            let (m2, c2) = (&ps[half..half + kf * kf], &ps[half + kf * kf..]);
            // Σ_l a[l]·b[l], in order.
            let dot = |b: &mut FunctionBuilder,
                       terms: Vec<(Atom, Atom)>,
                       start: Option<Atom>|
             -> Result<Atom, AdError> {
                let mut acc = start;
                for (x, y) in terms {
                    let t = b.binop(BinOp::Mul, x, y)?;
                    acc = Some(match acc {
                        None => t,
                        Some(a) => b.binop(BinOp::Add, a, t)?,
                    });
                }
                Ok(acc.expect("k ≥ 1"))
            };
            let mut out = Vec::with_capacity(half);
            for q in 0..kf {
                for p in 0..kf {
                    let terms = (0..kf)
                        .map(|l| (Atom::Var(m2[q * kf + l]), Atom::Var(m1[l * kf + p])))
                        .collect();
                    out.push(dot(b, terms, None)?);
                }
            }
            for q in 0..kf {
                let terms = (0..kf)
                    .map(|l| (Atom::Var(m2[q * kf + l]), Atom::Var(c1[l])))
                    .collect();
                let mc = dot(b, terms, None)?;
                out.push(b.binop(BinOp::Add, mc, Atom::Var(c2[q]))?);
            }
            Ok(out)
        })?;
        let mut compose_neutral = Vec::with_capacity(kf * kf + kf);
        for q in 0..kf {
            for p in 0..kf {
                compose_neutral.push(unit(&ft, if p == q { 1.0 } else { 0.0 }));
            }
        }
        compose_neutral.extend((0..kf).map(|_| unit(&ft, 0.0)));
        let scanned = b.bind(
            "composed",
            affine_types,
            Exp::Soac(Soac::Scan {
                w,
                lam: compose,
                neutral: compose_neutral,
                arrs: mc,
            }),
        );
        let r_rev = scanned[kf * kf..].to_vec();
        let xbar = b.lambda::<AdError>("x", lam_types, |b, ps| {
            let xs: Vec<Atom> = ps[..k].iter().map(|x| Atom::Var(*x)).collect();
            let i = Atom::Var(ps[k]);
            let prev = previous(b, i)?;
            let idx = b.binop(BinOp::Sub, last, i)?;
            let mut seed: Vec<Atom> = ts.iter().map(zero_of).collect();
            for (p, &q) in f.iter().enumerate() {
                seed[q] = Atom::Var(b.bind1(
                    "adj_elem",
                    ft.clone(),
                    Exp::Index(r_rev[p], vec![DimIndex::Fix(idx)]),
                ));
            }
            let (_, x) = op_vjp(self, b, &prev, &xs, seed)?;
            Ok(f.iter().map(|&q| x[q]).collect())
        })?;
        let mut x_arrs = arrs.to_vec();
        x_arrs.push(iota);
        let x = b.bind(
            "adj_scan",
            f.iter().map(|&q| ats[q].clone()).collect(),
            Exp::Soac(Soac::Map {
                w,
                lam: xbar,
                arrs: x_arrs,
            }),
        );
        for (&q, x) in f.iter().zip(x) {
            self.add(b, adj, arrs[q], Atom::Var(x), true)?;
        }
        Ok(())
    }

    /// The adjoints of a SOAC's array results as variables (absent: zero).
    fn array_adjoints(&self, ybar: &[Option<Atom>]) -> Result<Vec<Option<Var>>, AdError> {
        ybar.iter()
            .map(|y| match y {
                None => Ok(None),
                Some(Atom::Var(g)) => Ok(Some(*g)),
                Some(Atom::Const(_)) => error(self.span, "internal error: constant array adjoint"),
            })
            .collect()
    }

    /// The reverse rule for an inclusive scan with any operator, on
    /// components of any types (rows included), computed sequentially: with
    /// `prev = i == 0 ? ne : ys[i-1]`, `ys[i] = op(prev, xs[i])`, so a loop
    /// over the elements from the last to the first carries `r`, the
    /// adjoint that `ys[i]` receives from `ys[i+1]` (zero for the last), and
    /// computes `(r', x̄[i]) = vjp op (prev, xs[i]) (ȳ[i] + r)`. This is the
    /// adjoint of the scan as a loop (seed 003 §4.2 with the loop's states
    /// the scan's own results, so nothing is checkpointed): `O(w)` vjps of
    /// the operator, where seed 002's parallel rule for rows of width `m`
    /// would compose `m×m` Jacobians. It serves the operators that rule
    /// cannot linearise into one matrix: components that are arrays, or
    /// floats of different types. `gs[p]` is the adjoint of result `p`
    /// (absent: zero); the neutral element gets no adjoint (as in the other
    /// scan and reduce rules).
    fn scan_sequential(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        scan: &ScanAdjoint<'_>,
    ) -> Result<(), AdError> {
        let ScanAdjoint {
            w,
            op,
            neutral,
            arrs,
            ref ys,
            ref gs,
        } = *scan;
        let k = arrs.len();
        let span = self.span;
        let ts: Vec<Type> = op.ret.iter().map(crate::util::existential).collect();
        let ats: Vec<Type> = ts.iter().map(|t| t.array_of(Dim::Ext)).collect();
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        // The last element's carried adjoint: zeros shaped like the
        // neutral element (every result element has its shape).
        let mut init = Vec::with_capacity(2 * k);
        for (ne, t) in neutral.iter().zip(&ts) {
            init.push(match ne {
                Atom::Var(v) => zero_like(b, span, *v)?,
                Atom::Const(_) => Atom::Const(PrimValue::zero(t.elem())),
            });
        }
        for c in 0..k {
            let zeros = b.bind1("adj_scan", ats[c].clone(), Exp::Replicate(w, init[c]));
            init.push(Atom::Var(zeros));
        }
        let mut params = Vec::with_capacity(2 * k);
        for t in &ts {
            params.push(b.param("adj_carried", t.clone()));
        }
        for at in &ats {
            let mut p = b.param("adj_scan", at.clone());
            p.unique = true;
            params.push(p);
        }
        let carried: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
        let xbar: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
        let param_types: Vec<Type> = op.params.iter().map(|p| p.ty.clone()).collect();
        let j = b.vars.fresh("j", i64t.clone());
        b.begin();
        let last = b.binop(BinOp::Sub, w, one)?;
        let i = b.binop(BinOp::Sub, last, Atom::Var(j))?;
        let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
        let before = b.binop(BinOp::Sub, i, one)?;
        let mut primals = Vec::with_capacity(2 * k);
        for c in 0..k {
            primals.push(exclusive(b, first, neutral[c], ys[c], before, &ts[c])?);
        }
        for c in 0..k {
            let x = b.bind1(
                "elem",
                ts[c].clone(),
                Exp::Index(arrs[c], vec![DimIndex::Fix(i)]),
            );
            primals.push(Atom::Var(x));
        }
        let mut seeds = Vec::with_capacity(k);
        for c in 0..k {
            let r = Atom::Var(carried[c]);
            seeds.push(match gs[c] {
                None => r,
                Some(g) => {
                    let gi = b.bind1(
                        "adj_elem",
                        ts[c].clone(),
                        Exp::Index(g, vec![DimIndex::Fix(i)]),
                    );
                    self.add_values(b, &ts[c], Atom::Var(gi), r)?
                }
            });
        }
        let mut adjoints =
            self.local_vjp(b, &param_types, &ts, primals, seeds, |this, b, args| {
                this.applied(b, op, args)
            })?;
        let x_adjoints = adjoints.split_off(k);
        let mut result = adjoints;
        for c in 0..k {
            result.push(Atom::Var(b.bind1(
                "adj_scan",
                ats[c].clone(),
                Exp::Update(xbar[c], vec![DimIndex::Fix(i)], x_adjoints[c]),
            )));
        }
        let body = b.end(result);
        let names = |c: usize| if c < k { "adj_carried" } else { "adj_scan" };
        let vars = push_for_loop(b, params, init, (j, w), body, span, names);
        for (a, x) in arrs.iter().zip(&vars[k..]) {
            self.add(b, adj, *a, Atom::Var(*x), true)?;
        }
        Ok(())
    }

    /// Copies the operator's body applied to `args` into the open body;
    /// returns its results.
    fn apply_op(
        &self,
        b: &mut FunctionBuilder,
        op: &Lambda,
        args: &[Atom],
    ) -> Result<Vec<Atom>, AdError> {
        let body = self.applied(b, op, args)?;
        for s in body.stms {
            b.push(s);
        }
        Ok(body.result)
    }

    /// The operator's body applied to `args` (one per parameter, in
    /// order), copied with fresh variables but not emitted.
    fn applied(
        &self,
        b: &mut FunctionBuilder,
        op: &Lambda,
        args: &[Atom],
    ) -> Result<Body, AdError> {
        let map = op
            .params
            .iter()
            .map(|p| p.var)
            .zip(args.iter().copied())
            .collect();
        self.fresh_copy(b, &op.body, map)
    }

    /// The adjoints of the parameters of a function made on the spot (the
    /// operator's vjp in the generic reduce, scan and reduce_by_index
    /// rules), at `primals` with the adjoints `seeds` of its results: its
    /// parameters have the types `params`, `body` builds its body (results
    /// of the types `ret`) on them, and its `vjp` is expanded statically
    /// into the open body.
    fn local_vjp(
        &mut self,
        b: &mut FunctionBuilder,
        params: &[Type],
        ret: &[Type],
        primals: Vec<Atom>,
        seeds: Vec<Atom>,
        body: impl FnOnce(&Self, &mut FunctionBuilder, &[Atom]) -> Result<Body, AdError>,
    ) -> Result<Vec<Atom>, AdError> {
        let ps: Vec<Param> = params.iter().map(|t| b.param("x", t.clone())).collect();
        let args: Vec<Atom> = ps.iter().map(|p| Atom::Var(p.var)).collect();
        let body = body(self, b, &args)?;
        let local = Lambda {
            params: ps,
            body,
            ret: ret.to_vec(),
        };
        let mut out: Vec<Param> = ret.iter().map(|t| b.param("y", t.clone())).collect();
        out.extend(params.iter().map(|t| b.param("adj", t.clone())));
        expand_vjp(self.ad, b, &out, local, primals, seeds, self.span)?;
        Ok(out[ret.len()..].iter().map(|p| Atom::Var(p.var)).collect())
    }

    /// `reduce_by_index` with any associative operator on scalars or on
    /// tuples of `k` scalars (seed 002's generic rule, computed sequentially
    /// instead of by sorting): a loop over the values in order gives each
    /// value `l[i]`, the reduction of the earlier values of its bucket, and
    /// each bucket its total `t`; a loop in reverse order gives `r[i]`, the
    /// reduction of the later ones. A bucket's result is
    /// `op(dest[b], op(op(l[i], vs[i]), r[i]))` for each of its values, so
    /// `v̄s[i]` is the vjp of that function of `vs[i]` with the bucket's
    /// adjoint as seed, and `d̄est[b]` the vjp of `op(d, t[b])` in `d`.
    /// Out-of-bounds values go to an extra bucket (index `n`) and get a zero
    /// adjoint. One array per component throughout: `dest`, `neutral`,
    /// `values` and the result adjoints `g` (`[n]` each) have `k` entries.
    #[allow(clippy::too_many_arguments)]
    fn hist_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        op: &Lambda,
        neutral: &[Atom],
        dest: &[Var],
        indices: Var,
        values: &[Var],
        g: &[Var],
    ) -> Result<(), AdError> {
        let k = dest.len();
        if op.params.len() != 2 * k || neutral.len() != k || values.len() != k || g.len() != k {
            return error(
                self.span,
                "internal error: malformed reduce_by_index operator",
            );
        }
        let span = self.span;
        let dest_active = dest.iter().any(|d| self.active.contains(d));
        let values_active = values.iter().any(|v| self.active.contains(v));
        if !dest_active && !values_active {
            return Ok(());
        }
        // A bucket's type: a scalar, or a row for an operator on arrays.
        let mut ts = Vec::with_capacity(k);
        for v in g {
            let gt = type_of(b, span, *v)?;
            ts.push(crate::util::existential(
                &gt.row().unwrap_or(Type::Prim(gt.elem())),
            ));
        }
        let ats: Vec<Type> = ts.iter().map(|t| t.array_of(Dim::Ext)).collect();
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        let n = Atom::Var(b.bind1("n", i64t.clone(), Exp::Size(g[0], 0)));
        let n1 = b.binop(BinOp::Add, n, one)?;
        // The bucket of value i, n where out of bounds.
        let bucket = |b: &mut FunctionBuilder, i: Atom| -> Result<(Atom, Atom), AdError> {
            let idx = Atom::Var(b.bind1(
                "bucket",
                i64t.clone(),
                Exp::Index(indices, vec![DimIndex::Fix(i)]),
            ));
            let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), idx);
            let hi = b.cmp(CmpOp::Lt, idx, n);
            let inside = b.binop(BinOp::LogAnd, lo, hi)?;
            Ok((b.select(inside, idx, n)?, inside))
        };
        // Each component of element `i` of `arrays`.
        let elements =
            |b: &mut FunctionBuilder, name: &str, arrays: &[Var], i: Atom| -> Vec<Atom> {
                arrays
                    .iter()
                    .zip(&ts)
                    .map(|(a, t)| {
                        Atom::Var(b.bind1(name, t.clone(), Exp::Index(*a, vec![DimIndex::Fix(i)])))
                    })
                    .collect()
            };
        // One pass over the values, forwards or backwards: `partial` per
        // bucket, and each value's exclusive reduction within its bucket
        // (`k` arrays each).
        let pass = |this: &mut Self,
                    b: &mut FunctionBuilder,
                    backwards: bool|
         -> Result<(Vec<Var>, Vec<Var>), AdError> {
            let mut init = Vec::with_capacity(2 * k);
            for (ne, at) in neutral.iter().zip(&ats) {
                init.push(Atom::Var(b.bind1(
                    "partial",
                    at.clone(),
                    Exp::Replicate(n1, *ne),
                )));
            }
            for (ne, at) in neutral.iter().zip(&ats) {
                init.push(Atom::Var(b.bind1(
                    "excl",
                    at.clone(),
                    Exp::Replicate(w, *ne),
                )));
            }
            let mut params = Vec::with_capacity(2 * k);
            for (name, at) in ats
                .iter()
                .map(|t| ("partial", t))
                .chain(ats.iter().map(|t| ("excl", t)))
            {
                let mut p = b.param(name, at.clone());
                p.unique = true;
                params.push(p);
            }
            let partial: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
            let excl: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
            let j = b.vars.fresh("j", i64t.clone());
            b.begin();
            let i = if backwards {
                let last = b.binop(BinOp::Sub, w, one)?;
                b.binop(BinOp::Sub, last, Atom::Var(j))?
            } else {
                Atom::Var(j)
            };
            let (bk, _) = bucket(b, i)?;
            let v = elements(b, "value", values, i);
            let mut old = elements(b, "partial_elem", &partial, bk);
            // A row read from `partial` is copied: `partial` is updated in
            // place below, while the row lives on in `excl`.
            for (o, t) in old.iter_mut().zip(&ts) {
                if let (Atom::Var(row), true) = (*o, t.rank() > 0) {
                    *o = Atom::Var(b.bind1("partial_elem", t.clone(), Exp::Copy(row)));
                }
            }
            let args: Vec<Atom> = if backwards {
                v.iter().chain(&old).copied().collect()
            } else {
                old.iter().chain(&v).copied().collect()
            };
            let new = this.apply_op(b, op, &args)?;
            let mut result = Vec::with_capacity(2 * k);
            for c in 0..k {
                result.push(Atom::Var(b.bind1(
                    "partial",
                    ats[c].clone(),
                    Exp::Update(partial[c], vec![DimIndex::Fix(bk)], new[c]),
                )));
            }
            for c in 0..k {
                result.push(Atom::Var(b.bind1(
                    "excl",
                    ats[c].clone(),
                    Exp::Update(excl[c], vec![DimIndex::Fix(i)], old[c]),
                )));
            }
            let body = b.end(result);
            let names = |c: usize| if c < k { "partial" } else { "excl" };
            let vars = push_for_loop(b, params, init, (j, w), body, span, names);
            Ok((vars[..k].to_vec(), vars[k..].to_vec()))
        };
        let (totals, before) = pass(self, b, false)?;
        if dest_active {
            let iota_n = iota(b, n);
            let mut param_types = ts.clone();
            param_types.extend(ts.iter().cloned());
            param_types.push(i64t.clone());
            let lam = b.lambda::<AdError>("d", param_types, |b, ps| {
                // vjp (\d -> op(d, t[b])) dest[b] g[b]
                let total = elements(b, "total", &totals, Atom::Var(ps[2 * k]));
                let primals = ps[..k].iter().map(|v| Atom::Var(*v)).collect();
                let seeds = ps[k..2 * k].iter().map(|v| Atom::Var(*v)).collect();
                self.local_vjp(b, &ts, &ts, primals, seeds, |this, b, d| {
                    this.applied(b, op, &[d, &total[..]].concat())
                })
            })?;
            let pat: Vec<Param> = ats.iter().map(|t| b.param("adj_dest", t.clone())).collect();
            let mut arrs = dest.to_vec();
            arrs.extend(g.iter().copied());
            arrs.push(iota_n);
            let dbars: Vec<Var> = pat.iter().map(|p| p.var).collect();
            b.push(Stm {
                pat,
                exp: Exp::Soac(Soac::Map { w: n, lam, arrs }),
                span,
            });
            for (d, dbar) in dest.iter().zip(dbars) {
                self.add(b, adj, *d, Atom::Var(dbar), true)?;
            }
        }
        if !values_active {
            return Ok(());
        }
        let (_, after) = pass(self, b, true)?;
        let iota_w = iota(b, w);
        let mut param_types = Vec::with_capacity(3 * k + 1);
        for _ in 0..3 {
            param_types.extend(ts.iter().cloned());
        }
        param_types.push(i64t.clone());
        let lam = b.lambda::<AdError>("x", param_types, |b, ps| {
            let (x, l, r, i) = (
                &ps[..k],
                &ps[k..2 * k],
                &ps[2 * k..3 * k],
                Atom::Var(ps[3 * k]),
            );
            let (bk, inside) = bucket(b, i)?;
            b.begin();
            let gb = elements(b, "adj_elem", g, bk);
            let db = elements(b, "d", dest, bk);
            // vjp (\x -> op(dest[b], op(op(l, x), r))) x g[b]
            let l: Vec<Atom> = l.iter().map(|v| Atom::Var(*v)).collect();
            let r: Vec<Atom> = r.iter().map(|v| Atom::Var(*v)).collect();
            let primals = x.iter().map(|v| Atom::Var(*v)).collect();
            let adjoints = self.local_vjp(b, &ts, &ts, primals, gb, |this, b, x| {
                let first = this.applied(b, op, &[&l[..], x].concat())?;
                let second = this.applied(b, op, &[&first.result[..], &r[..]].concat())?;
                let third = this.applied(b, op, &[&db[..], &second.result[..]].concat())?;
                Ok(sequence(vec![first, second, third]))
            })?;
            let then_ = b.end(adjoints);
            // A value outside the buckets: zeros shaped like it.
            b.begin();
            let mut zeros = Vec::with_capacity(k);
            for v in x {
                zeros.push(zero_like(b, span, *v)?);
            }
            let else_ = b.end(zeros);
            let pat: Vec<Param> = ts.iter().map(|t| b.param("adj_value", t.clone())).collect();
            let results = pat.iter().map(|p| Atom::Var(p.var)).collect();
            b.push(Stm {
                pat,
                exp: Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
                span,
            });
            Ok(results)
        })?;
        let pat: Vec<Param> = ats.iter().map(|t| b.param("adj_hist", t.clone())).collect();
        let vbars: Vec<Var> = pat.iter().map(|p| p.var).collect();
        let mut arrs = values.to_vec();
        arrs.extend(before);
        arrs.extend(after);
        arrs.push(iota_w);
        b.push(Stm {
            pat,
            exp: Exp::Soac(Soac::Map { w, lam, arrs }),
            span,
        });
        for (v, vbar) in values.iter().zip(vbars) {
            self.add(b, adj, *v, Atom::Var(vbar), true)?;
        }
        Ok(())
    }

    /// `reduce_by_index` with `min` or `max`: in each bucket the adjoint of
    /// the result goes to the first contributor equal to it — the old
    /// destination element, else the first value in order (seed 002, the
    /// min/max special case; ties like the reduce rule).
    #[allow(clippy::too_many_arguments)]
    fn hist_min_max(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        dest: Var,
        result: Var,
        indices: Var,
        values: Var,
        g: Var,
    ) -> Result<(), AdError> {
        let span = self.span;
        let elem = type_of(b, span, g)?.elem();
        let t = Type::Prim(elem);
        let at = Type::Array(elem, vec![Dim::Ext]);
        let i64t = Type::Prim(PrimType::I64);
        let i64s = Type::Array(PrimType::I64, vec![Dim::Ext]);
        let zero = Atom::Const(PrimValue::zero(elem));
        let nb = Atom::Var(b.bind1("n", i64t.clone(), Exp::Size(g, 0)));
        // The old destination keeps the adjoint where it equals the result.
        let dest_adj =
            b.lambda::<AdError>("d", vec![t.clone(), t.clone(), t.clone()], |b, ps| {
                let keep = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(ps[1]));
                Ok(vec![b.select(keep, Atom::Var(ps[2]), zero)?])
            })?;
        let dbar = b.bind1(
            "adj_dest",
            at.clone(),
            Exp::Soac(Soac::Map {
                w: nb,
                lam: dest_adj,
                arrs: vec![dest, result, g],
            }),
        );
        self.add(b, adj, dest, Atom::Var(dbar), true)?;
        if !self.active.contains(&values) {
            return Ok(());
        }
        let iota = iota(b, w);
        // `in bounds and equal to its bucket's result, and the old
        // destination did not win` for value j, as a bool.
        let candidate = |b: &mut FunctionBuilder, bucket: Atom, v: Atom| -> Result<Atom, AdError> {
            let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), bucket);
            let hi = b.cmp(CmpOp::Lt, bucket, nb);
            let inside = b.binop(BinOp::LogAnd, lo, hi)?;
            b.begin();
            let h = b.bind1(
                "h",
                t.clone(),
                Exp::Index(result, vec![DimIndex::Fix(bucket)]),
            );
            let d = b.bind1(
                "d",
                t.clone(),
                Exp::Index(dest, vec![DimIndex::Fix(bucket)]),
            );
            let eq = b.cmp(CmpOp::Eq, v, Atom::Var(h));
            let dest_won = b.cmp(CmpOp::Eq, Atom::Var(d), Atom::Var(h));
            let not_dest = b.unop(UnOp::Not, dest_won)?;
            let c = b.binop(BinOp::LogAnd, eq, not_dest)?;
            let then_ = b.end(vec![c]);
            let else_ = Body {
                stms: vec![],
                result: vec![Atom::Const(PrimValue::Bool(false))],
            };
            Ok(Atom::Var(b.bind1(
                "candidate",
                Type::Prim(PrimType::Bool),
                Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
            )))
        };
        // The first candidate of each bucket (w where none).
        let positions =
            b.lambda::<AdError>("j", vec![i64t.clone(), t.clone(), i64t.clone()], |b, ps| {
                let c = candidate(b, Atom::Var(ps[0]), Atom::Var(ps[1]))?;
                Ok(vec![b.select(c, Atom::Var(ps[2]), w)?])
            })?;
        let pos = b.bind1(
            "positions",
            i64s.clone(),
            Exp::Soac(Soac::Map {
                w,
                lam: positions,
                arrs: vec![indices, values, iota],
            }),
        );
        let none = b.bind1("firsts", i64s.clone(), Exp::Replicate(nb, w));
        let min = b.lambda::<AdError>("i", vec![i64t.clone(), i64t.clone()], |b, ps| {
            Ok(vec![b.binop(
                BinOp::Min,
                Atom::Var(ps[0]),
                Atom::Var(ps[1]),
            )?])
        })?;
        let firsts = b.bind1(
            "firsts",
            i64s,
            Exp::Soac(Soac::Hist {
                w,
                dest: vec![none],
                lam: min,
                neutral: vec![w],
                indices,
                values: vec![pos],
            }),
        );
        let value_adj =
            b.lambda::<AdError>("j", vec![i64t.clone(), t.clone(), i64t], |b, ps| {
                let bucket = Atom::Var(ps[0]);
                let c = candidate(b, bucket, Atom::Var(ps[1]))?;
                b.begin();
                let first = b.bind1(
                    "first",
                    Type::Prim(PrimType::I64),
                    Exp::Index(firsts, vec![DimIndex::Fix(bucket)]),
                );
                let wins = b.cmp(CmpOp::Eq, Atom::Var(first), Atom::Var(ps[2]));
                let gb = b.bind1(
                    "adj_elem",
                    t.clone(),
                    Exp::Index(g, vec![DimIndex::Fix(bucket)]),
                );
                let r = b.select(wins, Atom::Var(gb), zero)?;
                let then_ = b.end(vec![r]);
                let else_ = Body {
                    stms: vec![],
                    result: vec![zero],
                };
                Ok(vec![Atom::Var(b.bind1(
                    "adj_value",
                    t.clone(),
                    Exp::If {
                        cond: c,
                        then_,
                        else_,
                    },
                ))])
            })?;
        let vbar = b.bind1(
            "adj_values",
            at,
            Exp::Soac(Soac::Map {
                w,
                lam: value_adj,
                arrs: vec![indices, values, iota],
            }),
        );
        self.add(b, adj, values, Atom::Var(vbar), true)
    }

    /// A copy of a lambda with fresh variables.
    fn fresh_lambda(&self, b: &mut FunctionBuilder, lam: &Lambda) -> Result<Lambda, AdError> {
        let mut map = HashMap::new();
        let mut params = Vec::with_capacity(lam.params.len());
        for p in &lam.params {
            let v = b.vars.fresh_like(p.var)?;
            map.insert(p.var, Atom::Var(v));
            params.push(Param::new(v, p.ty.clone()));
        }
        let body = self.fresh_copy(b, &lam.body, map)?;
        Ok(Lambda {
            params,
            body,
            ret: lam.ret.clone(),
        })
    }

    /// `map (\i -> if 0 <= i < length g then g[i] else 0) indices`: the
    /// adjoint of each element read (or written) at `indices` (one i64 array
    /// per dimension of `g`, `w` elements each), zero out of bounds. With
    /// `last_write_wins` (scatter), only the last of several writes to one
    /// cell gets its adjoint: the others were overwritten.
    fn gather(
        &self,
        b: &mut FunctionBuilder,
        g: Var,
        indices: &[Var],
        w: Atom,
        last_write_wins: bool,
    ) -> Result<Var, AdError> {
        let span = self.span;
        let gt = type_of(b, span, g)?;
        let elem = gt.elem();
        let i64t = Type::Prim(PrimType::I64);
        let d = indices.len();
        let sizes = shape_of(b, span, g)?;
        let Some(shape) = sizes.get(..d) else {
            return error(span, "internal error: more indices than dimensions");
        };
        let shape: Vec<Atom> = shape.iter().map(|(n, _)| *n).collect();
        // Rows (`g` of higher rank than the indices): a cell not written
        // gets a row of zeros, made once.
        let row_rank = gt.rank() - d;
        let zero = Atom::Const(PrimValue::zero(elem));
        let zero = crate::util::replicated(b, "zero_row", &sizes[d..], zero, Type::Prim(elem));
        let row_type = match row_rank {
            0 => Type::Prim(elem),
            r => Type::Array(elem, vec![Dim::Ext; r]),
        };
        let iota = iota(b, w);
        // The position of the last write to each cell (scatter's own rule).
        let winners = if last_write_wins {
            let mut none = Atom::Const(PrimValue::I64(-1));
            for k in (0..d).rev() {
                let t = Type::Array(PrimType::I64, vec![Dim::Ext; d - k]);
                none = Atom::Var(b.bind1("writers", t, Exp::Replicate(shape[k], none)));
            }
            let Atom::Var(none) = none else {
                return error(span, "internal error: scatter without dimensions");
            };
            Some(b.bind1(
                "writers",
                Type::Array(PrimType::I64, vec![Dim::Ext; d]),
                Exp::Soac(Soac::Scatter {
                    w,
                    dest: vec![none],
                    indices: indices.to_vec(),
                    values: vec![iota],
                }),
            ))
        } else {
            None
        };
        let mut param_types = vec![i64t.clone(); d];
        param_types.push(i64t.clone());
        let lam = b.lambda::<AdError>("i", param_types, |b, ps| {
            let (is, j) = (&ps[..d], Atom::Var(ps[d]));
            let mut inside = Atom::Const(PrimValue::Bool(true));
            for (i, n) in is.iter().zip(&shape) {
                let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), Atom::Var(*i));
                let hi = b.cmp(CmpOp::Lt, Atom::Var(*i), *n);
                let both = b.binop(BinOp::LogAnd, lo, hi)?;
                inside = b.binop(BinOp::LogAnd, inside, both)?;
            }
            let at: Vec<DimIndex> = is.iter().map(|i| DimIndex::Fix(Atom::Var(*i))).collect();
            let inside = match winners {
                None => inside,
                Some(winners) => {
                    // Only read `winners[i]` in bounds.
                    b.begin();
                    let who = b.bind1("writer", i64t.clone(), Exp::Index(winners, at.clone()));
                    let last = b.cmp(CmpOp::Eq, Atom::Var(who), j);
                    let then_ = b.end(vec![last]);
                    let else_ = Body {
                        stms: vec![],
                        result: vec![Atom::Const(PrimValue::Bool(false))],
                    };
                    Atom::Var(b.bind1(
                        "last",
                        Type::Prim(PrimType::Bool),
                        Exp::If {
                            cond: inside,
                            then_,
                            else_,
                        },
                    ))
                }
            };
            b.begin();
            let x = b.bind1("adj_elem", row_type.clone(), Exp::Index(g, at));
            let then_ = b.end(vec![Atom::Var(x)]);
            let else_ = Body {
                stms: vec![],
                result: vec![zero],
            };
            let r = b.bind1(
                "adj_elem",
                row_type.clone(),
                Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
            );
            Ok(vec![Atom::Var(r)])
        })?;
        let mut arrs = indices.to_vec();
        arrs.push(iota);
        Ok(b.bind1(
            "adj_gather",
            Type::Array(elem, vec![Dim::Ext; 1 + row_rank]),
            Exp::Soac(Soac::Map { w, lam, arrs }),
        ))
    }

    /// Whether a statement binds an active variable.
    fn is_active_stm(&self, stm: &Stm) -> bool {
        stm.pat.iter().any(|p| self.active.contains(&p.var))
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

    /// A reduction whose operator is a scalar operator mapped over rows
    /// (`reduce (map2 op) ne xss`, seed 003 §5.1's vectorised operators): a
    /// map of scalar reductions over the columns, each differentiated with
    /// the scalar rule of `op` (the `+`, `*`, min/max or generic rule).
    #[allow(clippy::too_many_arguments)]
    fn reduce_vectorised(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        op: &Lambda,
        neutral: Atom,
        arr: Var,
        result: Var,
        g: Var,
    ) -> Result<(), AdError> {
        self.by_columns(
            b,
            adj,
            arr,
            neutral,
            result,
            g,
            |this, b, local, [col, ne_j, r_j, g_j]| {
                let t = type_of(b, this.span, r_j)?;
                let elem = t.elem();
                let (ne_j, g_j) = (Atom::Var(ne_j), Atom::Var(g_j));
                match single_binop(op) {
                    Some(BinOp::Add) => {
                        let col_t = type_of(b, this.span, col)?;
                        let bc = b.bind1("adj_bcast", col_t, Exp::Replicate(w, g_j));
                        this.add(b, local, col, Atom::Var(bc), true)
                    }
                    Some(BinOp::Min | BinOp::Max) => {
                        this.reduce_min_max(b, local, w, col, r_j, g_j)
                    }
                    Some(BinOp::Mul)
                        if elem.is_float()
                            && ne_j == Atom::Const(nabla_ir::derivatives::constant(elem, 1.0)) =>
                    {
                        this.reduce_product(b, local, w, col, &t, g_j)
                    }
                    _ => this.reduce_generic(b, local, w, op, &[ne_j], &[col], vec![g_j]),
                }
            },
        )
    }

    /// A scan whose operator is a scalar operator mapped over rows (`scan
    /// (map2 op) ne xss`): a map of scalar scans over the columns, each
    /// differentiated with the scalar rule (`+`: the reversed scan of the
    /// reversed adjoints; otherwise the generic affine-map rule).
    #[allow(clippy::too_many_arguments)]
    fn scan_vectorised(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        op: &Lambda,
        neutral: Atom,
        arr: Var,
        result: Var,
        g: Var,
    ) -> Result<(), AdError> {
        self.by_columns(
            b,
            adj,
            arr,
            neutral,
            result,
            g,
            |this, b, local, [col, ne_j, ys_j, g_j]| {
                if single_binop(op) == Some(BinOp::Add) {
                    let x = this.plus_scan_adjoint(b, w, op, g_j)?;
                    this.add(b, local, col, Atom::Var(x), true)
                } else {
                    let column = ScanAdjoint {
                        w,
                        op,
                        neutral: &[Atom::Var(ne_j)],
                        arrs: &[col],
                        ys: vec![ys_j],
                        gs: vec![Some(g_j)],
                    };
                    this.scan_generic(b, local, &column)
                }
            },
        )
    }

    /// The adjoint of a reduction or scan with a vectorised operator over
    /// `arr: [n][m]` (floats): the columns of `arr` (its transpose), of
    /// `result` and of its adjoint `g` (transposed too where they have rank
    /// 2, as a scan's do) and the `m` neutral elements go through one map;
    /// per column, `column_rule(col, ne_j, result_j, g_j)` adds the column's
    /// adjoint to the `Adjoints` it is given. The columns' adjoints are
    /// transposed back and added to `arr`'s.
    #[allow(clippy::too_many_arguments)]
    fn by_columns(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        arr: Var,
        neutral: Atom,
        result: Var,
        g: Var,
        mut column_rule: impl FnMut(
            &mut Self,
            &mut FunctionBuilder,
            &mut Adjoints,
            [Var; 4],
        ) -> Result<(), AdError>,
    ) -> Result<(), AdError> {
        let span = self.span;
        let at = type_of(b, span, arr)?;
        if at.rank() != 2 {
            return error(
                span,
                "internal error: a vectorised operator on rows of rank > 1",
            );
        }
        let elem = at.elem();
        if !elem.is_float() {
            return Ok(());
        }
        let Atom::Var(ne) = neutral else {
            return error(span, "internal error: a constant neutral array");
        };
        let col_t = Type::Array(elem, vec![Dim::Ext]);
        let cols_t = Type::Array(elem, vec![Dim::Ext, Dim::Ext]);
        let columns = |b: &mut FunctionBuilder, v: Var| -> Result<(Var, Type), AdError> {
            Ok(match type_of(b, span, v)?.rank() {
                2 => (
                    b.bind1("columns", cols_t.clone(), Exp::Rearrange(vec![1, 0], v)),
                    col_t.clone(),
                ),
                _ => (v, Type::Prim(elem)),
            })
        };
        let (arr_columns, _) = columns(b, arr)?;
        let (result_columns, result_t) = columns(b, result)?;
        let (adj_columns, adj_t) = columns(b, g)?;
        let m = Atom::Var(b.bind1("m", Type::Prim(PrimType::I64), Exp::Size(ne, 0)));
        let param_types = vec![col_t.clone(), Type::Prim(elem), result_t, adj_t];
        let lam = b.lambda::<AdError>("col", param_types, |b, ps| {
            let col = ps[0];
            let mut local = Adjoints::default();
            self.active.insert(col);
            column_rule(self, b, &mut local, [col, ps[1], ps[2], ps[3]])?;
            Ok(vec![self.materialize(b, &local, col)?])
        })?;
        let col_adjs = b.bind1(
            "adj_columns",
            cols_t.clone(),
            Exp::Soac(Soac::Map {
                w: m,
                lam,
                arrs: vec![arr_columns, ne, result_columns, adj_columns],
            }),
        );
        let rows = b.bind1("adj_rows", cols_t, Exp::Rearrange(vec![1, 0], col_adjs));
        self.add(b, adj, arr, Atom::Var(rows), false)
    }

    /// Seed 003 §5.2: the adjoint of an inclusive (+)-scan (operator `op`,
    /// width `w`) whose results have adjoints `g`: the reversed (+)-scan of
    /// the reversed adjoints.
    fn plus_scan_adjoint(
        &self,
        b: &mut FunctionBuilder,
        w: Atom,
        op: &Lambda,
        g: Var,
    ) -> Result<Var, AdError> {
        let t = crate::util::existential(&type_of(b, self.span, g)?);
        let reversed = b.bind1("adj_rev", t.clone(), Exp::Reverse(g));
        let fresh_op = self.fresh_lambda(b, op)?;
        let zero = Atom::Const(PrimValue::zero(t.elem()));
        let scanned = b.bind1(
            "adj_scan",
            t.clone(),
            Exp::Soac(Soac::Scan {
                w,
                lam: fresh_op,
                neutral: vec![zero],
                arrs: vec![reversed],
            }),
        );
        Ok(b.bind1("adj_rev", t, Exp::Reverse(scanned)))
    }

    /// `reduce (*) 1 xs` on floats (seed 003 §5.1, the special case of
    /// `*`): with `p` the product of the non-zero elements and `z` the
    /// number of zeros, `x̄[i] = ȳ·p/x[i]` when `z = 0`, `ȳ·p` for the one
    /// zero when `z = 1`, and 0 otherwise — no division by zero, one pass
    /// for `(p, z)` and one for the adjoints.
    fn reduce_product(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        arr: Var,
        t: &Type,
        g: Atom,
    ) -> Result<(), AdError> {
        let elem = t.elem();
        let one = Atom::Const(nabla_ir::derivatives::constant(elem, 1.0));
        let zero = Atom::Const(PrimValue::zero(elem));
        let i64t = Type::Prim(PrimType::I64);
        let at = Type::Array(elem, vec![Dim::Ext]);
        let i64s = Type::Array(PrimType::I64, vec![Dim::Ext]);
        // (x ≠ 0 ? x : 1, x = 0 ? 1 : 0) per element, then their product
        // and sum.
        let split = b.lambda::<AdError>("x", vec![t.clone()], |b, ps| {
            let x = Atom::Var(ps[0]);
            let is_zero = b.cmp(CmpOp::Eq, x, zero);
            let nonzero = b.select(is_zero, one, x)?;
            let count = b.select(
                is_zero,
                Atom::Const(PrimValue::I64(1)),
                Atom::Const(PrimValue::I64(0)),
            )?;
            Ok(vec![nonzero, count])
        })?;
        let parts = b.bind(
            "split",
            vec![at.clone(), i64s],
            Exp::Soac(Soac::Map {
                w,
                lam: split,
                arrs: vec![arr],
            }),
        );
        let op = b.lambda::<AdError>(
            "p",
            vec![t.clone(), i64t.clone(), t.clone(), i64t.clone()],
            |b, ps| {
                let p = b.binop(BinOp::Mul, Atom::Var(ps[0]), Atom::Var(ps[2]))?;
                let z = b.binop(BinOp::Add, Atom::Var(ps[1]), Atom::Var(ps[3]))?;
                Ok(vec![p, z])
            },
        )?;
        let pz = b.bind(
            "product",
            vec![t.clone(), i64t],
            Exp::Soac(Soac::Reduce {
                w,
                lam: op,
                neutral: vec![one, Atom::Const(PrimValue::I64(0))],
                arrs: parts,
                commutative: true,
            }),
        );
        let (p, z) = (Atom::Var(pz[0]), Atom::Var(pz[1]));
        let scaled = b.binop(BinOp::Mul, g, p)?;
        let no_zeros = b.cmp(CmpOp::Eq, z, Atom::Const(PrimValue::I64(0)));
        let one_zero = b.cmp(CmpOp::Eq, z, Atom::Const(PrimValue::I64(1)));
        let lam = b.lambda::<AdError>("x", vec![t.clone()], |b, ps| {
            let x = Atom::Var(ps[0]);
            let is_zero = b.cmp(CmpOp::Eq, x, zero);
            let safe = b.select(is_zero, one, x)?;
            let quotient = b.binop(BinOp::Div, scaled, safe)?;
            let lone_zero = b.binop(BinOp::LogAnd, one_zero, is_zero)?;
            let other = b.select(lone_zero, scaled, zero)?;
            Ok(vec![b.select(no_zeros, quotient, other)?])
        })?;
        let xbar = b.bind1(
            "adj_product",
            at,
            Exp::Soac(Soac::Map {
                w,
                lam,
                arrs: vec![arr],
            }),
        );
        self.add(b, adj, arr, Atom::Var(xbar), true)
    }

    /// `reduce min`/`reduce max`: the result's adjoint goes to the first
    /// element equal to the result (seed 003 §5.1: ties to the smallest
    /// index), one sparse update.
    fn reduce_min_max(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        arr: Var,
        result: Var,
        g: Atom,
    ) -> Result<(), AdError> {
        if !self.active.contains(&arr) {
            return Ok(());
        }
        let span = self.span;
        let t = type_of(b, span, result)?;
        let iota = iota(b, w);
        // The first index whose element equals the result (w if none).
        let candidates =
            b.lambda::<AdError>("i", vec![t.clone(), Type::Prim(PrimType::I64)], |b, ps| {
                let eq = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(result));
                Ok(vec![b.select(eq, Atom::Var(ps[1]), w)?])
            })?;
        let positions = b.bind1(
            "positions",
            Type::Array(PrimType::I64, vec![Dim::Ext]),
            Exp::Soac(Soac::Map {
                w,
                lam: candidates,
                arrs: vec![arr, iota],
            }),
        );
        let min = b.lambda::<AdError>(
            "i",
            vec![Type::Prim(PrimType::I64), Type::Prim(PrimType::I64)],
            |b, ps| {
                Ok(vec![b.binop(
                    BinOp::Min,
                    Atom::Var(ps[0]),
                    Atom::Var(ps[1]),
                )?])
            },
        )?;
        let first = b.bind1(
            "first",
            Type::Prim(PrimType::I64),
            Exp::Soac(Soac::Reduce {
                w,
                lam: min,
                neutral: vec![w],
                arrs: vec![positions],
                commutative: true,
            }),
        );
        if adj.get(arr).is_some() {
            // An adjoint exists already: one element update, in place.
            let a = self.owned_adjoint(b, adj, arr)?;
            let at = crate::util::existential(&type_of(b, span, a)?);
            let found = b.cmp(CmpOp::Lt, Atom::Var(first), w);
            let idx = vec![DimIndex::Fix(Atom::Var(first))];
            b.begin();
            let old = b.bind1("adj_elem", t.clone(), Exp::Index(a, idx.clone()));
            let new = b.binop(BinOp::Add, Atom::Var(old), g)?;
            let upd = b.bind1("adj_upd", at.clone(), Exp::Update(a, idx, new));
            let then_ = b.end(vec![Atom::Var(upd)]);
            let else_ = Body {
                stms: vec![],
                result: vec![Atom::Var(a)],
            };
            let r = b.bind1(
                "adj_arg",
                at,
                Exp::If {
                    cond: found,
                    then_,
                    else_,
                },
            );
            adj.map.insert(arr, Atom::Var(r));
            adj.owned.insert(r);
            return Ok(());
        }
        // Otherwise the one-hot adjoint `map (\i -> if i == first then g else 0)
        // (iota w)`: pure and total, so it disappears when a `map` reverses
        // the one element alone (see `map_one_hot`).
        let w_dim = dim_of_atom(w);
        let indices = b.bind1(
            "iota",
            Type::Array(PrimType::I64, vec![w_dim]),
            Exp::Iota {
                n: w,
                start: Atom::Const(PrimValue::I64(0)),
                step: Atom::Const(PrimValue::I64(1)),
                ty: PrimType::I64,
            },
        );
        let zero = Atom::Const(PrimValue::zero(t.elem()));
        let pick = b.lambda::<AdError>("i", vec![Type::Prim(PrimType::I64)], |b, ps| {
            let here = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(first));
            Ok(vec![b.select(here, g, zero)?])
        })?;
        let one_hot = b.bind1(
            "adj_one_hot",
            Type::Array(t.elem(), vec![w_dim]),
            Exp::Soac(Soac::Map {
                w,
                lam: pick,
                arrs: vec![indices],
            }),
        );
        self.one_hot.insert(one_hot, (Atom::Var(first), g));
        self.add(b, adj, arr, Atom::Var(one_hot), true)
    }

    /// A `map` whose only result adjoint is one-hot (`one_hot`: zero except
    /// at `index`, where it is `g`; no element when `index` is out of
    /// bounds): only that element's lambda is reversed, as the branch
    /// `if index < w then (the lambda on the rows arrs[index]) else 0` with
    /// adjoint `g` — its reads `arrs[index]` give the inputs sparse
    /// adjoints (one-row updates, or accumulator updates inside an
    /// enclosing map) and its free variables their adjoints directly, with
    /// no per-element adjoint arrays (seed 003 §5.1's min/max rule carried
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

    /// The body with every call inlined (recursively), so the sweeps see
    /// only the callees' statements. A call of a recursive function cannot
    /// be inlined: the `vjp` is left to the dynamic AD.
    fn inline_calls(&mut self, b: &mut FunctionBuilder, body: Body) -> Result<Body, AdError> {
        self.inline_calls_in(b, body, &mut Vec::new())
    }

    /// [`Reverse::inline_calls`] inside the bodies of the functions
    /// `inlining` (outermost first).
    fn inline_calls_in(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
        inlining: &mut Vec<nabla_ir::FunId>,
    ) -> Result<Body, AdError> {
        if !has_calls(&body) {
            return Ok(body);
        }
        let mut out = Vec::with_capacity(body.stms.len());
        for mut stm in body.stms {
            stm.exp = match stm.exp {
                Exp::Apply(f, args) => {
                    let Some(callee) = self.ad.functions.get(f.0 as usize).cloned() else {
                        return error(stm.span, "internal error: call of a missing function");
                    };
                    if inlining.contains(&f) {
                        return unsupported(
                            stm.span,
                            format!(
                                "a call of the recursive function {} (reverse mode inlines every call)",
                                callee.name
                            ),
                        );
                    }
                    let copied = copy_function_body(b, &callee, &args, stm.span)?;
                    inlining.push(f);
                    let copied = self.inline_calls_in(b, copied, inlining);
                    inlining.pop();
                    let copied = copied?;
                    out.extend(copied.stms);
                    Exp::Atoms(copied.result)
                }
                mut e => {
                    for nested in nested_bodies_mut(&mut e) {
                        let taken = std::mem::take(nested);
                        *nested = self.inline_calls_in(b, taken, inlining)?;
                    }
                    e
                }
            };
            out.push(stm);
        }
        Ok(Body {
            stms: out,
            result: body.result,
        })
    }

    /// The sum of the `n` rows of `g` (for the adjoint of `replicate`).
    fn sum_rows(
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
        let s = b.bind1(
            "adj_sum",
            crate::util::existential(&row.clone()),
            Exp::Soac(Soac::Reduce {
                w: n,
                lam,
                neutral: vec![neutral],
                arrs: vec![g],
                commutative: true,
            }),
        );
        Ok(Atom::Var(s))
    }

    /// The adjoint of a scalar operation: x̄ᵢ += ȳ · ∂op/∂xᵢ, the partials
    /// from the shared rule table.
    fn scalar(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        g: Option<Atom>,
        pat: &[Param],
        op: ScalarOp,
        operands: &[Atom],
    ) -> Result<(), AdError> {
        let Some(g) = g else {
            return Ok(());
        };
        let any_active = operands
            .iter()
            .any(|x| matches!(x, Atom::Var(v) if self.active.contains(v)));
        if !any_active {
            return Ok(());
        }
        let t = atom_type(b, self.span, &operands[0])?.elem();
        let result = Atom::Var(pat[0].var);
        let derivative = eval_partials(&mut Emit { b }, op, t, operands, Some(&result));
        let derivative = match derivative {
            Ok(d) => d,
            Err(EmitError::Unsupported(m)) => return unsupported(self.span, m),
            Err(EmitError::Unknown(u)) => return Err(self.unknown(u)),
            Err(EmitError::Rule(e)) => return error(self.span, e.to_string()),
        };
        match derivative {
            Derivative::Constant => {}
            Derivative::Conversion { backward, .. } => {
                if let Atom::Var(x) = operands[0] {
                    let c = b.conv(backward, g);
                    self.add(b, adj, x, c, false)?;
                }
            }
            Derivative::Partials(partials) => {
                for (p, x) in partials.iter().zip(operands) {
                    if let (Some(p), Atom::Var(x)) = (p, x) {
                        let c = b.binop(BinOp::Mul, g, *p).map_err(|u| self.unknown(u))?;
                        self.add(b, adj, *x, c, false)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The differentiable free variables of some code, in a fixed order.
    fn candidates(
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

    /// `if`: each branch run again (on fresh variables) followed by its
    /// return sweep; the branches return the adjoint contributions of the
    /// free variables.
    #[allow(clippy::too_many_arguments)]
    fn branch(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        ybar: &[Option<Atom>],
        cond: Atom,
        then_: &Body,
        else_: &Body,
    ) -> Result<(), AdError> {
        let mut free = nabla_ir::free_vars_body(then_);
        free.extend(nabla_ir::free_vars_body(else_));
        let all = self.candidates(b, free, &[])?;
        // Free arrays whose adjoints go to accumulators (inside a map): each
        // branch takes the accumulator and returns its successor.
        let (accumulated, fvs): (Vec<Var>, Vec<Var>) =
            all.into_iter().partition(|v| self.redirect.contains_key(v));
        let saved = self.redirect.clone();
        let mut recomputed = HashSet::new();
        let mut sides = Vec::with_capacity(2);
        let mut acc_results = Vec::with_capacity(2);
        for branch in [then_, else_] {
            b.begin();
            let r = self.branch_side(b, branch, ybar, &fvs, &mut recomputed);
            let body = b.end(vec![]);
            let finals: Vec<Atom> = accumulated
                .iter()
                .map(|v| Atom::Var(self.redirect[v]))
                .collect();
            self.redirect = saved.clone();
            let contributions = r?;
            sides.push((body, contributions));
            acc_results.push(finals);
        }
        let mut keep = Vec::new();
        for (k, _) in fvs.iter().enumerate() {
            if sides[0].1[k].is_some() || sides[1].1[k].is_some() {
                keep.push(k);
            }
        }
        if keep.is_empty() && accumulated.is_empty() {
            return Ok(());
        }
        let mut bodies = Vec::with_capacity(2);
        for ((mut body, contributions), finals) in sides.into_iter().zip(acc_results) {
            body.result.extend(finals);
            for &k in &keep {
                let a = match contributions[k] {
                    Some(a) => a,
                    None => {
                        b.begin();
                        let z = zero_like(b, self.span, fvs[k]);
                        body.stms.extend(b.end(vec![]).stms);
                        z?
                    }
                };
                body.result.push(a);
            }
            // The branch's primal code that its return sweep does not read
            // is not recomputed.
            prune_recomputed(&mut body, &recomputed);
            bodies.push(body);
        }
        let mut accs_out = Vec::with_capacity(accumulated.len());
        for v in &accumulated {
            let t = type_of(b, self.span, self.redirect[v])?;
            accs_out.push(Param::new(b.vars.fresh("acc", t.clone()), t));
        }
        let mut out = Vec::with_capacity(keep.len());
        for &k in &keep {
            let t = type_of(b, self.span, fvs[k])?;
            out.push(Param::new(b.vars.fresh("adj", t.clone()), t));
        }
        let else_b = bodies.pop().unwrap_or_default();
        let then_b = bodies.pop().unwrap_or_default();
        let mut pattern = accs_out.clone();
        pattern.extend(out.iter().cloned());
        for (v, p) in accumulated.iter().zip(&accs_out) {
            self.redirect.insert(*v, p.var);
        }
        b.push(Stm {
            pat: pattern,
            exp: Exp::If {
                cond,
                then_: then_b,
                else_: else_b,
            },
            span: self.span,
        });
        for (&k, p) in keep.iter().zip(&out) {
            self.add(b, adj, fvs[k], Atom::Var(p.var), true)?;
        }
        Ok(())
    }

    /// One side of [`Reverse::branch`]: emits the branch's code again and
    /// its return sweep into the open body; the contribution to each free
    /// variable. The variables the copy of the branch binds go into
    /// `recomputed`.
    fn branch_side(
        &mut self,
        b: &mut FunctionBuilder,
        branch: &Body,
        ybar: &[Option<Atom>],
        fvs: &[Var],
        recomputed: &mut HashSet<Var>,
    ) -> Result<Vec<Option<Atom>>, AdError> {
        let copy = self.fresh_copy(b, branch, HashMap::new())?;
        recomputed.extend(bound_vars(&copy.stms));
        let cks = self.forward_sweep(b, &copy.stms)?;
        let mut inner = Adjoints::default();
        for (r, y) in copy.result.iter().zip(ybar) {
            if let (Atom::Var(r), Some(y)) = (r, y) {
                self.add_shared(b, &mut inner, *r, *y)?;
            }
        }
        self.return_sweep(b, &copy.stms, &cks, &mut inner)?;
        Ok(fvs.iter().map(|v| inner.get(*v)).collect())
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

    /// A `for` loop, reversed (seed 003 §4.2): iteration `n-1-j` of the
    /// adjoint loop restores the parameters from the checkpoints, runs the
    /// body again and then its return sweep, carrying the adjoints of the
    /// parameters and of the body's free variables.
    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        ybar: &[Option<Atom>],
        pat: &[Param],
        params: &[Param],
        init: &[Atom],
        ck: &LoopCheckpoints,
        body: &Body,
    ) -> Result<(), AdError> {
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
                    let mut v = b.bind1(
                        "restored",
                        t.clone(),
                        Exp::Index(*ck, vec![DimIndex::Fix(index)]),
                    );
                    if p.unique && t.rank() > 0 {
                        // The body consumes this parameter: give it its
                        // own copy, not a view of the checkpoints.
                        v = b.bind1("restored", t, Exp::Copy(v));
                    }
                    restored.push(v);
                }
                restored
            };
            let restored = match &ck.restore {
                Restore::Checkpoints(checkpoints) => from_checkpoints(b, checkpoints),
                Restore::Guarded {
                    checkpoints,
                    fits,
                    initial,
                } => {
                    b.begin();
                    let rows = from_checkpoints(b, checkpoints);
                    let then_ = b.end(rows.into_iter().map(Atom::Var).collect());
                    b.begin();
                    let rerun = self.rerun_loop(b, params, initial, i, iteration, body);
                    let else_ = b.end(vec![]);
                    let else_ = Body {
                        stms: else_.stms,
                        result: rerun?.into_iter().map(Atom::Var).collect(),
                    };
                    let types = params
                        .iter()
                        .map(|p| crate::util::existential(&p.ty))
                        .collect();
                    b.bind(
                        "restored",
                        types,
                        Exp::If {
                            cond: Atom::Var(*fits),
                            then_,
                            else_,
                        },
                    )
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
        Ok(Atom::Var(b.bind1(
            "adj_copy",
            crate::util::existential(&t),
            Exp::Copy(v),
        )))
    }

    /// `map`: the adjoint is a map (seed 003 §5.4) over the inputs and the
    /// results' adjoints whose lambda runs the primal lambda again and then
    /// its return sweep, returning the adjoints of its parameters (rows of
    /// the inputs' adjoints) and its contributions to free scalars (summed
    /// afterwards). Free arrays receive their adjoints through accumulators
    /// (seed 003 §5.4): a `with_acc` around the adjoint map at the outermost
    /// map, the enclosing accumulators threaded through nested maps.
    #[allow(clippy::too_many_arguments)]
    fn map(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        ybar: &[Option<Atom>],
        w: Atom,
        lam: &Lambda,
        arrs: &[Var],
        pat: &[Param],
    ) -> Result<(), AdError> {
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
    /// Seed 003 §4 re-executes the lambda's body in the return sweep; a
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

/// Removes from `body`, at any depth, the statements that recompute primal
/// values (they bind only variables of `recomputed`) which nothing reads,
/// until none is left. Unlike dead-code elimination in general, this may
/// remove statements that could fail (an index, a division): they are
/// re-executions, in the return sweep, of statements that the forward sweep
/// already ran on the same values, so they cannot fail here (seed 003 §4:
/// redundant execution). Statements with accumulators stay (an
/// accumulator is used exactly once, by its successor).
fn prune_recomputed(body: &mut Body, recomputed: &HashSet<Var>) {
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
            changed |= crate::util::nested_bodies_mut(&mut s.exp)
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
fn bound_vars(stms: &[Stm]) -> impl Iterator<Item = Var> + '_ {
    stms.iter().flat_map(|s| s.pat.iter().map(|p| p.var))
}

/// The statements of `bodies` one after the other, with the last one's
/// result (applications of an operator chained through their results).
fn sequence(bodies: Vec<Body>) -> Body {
    let mut out = Body::default();
    for body in bodies {
        out.stms.extend(body.stms);
        out.result = body.result;
    }
    out
}

/// Pushes `loop (params = init) for i < bound do body` (`counter` is
/// `(i, bound)`), its results bound to fresh variables of the parameters'
/// types, the one of parameter `c` named `name(c)`; returns them.
fn push_for_loop(
    b: &mut FunctionBuilder,
    params: Vec<Param>,
    init: Vec<Atom>,
    counter: (Var, Atom),
    body: Body,
    span: Span,
    name: impl Fn(usize) -> &'static str,
) -> Vec<Var> {
    let out: Vec<Param> = params
        .iter()
        .enumerate()
        .map(|(c, p)| b.param(name(c), p.ty.clone()))
        .collect();
    let vars = out.iter().map(|p| p.var).collect();
    let (i, bound) = counter;
    b.push(Stm {
        pat: out,
        exp: Exp::Loop {
            params,
            init,
            form: LoopForm::For { i, bound },
            body,
        },
        span,
    });
    vars
}

/// `if at_edge then neutral else scanned[index]` (an exclusive scan's
/// element, reading `scanned` only in bounds).
fn exclusive(
    b: &mut FunctionBuilder,
    at_edge: Atom,
    neutral: Atom,
    scanned: Var,
    index: Atom,
    t: &Type,
) -> Result<Atom, AdError> {
    b.begin();
    let x = b.bind1(
        "scanned",
        t.clone(),
        Exp::Index(scanned, vec![DimIndex::Fix(index)]),
    );
    let else_ = b.end(vec![Atom::Var(x)]);
    let then_ = Body {
        stms: vec![],
        result: vec![neutral],
    };
    Ok(Atom::Var(b.bind1(
        "excl",
        t.clone(),
        Exp::If {
            cond: at_edge,
            then_,
            else_,
        },
    )))
}

/// Whether a body calls a function anywhere.
fn has_calls(body: &Body) -> bool {
    let mut stack = vec![body];
    while let Some(b) = stack.pop() {
        for s in &b.stms {
            if matches!(s.exp, Exp::Apply(..)) {
                return true;
            }
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(nb) => stack.push(nb),
                nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
            });
        }
    }
    false
}

/// The callee's body copied into the caller with fresh variables, its
/// parameters replaced by the arguments (the result atoms are the call's
/// results).
fn copy_function_body(
    b: &mut FunctionBuilder,
    callee: &nabla_ir::Function,
    args: &[Atom],
    span: Span,
) -> Result<Body, AdError> {
    let source = nabla_ir::builder::VarTable::of_function(callee);
    let mut c = Copier {
        b,
        source: Some(&source),
        map: HashMap::new(),
        failed: None,
    };
    for (p, a) in callee.params.iter().zip(args) {
        c.map.insert(p.var, *a);
    }
    let mut body = callee.body.clone();
    c.body(&mut body);
    if let Some(m) = c.failed {
        return error(span, m);
    }
    b.vars.record_body(&body);
    Ok(body)
}

/// The binary operator `op` when a reduction/scan operator is just
/// `\a b -> a op b` (either argument order) on one value.
fn single_binop(lam: &Lambda) -> Option<BinOp> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    let [s] = lam.body.stms.as_slice() else {
        return None;
    };
    let [Atom::Var(r)] = lam.body.result.as_slice() else {
        return None;
    };
    match s.exp {
        Exp::BinOp(op, Atom::Var(x), Atom::Var(y))
            if s.pat.len() == 1
                && s.pat[0].var == *r
                && ((x == a.var && y == b.var) || (x == b.var && y == a.var)) =>
        {
            Some(op)
        }
        _ => None,
    }
}

/// The scalar operator of a vectorised reduction operator
/// `\a b -> map2 op a b` (rows of one array each; size checks allowed
/// before the map), with its parameters in the order of `a` and `b`.
fn vectorised_operator(lam: &Lambda) -> Option<Lambda> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    if a.ty.rank() != 1 || b.ty.rank() != 1 {
        return None;
    }
    let [Atom::Var(r)] = lam.body.result.as_slice() else {
        return None;
    };
    let (last, before) = lam.body.stms.split_last()?;
    if !before
        .iter()
        .all(|s| matches!(s.exp, Exp::Size(..) | Exp::AssertEqSizes(..)))
    {
        return None;
    }
    let Exp::Soac(Soac::Map {
        lam: inner, arrs, ..
    }) = &last.exp
    else {
        return None;
    };
    if last.pat.len() != 1 || last.pat[0].var != *r || inner.params.len() != 2 {
        return None;
    }
    let mut op = inner.clone();
    if arrs.as_slice() == [a.var, b.var] {
        Some(op)
    } else if arrs.as_slice() == [b.var, a.var] {
        op.params.swap(0, 1);
        Some(op)
    } else {
        None
    }
}

/// Whether a reduction operator is `+` on one value.
fn is_plus(lam: &Lambda) -> bool {
    single_binop(lam) == Some(BinOp::Add)
}

/// Whether a reduction operator is `min` or `max` on one value.
fn is_min_or_max(lam: &Lambda) -> bool {
    matches!(single_binop(lam), Some(BinOp::Min | BinOp::Max))
}

/// `iota w` (an `i64` array).
fn iota(b: &mut FunctionBuilder, w: Atom) -> Var {
    b.bind1(
        "iota",
        Type::Array(PrimType::I64, vec![Dim::Ext]),
        Exp::Iota {
            n: w,
            start: Atom::Const(PrimValue::I64(0)),
            step: Atom::Const(PrimValue::I64(1)),
            ty: PrimType::I64,
        },
    )
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
        Type::Prim(_) => b.binop(BinOp::Add, x, y).map_err(|u| AdError {
            message: u.to_string(),
            span,
            unsupported: false,
        }),
        Type::Acc(..) => unsupported(span, "static AD does not differentiate accumulators yet"),
        Type::Array(..) => {
            let (Atom::Var(xv), Atom::Var(yv)) = (x, y) else {
                return error(span, "internal error: an array adjoint that is a constant");
            };
            let row = t.row().unwrap_or(Type::Prim(t.elem()));
            let n = Atom::Var(b.bind1("n", Type::Prim(PrimType::I64), Exp::Size(xv, 0)));
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
