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

// ----- every operator, for printers, parsers and tests ---------------------

impl BinOp {
    /// Every `BinOp`, in declaration order.
    pub const ALL: [BinOp; 22] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Mod,
        Self::IntDiv,
        Self::IntMod,
        Self::Quot,
        Self::Rem,
        Self::Pow,
        Self::BitAnd,
        Self::BitOr,
        Self::BitXor,
        Self::Shl,
        Self::Shr,
        Self::LShr,
        Self::LogAnd,
        Self::LogOr,
        Self::Min,
        Self::Max,
        Self::Atan2,
        Self::Hypot,
    ];
}

/// Fails to compile when a `BinOp` is added and [`BinOp::ALL`] is not updated.
#[allow(dead_code)]
fn binop_all_is_complete(o: BinOp) {
    match o {
        BinOp::Add
        | BinOp::Sub
        | BinOp::Mul
        | BinOp::Div
        | BinOp::Mod
        | BinOp::IntDiv
        | BinOp::IntMod
        | BinOp::Quot
        | BinOp::Rem
        | BinOp::Pow
        | BinOp::BitAnd
        | BinOp::BitOr
        | BinOp::BitXor
        | BinOp::Shl
        | BinOp::Shr
        | BinOp::LShr
        | BinOp::LogAnd
        | BinOp::LogOr
        | BinOp::Min
        | BinOp::Max
        | BinOp::Atan2
        | BinOp::Hypot => {}
    }
}

impl CmpOp {
    /// Every `CmpOp`, in declaration order.
    pub const ALL: [CmpOp; 6] = [Self::Eq, Self::Neq, Self::Lt, Self::Le, Self::Gt, Self::Ge];
}

/// Fails to compile when a `CmpOp` is added and [`CmpOp::ALL`] is not updated.
#[allow(dead_code)]
fn cmpop_all_is_complete(o: CmpOp) {
    match o {
        CmpOp::Eq | CmpOp::Neq | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {}
    }
}

impl UnOp {
    /// Every `UnOp`, in declaration order.
    pub const ALL: [UnOp; 40] = [
        Self::Neg,
        Self::Not,
        Self::Abs,
        Self::Sgn,
        Self::Sqrt,
        Self::Cbrt,
        Self::Exp,
        Self::Exp2,
        Self::Expm1,
        Self::Log,
        Self::Log2,
        Self::Log10,
        Self::Log1p,
        Self::Sin,
        Self::Cos,
        Self::Tan,
        Self::Asin,
        Self::Acos,
        Self::Atan,
        Self::Sinh,
        Self::Cosh,
        Self::Tanh,
        Self::Asinh,
        Self::Acosh,
        Self::Atanh,
        Self::Lgamma,
        Self::Digamma,
        Self::Trigamma,
        Self::Gamma,
        Self::Erf,
        Self::Erfc,
        Self::Floor,
        Self::Ceil,
        Self::Round,
        Self::Trunc,
        Self::IsNan,
        Self::IsInf,
        Self::Clz,
        Self::Ctz,
        Self::Popc,
    ];
}

/// Fails to compile when a `UnOp` is added and [`UnOp::ALL`] is not updated.
#[allow(dead_code)]
fn unop_all_is_complete(o: UnOp) {
    match o {
        UnOp::Neg
        | UnOp::Not
        | UnOp::Abs
        | UnOp::Sgn
        | UnOp::Sqrt
        | UnOp::Cbrt
        | UnOp::Exp
        | UnOp::Exp2
        | UnOp::Expm1
        | UnOp::Log
        | UnOp::Log2
        | UnOp::Log10
        | UnOp::Log1p
        | UnOp::Sin
        | UnOp::Cos
        | UnOp::Tan
        | UnOp::Asin
        | UnOp::Acos
        | UnOp::Atan
        | UnOp::Sinh
        | UnOp::Cosh
        | UnOp::Tanh
        | UnOp::Asinh
        | UnOp::Acosh
        | UnOp::Atanh
        | UnOp::Lgamma
        | UnOp::Digamma
        | UnOp::Trigamma
        | UnOp::Gamma
        | UnOp::Erf
        | UnOp::Erfc
        | UnOp::Floor
        | UnOp::Ceil
        | UnOp::Round
        | UnOp::Trunc
        | UnOp::IsNan
        | UnOp::IsInf
        | UnOp::Clz
        | UnOp::Ctz
        | UnOp::Popc => {}
    }
}

impl TernOp {
    /// Every `TernOp`, in declaration order.
    pub const ALL: [TernOp; 3] = [Self::Fma, Self::Mad, Self::Lerp];
}

/// Fails to compile when a `TernOp` is added and [`TernOp::ALL`] is not updated.
#[allow(dead_code)]
fn ternop_all_is_complete(o: TernOp) {
    match o {
        TernOp::Fma | TernOp::Mad | TernOp::Lerp => {}
    }
}
