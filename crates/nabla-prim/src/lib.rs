//! Primitive types, primitive values and the scalar operations on them.
//!
//! Everything in nabla that computes on scalars — the interpreter, constant
//! folding, the AD rules — goes through this crate, so Futhark's scalar
//! semantics (wrapping integer arithmetic, `//` and `%` rounding towards
//! negative infinity, conversions that saturate or wrap exactly as Futhark's
//! do) is written once.

mod ops;
mod value;

pub use ops::*;
pub use value::*;

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

    pub fn is_signed_int(self) -> bool {
        matches!(self, PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64)
    }
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, PrimType::U8 | PrimType::U16 | PrimType::U32 | PrimType::U64)
    }
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
    pub fn is_float(self) -> bool {
        matches!(self, PrimType::F16 | PrimType::F32 | PrimType::F64)
    }
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
