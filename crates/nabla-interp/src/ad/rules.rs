//! The interpreter's side of the derivative rules of the scalar primitives.
//!
//! The rules themselves are nabla-ir's symbolic table
//! ([`nabla_ir::derivatives`]), shared with static AD. This module only
//! evaluates it, in two algebras:
//!
//! * [`AdState`] on AD values [`V`]: every operation of a rule goes through
//!   the AD-aware [`AdState::prim`], so a derivative computed inside an
//!   outer `jvp`/`vjp` is itself differentiated (Jensen 2024, §3.3):
//!   derivatives of derivatives work at any depth;
//! * [`Plain`] on plain [`PrimValue`]s (the fast paths of first-order AD),
//!   with the evaluator's scalar operations (`scalar.rs`), so results are
//!   bit-identical to the primal path.

use super::value::V;
use super::AdState;
use crate::scalar;
use nabla_ir::derivatives::{self, Derivative, RuleAlgebra};
use nabla_prim::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};

/// A scalar operation that AD records: nabla-ir's [`derivatives::ScalarOp`].
pub(crate) use nabla_ir::derivatives::ScalarOp as AdOp;

/// Whether `op`'s result is a constant whatever its operands (so AD need
/// not track it). `t` is the type of the first operand.
#[inline]
pub(crate) fn is_constant(op: AdOp, t: PrimType) -> bool {
    derivatives::is_constant(op, t)
}

/// Applies a scalar `op` to plain operands.
#[inline]
pub(crate) fn apply_plain(op: AdOp, a: &[PrimValue]) -> Result<PrimValue, String> {
    derivatives::apply(&mut Plain, op, a)
}

/// The derivative of `op` at the AD-valued primal operands `x` (the
/// operations of the rule are AD-aware); `result` is the primal result if
/// known.
pub(crate) fn deriv_ad(
    st: &mut AdState,
    op: AdOp,
    x: &[V],
    result: Option<&V>,
) -> Result<Derivative<V>, String> {
    let t = x
        .first()
        .and_then(V::strip_prim)
        .map_or(PrimType::F64, |p| p.prim_type());
    derivatives::eval_partials(st, op, t, x, result)
}

/// The derivative of `op` at plain operands `x`; `result` is the primal
/// result if known.
#[inline]
pub(crate) fn deriv_plain(
    op: AdOp,
    x: &[PrimValue],
    result: Option<&PrimValue>,
) -> Result<Derivative<PrimValue>, String> {
    let t = x.first().map_or(PrimType::F64, |p| p.prim_type());
    derivatives::eval_partials(&mut Plain, op, t, x, result)
}

/// Plain scalar arithmetic with the interpreter's scalar operations.
pub(crate) struct Plain;

impl RuleAlgebra for Plain {
    type Value = PrimValue;
    type Error = String;
    #[inline]
    fn constant(&mut self, value: PrimValue) -> Result<PrimValue, String> {
        Ok(value)
    }
    #[inline]
    fn binop(&mut self, op: BinOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, String> {
        scalar::binop(op, *a, *b)
    }
    #[inline]
    fn unop(&mut self, op: UnOp, a: &PrimValue) -> Result<PrimValue, String> {
        scalar::unop(op, *a)
    }
    #[inline]
    fn ternop(
        &mut self,
        op: TernOp,
        a: &PrimValue,
        b: &PrimValue,
        c: &PrimValue,
    ) -> Result<PrimValue, String> {
        scalar::ternop(op, *a, *b, *c)
    }
    #[inline]
    fn conv(&mut self, op: ConvOp, a: &PrimValue) -> Result<PrimValue, String> {
        scalar::conv(op, *a)
    }
    #[inline]
    fn cmp(&mut self, op: CmpOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, String> {
        scalar::cmpop(op, *a, *b)
    }
    fn polygamma(&mut self, order: u32, x: &PrimValue) -> Result<PrimValue, String> {
        Ok(derivatives::eval_polygamma(order, *x)?)
    }
    #[inline]
    fn decide(&self, cond: &PrimValue) -> Option<bool> {
        match cond {
            PrimValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn select(
        &mut self,
        cond: &PrimValue,
        then: &PrimValue,
        otherwise: &PrimValue,
    ) -> Result<PrimValue, String> {
        Ok(if cond.is_true() { *then } else { *otherwise })
    }
}

/// AD-aware scalar arithmetic: every operation is [`AdState::prim`], so it
/// is recorded or differentiated at the levels of its operands. Conditions
/// (comparisons, `isnan`) are never differentiated: they are decided on the
/// plain scalars under the AD values.
impl RuleAlgebra for AdState {
    type Value = V;
    type Error = String;
    fn constant(&mut self, value: PrimValue) -> Result<V, String> {
        Ok(V::prim(value))
    }
    fn binop(&mut self, op: BinOp, a: &V, b: &V) -> Result<V, String> {
        self.prim(AdOp::Bin(op), &[a.clone(), b.clone()])
    }
    fn unop(&mut self, op: UnOp, a: &V) -> Result<V, String> {
        self.prim(AdOp::Un(op), std::slice::from_ref(a))
    }
    fn ternop(&mut self, op: TernOp, a: &V, b: &V, c: &V) -> Result<V, String> {
        self.prim(AdOp::Tern(op), &[a.clone(), b.clone(), c.clone()])
    }
    fn conv(&mut self, op: ConvOp, a: &V) -> Result<V, String> {
        self.prim(AdOp::Conv(op), std::slice::from_ref(a))
    }
    fn cmp(&mut self, op: CmpOp, a: &V, b: &V) -> Result<V, String> {
        let (Some(a), Some(b)) = (a.strip_prim(), b.strip_prim()) else {
            return Err("internal error: comparison of arrays in a derivative rule".into());
        };
        scalar::cmpop(op, a, b).map(V::prim)
    }
    fn polygamma(&mut self, order: u32, x: &V) -> Result<V, String> {
        self.prim(AdOp::Polygamma(order), std::slice::from_ref(x))
    }
    fn decide(&self, cond: &V) -> Option<bool> {
        match cond.strip_prim() {
            Some(PrimValue::Bool(b)) => Some(b),
            _ => None,
        }
    }
    fn select(&mut self, cond: &V, then: &V, otherwise: &V) -> Result<V, String> {
        let pick = cond.strip_prim().is_some_and(|c| c.is_true());
        Ok(if pick {
            then.clone()
        } else {
            otherwise.clone()
        })
    }
}
