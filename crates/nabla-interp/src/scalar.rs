//! Scalar primitive application: the one place where the interpreter applies
//! a primitive operator to operand values.
//!
//! Everything scalar that the evaluator computes goes through [`apply_prim`]
//! (or the per-kind shorthands below); in AD mode the `ad` module applies the
//! same functions to the primals and adds tangents or tape entries (Jensen 2024
//! §3). The semantics itself
//! (wrapping integers, Futhark's rounding of `//` and `%`, conversions) is
//! nabla-prim's.

use nabla_prim::{BinOp, CmpOp, ConvOp, PrimValue, TernOp, UnOp};

/// A scalar primitive operator, whatever its arity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrimOp {
    Bin(BinOp),
    Cmp(CmpOp),
    Un(UnOp),
    Tern(TernOp),
    Conv(ConvOp),
}

/// Applies `op` to `args` (as many as its arity). Errors (division by zero,
/// operand type mismatch, wrong arity) are returned as messages; the caller
/// attaches the statement's span.
pub fn apply_prim(op: PrimOp, args: &[PrimValue]) -> Result<PrimValue, String> {
    match (op, args) {
        (PrimOp::Bin(o), [x, y]) => binop(o, *x, *y),
        (PrimOp::Cmp(o), [x, y]) => cmpop(o, *x, *y),
        (PrimOp::Un(o), [x]) => unop(o, *x),
        (PrimOp::Tern(o), [x, y, z]) => ternop(o, *x, *y, *z),
        (PrimOp::Conv(o), [x]) => conv(o, *x),
        _ => Err(format!("{op:?} applied to {} operands", args.len())),
    }
}

/// `x op y` for a binary arithmetic/bitwise/logical operator.
#[inline(always)]
pub fn binop(op: BinOp, x: PrimValue, y: PrimValue) -> Result<PrimValue, String> {
    match fast_binop(op, x, y) {
        Some(r) => Ok(r),
        None => nabla_prim::eval_binop(op, x, y).map_err(|e| e.to_string()),
    }
}

/// `x op y` for a comparison; the result is a `bool`.
#[inline(always)]
pub fn cmpop(op: CmpOp, x: PrimValue, y: PrimValue) -> Result<PrimValue, String> {
    match fast_cmpop(op, x, y) {
        Some(r) => Ok(r),
        None => nabla_prim::eval_cmpop(op, x, y)
            .map(PrimValue::Bool)
            .map_err(|e| e.to_string()),
    }
}

/// The cases of [`binop`] that cannot fail and whose semantics is plain
/// machine arithmetic (IEEE `+ - * /` on `f32`/`f64`, wrapping `+ - *` on
/// `i32`/`i64`); `None` for everything else. Same results as nabla-prim.
#[inline(always)]
pub fn fast_binop(op: BinOp, x: PrimValue, y: PrimValue) -> Option<PrimValue> {
    use PrimValue::{F32, F64, I32, I64};
    Some(match (x, y) {
        (F64(a), F64(b)) => F64(match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            _ => return None,
        }),
        (F32(a), F32(b)) => F32(match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            _ => return None,
        }),
        (I64(a), I64(b)) => I64(match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            _ => return None,
        }),
        (I32(a), I32(b)) => I32(match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            _ => return None,
        }),
        _ => return None,
    })
}

/// The cases of [`cmpop`] on `f32`, `f64`, `i32` and `i64` (IEEE / signed
/// comparisons); `None` for other types.
#[inline(always)]
pub fn fast_cmpop(op: CmpOp, x: PrimValue, y: PrimValue) -> Option<PrimValue> {
    use PrimValue::{F32, F64, I32, I64};
    fn cmp<T: PartialOrd>(op: CmpOp, a: T, b: T) -> bool {
        match op {
            CmpOp::Eq => a == b,
            CmpOp::Neq => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
    Some(PrimValue::Bool(match (x, y) {
        (F64(a), F64(b)) => cmp(op, a, b),
        (F32(a), F32(b)) => cmp(op, a, b),
        (I64(a), I64(b)) => cmp(op, a, b),
        (I32(a), I32(b)) => cmp(op, a, b),
        _ => return None,
    }))
}

/// `op x` for a unary operator or one-argument built-in function.
#[inline]
pub fn unop(op: UnOp, x: PrimValue) -> Result<PrimValue, String> {
    nabla_prim::eval_unop(op, x).map_err(|e| e.to_string())
}

/// `op x y z` for a three-argument built-in function.
#[inline]
pub fn ternop(op: TernOp, x: PrimValue, y: PrimValue, z: PrimValue) -> Result<PrimValue, String> {
    nabla_prim::eval_ternop(op, x, y, z).map_err(|e| e.to_string())
}

/// A conversion between primitive types.
#[inline]
pub fn conv(op: ConvOp, x: PrimValue) -> Result<PrimValue, String> {
    nabla_prim::eval_conv(op, x).map_err(|e| e.to_string())
}
