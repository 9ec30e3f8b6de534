//! Conversions between primitive types ([`ConvOp`]).
//!
//! The rules are those of Futhark's prelude conversion functions (`T.U`, e.g.
//! `u16.i8`, `f64.u32`, `i32.f64`) and of the C functions they compile to:
//!
//! * **integer → integer**: the result is the source's bits truncated or
//!   extended to the target width. Extension is a *sign* extension only when
//!   both source and target are signed; when the target is unsigned, or the
//!   source is unsigned, it is a *zero* extension. This matches
//!   `prelude/math.fut`, where e.g. `u16.i8 x = unsign (zext_i8_i16 x)`, so
//!   `u16.i8 (-1i8) == 255u16` (not 65535), while `i16.i8 (-1i8) == -1i16`.
//! * **float → integer**: truncation towards zero. NaN and ±inf give 0 (as
//!   Futhark's `fptosi`/`fptoui` in C and its docs: "If an infinity or NaN is
//!   converted to an integer, the result is zero"). A finite value out of the
//!   target's range (undefined behaviour in C) is defined here as the truncated
//!   integer taken modulo 2^bits, i.e. it wraps like an integer conversion
//!   would (this also matches Futhark's reference interpreter, which
//!   truncates to an unbounded integer and wraps): `u8.f64 (-1.0) == 255u8`,
//!   `i8.f64 300.0 == 44i8`.
//! * **integer → float**: the nearest float (round to nearest even), from the
//!   source's signed or unsigned value.
//! * **float → float**: IEEE conversion (round to nearest even; NaN stays NaN).
//! * **→ bool**: `x != 0` (so a NaN float converts to `true`, as in C).
//! * **bool →**: `true` is 1 and `false` is 0.
//!
//! [`ConvOp::BitCast`] reinterprets the bits between types of the same size
//! (`f64.to_bits`/`f64.from_bits` and the `f32`, `f16` versions, and between
//! same-size integer types); `bool` cannot be bit-cast.

use crate::{ConvOp, PrimError, PrimType, PrimValue};
use half::f16;

/// The truncated value of a finite `x`, modulo 2^64 (as a `u64` bit pattern).
#[inline]
fn f64_to_u64_wrapping(x: f64) -> u64 {
    if !x.is_finite() {
        return 0;
    }
    let t = x.trunc();
    if t.abs() < 9223372036854775808.0 {
        return (t as i64) as u64;
    }
    // |t| >= 2^63: t = m · 2^e exactly, with e >= 11.
    let bits = t.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let mag = if e >= 64 { 0 } else { m.wrapping_shl(e as u32) };
    if t < 0.0 {
        mag.wrapping_neg()
    } else {
        mag
    }
}

/// Builds a value of integer type `to` from the low bits of `bits`.
#[inline]
fn int_from_bits(to: PrimType, bits: u64) -> PrimValue {
    match to {
        PrimType::I8 => PrimValue::I8(bits as i8),
        PrimType::I16 => PrimValue::I16(bits as i16),
        PrimType::I32 => PrimValue::I32(bits as i32),
        PrimType::I64 => PrimValue::I64(bits as i64),
        PrimType::U8 => PrimValue::U8(bits as u8),
        PrimType::U16 => PrimValue::U16(bits as u16),
        PrimType::U32 => PrimValue::U32(bits as u32),
        PrimType::U64 => PrimValue::U64(bits),
        PrimType::F16 => PrimValue::F16(f16::from_bits(bits as u16)),
        PrimType::F32 => PrimValue::F32(f32::from_bits(bits as u32)),
        PrimType::F64 => PrimValue::F64(f64::from_bits(bits)),
        PrimType::Bool => PrimValue::Bool(bits != 0),
    }
}

/// The float value of `x` in type `to` (which must be a float type).
#[inline]
fn float_from_f64(to: PrimType, x: f64) -> PrimValue {
    match to {
        PrimType::F16 => PrimValue::F16(f16::from_f64(x)),
        PrimType::F32 => PrimValue::F32(x as f32),
        _ => PrimValue::F64(x),
    }
}

impl PrimValue {
    /// Converts to type `to` with Futhark's conversion semantics (see the
    /// module documentation of this file: integer conversions truncate or
    /// extend bits, float→integer truncates and wraps, NaN/inf → 0, →bool is
    /// `!= 0`, bool→ is 0/1). Never fails.
    #[inline]
    pub fn convert(self, to: PrimType) -> PrimValue {
        use PrimValue::*;
        // Integer sources: (zero-extended bits, sign-extended bits, signed?).
        let (zext, sext, signed) = match self {
            I8(x) => (x as u8 as u64, x as i64 as u64, true),
            I16(x) => (x as u16 as u64, x as i64 as u64, true),
            I32(x) => (x as u32 as u64, x as i64 as u64, true),
            I64(x) => (x as u64, x as u64, true),
            U8(x) => (x as u64, x as u64, false),
            U16(x) => (x as u64, x as u64, false),
            U32(x) => (x as u64, x as u64, false),
            U64(x) => (x, x, false),
            Bool(b) => {
                return match to {
                    PrimType::Bool => Bool(b),
                    t if t.is_float() => float_from_f64(t, b as u8 as f64),
                    t => int_from_bits(t, b as u64),
                }
            }
            F16(x) => return convert_float(x.to_f64(), to, Some(self)),
            F32(x) => return convert_float(x as f64, to, Some(self)),
            F64(x) => return convert_float(x, to, None),
        };
        match to {
            PrimType::Bool => Bool(zext != 0),
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64 => {
                int_from_bits(to, if signed { sext } else { zext })
            }
            PrimType::U8 | PrimType::U16 | PrimType::U32 | PrimType::U64 => int_from_bits(to, zext),
            PrimType::F16 | PrimType::F32 | PrimType::F64 => {
                if signed {
                    let v = sext as i64;
                    match to {
                        PrimType::F16 => F16(f16::from_f64(v as f64)),
                        PrimType::F32 => F32(v as f32),
                        _ => F64(v as f64),
                    }
                } else {
                    match to {
                        PrimType::F16 => F16(f16::from_f64(zext as f64)),
                        PrimType::F32 => F32(zext as f32),
                        _ => F64(zext as f64),
                    }
                }
            }
        }
    }

    /// The raw bits of the value, zero-extended to 64 bits (floats: their IEEE
    /// representation; `bool`: 0 or 1).
    #[inline]
    pub fn to_bits(self) -> u64 {
        use PrimValue::*;
        match self {
            I8(x) => x as u8 as u64,
            I16(x) => x as u16 as u64,
            I32(x) => x as u32 as u64,
            I64(x) => x as u64,
            U8(x) => x as u64,
            U16(x) => x as u64,
            U32(x) => x as u64,
            U64(x) => x,
            F16(x) => x.to_bits() as u64,
            F32(x) => x.to_bits() as u64,
            F64(x) => x.to_bits(),
            Bool(b) => b as u64,
        }
    }

    /// The value of type `t` whose bits are the low `t.bits()` bits of `bits`
    /// (for `bool`: `bits != 0`). Inverse of [`PrimValue::to_bits`].
    #[inline]
    pub fn from_bits(t: PrimType, bits: u64) -> PrimValue {
        int_from_bits(t, bits)
    }
}

/// Conversion from a float (given as its exact `f64` value). `orig` is the
/// original value when it is narrower than `f64` (used for float→float
/// conversions, so that `f32`→`f16` rounds once).
#[inline]
fn convert_float(x: f64, to: PrimType, orig: Option<PrimValue>) -> PrimValue {
    match to {
        PrimType::Bool => PrimValue::Bool(x != 0.0),
        PrimType::F64 => PrimValue::F64(x),
        PrimType::F32 => PrimValue::F32(x as f32),
        PrimType::F16 => match orig {
            Some(PrimValue::F32(y)) => PrimValue::F16(f16::from_f32(y)),
            _ => PrimValue::F16(f16::from_f64(x)),
        },
        _ => int_from_bits(to, f64_to_u64_wrapping(x)),
    }
}

/// Evaluates a conversion.
///
/// `Convert(from, to)` requires the operand to have type `from` and applies
/// [`PrimValue::convert`]. `BitCast(from, to)` requires the operand to have
/// type `from`, `from` and `to` to have the same size, and neither to be
/// `bool`; it reinterprets the bits.
///
/// Errors: [`PrimError::TypeMismatch`] if the operand's type is not `from`, or
/// for a bit cast between types of different sizes or involving `bool`.
#[inline]
pub fn eval_conv(op: ConvOp, a: PrimValue) -> Result<PrimValue, PrimError> {
    match op {
        ConvOp::Convert(from, to) => {
            if a.prim_type() != from {
                return Err(PrimError::TypeMismatch(format!(
                    "conversion from {from} applied to a value of type {}",
                    a.prim_type()
                )));
            }
            Ok(a.convert(to))
        }
        ConvOp::BitCast(from, to) => {
            if a.prim_type() != from {
                return Err(PrimError::TypeMismatch(format!(
                    "bit cast from {from} applied to a value of type {}",
                    a.prim_type()
                )));
            }
            if from.bits() != to.bits() || from == PrimType::Bool || to == PrimType::Bool {
                return Err(PrimError::TypeMismatch(format!(
                    "cannot bit cast {from} to {to}: the sizes differ or one is bool"
                )));
            }
            Ok(int_from_bits(to, a.to_bits()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimType as T;
    use PrimValue as V;

    fn conv(v: PrimValue, to: PrimType) -> PrimValue {
        eval_conv(ConvOp::Convert(v.prim_type(), to), v).unwrap()
    }

    #[test]
    fn int_to_int() {
        assert_eq!(conv(V::I32(300), T::I8), V::I8(44));
        assert_eq!(conv(V::I32(-1), T::I64), V::I64(-1));
        assert_eq!(conv(V::I8(-1), T::I16), V::I16(-1));
        // Futhark zero-extends whenever the target (or source) is unsigned.
        assert_eq!(conv(V::I8(-1), T::U16), V::U16(255));
        assert_eq!(conv(V::I32(-1), T::U64), V::U64(4294967295));
        assert_eq!(conv(V::U8(255), T::I16), V::I16(255));
        assert_eq!(conv(V::U8(255), T::I8), V::I8(-1));
        assert_eq!(conv(V::I64(-1), T::U8), V::U8(255));
        assert_eq!(conv(V::U64(u64::MAX), T::I64), V::I64(-1));
        assert_eq!(conv(V::I16(-2), T::I16), V::I16(-2));
    }

    #[test]
    fn float_to_int() {
        assert_eq!(conv(V::F64(2.9), T::I32), V::I32(2));
        assert_eq!(conv(V::F64(-2.9), T::I32), V::I32(-2));
        assert_eq!(conv(V::F64(f64::NAN), T::I32), V::I32(0));
        assert_eq!(conv(V::F64(f64::INFINITY), T::I64), V::I64(0));
        assert_eq!(conv(V::F32(f32::NEG_INFINITY), T::U8), V::U8(0));
        assert_eq!(conv(V::F64(-1.0), T::U8), V::U8(255));
        assert_eq!(conv(V::F64(300.0), T::I8), V::I8(44));
        assert_eq!(conv(V::F64(2f64.powi(63)), T::I64), V::I64(i64::MIN));
        assert_eq!(conv(V::F64(2f64.powi(64) + 4096.0), T::U64), V::U64(4096));
        assert_eq!(
            conv(V::F64(-(2f64.powi(64)) - 4096.0), T::I64),
            V::I64(-4096)
        );
        assert_eq!(conv(V::F64(1e300), T::I64), V::I64(0));
        assert_eq!(conv(V::F64(1.8e19), T::U64), V::U64(18000000000000000000));
        assert_eq!(conv(V::F16(f16::from_f32(-7.5)), T::I16), V::I16(-7));
    }

    #[test]
    fn to_float_and_bool() {
        assert_eq!(conv(V::I32(-3), T::F64), V::F64(-3.0));
        assert_eq!(
            conv(V::U64(u64::MAX), T::F64),
            V::F64(18446744073709551615.0)
        );
        assert_eq!(conv(V::I64(i64::MAX), T::F32), V::F32(9.223372e18));
        assert_eq!(conv(V::I32(70000), T::F16), V::F16(f16::INFINITY));
        assert_eq!(conv(V::F64(0.1), T::F32), V::F32(0.1));
        assert_eq!(conv(V::F32(1.5), T::F64), V::F64(1.5));
        assert_eq!(
            conv(V::F64(1.0 / 3.0), T::F16),
            V::F16(f16::from_f64(1.0 / 3.0))
        );
        assert_eq!(conv(V::I32(0), T::Bool), V::Bool(false));
        assert_eq!(conv(V::I8(-128), T::Bool), V::Bool(true));
        assert_eq!(conv(V::F64(-0.0), T::Bool), V::Bool(false));
        assert_eq!(conv(V::F64(f64::NAN), T::Bool), V::Bool(true));
        assert_eq!(conv(V::Bool(true), T::F32), V::F32(1.0));
        assert_eq!(conv(V::Bool(true), T::U64), V::U64(1));
        assert_eq!(conv(V::Bool(false), T::I8), V::I8(0));
        assert_eq!(conv(V::Bool(true), T::Bool), V::Bool(true));
        match conv(V::F64(f64::NAN), T::F16) {
            V::F16(h) => assert!(h.is_nan()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn convert_checks_source_type() {
        assert!(matches!(
            eval_conv(ConvOp::Convert(T::I64, T::F64), V::I32(1)),
            Err(PrimError::TypeMismatch(_))
        ));
    }

    #[test]
    fn bitcast() {
        let one = eval_conv(ConvOp::BitCast(T::F64, T::U64), V::F64(1.0)).unwrap();
        assert_eq!(one, V::U64(0x3ff0000000000000));
        assert_eq!(
            eval_conv(ConvOp::BitCast(T::U64, T::F64), one).unwrap(),
            V::F64(1.0)
        );
        assert_eq!(
            eval_conv(ConvOp::BitCast(T::F32, T::I32), V::F32(-0.0)).unwrap(),
            V::I32(i32::MIN)
        );
        assert_eq!(
            eval_conv(ConvOp::BitCast(T::I16, T::F16), V::I16(0x3c00)).unwrap(),
            V::F16(f16::ONE)
        );
        assert_eq!(
            eval_conv(ConvOp::BitCast(T::I8, T::U8), V::I8(-1)).unwrap(),
            V::U8(255)
        );
        assert!(eval_conv(ConvOp::BitCast(T::F64, T::I32), V::F64(1.0)).is_err());
        assert!(eval_conv(ConvOp::BitCast(T::U8, T::Bool), V::U8(1)).is_err());
        assert!(eval_conv(ConvOp::BitCast(T::F32, T::U32), V::F64(1.0)).is_err());
    }
}
