//! The scalar operators and built-in scalar functions, by name.
//!
//! These enums are shared by the IR (`nabla-ir`), the elaborator and the
//! interpreter; their evaluation lives here too.

/// Binary arithmetic and bitwise operators. Operands have the same type; the
/// result has that type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+` (integers wrap)
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: on integers, Futhark's `/` rounds towards negative infinity (same as `//`).
    Div,
    /// `%`: on integers, the remainder that matches `//` (sign of the divisor);
    /// on floats, `x - y * floor(x/y)`... see `%` in Futhark's docs.
    Mod,
    /// `//`: integer division rounding towards negative infinity.
    IntDiv,
    /// `%%`: alias of `%`.
    IntMod,
    /// `quot`: integer division rounding towards zero.
    Quot,
    /// `rem`: remainder matching `quot` (sign of the dividend).
    Rem,
    /// `**` / `pow`
    Pow,
    /// `&` (also logical and on bool when written `&&`? no: `&&` is [`BinOp::LogAnd`])
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic on signed, logical on unsigned)
    Shr,
    /// `>>>` logical shift right
    LShr,
    /// `&&` on bool (the IR evaluates both sides; short-circuiting is done by the elaborator with `if`)
    LogAnd,
    /// `||` on bool
    LogOr,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `atan2 y x`
    Atan2,
    /// `hypot x y`
    Hypot,
}

/// Comparison operators; the result is `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Unary operators and one-argument built-in functions. Result type = argument
/// type, except where noted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation (wraps on integers).
    Neg,
    /// `!` on bool, bitwise complement on integers.
    Not,
    Abs,
    /// `sgn`: -1, 0 or 1 (floats: also NaN for NaN).
    Sgn,
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Lgamma,
    Gamma,
    Erf,
    Erfc,
    Floor,
    Ceil,
    /// Round half to even, as Futhark's `round`.
    Round,
    Trunc,
    /// `isnan`: result is `bool`.
    IsNan,
    /// `isinf`: result is `bool`.
    IsInf,
    /// `clz`: count leading zeros; result is `i32`.
    Clz,
    /// `ctz`: count trailing zeros; result is `i32`.
    Ctz,
    /// `popc`: population count; result is `i32`.
    Popc,
}

/// Three-argument built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TernOp {
    /// `fma a b c` = a*b+c (fused)
    Fma,
    /// `mad a b c` = a*b+c (may be unfused)
    Mad,
    /// `lerp v0 v1 t` = v0 + (v1-v0)*t
    Lerp,
}

/// Conversions between primitive types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvOp {
    /// Value conversion as Futhark's `T.U` functions (`f64.i32`, `i64.f32`,
    /// `u8.bool`, `bool.i32`, …): integer↔integer wraps (truncates bits / sign- or
    /// zero-extends), float→integer truncates towards zero, integer/bool→float exact
    /// or rounded, anything→bool is `x != 0`, bool→number is 0 or 1.
    Convert(crate::PrimType, crate::PrimType),
    /// Reinterpret the bits (`f64.to_bits`, `f64.from_bits`, and `iN.uN` between
    /// same-size integers behave the same as Convert).
    BitCast(crate::PrimType, crate::PrimType),
}
