//! The rule of `scatter` (Schenck, Rønning, Henriksen and Oancea, "AD for an
//! Array Language with Nested Parallelism" (SC22), §5.3): each written value
//! gets the adjoint of the cell it wrote, and the destination's adjoint is the
//! result's with the written cells zeroed; also `gather`, the read of the
//! adjoints of written cells that this rule and `reduce_by_index` share.

use super::adjoints::{iota, Adjoints, Results, Reverse};
use crate::util::{shape_of, type_of};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, PrimType, PrimValue, Soac, Type, Var,
};

impl Reverse<'_> {
    /// `pat = scatter dest indices values` (Schenck et al. §5.3): each
    /// written value gets the adjoint of the cell it wrote; the
    /// destination's adjoint is the result's with the written cells zeroed.
    pub(super) fn scatter(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        soac: &Soac,
    ) -> Result<(), AdError> {
        let Soac::Scatter {
            w,
            dest,
            indices,
            values,
        } = soac
        else {
            return error(self.span, "internal error: not a scatter");
        };
        let ybar = res.ybar;
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
                let copy = b.let1("adj_copy", Exp::Copy(g))?;
                // One zero (a row of zeros, for rows) per write.
                let sizes = shape_of(b, self.span, g)?;
                let mut sizes = sizes[indices.len()..].to_vec();
                sizes.insert(0, (*w, Dim::Ext));
                let zero = Atom::Const(PrimValue::zero(gt.elem()));
                let Atom::Var(zeros) =
                    crate::util::replicated(b, "zero_row", &sizes, zero, Type::Prim(gt.elem()))
                else {
                    return error(self.span, "internal error: scatter without writes");
                };
                let cleared = b.let1(
                    "adj_cleared",
                    Exp::Soac(Soac::Scatter {
                        w: *w,
                        dest: vec![copy],
                        indices: indices.clone(),
                        values: vec![zeros],
                    }),
                )?;
                self.add(b, adj, *d, Atom::Var(cleared), true)?;
            }
        }
        Ok(())
    }

    /// `map (\i -> if 0 <= i < length g then g[i] else 0) indices`: the
    /// adjoint of each element read (or written) at `indices` (one i64 array
    /// per dimension of `g`, `w` elements each), zero out of bounds. With
    /// `last_write_wins` (scatter), only the last of several writes to one
    /// cell gets its adjoint: the others were overwritten.
    pub(super) fn gather(
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
        let zero = Atom::Const(PrimValue::zero(elem));
        let zero = crate::util::replicated(b, "zero_row", &sizes[d..], zero, Type::Prim(elem));
        let iota = iota(b, w)?;
        // The position of the last write to each cell (scatter's own rule).
        let winners = if last_write_wins {
            let mut none = Atom::Const(PrimValue::I64(-1));
            for k in (0..d).rev() {
                none = Atom::Var(b.let1("writers", Exp::Replicate(shape[k], none))?);
            }
            let Atom::Var(none) = none else {
                return error(span, "internal error: scatter without dimensions");
            };
            Some(b.let1(
                "writers",
                Exp::Soac(Soac::Scatter {
                    w,
                    dest: vec![none],
                    indices: indices.to_vec(),
                    values: vec![iota],
                }),
            )?)
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
                    let who = b.let1("writer", Exp::Index(winners, at.clone()))?;
                    let last = b.cmp(CmpOp::Eq, Atom::Var(who), j);
                    let then_ = b.end(vec![last]);
                    let else_ = Body {
                        stms: vec![],
                        result: vec![Atom::Const(PrimValue::Bool(false))],
                    };
                    Atom::Var(b.let1(
                        "last",
                        Exp::If {
                            cond: inside,
                            then_,
                            else_,
                        },
                    )?)
                }
            };
            b.begin();
            let x = b.let1("adj_elem", Exp::Index(g, at))?;
            let then_ = b.end(vec![Atom::Var(x)]);
            let else_ = Body {
                stms: vec![],
                result: vec![zero],
            };
            let r = b.let1(
                "adj_elem",
                Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
            )?;
            Ok(vec![Atom::Var(r)])
        })?;
        let mut arrs = indices.to_vec();
        arrs.push(iota);
        Ok(b.let1("adj_gather", Exp::Soac(Soac::Map { w, lam, arrs }))?)
    }
}
