//! Primitive values.

use crate::PrimType;
pub use half::f16;
use std::fmt;

/// One primitive value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrimValue {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    F32(f32),
    F64(f64),
    Bool(bool),
}

impl PrimValue {
    /// The type of the value.
    pub fn prim_type(&self) -> PrimType {
        match self {
            PrimValue::I8(_) => PrimType::I8,
            PrimValue::I16(_) => PrimType::I16,
            PrimValue::I32(_) => PrimType::I32,
            PrimValue::I64(_) => PrimType::I64,
            PrimValue::U8(_) => PrimType::U8,
            PrimValue::U16(_) => PrimType::U16,
            PrimValue::U32(_) => PrimType::U32,
            PrimValue::U64(_) => PrimType::U64,
            PrimValue::F16(_) => PrimType::F16,
            PrimValue::F32(_) => PrimType::F32,
            PrimValue::F64(_) => PrimType::F64,
            PrimValue::Bool(_) => PrimType::Bool,
        }
    }
}

macro_rules! from_native {
    ($($t:ty => $v:ident),*) => {
        $(impl From<$t> for PrimValue {
            #[inline]
            fn from(x: $t) -> PrimValue {
                PrimValue::$v(x)
            }
        })*
    };
}
from_native!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, f16 => F16, f32 => F32, f64 => F64, bool => Bool);

impl PrimValue {
    /// The zero of type `t` (`false` for `bool`).
    #[inline]
    pub fn zero(t: PrimType) -> PrimValue {
        PrimValue::from_bits(t, 0)
    }

    /// The one of type `t` (`true` for `bool`).
    #[inline]
    pub fn one(t: PrimType) -> PrimValue {
        PrimValue::I64(1).convert(t)
    }

    /// Converts an `f64` to type `t` like Futhark's `t.f64` (see
    /// [`PrimValue::convert`]): rounds to nearest for narrower floats,
    /// truncates towards zero (wrapping out-of-range values, NaN/inf → 0) for
    /// integers, `x != 0` for `bool`.
    #[inline]
    pub fn from_f64(t: PrimType, x: f64) -> PrimValue {
        PrimValue::F64(x).convert(t)
    }

    /// Converts an `i64` to type `t` like Futhark's `t.i64`: integers wrap
    /// (truncate to the target width), floats round to nearest, `bool` is
    /// `i != 0`.
    #[inline]
    pub fn from_i64(t: PrimType, i: i64) -> PrimValue {
        PrimValue::I64(i).convert(t)
    }

    /// The numeric value as an `f64` (unsigned integers by their unsigned
    /// value; large 64-bit integers round to nearest; `bool` is 0 or 1).
    #[inline]
    pub fn as_f64(&self) -> f64 {
        match *self {
            PrimValue::I8(x) => x as f64,
            PrimValue::I16(x) => x as f64,
            PrimValue::I32(x) => x as f64,
            PrimValue::I64(x) => x as f64,
            PrimValue::U8(x) => x as f64,
            PrimValue::U16(x) => x as f64,
            PrimValue::U32(x) => x as f64,
            PrimValue::U64(x) => x as f64,
            PrimValue::F16(x) => x.to_f64(),
            PrimValue::F32(x) => x as f64,
            PrimValue::F64(x) => x,
            PrimValue::Bool(b) => b as u8 as f64,
        }
    }

    /// The value as an `i64`, for indices and sizes: signed integers
    /// sign-extend, unsigned integers zero-extend (`u64` above `i64::MAX`
    /// wraps to a negative number), floats truncate towards zero as
    /// [`PrimValue::convert`] does (NaN/inf → 0), `bool` is 0 or 1.
    #[inline]
    pub fn as_i64(&self) -> i64 {
        match *self {
            PrimValue::I8(x) => x as i64,
            PrimValue::I16(x) => x as i64,
            PrimValue::I32(x) => x as i64,
            PrimValue::I64(x) => x,
            PrimValue::U8(x) => x as i64,
            PrimValue::U16(x) => x as i64,
            PrimValue::U32(x) => x as i64,
            PrimValue::U64(x) => x as i64,
            PrimValue::Bool(b) => b as i64,
            v => match v.convert(PrimType::I64) {
                PrimValue::I64(i) => i,
                _ => 0,
            },
        }
    }

    /// `true` exactly for `Bool(true)`; every other value (including nonzero
    /// numbers) is not "true" — conditions in the IR are always `bool`.
    #[inline]
    pub fn is_true(&self) -> bool {
        matches!(self, PrimValue::Bool(true))
    }
}

impl PrimType {
    /// The largest value of the type, as Futhark's `t.highest`: `i32.highest =
    /// 2147483647`, `u8.highest = 255`, and for floats `+inf` (the prelude
    /// defines `f64.highest = inf`). For `bool` (no such Futhark constant):
    /// `true`.
    pub fn highest(self) -> PrimValue {
        match self {
            PrimType::I8 => PrimValue::I8(i8::MAX),
            PrimType::I16 => PrimValue::I16(i16::MAX),
            PrimType::I32 => PrimValue::I32(i32::MAX),
            PrimType::I64 => PrimValue::I64(i64::MAX),
            PrimType::U8 => PrimValue::U8(u8::MAX),
            PrimType::U16 => PrimValue::U16(u16::MAX),
            PrimType::U32 => PrimValue::U32(u32::MAX),
            PrimType::U64 => PrimValue::U64(u64::MAX),
            PrimType::F16 => PrimValue::F16(f16::INFINITY),
            PrimType::F32 => PrimValue::F32(f32::INFINITY),
            PrimType::F64 => PrimValue::F64(f64::INFINITY),
            PrimType::Bool => PrimValue::Bool(true),
        }
    }

    /// The smallest value of the type, as Futhark's `t.lowest`: the most
    /// negative integer, 0 for unsigned types, `-inf` for floats; `false` for
    /// `bool`.
    pub fn lowest(self) -> PrimValue {
        match self {
            PrimType::I8 => PrimValue::I8(i8::MIN),
            PrimType::I16 => PrimValue::I16(i16::MIN),
            PrimType::I32 => PrimValue::I32(i32::MIN),
            PrimType::I64 => PrimValue::I64(i64::MIN),
            PrimType::U8 => PrimValue::U8(0),
            PrimType::U16 => PrimValue::U16(0),
            PrimType::U32 => PrimValue::U32(0),
            PrimType::U64 => PrimValue::U64(0),
            PrimType::F16 => PrimValue::F16(f16::NEG_INFINITY),
            PrimType::F32 => PrimValue::F32(f32::NEG_INFINITY),
            PrimType::F64 => PrimValue::F64(f64::NEG_INFINITY),
            PrimType::Bool => PrimValue::Bool(false),
        }
    }
}

/// Writes a finite float in the shortest form that reads back as the same
/// value, always with a `.` or an exponent (`1.0`, `0.1`, `1e-300`, `1e16`).
fn write_float_digits(f: &mut fmt::Formatter<'_>, s: String) -> fmt::Result {
    if s.contains(['.', 'e', 'E']) {
        f.write_str(&s)
    } else {
        write!(f, "{s}.0")
    }
}

/// The shortest decimal string that converts back to `x` as an `f16`.
fn shortest_f16(x: f16) -> String {
    let v = x.to_f64();
    for prec in 0..8 {
        let s = format!("{:.*e}", prec, v);
        if let Ok(back) = s.parse::<f64>() {
            if f16::from_f64(back) == x {
                // Re-render the (short) decimal in Rust's usual style.
                return format!("{:?}", back);
            }
        }
    }
    format!("{:?}", v)
}

impl fmt::Display for PrimValue {
    /// Futhark's textual value syntax with a type suffix: `3i32`, `-2i8`,
    /// `255u8`, `true`, `1.0f64`, `1e-300f64`, `0.1f32`, `f64.nan`, `f32.inf`,
    /// `-f16.inf`. Floats are printed with the fewest digits that read back as
    /// the same value (`-0.0f64` keeps its sign).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn float(
            f: &mut fmt::Formatter<'_>,
            nan: bool,
            inf: Option<bool>,
            digits: impl FnOnce() -> String,
            suffix: &str,
        ) -> fmt::Result {
            if nan {
                write!(f, "{suffix}.nan")
            } else if let Some(neg) = inf {
                write!(f, "{}{suffix}.inf", if neg { "-" } else { "" })
            } else {
                write_float_digits(f, digits())?;
                f.write_str(suffix)
            }
        }
        match *self {
            PrimValue::I8(x) => write!(f, "{x}i8"),
            PrimValue::I16(x) => write!(f, "{x}i16"),
            PrimValue::I32(x) => write!(f, "{x}i32"),
            PrimValue::I64(x) => write!(f, "{x}i64"),
            PrimValue::U8(x) => write!(f, "{x}u8"),
            PrimValue::U16(x) => write!(f, "{x}u16"),
            PrimValue::U32(x) => write!(f, "{x}u32"),
            PrimValue::U64(x) => write!(f, "{x}u64"),
            PrimValue::Bool(b) => write!(f, "{b}"),
            PrimValue::F16(x) => float(
                f,
                x.is_nan(),
                x.is_infinite().then(|| x.is_sign_negative()),
                || shortest_f16(x),
                "f16",
            ),
            PrimValue::F32(x) => float(
                f,
                x.is_nan(),
                x.is_infinite().then(|| x.is_sign_negative()),
                || format!("{x:?}"),
                "f32",
            ),
            PrimValue::F64(x) => float(
                f,
                x.is_nan(),
                x.is_infinite().then(|| x.is_sign_negative()),
                || format!("{x:?}"),
                "f64",
            ),
        }
    }
}
