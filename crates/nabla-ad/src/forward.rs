//! Forward mode: the tangent of every statement, emitted after it (seed 003
//! §3, seed 004 §3; the rules of the constructs are those of seed 001's
//! dual numbers lifted to the IR's statements).
//!
//! The transformation walks a body in order and keeps a map from each
//! primal variable to the atom holding its tangent ([`Tangents`]); a
//! variable without an entry has a zero tangent. Each construct's rule is
//! one function below.

use crate::util::{Emit, EmitError};
use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::{base_name, FunctionBuilder, UnknownVariable, VarTable};
use nabla_ir::derivatives::{eval_partials, Derivative, ScalarOp};
use nabla_ir::{
    Atom, BinOp, Body, Dim, Exp, FunId, Function, Lambda, LoopForm, Param, Soac, Span, Stm, Type,
    Var,
};
use std::collections::HashMap;

/// The tangents of the variables in scope (absent: zero).
#[derive(Clone, Default, Debug)]
pub struct Tangents(HashMap<Var, Atom>);

impl Tangents {
    /// The tangent of an atom (`None`: zero; constants have zero tangents).
    pub fn get(&self, a: &Atom) -> Option<Atom> {
        match a {
            Atom::Var(v) => self.0.get(v).copied(),
            Atom::Const(_) => None,
        }
    }

    /// Sets (or clears, with `None`) the tangent of `v`.
    pub fn set(&mut self, v: Var, t: Option<Atom>) {
        match t {
            Some(t) => {
                self.0.insert(v, t);
            }
            None => {
                self.0.remove(&v);
            }
        }
    }

    fn has(&self, v: Var) -> bool {
        self.0.contains_key(&v)
    }
}

fn unknown(span: Span, u: UnknownVariable) -> AdError {
    AdError {
        message: u.to_string(),
        span,
        unsupported: false,
    }
}

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
                let all = b.bind1("seeds", ty.array_of(dim), Exp::Replicate(*w, *t));
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
        let seeds = b.bind(
            "seeds",
            types.iter().map(|t| t.array_of(dim)).collect(),
            Exp::Soac(Soac::Map {
                w: *w,
                lam: seed_lam,
                arrs: arrs.clone(),
            }),
        );
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
            let (Atom::Var(t), Type::Array(elem, dims)) = (t, crate::util::atom_type(b, span, &t)?)
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
                let outer_dims = perm.iter().map(|&d| dims[d]).collect();
                let outer = b.bind1(
                    "tan_outer",
                    Type::Array(elem, outer_dims),
                    Exp::Rearrange(perm, t),
                );
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

/// The forward-mode derivative of function `fid` for the parameters that
/// `active` marks (one flag per parameter): a function taking the
/// parameters and then one tangent per active parameter (the others have
/// zero tangents), returning the results and then one tangent per result.
/// Made once per function and set of active parameters; the derivative
/// for all parameters is named `NAME_jvp`, others `NAME_jvp_FLAGS` with
/// one `1`/`0` per parameter. With `batched` (vector mode, see
/// [`expand_batched_jvp`]), the parameters are followed by the number of
/// seeds `k` (an `i64`) and every tangent has an innermost dimension of
/// `k` seeds; the name gets `_batch` after `jvp`. A recursive function's
/// derivative calls itself: its id is taken before its body is made.
/// Recursion through the `jvp` being eliminated in the function itself
/// is left to the dynamic AD.
pub(crate) fn derived_function(
    ad: &mut Ad,
    fid: FunId,
    active: &[bool],
    batched: bool,
    span: Span,
) -> Result<FunId, AdError> {
    if let Some(d) = ad.derived.get(&(fid, active.to_vec(), batched)) {
        return Ok(*d);
    }
    let i = fid.0 as usize;
    if i >= ad.functions.len() {
        return error(
            span,
            format!("internal error: call of missing function #{i}"),
        );
    }
    ad.eliminate_in_function(i)?;
    if ad.transforming.contains(&i) {
        return unsupported(
            span,
            "a recursive call from a jvp in the called function's own body",
        );
    }
    let f = ad.functions[i].clone();
    if active.len() != f.params.len() {
        return error(
            span,
            format!(
                "internal error: call of `{}` with {} arguments for {} parameters",
                f.name,
                active.len(),
                f.params.len()
            ),
        );
    }
    let mut b = FunctionBuilder::with_vars(VarTable::of_function(&f));
    b.set_span(f.span);
    let mut tans = Tangents::default();
    let mut params = f.params.clone();
    let batch = if batched {
        let k = b.param("seeds", Type::Prim(nabla_ir::PrimType::I64));
        params.push(k.clone());
        Some(Batch {
            width: Atom::Var(k.var),
            dim: Dim::Var(k.var),
        })
    } else {
        None
    };
    let tangent_type = |t: &Type| match batch {
        Some(batch) => batched_type(t, batch.dim),
        None => t.clone(),
    };
    for (p, _) in f.params.iter().zip(active).filter(|(_, &a)| a) {
        let name = format!("{}_tan", base_name(b.vars.name(p.var)));
        let t = b.param(&name, tangent_type(&p.ty));
        tans.set(p.var, Some(Atom::Var(t.var)));
        params.push(t);
    }
    let id = FunId(ad.functions.len() as u32);
    ad.functions.push(crate::placeholder());
    ad.derived.insert((fid, active.to_vec(), batched), id);
    let mut fwd = Forward {
        ad,
        span: f.span,
        batch,
    };
    let made = fwd.stms(&mut b, f.body.stms, &mut tans).and_then(|()| {
        let mut results = f.body.result.clone();
        for a in &f.body.result {
            results.push(fwd.materialize(&mut b, &tans, a)?);
        }
        Ok(results)
    });
    let results = match made {
        Ok(r) => r,
        Err(e) => {
            // Forgotten (the placeholder stays, uncalled): the calls of it
            // made meanwhile are in code that this error discards too.
            ad.derived.remove(&(fid, active.to_vec(), batched));
            return Err(e);
        }
    };
    let body = b.end(results);
    let mut ret = f.ret.clone();
    ret.extend(f.ret.iter().map(tangent_type));
    let mut unique_ret = f.unique_ret.clone();
    unique_ret.extend(f.ret.iter().map(|_| false));
    let mode = if batched { "jvp_batch" } else { "jvp" };
    let name = if active.iter().all(|&a| a) {
        format!("{}_{mode}", f.name)
    } else {
        let flags: String = active.iter().map(|&a| if a { '1' } else { '0' }).collect();
        format!("{}_{mode}_{flags}", f.name)
    };
    let derived = Function {
        name,
        params,
        ret,
        unique_ret,
        body,
        var_names: b.vars.into_names(),
        span: f.span,
    };
    ad.functions[id.0 as usize] = derived;
    Ok(id)
}

/// The forward-mode transformation of the code of one function.
struct Forward<'a> {
    ad: &'a mut Ad,
    span: Span,
    /// Vector mode: every tangent carries one more, innermost, dimension
    /// with one tangent per seed (see [`expand_batched_jvp`]).
    batch: Option<Batch>,
}

/// The seeds of a vector-mode `jvp`: `width` of them, the size of the
/// innermost dimension that every tangent gets.
#[derive(Clone, Copy, Debug)]
struct Batch {
    width: Atom,
    dim: Dim,
}

/// `ty` with one more, innermost, dimension `dim`: the type of a batch of
/// tangents of a value of type `ty` (a scalar's batch is a `[dim]` array).
fn batched_type(ty: &Type, dim: Dim) -> Type {
    match ty {
        Type::Prim(p) => Type::Array(*p, vec![dim]),
        Type::Array(p, ds) => {
            let mut ds = ds.clone();
            ds.push(dim);
            Type::Array(*p, ds)
        }
        Type::Acc(p, ds) => {
            let mut ds = ds.clone();
            ds.push(dim);
            Type::Acc(*p, ds)
        }
    }
}

impl Forward<'_> {
    fn unknown(&self, u: UnknownVariable) -> AdError {
        unknown(self.span, u)
    }

    fn type_of(&self, b: &FunctionBuilder, v: Var) -> Result<Type, AdError> {
        crate::util::type_of(b, self.span, v)
    }

    /// A zero tangent for `v`: zeros shaped like it (a batch of them in
    /// vector mode).
    fn zero_like(&self, b: &mut FunctionBuilder, v: Var) -> Result<Atom, AdError> {
        if self.batch.is_none() {
            return crate::util::zero_like(b, self.span, v);
        }
        let (p, sizes) = match self.type_of(b, v)? {
            Type::Prim(p) => (p, vec![]),
            Type::Array(p, _) => (p, crate::util::shape_of(b, self.span, v)?),
            Type::Acc(..) => {
                return unsupported(
                    self.span,
                    "static AD does not differentiate accumulators yet",
                )
            }
        };
        self.batched_zeros(b, p, sizes)
    }

    /// `width` zeros innermost, inside the given outer dimensions.
    fn batched_zeros(
        &self,
        b: &mut FunctionBuilder,
        p: nabla_ir::PrimType,
        sizes: Vec<(Atom, Dim)>,
    ) -> Result<Atom, AdError> {
        let Some(batch) = self.batch else {
            return error(
                self.span,
                "internal error: batched zeros outside vector mode",
            );
        };
        let zero = Atom::Const(nabla_ir::PrimValue::zero(p));
        let mut sizes = sizes;
        sizes.push((batch.width, batch.dim));
        Ok(crate::util::replicated(
            b,
            "zeros",
            &sizes,
            zero,
            Type::Prim(p),
        ))
    }

    /// A zero tangent for the value of `a`.
    fn zero_of(&self, b: &mut FunctionBuilder, a: &Atom) -> Result<Atom, AdError> {
        match (a, self.batch) {
            (Atom::Const(c), Some(_)) => self.batched_zeros(b, c.prim_type(), vec![]),
            (Atom::Const(_), None) => crate::util::zero_of(b, self.span, a),
            (Atom::Var(v), _) => self.zero_like(b, *v),
        }
    }

    /// The type of the tangent of a value of type `ty`.
    fn tangent_type(&self, ty: &Type) -> Type {
        match self.batch {
            None => ty.clone(),
            Some(batch) => batched_type(ty, batch.dim),
        }
    }

    /// Vector mode: `map` over the seeds of the scalar tangents `inputs`
    /// (each a `[width]` array of element type `types[i]`), with `f`
    /// computing one seed's tangent from one element of each.
    fn map_over_seeds(
        &self,
        b: &mut FunctionBuilder,
        inputs: Vec<Atom>,
        types: Vec<nabla_ir::PrimType>,
        f: impl FnOnce(&mut FunctionBuilder, &[Var]) -> Result<Atom, UnknownVariable>,
    ) -> Result<Atom, AdError> {
        let Some(batch) = self.batch else {
            return error(self.span, "internal error: a seed map outside vector mode");
        };
        let mut arrs = Vec::with_capacity(inputs.len());
        for a in inputs {
            match a {
                Atom::Var(v) => arrs.push(v),
                Atom::Const(_) => {
                    return error(self.span, "internal error: a scalar tangent in vector mode")
                }
            }
        }
        let lam = b
            .lambda(
                "tan",
                types.into_iter().map(Type::Prim).collect(),
                |b, vs| Ok::<_, UnknownVariable>(vec![f(b, vs)?]),
            )
            .map_err(|u| self.unknown(u))?;
        let ty = Type::Array(lam.ret[0].elem(), vec![batch.dim]);
        Ok(Atom::Var(b.bind1(
            "tan",
            ty,
            Exp::Soac(Soac::Map {
                w: batch.width,
                lam,
                arrs,
            }),
        )))
    }

    /// Vector mode: `all`, the seeds' tangents of a value of type `ty`
    /// stacked outermost (`[w]ty`), with the seed dimension moved innermost
    /// (and copied, so that each element's batch is contiguous).
    fn seed_dimension_inward(
        &self,
        b: &mut FunctionBuilder,
        all: Var,
        ty: &Type,
    ) -> Result<Var, AdError> {
        let rank = ty.rank();
        if rank == 0 {
            return Ok(all);
        }
        let Some(batch) = self.batch else {
            return error(self.span, "internal error: seeds outside vector mode");
        };
        let inner_ty = batched_type(ty, batch.dim);
        let perm: Vec<usize> = (1..=rank).chain([0]).collect();
        let view = b.bind1("seeds_inner", inner_ty.clone(), Exp::Rearrange(perm, all));
        Ok(b.bind1("seeds_inner", inner_ty, Exp::Copy(view)))
    }

    /// The tangent of `a`, made a value (zeros) if it is zero.
    fn materialize(
        &self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        a: &Atom,
    ) -> Result<Atom, AdError> {
        match tans.get(a) {
            Some(t) => Ok(t),
            None => self.zero_of(b, a),
        }
    }

    /// The tangent of array variable `v` as a variable (zeros if it is zero).
    fn materialize_var(
        &self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        v: Var,
    ) -> Result<Var, AdError> {
        match self.materialize(b, tans, &Atom::Var(v))? {
            Atom::Var(t) => Ok(t),
            Atom::Const(_) => error(self.span, "internal error: a scalar tangent for an array"),
        }
    }

    /// A zero shaped like `a`, computed at the end of `body` (which must
    /// have `a` in scope there).
    fn zero_at_end(
        &self,
        b: &mut FunctionBuilder,
        body: &mut Body,
        a: &Atom,
    ) -> Result<Atom, AdError> {
        b.begin();
        let z = self.zero_of(b, a);
        let extra = b.end(vec![]);
        body.stms.extend(extra.stms);
        z
    }

    /// A fresh tangent variable for the primal binding `p`.
    fn tangent_param(&self, b: &mut FunctionBuilder, p: &Param) -> Param {
        let name = format!("{}_tan", base_name(b.vars.name(p.var)));
        let ty = self.tangent_type(&p.ty);
        b.param(&name, ty)
    }

    /// Binds `exp` (the tangent of the single result `p`) and records it.
    fn bind_tangent(&self, b: &mut FunctionBuilder, tans: &mut Tangents, p: &Param, exp: Exp) {
        let t = self.tangent_param(b, p);
        b.push(Stm {
            pat: vec![t.clone()],
            exp,
            span: self.span,
        });
        tans.set(p.var, Some(Atom::Var(t.var)));
    }

    /// The statements with their tangents.
    fn stms(
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
    fn nested_body(
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
                        Some(Atom::Var(t)) => {
                            let ty = self.type_of(b, t)?;
                            Atom::Var(b.bind1("tan_copy", ty, Exp::Copy(t)))
                        }
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

    /// `with_acc`: a tangent accumulator beside each accumulator whose array
    /// has a tangent (the same operator: the tangent of a sum of updates is
    /// the sum of their tangents; of writes, the written tangents).
    fn with_acc(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        inputs: Vec<nabla_ir::AccInput>,
        lam: Lambda,
    ) -> Result<(), AdError> {
        let n = inputs.len();
        let mut all_inputs = inputs.clone();
        let mut with_tangent = Vec::with_capacity(n);
        // Every accumulator gets a tangent one (zeros where its array has
        // none): the updates' values may carry tangents either way.
        for input in &inputs {
            if matches!(input.op, nabla_ir::AccOp::Lambda(..)) {
                return unsupported(self.span, "accumulators with an operator lambda");
            }
            let t = self.fresh_tangent_array(b, tans, input.array)?;
            let t = self.with_primal_sizes(b, t, input.array)?;
            all_inputs.push(nabla_ir::AccInput {
                array: t,
                op: input.op.clone(),
            });
            with_tangent.push(true);
        }
        let mut inner = tans.clone();
        let mut params = lam.params[..n].to_vec();
        for (p, &w) in lam.params[..n].iter().zip(&with_tangent) {
            if w {
                let tp = self.tangent_param(b, p);
                inner.set(p.var, Some(Atom::Var(tp.var)));
                params.push(tp);
            } else {
                inner.set(p.var, None);
            }
        }
        params.extend(lam.params[n..].iter().cloned());
        let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
        let mut ret = lam.ret[..n].to_vec();
        let mut results = body.result[..n].to_vec();
        for i in 0..n {
            if with_tangent[i] {
                match rt[i] {
                    Some(t) => results.push(t),
                    None => {
                        return error(
                            self.span,
                            "internal error: a tangent accumulator was dropped",
                        )
                    }
                }
                ret.push(self.tangent_type(&lam.ret[i]));
            }
        }
        results.extend(body.result[n..].iter().copied());
        ret.extend(lam.ret[n..].iter().cloned());
        let mut extra_with = Vec::new();
        for (i, t) in rt.iter().enumerate().skip(n) {
            if let Some(t) = *t {
                results.push(t);
                ret.push(self.tangent_type(&lam.ret[i]));
                extra_with.push(true);
            } else {
                extra_with.push(false);
            }
        }
        body.result = results;
        // Pattern: arrays, tangent arrays, extra values, their tangents.
        let mut full: Vec<Param> = pat[..n].to_vec();
        let mut tangent_of = vec![None; pat.len()];
        for i in 0..n {
            if with_tangent[i] {
                let tp = self.tangent_param(b, &pat[i]);
                tangent_of[i] = Some(tp.var);
                full.push(tp);
            }
        }
        full.extend(pat[n..].iter().cloned());
        for (k, &w) in extra_with.iter().enumerate() {
            if w {
                let tp = self.tangent_param(b, &pat[n + k]);
                tangent_of[n + k] = Some(tp.var);
                full.push(tp);
            }
        }
        b.push(Stm {
            pat: full,
            exp: Exp::WithAcc {
                inputs: all_inputs,
                lam: Lambda { params, body, ret },
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }

    /// An operation on one array whose tangent is the same operation on the
    /// array's tangent (`copy`, `reshape`, `rearrange`, `reverse`, `rotate`).
    fn unary_array(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: &[Param],
        v: Var,
        exp: Exp,
        on_tangent: impl Fn(Var) -> Exp,
    ) -> Result<(), AdError> {
        let t = tans.get(&Atom::Var(v));
        b.push(Stm {
            pat: pat.to_vec(),
            exp,
            span: self.span,
        });
        match t {
            // `copy`, `reverse` and `rotate` keep their operand's type: the
            // tangent's, whose sizes may be other variables (of equal
            // values) than the primal's.
            Some(Atom::Var(t)) => match on_tangent(t) {
                e @ (Exp::Copy(_) | Exp::Reverse(_) | Exp::Rotate(..)) => {
                    let name = format!("{}_tan", base_name(b.vars.name(pat[0].var)));
                    let tp = b.param(&name, self.type_of(b, t)?);
                    b.push(Stm {
                        pat: vec![tp.clone()],
                        exp: e,
                        span: self.span,
                    });
                    tans.set(pat[0].var, Some(Atom::Var(tp.var)));
                }
                e => self.bind_tangent(b, tans, &pat[0], e),
            },
            _ => tans.set(pat[0].var, None),
        }
        Ok(())
    }

    /// The tangent of a scalar operation: Σ ∂op/∂xᵢ · ẋᵢ over the operands
    /// with non-zero tangents, the partials from the shared rule table.
    fn scalar(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: &[Param],
        op: ScalarOp,
        operands: &[Atom],
    ) -> Result<(), AdError> {
        let out = pat[0].var;
        let ts: Vec<Option<Atom>> = operands.iter().map(|x| tans.get(x)).collect();
        if ts.iter().all(|t| t.is_none()) {
            tans.set(out, None);
            return Ok(());
        }
        let t = b
            .atom_type(&operands[0])
            .map_err(|u| self.unknown(u))?
            .elem();
        let result = Atom::Var(out);
        let mut alg = Emit { b };
        let derivative = eval_partials(&mut alg, op, t, operands, Some(&result));
        let derivative = match derivative {
            Ok(d) => d,
            Err(EmitError::Unsupported(m)) => return unsupported(self.span, m),
            Err(EmitError::Unknown(u)) => return Err(self.unknown(u)),
            Err(EmitError::Rule(e)) => return error(self.span, e.to_string()),
        };
        if self.batch.is_some() {
            // Vector mode: the partials are computed once; a map over the
            // seeds combines them with each seed's tangents.
            let tangent = match derivative {
                Derivative::Constant => None,
                Derivative::Conversion { forward, .. } => match ts[0] {
                    Some(t0) => Some(self.map_over_seeds(b, vec![t0], vec![t], |b, xs| {
                        Ok(b.conv(forward, Atom::Var(xs[0])))
                    })?),
                    None => None,
                },
                Derivative::Partials(partials) => {
                    let mut inputs = Vec::new();
                    let mut factors = Vec::new();
                    for (p, dt) in partials.iter().zip(&ts) {
                        if let (Some(p), Some(dt)) = (p, dt) {
                            factors.push(*p);
                            inputs.push(*dt);
                        }
                    }
                    if inputs.is_empty() {
                        None
                    } else {
                        let types = vec![t; inputs.len()];
                        Some(self.map_over_seeds(b, inputs, types, |b, xs| {
                            let mut sum: Option<Atom> = None;
                            for (p, x) in factors.iter().zip(xs) {
                                let term = b.binop(BinOp::Mul, *p, Atom::Var(*x))?;
                                sum = Some(match sum {
                                    None => term,
                                    Some(s) => b.binop(BinOp::Add, s, term)?,
                                });
                            }
                            Ok(sum.unwrap_or(Atom::Const(nabla_ir::PrimValue::zero(t))))
                        })?)
                    }
                }
            };
            tans.set(out, tangent);
            return Ok(());
        }
        let tangent = match derivative {
            Derivative::Constant => None,
            Derivative::Conversion { forward, .. } => ts[0].map(|t0| b.conv(forward, t0)),
            Derivative::Partials(partials) => {
                let mut sum: Option<Atom> = None;
                for (p, dt) in partials.iter().zip(&ts) {
                    let (Some(p), Some(dt)) = (p, dt) else {
                        continue;
                    };
                    let term = b.binop(BinOp::Mul, *p, *dt).map_err(|u| self.unknown(u))?;
                    sum = Some(match sum {
                        None => term,
                        Some(s) => b.binop(BinOp::Add, s, term).map_err(|u| self.unknown(u))?,
                    });
                }
                sum
            }
        };
        tans.set(out, tangent);
        Ok(())
    }

    /// A call: the callee's derived function on the arguments and their
    /// tangents.
    fn apply(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        f: FunId,
        args: Vec<Atom>,
    ) -> Result<(), AdError> {
        if args.iter().all(|a| tans.get(a).is_none()) {
            b.push(Stm {
                pat: pat.clone(),
                exp: Exp::Apply(f, args),
                span: self.span,
            });
            for p in &pat {
                tans.set(p.var, None);
            }
            return Ok(());
        }
        // Only the arguments with tangents get tangent parameters: the
        // callee's derivative is specialised to them (zero tangents of the
        // others are never built nor propagated).
        let active: Vec<bool> = args.iter().map(|a| tans.get(a).is_some()).collect();
        let derived = derived_function(self.ad, f, &active, self.batch.is_some(), self.span)?;
        let mut all = args.clone();
        if let Some(batch) = self.batch {
            all.push(batch.width);
        }
        for a in &args {
            if let Some(t) = tans.get(a) {
                all.push(t);
            }
        }
        let mut full = pat.clone();
        let tps: Vec<Param> = pat.iter().map(|p| self.tangent_param(b, p)).collect();
        full.extend(tps.iter().cloned());
        b.push(Stm {
            pat: full,
            exp: Exp::Apply(derived, all),
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tps) {
            tans.set(p.var, Some(Atom::Var(t.var)));
        }
        Ok(())
    }

    /// `if`: both branches with their tangents; a result gets a tangent if
    /// either branch gives it one (the other returns zeros).
    fn branch(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        cond: Atom,
        then_: Body,
        else_: Body,
    ) -> Result<(), AdError> {
        let (mut then_b, then_t) = self.nested_body(b, then_, tans.clone())?;
        let (mut else_b, else_t) = self.nested_body(b, else_, tans.clone())?;
        let mut full = pat.clone();
        let mut tangent_of = Vec::new();
        for i in 0..pat.len() {
            if then_t[i].is_none() && else_t[i].is_none() {
                tangent_of.push(None);
                continue;
            }
            let tt = match then_t[i] {
                Some(t) => t,
                None => {
                    let r = then_b.result[i];
                    self.zero_at_end(b, &mut then_b, &r)?
                }
            };
            let et = match else_t[i] {
                Some(t) => t,
                None => {
                    let r = else_b.result[i];
                    self.zero_at_end(b, &mut else_b, &r)?
                }
            };
            then_b.result.push(tt);
            else_b.result.push(et);
            let tp = self.tangent_param(b, &pat[i]);
            tangent_of.push(Some(tp.var));
            full.push(tp);
        }
        b.push(Stm {
            pat: full,
            exp: Exp::If {
                cond,
                then_: then_b,
                else_: else_b,
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }

    /// A loop: tangent loop parameters for every parameter whose tangent can
    /// be non-zero (found by iterating until the set is stable: a parameter
    /// with a zero initial tangent may get one from the body).
    #[allow(clippy::too_many_arguments)]
    fn loop_(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        params: Vec<Param>,
        init: Vec<Atom>,
        form: LoopForm,
        body: Body,
    ) -> Result<(), AdError> {
        let n = params.len();
        let mut active: Vec<bool> = init.iter().map(|a| tans.get(a).is_some()).collect();
        let (new_body, tangent_params) = loop {
            let mut inner = tans.clone();
            let mut tps: Vec<Option<Param>> = Vec::with_capacity(n);
            for (i, p) in params.iter().enumerate() {
                if active[i] {
                    let mut tp = self.tangent_param(b, p);
                    tp.unique = p.unique;
                    inner.set(p.var, Some(Atom::Var(tp.var)));
                    tps.push(Some(tp));
                } else {
                    inner.set(p.var, None);
                    tps.push(None);
                }
            }
            if let LoopForm::For { i, .. } = &form {
                inner.set(*i, None);
            }
            let (nb, rt) = self.nested_body(b, body.clone(), inner)?;
            let mut grew = false;
            for i in 0..n {
                if rt[i].is_some() && !active[i] {
                    active[i] = true;
                    grew = true;
                }
            }
            if !grew {
                break ((nb, rt), tps);
            }
        };
        let (mut new_body, result_tangents) = new_body;
        let mut all_params = params.clone();
        let mut all_init = init.clone();
        let mut full = pat.clone();
        let mut tangent_of = vec![None; n];
        for i in 0..n {
            let Some(tp) = &tangent_params[i] else {
                continue;
            };
            let rt = match result_tangents[i] {
                Some(t) => t,
                None => {
                    let r = new_body.result[i];
                    self.zero_at_end(b, &mut new_body, &r)?
                }
            };
            new_body.result.push(rt);
            all_params.push(tp.clone());
            let it = match tans.get(&init[i]) {
                Some(Atom::Var(t)) if tp.unique => {
                    // A unique loop parameter may be consumed by the body:
                    // give it its own copy of the tangent.
                    let ty = self.type_of(b, t)?;
                    Atom::Var(b.bind1("tan_copy", ty, Exp::Copy(t)))
                }
                Some(t) => t,
                None => self.zero_of(b, &init[i])?,
            };
            all_init.push(it);
            let out = self.tangent_param(b, &pat[i]);
            tangent_of[i] = Some(out.var);
            full.push(out);
        }
        b.push(Stm {
            pat: full,
            exp: Exp::Loop {
                params: all_params,
                init: all_init,
                form,
                body: new_body,
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }

    /// Whether a lambda reads a free variable that has a tangent.
    fn free_tangents(&self, lam: &Lambda, tans: &Tangents) -> bool {
        nabla_ir::free_vars_lambda(lam)
            .into_iter()
            .any(|v| tans.has(v))
    }

    /// An associative operator lifted to (primal, tangent) pairs: params
    /// `(a₁…aₖ, ȧ₁…ȧₖ, x₁…xₖ, ẋ₁…ẋₖ)`, results `(r₁…rₖ, ṙ₁…ṙₖ)`.
    fn lift_operator(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        lam: Lambda,
    ) -> Result<Lambda, AdError> {
        let k = lam.ret.len();
        if lam.params.len() != 2 * k {
            return error(self.span, "internal error: operator arity");
        }
        let mut inner = tans.clone();
        let mut acc_t = Vec::with_capacity(k);
        let mut elem_t = Vec::with_capacity(k);
        for i in 0..k {
            let ta = self.tangent_param(b, &lam.params[i]);
            inner.set(lam.params[i].var, Some(Atom::Var(ta.var)));
            acc_t.push(ta);
            let tx = self.tangent_param(b, &lam.params[k + i]);
            inner.set(lam.params[k + i].var, Some(Atom::Var(tx.var)));
            elem_t.push(tx);
        }
        let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
        for (i, t) in rt.into_iter().enumerate() {
            let t = match t {
                Some(t) => t,
                None => {
                    let r = body.result[i];
                    self.zero_at_end(b, &mut body, &r)?
                }
            };
            body.result.push(t);
        }
        let mut params: Vec<Param> = lam.params[..k].to_vec();
        params.extend(acc_t);
        params.extend(lam.params[k..].iter().cloned());
        params.extend(elem_t);
        let mut ret = lam.ret.clone();
        ret.extend(lam.ret.iter().map(|t| self.tangent_type(t)));
        Ok(Lambda { params, body, ret })
    }

    /// Binds the SOAC with extra tangent results and records them.
    fn bind_soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        with_tangent: &[bool],
        soac: Soac,
    ) {
        let mut full = pat.clone();
        let mut tangent_of = Vec::with_capacity(pat.len());
        for (p, &t) in pat.iter().zip(with_tangent) {
            if t {
                let tp = self.tangent_param(b, p);
                tangent_of.push(Some(tp.var));
                full.push(tp);
            } else {
                tangent_of.push(None);
            }
        }
        b.push(Stm {
            pat: full,
            exp: Exp::Soac(soac),
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
    }

    fn soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        soac: Soac,
    ) -> Result<(), AdError> {
        match soac {
            Soac::Map { w, lam, arrs } => {
                let mut inner = tans.clone();
                let mut params = lam.params.clone();
                let mut all_arrs = arrs.clone();
                for (p, a) in lam.params.iter().zip(&arrs) {
                    match tans.get(&Atom::Var(*a)) {
                        Some(Atom::Var(t)) => {
                            let tp = self.tangent_param(b, p);
                            inner.set(p.var, Some(Atom::Var(tp.var)));
                            params.push(tp);
                            all_arrs.push(t);
                        }
                        _ => inner.set(p.var, None),
                    }
                }
                let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
                let mut ret = lam.ret.clone();
                let with: Vec<bool> = rt.iter().map(|t| t.is_some()).collect();
                for (i, t) in rt.into_iter().enumerate() {
                    if let Some(t) = t {
                        body.result.push(t);
                        ret.push(self.tangent_type(&lam.ret[i]));
                    }
                }
                let soac = Soac::Map {
                    w,
                    lam: Lambda { params, body, ret },
                    arrs: all_arrs,
                };
                self.bind_soac(b, tans, pat, &with, soac);
            }
            // Reduce and scan: the operator lifted to (primal, tangent)
            // pairs, the inputs' tangents beside the inputs.
            mut soac @ (Soac::Reduce { .. } | Soac::Scan { .. }) => {
                let (Soac::Reduce {
                    lam, neutral, arrs, ..
                }
                | Soac::Scan {
                    lam, neutral, arrs, ..
                }) = &mut soac
                else {
                    return error(self.span, "internal error: not a reduce or scan");
                };
                if arrs.iter().all(|a| !tans.has(*a)) && !self.free_tangents(lam, tans) {
                    return self.plain_soac(b, tans, pat, soac);
                }
                let (all_neutral, all_arrs) =
                    self.lifted_inputs(b, tans, std::mem::take(neutral), std::mem::take(arrs))?;
                *lam = self.lift_operator(b, tans, lam.clone())?;
                *neutral = all_neutral;
                *arrs = all_arrs;
                let with = vec![true; pat.len()];
                self.bind_soac(b, tans, pat, &with, soac);
            }
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => {
                let active = dest.iter().chain(&values).any(|a| tans.has(*a))
                    || self.free_tangents(&lam, tans);
                if !active {
                    return self.plain_soac(
                        b,
                        tans,
                        pat,
                        Soac::Hist {
                            w,
                            dest,
                            lam,
                            neutral,
                            indices,
                            values,
                        },
                    );
                }
                // Tangent destinations are prepared before the primal ones
                // are consumed.
                let mut all_dest = dest.clone();
                for d in &dest {
                    all_dest.push(self.fresh_tangent_array(b, tans, *d)?);
                }
                let mut all_neutral = neutral.clone();
                for n in &neutral {
                    all_neutral.push(self.zero_of(b, n)?);
                }
                let mut all_values = values.clone();
                for v in &values {
                    all_values.push(self.materialize_var(b, tans, *v)?);
                }
                let lam = self.lift_operator(b, tans, lam)?;
                let with = vec![true; pat.len()];
                self.bind_soac(
                    b,
                    tans,
                    pat,
                    &with,
                    Soac::Hist {
                        w,
                        dest: all_dest,
                        lam,
                        neutral: all_neutral,
                        indices,
                        values: all_values,
                    },
                );
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                if dest.iter().chain(&values).all(|a| !tans.has(*a)) {
                    return self.plain_soac(
                        b,
                        tans,
                        pat,
                        Soac::Scatter {
                            w,
                            dest,
                            indices,
                            values,
                        },
                    );
                }
                let mut all_dest = dest.clone();
                for d in &dest {
                    all_dest.push(self.fresh_tangent_array(b, tans, *d)?);
                }
                let mut all_values = values.clone();
                for v in &values {
                    all_values.push(self.materialize_var(b, tans, *v)?);
                }
                let with = vec![true; pat.len()];
                self.bind_soac(
                    b,
                    tans,
                    pat,
                    &with,
                    Soac::Scatter {
                        w,
                        dest: all_dest,
                        indices,
                        values: all_values,
                    },
                );
            }
        }
        Ok(())
    }

    /// A SOAC without tangents: its results have zero tangents.
    fn plain_soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        soac: Soac,
    ) -> Result<(), AdError> {
        for p in &pat {
            tans.set(p.var, None);
        }
        b.push(Stm {
            pat,
            exp: Exp::Soac(soac),
            span: self.span,
        });
        Ok(())
    }

    /// The neutral elements and input arrays of a lifted reduce/scan:
    /// primal ones, then zeros and the inputs' tangents.
    fn lifted_inputs(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        neutral: Vec<Atom>,
        arrs: Vec<Var>,
    ) -> Result<(Vec<Atom>, Vec<Var>), AdError> {
        let mut all_neutral = neutral.clone();
        for n in &neutral {
            all_neutral.push(self.zero_of(b, n)?);
        }
        let mut all_arrs = arrs.clone();
        for a in &arrs {
            all_arrs.push(self.materialize_var(b, tans, *a)?);
        }
        Ok((all_neutral, all_arrs))
    }

    /// The tangent array `t` of the array `v` with the sizes of `v`'s
    /// tangent type (reshaped where its own type names other sizes, of
    /// equal values, as a tangent made elsewhere may): the tangent
    /// accumulators inside a `with_acc` are typed after the primal ones.
    fn with_primal_sizes(
        &mut self,
        b: &mut FunctionBuilder,
        t: Var,
        v: Var,
    ) -> Result<Var, AdError> {
        let want = self.tangent_type(&self.type_of(b, v)?);
        let have = self.type_of(b, t)?;
        let (Type::Array(_, dims), Type::Array(..)) = (&want, &have) else {
            return Ok(t);
        };
        if want == have {
            return Ok(t);
        }
        let shape = dims
            .iter()
            .enumerate()
            .map(|(d, dim)| match dim {
                nabla_ir::Dim::Const(c) => Atom::Const(nabla_ir::PrimValue::I64(*c)),
                nabla_ir::Dim::Var(x) => Atom::Var(*x),
                nabla_ir::Dim::Ext => {
                    Atom::Var(b.bind1("n", Type::Prim(nabla_ir::PrimType::I64), Exp::Size(t, d)))
                }
            })
            .collect();
        Ok(b.bind1("tan_sized", want, Exp::Reshape(shape, t)))
    }

    /// A tangent array for a destination that the statement consumes: a
    /// copy of its tangent (which may be shared), or zeros.
    fn fresh_tangent_array(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        d: Var,
    ) -> Result<Var, AdError> {
        match tans.get(&Atom::Var(d)) {
            Some(Atom::Var(t)) => {
                let ty = self.type_of(b, t)?;
                Ok(b.bind1("tan_copy", ty, Exp::Copy(t)))
            }
            _ => match self.zero_like(b, d)? {
                Atom::Var(z) => Ok(z),
                Atom::Const(_) => error(self.span, "internal error: scalar destination"),
            },
        }
    }
}
