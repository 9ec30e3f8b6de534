//! Primitive types, primitive values and the scalar operations on them.
//!
//! Everything in nabla that computes on scalars — the interpreter, constant
//! folding, the AD rules — goes through this crate, so Futhark's scalar
//! semantics (wrapping integer arithmetic, `//` and `%` rounding towards
//! negative infinity, conversions that saturate or wrap exactly as Futhark's
//! do) is written once.

mod conv;
mod eval;
pub mod float_math;
mod literal;
mod ops;
mod value;

pub use conv::eval_conv;
pub use eval::{eval_binop, eval_cmpop, eval_ternop, eval_unop, unop_result_type};
pub use literal::{parse_float_literal, parse_int_literal, parse_prim_literal};
pub use ops::*;
pub use value::*;

/// Errors of scalar evaluation and literal parsing. Never produced by a
/// panic: every function in this crate returns these instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrimError {
    /// Integer division or remainder (`/ % // %% quot rem`) by zero.
    DivisionByZero,
    /// Operands of different types, an operator applied to a type it is not
    /// defined on (e.g. `sqrt` on `i32`), or a conversion whose source type
    /// does not match its operand. The string says which.
    TypeMismatch(String),
    /// Text that is not a literal of the requested kind.
    InvalidLiteral(String),
    /// A well-formed literal whose value does not fit its type.
    LiteralOutOfRange(String),
}

impl std::fmt::Display for PrimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrimError::DivisionByZero => f.write_str("division by zero"),
            PrimError::TypeMismatch(m) => write!(f, "type mismatch: {m}"),
            PrimError::InvalidLiteral(m) | PrimError::LiteralOutOfRange(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PrimError {}

/// A primitive type: `i8`…`i64`, `u8`…`u64`, `f16`, `f32`, `f64`, `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    Bool,
}

impl PrimType {
    /// All primitive types, in declaration order.
    pub const ALL: [PrimType; 12] = [
        PrimType::I8,
        PrimType::I16,
        PrimType::I32,
        PrimType::I64,
        PrimType::U8,
        PrimType::U16,
        PrimType::U32,
        PrimType::U64,
        PrimType::F16,
        PrimType::F32,
        PrimType::F64,
        PrimType::Bool,
    ];

    /// The Futhark spelling: `"i32"`, `"f64"`, `"bool"`, …
    pub fn name(self) -> &'static str {
        match self {
            PrimType::I8 => "i8",
            PrimType::I16 => "i16",
            PrimType::I32 => "i32",
            PrimType::I64 => "i64",
            PrimType::U8 => "u8",
            PrimType::U16 => "u16",
            PrimType::U32 => "u32",
            PrimType::U64 => "u64",
            PrimType::F16 => "f16",
            PrimType::F32 => "f32",
            PrimType::F64 => "f64",
            PrimType::Bool => "bool",
        }
    }

    /// Parses a Futhark primitive type name.
    pub fn from_name(s: &str) -> Option<PrimType> {
        PrimType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// `i8`, `i16`, `i32` or `i64`.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
        )
    }
    /// `u8`, `u16`, `u32` or `u64`.
    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            PrimType::U8 | PrimType::U16 | PrimType::U32 | PrimType::U64
        )
    }
    /// Any integer type.
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
    /// `f16`, `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, PrimType::F16 | PrimType::F32 | PrimType::F64)
    }
    /// Any type but `bool`.
    pub fn is_numeric(self) -> bool {
        self != PrimType::Bool
    }
    /// Size in bits (`bool` counts as 8, as in Futhark's binary data format).
    pub fn bits(self) -> u32 {
        match self {
            PrimType::I8 | PrimType::U8 | PrimType::Bool => 8,
            PrimType::I16 | PrimType::U16 | PrimType::F16 => 16,
            PrimType::I32 | PrimType::U32 | PrimType::F32 => 32,
            PrimType::I64 | PrimType::U64 | PrimType::F64 => 64,
        }
    }
}

impl std::fmt::Display for PrimType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
