//! TODO

use super::adjoints::{Adjoints, Reverse};
use crate::util::{atom_type, type_of, Emit, EmitError};
use crate::{error, unsupported, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::derivatives::{eval_partials, Derivative, ScalarOp};
use nabla_ir::{Atom, BinOp, Body, DimIndex, Exp, LoopForm, Param, PrimType, Type, Var};

/// A slice in one dimension of an array, the other dimensions indexed:
/// `v[before..., start:+len*stride, after...]`.
pub(super) struct Slice {
    pub(super) before: Vec<Atom>,
    pub(super) start: Atom,
    pub(super) len: Atom,
    pub(super) stride: Atom,
    pub(super) after: Vec<Atom>,
}

impl Reverse<'_> {
    /// The adjoint `g` of the slice `v[before..., start:+len*stride,
    /// after...]` of a free array `v` of a map lambda, added into `v`'s
    /// accumulator one row (or element) at a time: a sequential loop over
    /// the slice's `len` positions that threads the accumulator (slice of
    /// type `slice_t`, whose row `k` is `v[before..., start + k*stride,
    /// after...]`).
    pub(super) fn slice_into_accumulator(
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
