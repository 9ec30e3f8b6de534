//! The state of the forward-mode transformation ([`Forward`]) and the helpers
//! every rule uses: the map of tangents ([`Tangents`], absent: zero), zero
//! tangents made a value where a construct needs one, tangent types and
//! parameters, and vector mode's batches of tangents (one more, innermost,
//! dimension of seeds; `map_over_seeds`).

use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::{base_name, FunctionBuilder, UnknownVariable};
use nabla_ir::{Atom, Body, Dim, Exp, Param, Soac, Span, Stm, Type, Var};
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

    pub(super) fn has(&self, v: Var) -> bool {
        self.0.contains_key(&v)
    }
}

pub(super) fn unknown(span: Span, u: UnknownVariable) -> AdError {
    AdError::unknown_variable(span, u)
}

/// The forward-mode transformation of the code of one function.
pub(super) struct Forward<'a> {
    pub(super) ad: &'a mut Ad,
    pub(super) span: Span,
    /// Vector mode: every tangent carries one more, innermost, dimension
    /// with one tangent per seed (see [`super::expand_batched_jvp`]).
    pub(super) batch: Option<Batch>,
}

/// The seeds of a vector-mode `jvp`: `width` of them, the size of the
/// innermost dimension that every tangent gets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Batch {
    pub(super) width: Atom,
    pub(super) dim: Dim,
}

/// `ty` with one more, innermost, dimension `dim`: the type of a batch of
/// tangents of a value of type `ty` (a scalar's batch is a `[dim]` array).
pub(super) fn batched_type(ty: &Type, dim: Dim) -> Type {
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
    pub(super) fn unknown(&self, u: UnknownVariable) -> AdError {
        unknown(self.span, u)
    }

    pub(super) fn type_of(&self, b: &FunctionBuilder, v: Var) -> Result<Type, AdError> {
        crate::util::type_of(b, self.span, v)
    }

    /// A zero tangent for `v`: zeros shaped like it (a batch of them in
    /// vector mode).
    pub(super) fn zero_like(&self, b: &mut FunctionBuilder, v: Var) -> Result<Atom, AdError> {
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
    pub(super) fn zero_of(&self, b: &mut FunctionBuilder, a: &Atom) -> Result<Atom, AdError> {
        match (a, self.batch) {
            (Atom::Const(c), Some(_)) => self.batched_zeros(b, c.prim_type(), vec![]),
            (Atom::Const(_), None) => crate::util::zero_of(b, self.span, a),
            (Atom::Var(v), _) => self.zero_like(b, *v),
        }
    }

    /// The type of the tangent of a value of type `ty`.
    pub(super) fn tangent_type(&self, ty: &Type) -> Type {
        match self.batch {
            None => ty.clone(),
            Some(batch) => batched_type(ty, batch.dim),
        }
    }

    /// Vector mode: `map` over the seeds of the scalar tangents `inputs`
    /// (each a `[width]` array of element type `types[i]`), with `f`
    /// computing one seed's tangent from one element of each.
    pub(super) fn map_over_seeds(
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
        Ok(Atom::Var(b.let1(
            "tan",
            Exp::Soac(Soac::Map {
                w: batch.width,
                lam,
                arrs,
            }),
        )?))
    }

    /// Vector mode: `all`, the seeds' tangents of a value of type `ty`
    /// stacked outermost (`[w]ty`), with the seed dimension moved innermost
    /// (and copied, so that each element's batch is contiguous).
    pub(super) fn seed_dimension_inward(
        &self,
        b: &mut FunctionBuilder,
        all: Var,
        ty: &Type,
    ) -> Result<Var, AdError> {
        let rank = ty.rank();
        if rank == 0 {
            return Ok(all);
        }
        if self.batch.is_none() {
            return error(self.span, "internal error: seeds outside vector mode");
        }
        let perm: Vec<usize> = (1..=rank).chain([0]).collect();
        let view = b.let1("seeds_inner", Exp::Rearrange(perm, all))?;
        Ok(b.let1("seeds_inner", Exp::Copy(view))?)
    }

    /// The tangent of `a`, made a value (zeros) if it is zero.
    pub(super) fn materialize(
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
    pub(super) fn materialize_var(
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
    pub(super) fn zero_at_end(
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
    pub(super) fn tangent_param(&self, b: &mut FunctionBuilder, p: &Param) -> Param {
        let name = format!("{}_tan", base_name(b.vars.name(p.var)));
        let ty = self.tangent_type(&p.ty);
        b.param(&name, ty)
    }

    /// Binds `exp` (the tangent of the single result `p`) and records it.
    pub(super) fn bind_tangent(
        &self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        p: &Param,
        exp: Exp,
    ) {
        let t = self.tangent_param(b, p);
        b.push(Stm {
            pat: vec![t.clone()],
            exp,
            span: self.span,
        });
        tans.set(p.var, Some(Atom::Var(t.var)));
    }
}
