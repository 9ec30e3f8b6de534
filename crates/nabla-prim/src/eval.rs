//! Evaluation of the scalar operators with Futhark's semantics.
//!
//! The rules follow Futhark's prelude (`prelude/math.fut`) and the scalar
//! functions of its C backend, which define the behaviour of compiled Futhark
//! programs:
//!
//! * integer `+ - *` and negation wrap; `abs` wraps (`abs i8.lowest == i8.lowest`);
//! * integer division or remainder by zero is an error
//!   ([`PrimError::DivisionByZero`]); `lowest / -1` wraps to `lowest`;
//! * see [`BinOp`] for the rounding of each division operator, the shift
//!   amounts and the integer power;
//! * `f16` arithmetic is done in `f32` and rounded back (for `+ - * /` and
//!   `sqrt` this gives the correctly rounded `f16` result);
//! * `f32` uses Rust's `f32` methods (libm's single-precision functions), except
//!   `gamma`, `lgamma`, `erf` and `erfc`, which are evaluated in `f64` by
//!   [`crate::float_math`] and rounded.
//!
//! Operands of the wrong type never panic: they give
//! [`PrimError::TypeMismatch`].

use crate::float_math;
use crate::{BinOp, CmpOp, PrimError, PrimType, PrimValue, TernOp, UnOp};
use half::f16;

/// Why a per-type kernel refused: turned into a [`PrimError`] (with the
/// operator and type in the message) by the public functions.
enum Fail {
    DivZero,
    BadType,
}

#[cold]
fn bad_binop(op: BinOp, a: &PrimValue, b: &PrimValue) -> PrimError {
    let (ta, tb) = (a.prim_type(), b.prim_type());
    if ta != tb {
        PrimError::TypeMismatch(format!(
            "operands of {op:?} have different types: {ta} and {tb}"
        ))
    } else {
        PrimError::TypeMismatch(format!("operator {op:?} is not defined on {ta}"))
    }
}

#[inline]
fn lift_bin(op: BinOp, a: &PrimValue, b: &PrimValue, e: Fail) -> PrimError {
    match e {
        Fail::DivZero => PrimError::DivisionByZero,
        Fail::BadType => bad_binop(op, a, b),
    }
}

/// Wrapping power by repeated squaring with an unsigned exponent (exactly the
/// loop of Futhark's C `pow` functions).
macro_rules! wrapping_pow_fn {
    ($name:ident, $ut:ty) => {
        #[inline]
        fn $name(mut base: $ut, mut exp: $ut) -> $ut {
            let mut res: $ut = 1;
            while exp != 0 {
                if exp & 1 == 1 {
                    res = res.wrapping_mul(base);
                }
                exp >>= 1;
                base = base.wrapping_mul(base);
            }
            res
        }
    };
}
wrapping_pow_fn!(pow_u8, u8);
wrapping_pow_fn!(pow_u16, u16);
wrapping_pow_fn!(pow_u32, u32);
wrapping_pow_fn!(pow_u64, u64);

macro_rules! signed_int_ops {
    ($binop:ident, $unop:ident, $t:ty, $ut:ty, $pow:ident) => {
        #[inline]
        fn $binop(op: BinOp, x: $t, y: $t) -> Result<$t, Fail> {
            const BITS: $ut = <$t>::BITS as $ut;
            Ok(match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    let q = x.wrapping_div(y);
                    let r = x.wrapping_rem(y);
                    if r != 0 && ((r < 0) != (y < 0)) {
                        q - 1
                    } else {
                        q
                    }
                }
                BinOp::Mod => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    let r = x.wrapping_rem(y);
                    if r != 0 && ((r < 0) != (y < 0)) {
                        r + y
                    } else {
                        r
                    }
                }
                BinOp::IntDiv | BinOp::Quot => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    x.wrapping_div(y)
                }
                BinOp::IntMod | BinOp::Rem => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    x.wrapping_rem(y)
                }
                BinOp::Pow => $pow(x as $ut, y as $ut) as $t,
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => {
                    let k = y as $ut;
                    if k >= BITS {
                        0
                    } else {
                        x << k
                    }
                }
                BinOp::Shr => {
                    let k = y as $ut;
                    if k >= BITS {
                        if x < 0 {
                            -1
                        } else {
                            0
                        }
                    } else {
                        x >> k
                    }
                }
                BinOp::LShr => {
                    let k = y as $ut;
                    if k >= BITS {
                        0
                    } else {
                        ((x as $ut) >> k) as $t
                    }
                }
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::LogAnd | BinOp::LogOr | BinOp::Atan2 | BinOp::Hypot => {
                    return Err(Fail::BadType)
                }
            })
        }

        #[inline]
        fn $unop(op: UnOp, x: $t) -> Result<PrimValue, Fail> {
            let r: $t = match op {
                UnOp::Neg => x.wrapping_neg(),
                UnOp::Not => !x,
                UnOp::Abs => x.wrapping_abs(),
                UnOp::Sgn => x.signum(),
                UnOp::Clz => return Ok(PrimValue::I32(x.leading_zeros() as i32)),
                UnOp::Ctz => return Ok(PrimValue::I32(x.trailing_zeros() as i32)),
                UnOp::Popc => return Ok(PrimValue::I32(x.count_ones() as i32)),
                _ => return Err(Fail::BadType),
            };
            Ok(PrimValue::from(r))
        }
    };
}

macro_rules! unsigned_int_ops {
    ($binop:ident, $unop:ident, $t:ty, $pow:ident) => {
        #[inline]
        fn $binop(op: BinOp, x: $t, y: $t) -> Result<$t, Fail> {
            const BITS: $t = <$t>::BITS as $t;
            Ok(match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div | BinOp::IntDiv | BinOp::Quot => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    x / y
                }
                BinOp::Mod | BinOp::IntMod | BinOp::Rem => {
                    if y == 0 {
                        return Err(Fail::DivZero);
                    }
                    x % y
                }
                BinOp::Pow => $pow(x, y),
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => {
                    if y >= BITS {
                        0
                    } else {
                        x << y
                    }
                }
                BinOp::Shr | BinOp::LShr => {
                    if y >= BITS {
                        0
                    } else {
                        x >> y
                    }
                }
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::LogAnd | BinOp::LogOr | BinOp::Atan2 | BinOp::Hypot => {
                    return Err(Fail::BadType)
                }
            })
        }

        #[inline]
        fn $unop(op: UnOp, x: $t) -> Result<PrimValue, Fail> {
            let r: $t = match op {
                UnOp::Neg => x.wrapping_neg(),
                UnOp::Not => !x,
                UnOp::Abs => x,
                UnOp::Sgn => (x != 0) as $t,
                UnOp::Clz => return Ok(PrimValue::I32(x.leading_zeros() as i32)),
                UnOp::Ctz => return Ok(PrimValue::I32(x.trailing_zeros() as i32)),
                UnOp::Popc => return Ok(PrimValue::I32(x.count_ones() as i32)),
                _ => return Err(Fail::BadType),
            };
            Ok(PrimValue::from(r))
        }
    };
}

signed_int_ops!(binop_i8, unop_i8, i8, u8, pow_u8);
signed_int_ops!(binop_i16, unop_i16, i16, u16, pow_u16);
signed_int_ops!(binop_i32, unop_i32, i32, u32, pow_u32);
signed_int_ops!(binop_i64, unop_i64, i64, u64, pow_u64);
unsigned_int_ops!(binop_u8, unop_u8, u8, pow_u8);
unsigned_int_ops!(binop_u16, unop_u16, u16, pow_u16);
unsigned_int_ops!(binop_u32, unop_u32, u32, pow_u32);
unsigned_int_ops!(binop_u64, unop_u64, u64, pow_u64);

/// Futhark's `fsignum`: NaN stays NaN, otherwise `(x > 0) - (x < 0)` (so both
/// zeros give `+0`).
macro_rules! float_sgn {
    ($x:expr, $t:ty) => {{
        let x = $x;
        if x.is_nan() {
            x
        } else {
            ((x > 0.0) as i8 - (x < 0.0) as i8) as $t
        }
    }};
}

macro_rules! float_ops {
    ($binop:ident, $unop:ident, $t:ty) => {
        #[inline]
        fn $binop(op: BinOp, x: $t, y: $t) -> Result<$t, Fail> {
            Ok(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                // Rust's `%` on floats is C's fmod.
                BinOp::Mod => x % y,
                BinOp::Pow => x.powf(y),
                // Rust's min/max are IEEE minNum/maxNum, like C's fmin/fmax.
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::Atan2 => x.atan2(y),
                BinOp::Hypot => x.hypot(y),
                _ => return Err(Fail::BadType),
            })
        }

        /// Float unary operators; `Ok(Err(b))` is a `bool` result.
        #[inline]
        fn $unop(op: UnOp, x: $t) -> Result<Result<$t, bool>, Fail> {
            Ok(Ok(match op {
                UnOp::Neg => -x,
                UnOp::Abs => x.abs(),
                UnOp::Sgn => float_sgn!(x, $t),
                UnOp::Sqrt => x.sqrt(),
                UnOp::Cbrt => x.cbrt(),
                UnOp::Exp => x.exp(),
                UnOp::Exp2 => x.exp2(),
                UnOp::Expm1 => x.exp_m1(),
                UnOp::Log => x.ln(),
                UnOp::Log2 => x.log2(),
                UnOp::Log10 => x.log10(),
                UnOp::Log1p => x.ln_1p(),
                UnOp::Sin => x.sin(),
                UnOp::Cos => x.cos(),
                UnOp::Tan => x.tan(),
                UnOp::Asin => x.asin(),
                UnOp::Acos => x.acos(),
                UnOp::Atan => x.atan(),
                UnOp::Sinh => x.sinh(),
                UnOp::Cosh => x.cosh(),
                UnOp::Tanh => x.tanh(),
                UnOp::Asinh => x.asinh(),
                UnOp::Acosh => x.acosh(),
                UnOp::Atanh => x.atanh(),
                UnOp::Lgamma => float_math::lgamma(x as f64) as $t,
                UnOp::Digamma => float_math::polygamma(0, x as f64) as $t,
                UnOp::Trigamma => float_math::polygamma(1, x as f64) as $t,
                UnOp::Gamma => float_math::gamma(x as f64) as $t,
                UnOp::Erf => float_math::erf(x as f64) as $t,
                UnOp::Erfc => float_math::erfc(x as f64) as $t,
                UnOp::Floor => x.floor(),
                UnOp::Ceil => x.ceil(),
                UnOp::Round => x.round_ties_even(),
                UnOp::Trunc => x.trunc(),
                UnOp::IsNan => return Ok(Err(x.is_nan())),
                UnOp::IsInf => return Ok(Err(x.is_infinite())),
                UnOp::Not | UnOp::Clz | UnOp::Ctz | UnOp::Popc => return Err(Fail::BadType),
            }))
        }
    };
}

float_ops!(binop_f32, unop_f32, f32);
float_ops!(binop_f64, unop_f64, f64);

#[inline]
fn binop_bool(op: BinOp, x: bool, y: bool) -> Result<bool, Fail> {
    Ok(match op {
        BinOp::LogAnd | BinOp::BitAnd | BinOp::Min => x & y,
        BinOp::LogOr | BinOp::BitOr | BinOp::Max => x | y,
        BinOp::BitXor => x ^ y,
        _ => return Err(Fail::BadType),
    })
}

/// Evaluates a binary operator on two operands of the same primitive type.
///
/// Integers wrap; see [`BinOp`] for each operator's exact rule. Errors:
/// [`PrimError::DivisionByZero`] for integer `/ % // %% quot rem` by zero;
/// [`PrimError::TypeMismatch`] when the operands' types differ or the operator
/// is not defined on their type (e.g. `<<` on floats, `atan2` on integers,
/// arithmetic on `bool`). On `bool` only `LogAnd`/`LogOr` (and, as their
/// bitwise spellings, `BitAnd`/`BitOr`/`BitXor`, plus `Min` = and, `Max` = or)
/// are defined.
#[inline]
pub fn eval_binop(op: BinOp, a: PrimValue, b: PrimValue) -> Result<PrimValue, PrimError> {
    use PrimValue::*;
    let r = match (a, b) {
        (I8(x), I8(y)) => binop_i8(op, x, y).map(I8),
        (I16(x), I16(y)) => binop_i16(op, x, y).map(I16),
        (I32(x), I32(y)) => binop_i32(op, x, y).map(I32),
        (I64(x), I64(y)) => binop_i64(op, x, y).map(I64),
        (U8(x), U8(y)) => binop_u8(op, x, y).map(U8),
        (U16(x), U16(y)) => binop_u16(op, x, y).map(U16),
        (U32(x), U32(y)) => binop_u32(op, x, y).map(U32),
        (U64(x), U64(y)) => binop_u64(op, x, y).map(U64),
        (F16(x), F16(y)) => binop_f32(op, x.to_f32(), y.to_f32()).map(|r| F16(f16::from_f32(r))),
        (F32(x), F32(y)) => binop_f32(op, x, y).map(F32),
        (F64(x), F64(y)) => binop_f64(op, x, y).map(F64),
        (Bool(x), Bool(y)) => binop_bool(op, x, y).map(Bool),
        _ => Err(Fail::BadType),
    };
    r.map_err(|e| lift_bin(op, &a, &b, e))
}

/// A comparison by Rust's `PartialOrd`, which is Futhark's order for every
/// primitive type: integers by their own signedness, floats by IEEE rules
/// (NaN compares false except under `Neq`), `false < true`.
#[inline]
fn compare<T: PartialOrd>(op: CmpOp, x: T, y: T) -> bool {
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Neq => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
    }
}

/// Evaluates a comparison. Integers compare by their own signedness, floats by
/// IEEE rules (any comparison with NaN is false, except `Neq`, which is
/// true), `bool` with `false < true`.
///
/// Errors: [`PrimError::TypeMismatch`] when the operands' types differ.
#[inline]
pub fn eval_cmpop(op: CmpOp, a: PrimValue, b: PrimValue) -> Result<bool, PrimError> {
    use PrimValue::*;
    Ok(match (a, b) {
        (I8(x), I8(y)) => compare(op, x, y),
        (I16(x), I16(y)) => compare(op, x, y),
        (I32(x), I32(y)) => compare(op, x, y),
        (I64(x), I64(y)) => compare(op, x, y),
        (U8(x), U8(y)) => compare(op, x, y),
        (U16(x), U16(y)) => compare(op, x, y),
        (U32(x), U32(y)) => compare(op, x, y),
        (U64(x), U64(y)) => compare(op, x, y),
        (F16(x), F16(y)) => compare(op, x.to_f32(), y.to_f32()),
        (F32(x), F32(y)) => compare(op, x, y),
        (F64(x), F64(y)) => compare(op, x, y),
        (Bool(x), Bool(y)) => compare(op, x, y),
        _ => {
            return Err(PrimError::TypeMismatch(format!(
                "operands of {op:?} have different types: {} and {}",
                a.prim_type(),
                b.prim_type()
            )))
        }
    })
}

/// Evaluates a unary operator or one-argument built-in function.
///
/// * integers: `Neg` (wrapping), `Not` (bitwise complement), `Abs` (wrapping:
///   the lowest value maps to itself; identity on unsigned), `Sgn` (-1/0/1;
///   0/1 on unsigned), and `Clz`/`Ctz`/`Popc`, whose result is `i32` (`clz 0`
///   and `ctz 0` are the bit width);
/// * floats: everything except `Not`/`Clz`/`Ctz`/`Popc`; `Sgn` of NaN is NaN
///   and of ±0 is +0; `Round` rounds half to even; `IsNan`/`IsInf` give `bool`;
/// * `bool`: `Not` (and `Neg`, which Futhark's own evaluator also treats as
///   logical negation).
///
/// Errors: [`PrimError::TypeMismatch`] for any other combination (e.g. `Sqrt`
/// on an integer).
#[inline]
pub fn eval_unop(op: UnOp, a: PrimValue) -> Result<PrimValue, PrimError> {
    use PrimValue::*;
    let r = match a {
        I8(x) => unop_i8(op, x),
        I16(x) => unop_i16(op, x),
        I32(x) => unop_i32(op, x),
        I64(x) => unop_i64(op, x),
        U8(x) => unop_u8(op, x),
        U16(x) => unop_u16(op, x),
        U32(x) => unop_u32(op, x),
        U64(x) => unop_u64(op, x),
        F16(x) => unop_f32(op, x.to_f32()).map(|r| match r {
            Ok(v) => F16(f16::from_f32(v)),
            Err(b) => Bool(b),
        }),
        F32(x) => unop_f32(op, x).map(|r| match r {
            Ok(v) => F32(v),
            Err(b) => Bool(b),
        }),
        F64(x) => unop_f64(op, x).map(|r| match r {
            Ok(v) => F64(v),
            Err(b) => Bool(b),
        }),
        Bool(x) => match op {
            UnOp::Not | UnOp::Neg => Ok(Bool(!x)),
            _ => Err(Fail::BadType),
        },
    };
    r.map_err(|_| {
        PrimError::TypeMismatch(format!(
            "operator {op:?} is not defined on {}",
            a.prim_type()
        ))
    })
}

/// Evaluates a three-argument built-in (floats only, all three of one type):
/// `Fma` is fused (`f64::mul_add`; `f16` computes in `f64`, where the product
/// is exact, then rounds), `Mad` is `a*b+c` with separate roundings, `Lerp` is
/// `v0 + (v1 - v0) * t` (the formula of Futhark's C backend).
///
/// Errors: [`PrimError::TypeMismatch`] for non-float or mixed operands.
#[inline]
pub fn eval_ternop(
    op: TernOp,
    a: PrimValue,
    b: PrimValue,
    c: PrimValue,
) -> Result<PrimValue, PrimError> {
    use PrimValue::*;
    Ok(match (a, b, c) {
        (F64(x), F64(y), F64(z)) => F64(match op {
            TernOp::Fma => x.mul_add(y, z),
            TernOp::Mad => x * y + z,
            TernOp::Lerp => x + (y - x) * z,
        }),
        (F32(x), F32(y), F32(z)) => F32(match op {
            TernOp::Fma => x.mul_add(y, z),
            TernOp::Mad => x * y + z,
            TernOp::Lerp => x + (y - x) * z,
        }),
        (F16(x), F16(y), F16(z)) => {
            let (x, y, z) = (x.to_f32(), y.to_f32(), z.to_f32());
            F16(match op {
                TernOp::Fma => f16::from_f64((x as f64).mul_add(y as f64, z as f64)),
                TernOp::Mad => {
                    let p = f16::from_f32(x * y).to_f32();
                    f16::from_f32(p + z)
                }
                TernOp::Lerp => {
                    let d = f16::from_f32(y - x).to_f32();
                    let m = f16::from_f32(d * z).to_f32();
                    f16::from_f32(x + m)
                }
            })
        }
        _ => {
            return Err(PrimError::TypeMismatch(format!(
                "{op:?} needs three operands of one float type, got {}, {} and {}",
                a.prim_type(),
                b.prim_type(),
                c.prim_type()
            )))
        }
    })
}

/// Returns the result type of `op` applied to operands of type `t`, or `None`
/// if the operator is not defined on `t` (without evaluating anything).
pub fn unop_result_type(op: UnOp, t: PrimType) -> Option<PrimType> {
    match op {
        UnOp::Clz | UnOp::Ctz | UnOp::Popc => t.is_int().then_some(PrimType::I32),
        UnOp::IsNan | UnOp::IsInf => t.is_float().then_some(PrimType::Bool),
        UnOp::Not => (t.is_int() || t == PrimType::Bool).then_some(t),
        UnOp::Neg => Some(t),
        UnOp::Abs | UnOp::Sgn => t.is_numeric().then_some(t),
        _ => t.is_float().then_some(t),
    }
}
