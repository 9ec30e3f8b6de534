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
    /// `/`: on signed integers rounds towards negative infinity (Futhark's
    /// `sdiv`); on unsigned integers ordinary division; on floats IEEE division.
    /// Integer division by zero is [`crate::PrimError::DivisionByZero`].
    Div,
    /// `%`: on signed integers the remainder matching `/` (it has the sign of
    /// the divisor, Futhark's `smod`); on unsigned integers ordinary remainder;
    /// on floats C's `fmod` (truncated; the result has the sign of the
    /// dividend), which is what Futhark's compiled backends use.
    Mod,
    /// `//`: Futhark's prelude defines this as division rounding towards
    /// **zero** (`squot`; the docs: "Like `/`, but rounds towards zero"). Same
    /// as [`BinOp::Quot`]. Integers only.
    IntDiv,
    /// `%%`: Futhark's prelude defines this as the remainder matching `//`
    /// (`srem`: the result has the sign of the dividend). Same as
    /// [`BinOp::Rem`]. Integers only.
    IntMod,
    /// `quot`: integer division rounding towards zero.
    Quot,
    /// `rem`: remainder matching `quot` (sign of the dividend).
    Rem,
    /// `**` / `pow`. On integers: wrapping exponentiation by repeated squaring,
    /// with the exponent's bits read as an unsigned number (as Futhark's C
    /// backend does), so a negative exponent `e` means `2^N + e` for an N-bit
    /// type: `2 ** -1 = 0`, `1 ** -1 = 1`, `(-1) ** -1 = -1`. On floats C's `pow`.
    Pow,
    /// `&` on integers (also accepted on `bool`, where it is logical and).
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`. The shift amount's bits are read as an unsigned number; an amount
    /// `>=` the bit width gives 0 (never a panic).
    Shl,
    /// `>>`: arithmetic on signed types, logical on unsigned types (as Futhark's
    /// built-in overloaded `>>`). An amount `>=` the bit width (the amount's
    /// bits read as unsigned) gives 0, or -1 for a negative signed operand.
    Shr,
    /// `>>>`: logical shift right on every integer type; an amount `>=` the bit
    /// width gives 0.
    LShr,
    /// `&&` on bool (the IR evaluates both sides; short-circuiting is done by the elaborator with `if`)
    LogAnd,
    /// `||` on bool
    LogOr,
    /// `min`. On floats C's `fmin`: if exactly one operand is NaN the other is
    /// returned.
    Min,
    /// `max`. On floats C's `fmax` (NaN-ignoring like [`BinOp::Min`]).
    Max,
    /// `atan2 y x` (floats only; C's `atan2(y, x)`).
    Atan2,
    /// `hypot x y` (floats only).
    Hypot,
}

/// Comparison operators; the result is `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==` (IEEE equality on floats: `nan == nan` is false, `0.0 == -0.0`).
    Eq,
    /// `!=` (true whenever an operand is NaN).
    Neq,
    /// `<` (unsigned types compare as unsigned; `false < true`).
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
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
    /// ψ(x), the digamma function (the derivative of `lgamma`): not a
    /// source-level function; static AD emits it.
    Digamma,
    /// ψ′(x), the trigamma function (the derivative of `Digamma`).
    Trigamma,
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
