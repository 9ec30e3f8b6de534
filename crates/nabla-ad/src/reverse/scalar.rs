//! The rules of the statements without a lambda: scalar operations (the partial
//! derivatives of `nabla_ir::derivatives`), indexing, in-place updates (`a with
//! [i] = v`, whose semantics are those of Schenck, Rønning, Henriksen and
//! Oancea, "AD for an Array Language with Nested Parallelism" (SC22), §2.1),
//! array literals, `replicate`, `copy`, `reshape`, `rearrange`, `reverse`,
//! `rotate` and `concat` (each adjoint the transposed operation, §4.1 of the
//! same paper). An index of a free array of a map's lambda adds into that
//! array's accumulator (§5.4).

use super::adjoints::{Adjoints, Results, Reverse};
use crate::util::{atom_type, shape_of, type_of, zero_of, Emit, EmitError};
use crate::{error, unsupported, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::derivatives::{eval_partials, Derivative, ScalarOp};
use nabla_ir::{
    Atom, BinOp, Body, DimIndex, Exp, LoopForm, Param, PrimType, PrimValue, Type, UnOp, Var,
};

/// A slice in one dimension of an array, the other dimensions indexed:
/// `v[before..., start:+len*stride, after...]`.
struct Slice {
    before: Vec<Atom>,
    start: Atom,
    len: Atom,
    stride: Atom,
    after: Vec<Atom>,
}

impl Reverse<'_> {
    /// `pat = xs` (atoms): each result's adjoint goes to its atom.
    pub(super) fn atoms(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        xs: &[Atom],
        ybar: &[Option<Atom>],
    ) -> Result<(), AdError> {
        for (x, y) in xs.iter().zip(ybar) {
            if let (Atom::Var(x), Some(y)) = (x, y) {
                self.add_shared(b, adj, *x, *y)?;
            }
        }
        Ok(())
    }

    /// `v[idx]`: the result's adjoint added into the adjoint array of `v`
    /// in place (one element or slice update), or, for a free array of a
    /// map's lambda, into its accumulator.
    pub(super) fn index(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        v: &Var,
        idx: &[DimIndex],
    ) -> Result<(), AdError> {
        let (pat, g) = (res.pat, res.ybar[0]);
        if self.redirect.contains_key(v) {
            return self.index_free_array(b, res, v, idx);
        }
        let Some(g) = g else { return Ok(()) };
        if !Self::differentiable(&type_of(b, self.span, *v)?) {
            return Ok(());
        }
        let a = self.owned_adjoint(b, adj, *v)?;
        let t = pat[0].ty.clone();
        let old = Atom::Var(b.let1_existential("adj_elem", Exp::Index(a, idx.to_vec()))?);
        let new = self.add_values(b, &t, old, g)?;
        let updated = b.let1_existential("adj_upd", Exp::Update(a, idx.to_vec(), new))?;
        adj.map.insert(*v, Atom::Var(updated));
        adj.owned.insert(updated);
        Ok(())
    }

    /// `v[idx]` where `v` is a free array of the map lambda being reversed:
    /// the adjoint goes to `v`'s accumulator (Schenck et al. §5.4).
    fn index_free_array(
        &mut self,
        b: &mut FunctionBuilder,
        res: Results,
        v: &Var,
        idx: &[DimIndex],
    ) -> Result<(), AdError> {
        let (pat, g) = (res.pat, res.ybar[0]);
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
        let next = b.let1(
            "acc",
            Exp::UpdateAcc {
                acc,
                indices,
                value: g,
            },
        )?;
        self.redirect.insert(*v, next);
        Ok(())
    }

    /// `arr with [idx] = val` (an in-place update, Schenck et al. §2.1): the
    /// written part of the result's adjoint goes to `val`, the rest to
    /// `arr`.
    pub(super) fn update(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        arr: &Var,
        idx: &[DimIndex],
        val: &Atom,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(g) = g else { return Ok(()) };
        let Atom::Var(gv) = g else {
            return error(self.span, "internal error: scalar adjoint of an array");
        };
        if let Atom::Var(val) = val {
            let vt = type_of(b, self.span, *val)?;
            if Self::differentiable(&vt) {
                let mut part = b.let1_existential("adj_part", Exp::Index(gv, idx.to_vec()))?;
                // ȳ is about to be updated in place: a row read
                // from it must be a copy, not a view.
                let copied = vt.rank() > 0 && adj.owned.contains(&gv);
                if copied {
                    part = b.let1_existential("adj_part", Exp::Copy(part))?;
                }
                self.add(b, adj, *val, Atom::Var(part), copied)?;
            }
        }
        // The adjoint of the old array: ȳ with the overwritten part
        // zeroed (in place when ȳ is ours alone).
        let owned = if adj.owned.remove(&gv) {
            gv
        } else {
            b.let1_existential("adj_copy", Exp::Copy(gv))?
        };
        let zero = zero_of(b, self.span, val)?;
        let cleared = b.let1_existential("adj_cleared", Exp::Update(owned, idx.to_vec(), zero))?;
        self.add(b, adj, *arr, Atom::Var(cleared), true)?;
        Ok(())
    }

    /// `[xs...]` (rows of type `row`): row `i` of the adjoint goes to `xs[i]`.
    pub(super) fn array_lit(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        xs: &[Atom],
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        for (i, x) in xs.iter().enumerate() {
            if let Atom::Var(x) = x {
                let part = b.let1_existential(
                    "adj_row",
                    Exp::Index(
                        gv,
                        vec![DimIndex::Fix(Atom::Const(PrimValue::I64(i as i64)))],
                    ),
                )?;
                self.add(b, adj, *x, Atom::Var(part), false)?;
            }
        }
        Ok(())
    }

    /// `replicate n x`: the sum of the adjoint's rows goes to `x`.
    pub(super) fn replicate(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        n: &Atom,
        x: &Atom,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let (Some(Atom::Var(gv)), Atom::Var(x)) = (g, x) else {
            return Ok(());
        };
        let xt = type_of(b, self.span, *x)?;
        if !Self::differentiable(&xt) {
            return Ok(());
        }
        let sum = self.sum_rows(b, *n, gv, &xt, Atom::Var(*x))?;
        self.add(b, adj, *x, sum, true)?;
        Ok(())
    }

    /// `reshape v`: the adjoint reshaped back to `v`'s shape.
    pub(super) fn reshape(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: &Var,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        let shape: Vec<Atom> = shape_of(b, self.span, *v)?
            .into_iter()
            .map(|s| s.0)
            .collect();
        let r = b.let1_existential("adj_reshape", Exp::Reshape(shape, gv))?;
        self.add(b, adj, *v, Atom::Var(r), false)?;
        Ok(())
    }

    /// `rearrange perm v`: the adjoint rearranged by the inverse permutation.
    pub(super) fn rearrange(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        perm: &[usize],
        v: &Var,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        let mut inverse = vec![0; perm.len()];
        for (k, &p) in perm.iter().enumerate() {
            if p < inverse.len() {
                inverse[p] = k;
            }
        }
        // The primal's type: it may know sizes the adjoint's type does
        // not (an adjoint made by a map of existential rows).
        let vt = type_of(b, self.span, *v)?;
        let r = b.bind1(
            "adj_rearrange",
            crate::util::existential(&vt),
            Exp::Rearrange(inverse, gv),
        );
        self.add(b, adj, *v, Atom::Var(r), false)?;
        Ok(())
    }

    /// `reverse v`: the adjoint reversed.
    pub(super) fn reverse(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: &Var,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        let r = b.let1_existential("adj_reverse", Exp::Reverse(gv))?;
        self.add(b, adj, *v, Atom::Var(r), false)?;
        Ok(())
    }

    /// `rotate r v`: the adjoint rotated by `-r`.
    pub(super) fn rotate(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        r: &Atom,
        v: &Var,
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        let neg = b.unop(UnOp::Neg, *r).map_err(|u| self.unknown(u))?;
        let x = b.let1_existential("adj_rotate", Exp::Rotate(neg, gv))?;
        self.add(b, adj, *v, Atom::Var(x), false)?;
        Ok(())
    }

    /// `concat vs`: each array gets its slice of the adjoint.
    pub(super) fn concat(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        vs: &[Var],
        g: Option<Atom>,
    ) -> Result<(), AdError> {
        let Some(Atom::Var(gv)) = g else {
            return Ok(());
        };
        let mut offset = Atom::Const(PrimValue::I64(0));
        for v in vs {
            let vt = type_of(b, self.span, *v)?;
            let n = Atom::Var(b.let1("n", Exp::Size(*v, 0))?);
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
        if slice_t.row().is_none() {
            return error(self.span, "internal error: a slice of rank 0");
        }
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
            let element = b.let1_existential(
                "adj_elem",
                Exp::Index(
                    match g {
                        Atom::Var(g) => g,
                        Atom::Const(_) => {
                            return error(self.span, "internal error: a constant slice adjoint")
                        }
                    },
                    vec![DimIndex::Fix(Atom::Var(k))],
                ),
            )?;
            let mut indices = before;
            indices.push(position);
            indices.extend(after);
            Ok(b.let1(
                "acc",
                Exp::UpdateAcc {
                    acc: p.var,
                    indices,
                    value: Atom::Var(element),
                },
            )?)
        })();
        let body = b.end(vec![]);
        let next = r?;
        let out = b.let1(
            "acc",
            Exp::Loop {
                params: vec![p],
                init: vec![Atom::Var(acc0)],
                form: LoopForm::For { i: k, bound: len },
                body: Body {
                    stms: body.stms,
                    result: vec![Atom::Var(next)],
                },
            },
        )?;
        self.redirect.insert(v, out);
        Ok(())
    }

    /// The adjoint of a scalar operation: x̄ᵢ += ȳ · ∂op/∂xᵢ, the partials
    /// from the shared rule table.
    pub(super) fn scalar(
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
}
