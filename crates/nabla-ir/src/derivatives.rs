//! The derivative rules of every scalar primitive, as one symbolic table.
//!
//! For each scalar operation ([`ScalarOp`]: nabla-prim's [`BinOp`], [`UnOp`],
//! [`TernOp`], [`ConvOp`], and the polygamma functions that the rules of
//! `lgamma` and `gamma` need) and each operand type, [`partials`] gives how
//! the result depends on the operands ([`Partials`]):
//!
//! * [`Partials::Constant`]: not differentiable, or derivative zero
//!   everywhere — comparisons are not in the table at all (their result is a
//!   `bool`), bitwise and logical operators, every operation on `bool`,
//!   `sgn`, rounding, `isnan`, `isinf`, `clz`, `ctz`, `popc`, and
//!   conversions from or to `bool`;
//! * [`Partials::Rule`]: a [`Rule`], one symbolic partial derivative
//!   ([`RuleExp`]) per operand, written in the operands' primals and the
//!   primal result;
//! * [`Partials::Conversion`]: a conversion, whose tangent is converted
//!   forward and whose adjoint is converted back (Jensen 2024, §3.4: type
//!   conversions are applied to tangents and, in reverse, to adjoints).
//!
//! The table is data, built once at compile time (`static` trees, no
//! allocation): the interpreter's dynamic AD evaluates it on run-time values
//! and static AD emits it as IR, both through [`eval_partials`] and the
//! [`RuleAlgebra`] they implement, so both compute the same derivatives.
//! [`PrimAlgebra`] evaluates it on plain [`PrimValue`]s with nabla-prim's
//! scalar semantics:
//!
//! ```
//! use nabla_ir::derivatives::{eval_partials, Derivative, PrimAlgebra, ScalarOp};
//! use nabla_ir::{BinOp, PrimType, PrimValue};
//!
//! // ∂(a·b)/∂a = b and ∂(a·b)/∂b = a, at (3, 4).
//! let x = [PrimValue::F64(3.0), PrimValue::F64(4.0)];
//! let mul = ScalarOp::Bin(BinOp::Mul);
//! let d = eval_partials(&mut PrimAlgebra, mul, PrimType::F64, &x, None).unwrap();
//! assert_eq!(d, Derivative::Partials([Some(x[1]), Some(x[0]), None]));
//! ```
//!
//! Edge cases are [`RuleExp::Select`]s on the primals, not run-time branches
//! of the table. The partial [`RuleExp::Zero`] means "no dependence": a
//! run-time evaluator skips that operand (it contributes nothing, even with
//! an infinite or NaN tangent); an IR builder may emit a zero constant.
//!
//! Sources. Where Futhark's compiler has a rule (`Futhark.AD.Derivatives`,
//! functions `pdBinOp`, `pdUnOp` and `pdBuiltin`; see
//! `/work/shared/design/futhark-internals.md`, "Derivatives.hs") the table
//! follows it, except where that rule is mathematically wrong or marked
//! FIXME there; each rule's comment says which, and which value it takes at
//! the edges. Jensen 2024 (§3.3–3.4, `doOp`) evaluates partial derivatives with the
//! same AD-aware operations as the program, which is why the rules are
//! symbolic in the primals: evaluated on AD values, they are themselves
//! differentiated (derivatives of any order).

use crate::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};
use nabla_prim::PrimError;

// ----- operations -------------------------------------------------------------------

/// A scalar operation whose derivative the table gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarOp {
    /// A binary operator (two operands of the same type).
    Bin(BinOp),
    /// A unary operator or one-argument built-in function.
    Un(UnOp),
    /// A three-argument built-in function.
    Tern(TernOp),
    /// A conversion between primitive types.
    Conv(ConvOp),
    /// The polygamma function ψ⁽ⁿ⁾ (digamma for `n = 0`) of a float: not a
    /// user-visible operator, but the derivative of `lgamma` and `gamma`
    /// (and of itself), so derivatives of those of any order can be taken.
    Polygamma(u32),
}

impl ScalarOp {
    /// The number of operands.
    pub fn arity(self) -> usize {
        match self {
            ScalarOp::Bin(_) => 2,
            ScalarOp::Un(_) | ScalarOp::Conv(_) | ScalarOp::Polygamma(_) => 1,
            ScalarOp::Tern(_) => 3,
        }
    }

    /// The order `n` of a [`ScalarOp::Polygamma`], 0 for every other
    /// operation: the base of the relative orders of [`RuleExp::Polygamma`].
    pub fn polygamma_order(self) -> u32 {
        match self {
            ScalarOp::Polygamma(n) => n,
            ScalarOp::Un(UnOp::Trigamma) => 1,
            _ => 0,
        }
    }
}

// ----- symbolic partial derivatives -------------------------------------------------

/// A symbolic partial derivative: an expression in the operation's operand
/// primals and primal result. Every value has the operation's operand type
/// `t` (the type [`partials`] was asked for), except the results of
/// [`RuleExp::Cmp`] and of `isnan`/`isinf`/logical operators on such
/// results, which are `bool` and only appear as conditions of
/// [`RuleExp::Select`], and the result of [`RuleExp::Conv`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RuleExp {
    /// No dependence on this operand (a zero partial). At run time the
    /// operand is skipped; inside arithmetic (which no rule does) it is a
    /// zero of type `t`.
    Zero,
    /// The primal of operand `k` (0-based).
    Operand(u8),
    /// The primal result of the operation (so rules need not recompute it,
    /// e.g. `exp' = exp a`).
    Result,
    /// A constant of type `t`: floats round this value to `t`, integers
    /// truncate it towards zero and wrap (so `-1` is the all-ones value of
    /// an unsigned type).
    Const(f64),
    /// The `k`-th shared value of the rule ([`Rule::shared`]), computed once
    /// when first used.
    Shared(u8),
    /// A binary operator on two values.
    Bin(BinOp, &'static RuleExp, &'static RuleExp),
    /// A unary operator.
    Un(UnOp, &'static RuleExp),
    /// A comparison (the result is a `bool`).
    Cmp(CmpOp, &'static RuleExp, &'static RuleExp),
    /// A three-argument built-in.
    Tern(TernOp, &'static RuleExp, &'static RuleExp, &'static RuleExp),
    /// A conversion (no rule of the table uses one today).
    Conv(ConvOp, &'static RuleExp),
    /// `Select(cond, then, otherwise)`: `then` where the `bool` `cond` holds,
    /// else `otherwise` — the edge cases of a rule. Both branches are
    /// defined (no division by zero) for every operand, so an evaluator that
    /// cannot decide `cond` (an IR builder) may compute both and select.
    Select(&'static RuleExp, &'static RuleExp, &'static RuleExp),
    /// ψ⁽ᵐ⁺ᵏ⁾(x) for `Polygamma(k, x)`, where `m` is the order of the
    /// operation being differentiated ([`ScalarOp::polygamma_order`]: `n`
    /// for ψ⁽ⁿ⁾, 0 for every other operation). Relative, so that the rule of
    /// ψ⁽ⁿ⁾ (ψ⁽ⁿ⁺¹⁾) is one static tree for every `n`.
    Polygamma(u32, &'static RuleExp),
}

/// The rule of one differentiable operation at one type: its shared
/// sub-expressions and one partial derivative per operand.
#[derive(Debug, PartialEq)]
pub struct Rule {
    /// Sub-expressions used by several partials or several times
    /// ([`RuleExp::Shared`]`(k)` is `shared[k]`, which may refer to
    /// `shared[j]` for `j < k`); at most [`MAX_SHARED`].
    pub shared: &'static [RuleExp],
    /// ∂result/∂operandₖ, one per operand ([`ScalarOp::arity`] of them).
    pub partials: &'static [RuleExp],
}

/// The most shared sub-expressions a [`Rule`] has.
pub const MAX_SHARED: usize = 4;

/// How an operation's result depends on its operands (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partials {
    /// The result is a constant for AD (not differentiable, or zero
    /// derivative everywhere).
    Constant,
    /// Symbolic partial derivatives.
    Rule(&'static Rule),
    /// A conversion: tangents are converted with `forward` (the operation
    /// itself), adjoints with `backward` (the reverse conversion).
    Conversion {
        /// The conversion applied to a tangent.
        forward: ConvOp,
        /// The conversion applied to an adjoint.
        backward: ConvOp,
    },
}

// ----- the table --------------------------------------------------------------------

use RuleExp as E;

const A: E = E::Operand(0);
const B: E = E::Operand(1);
const C: E = E::Operand(2);
const R: E = E::Result;
const ONE: E = E::Const(1.0);
const NEG_ONE: E = E::Const(-1.0);
const S0: E = E::Shared(0);
const S1: E = E::Shared(1);

/// The partials of `op` with operands of type `t` (for a conversion, `t`
/// is ignored: the conversion names its types). For an operator that is not
/// defined on `t` (e.g. `sqrt` on `i32`) the answer is the float rule,
/// never used: the primal evaluation has already failed.
pub fn partials(op: ScalarOp, t: PrimType) -> Partials {
    match op {
        ScalarOp::Bin(o) => binop_partials(o, t),
        ScalarOp::Un(o) => unop_partials(o, t),
        ScalarOp::Tern(o) => ternop_partials(o, t),
        ScalarOp::Conv(o) => conv_partials(o),
        ScalarOp::Polygamma(_) => polygamma_partials(),
    }
}

/// Whether `op`'s result is a constant for AD whatever its operands
/// (`partials(op, t)` is [`Partials::Constant`]), so AD need not track it.
#[inline]
pub fn is_constant(op: ScalarOp, t: PrimType) -> bool {
    matches!(partials(op, t), Partials::Constant)
}

/// `a + b`: (1, 1).
static ADD: Rule = Rule {
    shared: &[],
    partials: &[ONE, ONE],
};
/// `a - b`: (1, -1).
static SUB: Rule = Rule {
    shared: &[],
    partials: &[ONE, NEG_ONE],
};
/// `a * b`: (b, a).
static MUL: Rule = Rule {
    shared: &[],
    partials: &[B, A],
};
/// Float `a / b`: (1/b, -(a/(b·b))), as Futhark's pdBinOp FDiv. Infinite or
/// NaN at `b = 0`, as the quotient itself.
static DIV_FLOAT: Rule = Rule {
    shared: &[],
    partials: &[
        E::Bin(BinOp::Div, &ONE, &B),
        E::Un(
            UnOp::Neg,
            &E::Bin(BinOp::Div, &A, &E::Bin(BinOp::Mul, &B, &B)),
        ),
    ],
};
/// Integer `/`, `//` and `quot` (sdiv, udiv, squot): Futhark's pdBinOp
/// (1 quot b, -(a quot b²)) with wrapping `b² = b·b`, and no dependence
/// (zero) on either operand where `b²` wraps to 0 (in particular at
/// `b = 0`, where the primal fails anyway). The divisors are guarded so
/// that both branches are defined.
static DIV_INT: Rule = Rule {
    shared: &[
        E::Bin(BinOp::Mul, &B, &B),
        E::Cmp(CmpOp::Eq, &S0, &E::Const(0.0)),
    ],
    partials: &[
        E::Select(
            &S1,
            &E::Zero,
            &E::Bin(BinOp::Quot, &ONE, &E::Select(&S1, &ONE, &B)),
        ),
        E::Select(
            &S1,
            &E::Zero,
            &E::Un(
                UnOp::Neg,
                &E::Bin(BinOp::Quot, &A, &E::Select(&S1, &ONE, &S0)),
            ),
        ),
    ],
};
/// Float `%` (C's `fmod`, truncated): (1, -trunc(a/b)). Futhark's pdBinOp
/// FMod gives (1, 0), marked FIXME there, which disagrees with finite
/// differences.
static MOD_FLOAT: Rule = Rule {
    shared: &[],
    partials: &[
        ONE,
        E::Un(UnOp::Neg, &E::Un(UnOp::Trunc, &E::Bin(BinOp::Div, &A, &B))),
    ],
};
/// Integer `%`, `%%` and `rem`: Futhark's pdBinOp (1, 0) (its FIXME
/// placeholder; the true derivative w.r.t. `b`, `-(a quot b)`, is not used
/// for integers).
static MOD_INT: Rule = Rule {
    shared: &[],
    partials: &[ONE, E::Zero],
};
/// `∂(a^b)/∂a = b·a^(b-1)`, except no dependence where `b = 0` (`a^0` is the
/// constant 1; the formula gives `0·a^-1`, NaN at `a = 0`).
const POW_BY_BASE: E = E::Select(
    &E::Cmp(CmpOp::Eq, &B, &E::Const(0.0)),
    &E::Zero,
    &E::Bin(
        BinOp::Mul,
        &B,
        &E::Bin(BinOp::Pow, &A, &E::Bin(BinOp::Sub, &B, &ONE)),
    ),
);
/// Float `a ** b`: (b·a^(b-1), a^b·ln a) as Futhark's pdBinOp FPow, except
/// at the edges where that formula gives 0·∞ = NaN: ∂/∂a is zero when
/// `b = 0` (a^0 is constant 1), and ∂/∂b is zero when `a = 0` (the one-sided
/// limit of a^b·ln a for b > 0).
static POW_FLOAT: Rule = Rule {
    shared: &[],
    partials: &[
        POW_BY_BASE,
        E::Select(
            &E::Cmp(CmpOp::Eq, &A, &E::Const(0.0)),
            &E::Zero,
            &E::Bin(BinOp::Mul, &R, &E::Un(UnOp::Log, &A)),
        ),
    ],
};
/// Integer `a ** b`: Futhark's pdBinOp Pow (a^(b-1)·b, 0) in wrapping
/// arithmetic, zero w.r.t. `a` where `b = 0` (as for floats).
static POW_INT: Rule = Rule {
    shared: &[],
    partials: &[POW_BY_BASE, E::Zero],
};
/// `a << b`: shifting is multiplication by 2^b, so (1 << b, 0), as
/// Futhark's pdBinOp Shl.
static SHL: Rule = Rule {
    shared: &[],
    partials: &[E::Bin(BinOp::Shl, &ONE, &B), E::Zero],
};
/// `a >> b`: (1 >> b, 0), as Futhark's pdBinOp AShr/LShr (0 for `b > 0`).
static SHR: Rule = Rule {
    shared: &[],
    partials: &[E::Bin(BinOp::Shr, &ONE, &B), E::Zero],
};
/// `a >>> b`: (1 >>> b, 0), as Futhark's pdBinOp LShr.
static LSHR: Rule = Rule {
    shared: &[],
    partials: &[E::Bin(BinOp::LShr, &ONE, &B), E::Zero],
};
/// Shared value 0 selects the first operand: (1, 0) where it holds, else
/// (0, 1).
const PICK_FIRST: [E; 2] = [
    E::Select(&S0, &ONE, &E::Zero),
    E::Select(&S0, &E::Zero, &ONE),
];
/// Float `min a b`: (a <= b, a > b) — ties go to the first operand, as
/// Futhark's pdBinOp FMin. When one operand is NaN (`fmin` returns the other
/// one) the derivative is that of the returned operand: the first operand
/// is selected iff `a <= b || isnan b`.
static MIN_FLOAT: Rule = Rule {
    shared: &[E::Bin(
        BinOp::LogOr,
        &E::Cmp(CmpOp::Le, &A, &B),
        &E::Un(UnOp::IsNan, &B),
    )],
    partials: &PICK_FIRST,
};
/// Float `max a b`: (a >= b, a < b), ties to the first operand, as
/// Futhark's pdBinOp FMax; NaN operands as for `MIN_FLOAT`: the first
/// operand is selected iff `a >= b || isnan b`.
static MAX_FLOAT: Rule = Rule {
    shared: &[E::Bin(
        BinOp::LogOr,
        &E::Cmp(CmpOp::Ge, &A, &B),
        &E::Un(UnOp::IsNan, &B),
    )],
    partials: &PICK_FIRST,
};
/// Integer `min a b`: (a <= b, a > b), as Futhark's pdBinOp SMin/UMin.
static MIN_INT: Rule = Rule {
    shared: &[E::Cmp(CmpOp::Le, &A, &B)],
    partials: &PICK_FIRST,
};
/// Integer `max a b`: (a >= b, a < b), as Futhark's pdBinOp SMax/UMax.
static MAX_INT: Rule = Rule {
    shared: &[E::Cmp(CmpOp::Ge, &A, &B)],
    partials: &PICK_FIRST,
};
/// `atan2 a b` (= atan(a/b) in the right half plane): (b/(a²+b²),
/// -(a/(a²+b²))), as Futhark's pdBuiltin "atan2"; NaN at the origin.
static ATAN2: Rule = Rule {
    shared: &[E::Bin(
        BinOp::Add,
        &E::Bin(BinOp::Mul, &A, &A),
        &E::Bin(BinOp::Mul, &B, &B),
    )],
    partials: &[
        E::Bin(BinOp::Div, &B, &S0),
        E::Un(UnOp::Neg, &E::Bin(BinOp::Div, &A, &S0)),
    ],
};
/// `hypot a b = h`: (a/h, b/h); zero at the origin (a subgradient), where
/// the formula gives 0/0. Futhark has no rule for `hypot`.
static HYPOT: Rule = Rule {
    shared: &[E::Cmp(CmpOp::Eq, &R, &E::Const(0.0))],
    partials: &[
        E::Select(&S0, &E::Zero, &E::Bin(BinOp::Div, &A, &R)),
        E::Select(&S0, &E::Zero, &E::Bin(BinOp::Div, &B, &R)),
    ],
};

/// The partials of the binary operator `op` on operands of type `t`: see
/// the rule of each operator in this module's source (`DIV_FLOAT`,
/// `POW_FLOAT`, …; floats and integers differ for division, remainder,
/// power, `min` and `max`).
/// Bitwise and logical operators (`& | ^ && ||`) and every operator on
/// `bool` are constants.
pub fn binop_partials(op: BinOp, t: PrimType) -> Partials {
    if t == PrimType::Bool {
        return Partials::Constant;
    }
    let float = t.is_float();
    Partials::Rule(match op {
        BinOp::Add => &ADD,
        BinOp::Sub => &SUB,
        BinOp::Mul => &MUL,
        BinOp::Div | BinOp::IntDiv | BinOp::Quot if float => &DIV_FLOAT,
        BinOp::Div | BinOp::IntDiv | BinOp::Quot => &DIV_INT,
        BinOp::Mod | BinOp::IntMod | BinOp::Rem if float => &MOD_FLOAT,
        BinOp::Mod | BinOp::IntMod | BinOp::Rem => &MOD_INT,
        BinOp::Pow if float => &POW_FLOAT,
        BinOp::Pow => &POW_INT,
        BinOp::Shl => &SHL,
        BinOp::Shr => &SHR,
        BinOp::LShr => &LSHR,
        BinOp::Min if float => &MIN_FLOAT,
        BinOp::Min => &MIN_INT,
        BinOp::Max if float => &MAX_FLOAT,
        BinOp::Max => &MAX_INT,
        BinOp::Atan2 => &ATAN2,
        BinOp::Hypot => &HYPOT,
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::LogAnd | BinOp::LogOr => {
            return Partials::Constant
        }
    })
}

/// Declares a one-operand rule.
macro_rules! unary_rule {
    ($(#[$doc:meta])* $name:ident = $partial:expr) => {
        $(#[$doc])*
        static $name: Rule = Rule {
            shared: &[],
            partials: &[$partial],
        };
    };
}

unary_rule!(
    /// `-a`: -1, as Futhark's pdUnOp Neg/FNeg.
    NEG = NEG_ONE
);
unary_rule!(
    /// Integer complement `!a = -a - 1`: -1. Futhark's pdUnOp Complement
    /// gives `complement a`, which is not the derivative.
    NOT = NEG_ONE
);
unary_rule!(
    /// `abs a`: `sgn a`, so 0 at `a = 0` (Futhark's pdUnOp Abs/FAbs).
    ABS = E::Un(UnOp::Sgn, &A)
);
unary_rule!(
    /// `sqrt a`: 1/(2·sqrt a), +inf at 0 (Futhark's pdBuiltin "sqrt").
    SQRT = E::Bin(BinOp::Div, &ONE, &E::Bin(BinOp::Mul, &E::Const(2.0), &R))
);
unary_rule!(
    /// `cbrt a`: 1/(3·cbrt(a)²), +inf at 0 (Futhark's pdBuiltin "cbrt").
    CBRT = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Bin(BinOp::Mul, &E::Const(3.0), &E::Bin(BinOp::Mul, &R, &R)),
    )
);
unary_rule!(
    /// `exp a`: exp a (Futhark's pdBuiltin "exp").
    EXP = R
);
unary_rule!(
    /// `expm1 a`: exp a (Futhark's pdBuiltin "expm1").
    EXPM1 = E::Un(UnOp::Exp, &A)
);
unary_rule!(
    /// `exp2 a`: exp2 a · ln 2 (Futhark's pdBuiltin "exp2").
    EXP2 = E::Bin(BinOp::Mul, &R, &E::Const(std::f64::consts::LN_2))
);
unary_rule!(
    /// `log a`: 1/a, infinite at 0 (Futhark's pdBuiltin "log").
    LOG = E::Bin(BinOp::Div, &ONE, &A)
);
unary_rule!(
    /// `log2 a`: 1/(a·ln 2) (Futhark's pdBuiltin "log2").
    LOG2 = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Bin(BinOp::Mul, &A, &E::Const(std::f64::consts::LN_2)),
    )
);
unary_rule!(
    /// `log10 a`: 1/(a·ln 10) (Futhark's pdBuiltin "log10").
    LOG10 = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Bin(BinOp::Mul, &A, &E::Const(std::f64::consts::LN_10)),
    )
);
unary_rule!(
    /// `log1p a`: 1/(1 + a) (Futhark's pdBuiltin "log1p").
    LOG1P = E::Bin(BinOp::Div, &ONE, &E::Bin(BinOp::Add, &ONE, &A))
);
unary_rule!(
    /// `sin a`: cos a (Futhark's pdBuiltin "sin").
    SIN = E::Un(UnOp::Cos, &A)
);
unary_rule!(
    /// `cos a`: -(sin a) (Futhark's pdBuiltin "cos").
    COS = E::Un(UnOp::Neg, &E::Un(UnOp::Sin, &A))
);
/// `cos a · cos a`.
const COS_SQUARED: E = E::Bin(BinOp::Mul, &E::Un(UnOp::Cos, &A), &E::Un(UnOp::Cos, &A));
unary_rule!(
    /// `tan a`: 1/cos²a (Futhark's pdBuiltin "tan").
    TAN = E::Bin(BinOp::Div, &ONE, &COS_SQUARED)
);
/// `1/sqrt(1 - a²)`.
const ASIN_PARTIAL: E = E::Bin(
    BinOp::Div,
    &ONE,
    &E::Un(
        UnOp::Sqrt,
        &E::Bin(BinOp::Sub, &ONE, &E::Bin(BinOp::Mul, &A, &A)),
    ),
);
unary_rule!(
    /// `asin a`: 1/sqrt(1 - a²), infinite at ±1 (Futhark's pdBuiltin
    /// "asin").
    ASIN = ASIN_PARTIAL
);
unary_rule!(
    /// `acos a`: -1/sqrt(1 - a²), infinite at ±1 (Futhark's pdBuiltin
    /// "acos").
    ACOS = E::Un(UnOp::Neg, &ASIN_PARTIAL)
);
unary_rule!(
    /// `atan a`: 1/(1 + a²) (Futhark's pdBuiltin "atan").
    ATAN = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Bin(BinOp::Add, &ONE, &E::Bin(BinOp::Mul, &A, &A)),
    )
);
unary_rule!(
    /// `sinh a`: cosh a (Futhark's pdBuiltin "sinh").
    SINH = E::Un(UnOp::Cosh, &A)
);
unary_rule!(
    /// `cosh a`: sinh a (Futhark's pdBuiltin "cosh").
    COSH = E::Un(UnOp::Sinh, &A)
);
unary_rule!(
    /// `tanh a`: 1 - tanh²a (Futhark's pdBuiltin "tanh").
    TANH = E::Bin(BinOp::Sub, &ONE, &E::Bin(BinOp::Mul, &R, &R))
);
unary_rule!(
    /// `asinh a`: 1/sqrt(a² + 1) (Futhark's pdBuiltin "asinh").
    ASINH = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Un(
            UnOp::Sqrt,
            &E::Bin(BinOp::Add, &E::Bin(BinOp::Mul, &A, &A), &ONE),
        ),
    )
);
unary_rule!(
    /// `acosh a`: 1/sqrt(a² - 1), infinite at 1 (Futhark's pdBuiltin
    /// "acosh").
    ACOSH = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Un(
            UnOp::Sqrt,
            &E::Bin(BinOp::Sub, &E::Bin(BinOp::Mul, &A, &A), &ONE),
        ),
    )
);
unary_rule!(
    /// `atanh a`: 1/(1 - a²), infinite at ±1. Futhark's pdBuiltin "atanh"
    /// gives cosh², which is wrong.
    ATANH = E::Bin(
        BinOp::Div,
        &ONE,
        &E::Bin(BinOp::Sub, &ONE, &E::Bin(BinOp::Mul, &A, &A)),
    )
);
unary_rule!(
    /// `lgamma a`: digamma ψ(a), NaN at the poles (no Futhark rule).
    LGAMMA = E::Polygamma(0, &A)
);
unary_rule!(
    /// `gamma a`: gamma a · ψ(a), NaN at the poles (no Futhark rule).
    GAMMA = E::Bin(BinOp::Mul, &R, &E::Polygamma(0, &A))
);
/// `e^(-a²)`.
const GAUSSIAN: E = E::Un(UnOp::Exp, &E::Un(UnOp::Neg, &E::Bin(BinOp::Mul, &A, &A)));
unary_rule!(
    /// `erf a`: 2/√π · e^(-a²) (Futhark's pdBuiltin "erf").
    ERF = E::Bin(
        BinOp::Mul,
        &E::Const(std::f64::consts::FRAC_2_SQRT_PI),
        &GAUSSIAN,
    )
);
unary_rule!(
    /// `erfc a`: -2/√π · e^(-a²) (Futhark's pdBuiltin "erfc").
    ERFC = E::Bin(
        BinOp::Mul,
        &E::Const(-std::f64::consts::FRAC_2_SQRT_PI),
        &GAUSSIAN,
    )
);
unary_rule!(
    /// ψ⁽ⁿ⁾(a): ψ⁽ⁿ⁺¹⁾(a) (the relative order 1 of [`RuleExp::Polygamma`]).
    POLYGAMMA = E::Polygamma(1, &A)
);

/// The partials of the unary operator `op` on an operand of type `t`: see
/// the rule of each operator in this module's source (`SQRT`, `ABS`,
/// `ATANH`, …: the same for every numeric type). Constants:
/// every operator on `bool`, `sgn`, `floor`, `ceil`, `round`, `trunc`,
/// `isnan`, `isinf`, `clz`, `ctz`, `popc` (zero derivative wherever they are
/// differentiable).
pub fn unop_partials(op: UnOp, t: PrimType) -> Partials {
    if t == PrimType::Bool {
        return Partials::Constant;
    }
    Partials::Rule(match op {
        UnOp::Neg => &NEG,
        UnOp::Not => &NOT,
        UnOp::Abs => &ABS,
        UnOp::Sqrt => &SQRT,
        UnOp::Cbrt => &CBRT,
        UnOp::Exp => &EXP,
        UnOp::Exp2 => &EXP2,
        UnOp::Expm1 => &EXPM1,
        UnOp::Log => &LOG,
        UnOp::Log2 => &LOG2,
        UnOp::Log10 => &LOG10,
        UnOp::Log1p => &LOG1P,
        UnOp::Sin => &SIN,
        UnOp::Cos => &COS,
        UnOp::Tan => &TAN,
        UnOp::Asin => &ASIN,
        UnOp::Acos => &ACOS,
        UnOp::Atan => &ATAN,
        UnOp::Sinh => &SINH,
        UnOp::Cosh => &COSH,
        UnOp::Tanh => &TANH,
        UnOp::Asinh => &ASINH,
        UnOp::Acosh => &ACOSH,
        UnOp::Atanh => &ATANH,
        UnOp::Lgamma => &LGAMMA,
        // ψ⁽ⁿ⁾' = ψ⁽ⁿ⁺¹⁾ (relative to the operation's order, see
        // `ScalarOp::polygamma_order`).
        UnOp::Digamma | UnOp::Trigamma => &POLYGAMMA,
        UnOp::Gamma => &GAMMA,
        UnOp::Erf => &ERF,
        UnOp::Erfc => &ERFC,
        UnOp::Sgn
        | UnOp::Floor
        | UnOp::Ceil
        | UnOp::Round
        | UnOp::Trunc
        | UnOp::IsNan
        | UnOp::IsInf
        | UnOp::Clz
        | UnOp::Ctz
        | UnOp::Popc => return Partials::Constant,
    })
}

/// `fma a b c = a·b + c` and `mad`: (b, a, 1), as Futhark's pdBuiltin "fma"
/// and "mad".
static FMA: Rule = Rule {
    shared: &[],
    partials: &[B, A, ONE],
};
/// `lerp v0 v1 t = v0 + (v1 - v0)·t`: (1 - t, t, v1 - v0). Futhark's
/// pdBuiltin "lerp" clamps `t` to [0, 1] here, but its (and nabla's) `lerp`
/// does not clamp, so the formula as evaluated is differentiated.
static LERP: Rule = Rule {
    shared: &[],
    partials: &[E::Bin(BinOp::Sub, &ONE, &C), C, E::Bin(BinOp::Sub, &B, &A)],
};

/// The partials of a three-argument built-in (the rules `FMA` and `LERP`
/// in this module's source); on
/// `bool` (never well-typed) a constant.
pub fn ternop_partials(op: TernOp, t: PrimType) -> Partials {
    if t == PrimType::Bool {
        return Partials::Constant;
    }
    Partials::Rule(match op {
        TernOp::Fma | TernOp::Mad => &FMA,
        TernOp::Lerp => &LERP,
    })
}

/// The partials of a conversion: [`Partials::Conversion`] with the reverse
/// conversion for adjoints (Jensen 2024, §3.4; Futhark's `Rev.hs` converts the
/// adjoint back too), or a constant when either side is `bool`.
pub fn conv_partials(op: ConvOp) -> Partials {
    let (ConvOp::Convert(from, to) | ConvOp::BitCast(from, to)) = op;
    if from == PrimType::Bool || to == PrimType::Bool {
        return Partials::Constant;
    }
    let backward = match op {
        ConvOp::Convert(..) => ConvOp::Convert(to, from),
        ConvOp::BitCast(..) => ConvOp::BitCast(to, from),
    };
    Partials::Conversion {
        forward: op,
        backward,
    }
}

/// The partials of ψ⁽ⁿ⁾ (any `n`): ψ⁽ⁿ⁺¹⁾ (relative order 1, see
/// [`RuleExp::Polygamma`]).
pub fn polygamma_partials() -> Partials {
    Partials::Rule(&POLYGAMMA)
}

// ----- evaluation -------------------------------------------------------------------

/// Why a rule could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleError {
    /// A scalar operation failed (nabla-prim's error).
    Prim(PrimError),
    /// The operation was given the wrong number of operands.
    Arity {
        /// The operation.
        op: ScalarOp,
        /// The operands it was given.
        found: usize,
    },
    /// A malformed rule (an operand, shared value or polygamma of a
    /// non-float out of range); never produced by this module's table.
    Malformed(String),
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleError::Prim(e) => write!(f, "{e}"),
            RuleError::Arity { op, found } => write!(
                f,
                "internal error: {op:?} applied to {found} operands (expected {})",
                op.arity()
            ),
            RuleError::Malformed(m) => write!(f, "internal error: malformed derivative rule: {m}"),
        }
    }
}

impl std::error::Error for RuleError {}

impl From<PrimError> for RuleError {
    fn from(e: PrimError) -> RuleError {
        RuleError::Prim(e)
    }
}

impl From<RuleError> for String {
    fn from(e: RuleError) -> String {
        e.to_string()
    }
}

/// The scalar arithmetic a rule is evaluated in. Implemented on plain
/// values ([`PrimAlgebra`]), on the interpreter's AD values (so derivatives
/// are themselves differentiated: nested AD), and by IR builders (static AD
/// emits each operation as a statement and returns its variable).
pub trait RuleAlgebra {
    /// A scalar: a value, or an IR atom.
    type Value: Clone;
    /// Errors of the operations (integer division by zero, …).
    type Error: From<RuleError>;
    /// A constant.
    fn constant(&mut self, value: PrimValue) -> Result<Self::Value, Self::Error>;
    /// `a op b`.
    fn binop(
        &mut self,
        op: BinOp,
        a: &Self::Value,
        b: &Self::Value,
    ) -> Result<Self::Value, Self::Error>;
    /// `op a`.
    fn unop(&mut self, op: UnOp, a: &Self::Value) -> Result<Self::Value, Self::Error>;
    /// `op a b c`.
    fn ternop(
        &mut self,
        op: TernOp,
        a: &Self::Value,
        b: &Self::Value,
        c: &Self::Value,
    ) -> Result<Self::Value, Self::Error>;
    /// A conversion.
    fn conv(&mut self, op: ConvOp, a: &Self::Value) -> Result<Self::Value, Self::Error>;
    /// A comparison (a `bool`).
    fn cmp(
        &mut self,
        op: CmpOp,
        a: &Self::Value,
        b: &Self::Value,
    ) -> Result<Self::Value, Self::Error>;
    /// ψ⁽ⁿ⁾(x), `n = order`.
    fn polygamma(&mut self, order: u32, x: &Self::Value) -> Result<Self::Value, Self::Error>;
    /// The value of a `bool` condition, where it is known now (run-time
    /// values): the evaluator then computes only the selected branch of a
    /// [`RuleExp::Select`], and a selected [`RuleExp::Zero`] partial is no
    /// dependence. `None` (the default; an IR builder): both branches are
    /// computed and [`RuleAlgebra::select`] chooses.
    fn decide(&self, _cond: &Self::Value) -> Option<bool> {
        None
    }
    /// `then` if `cond` else `otherwise` (only called where
    /// [`RuleAlgebra::decide`] gave `None`).
    fn select(
        &mut self,
        cond: &Self::Value,
        then: &Self::Value,
        otherwise: &Self::Value,
    ) -> Result<Self::Value, Self::Error>;
}

/// A rule's partial derivatives evaluated in some [`RuleAlgebra`].
#[derive(Clone, Debug, PartialEq)]
pub enum Derivative<T> {
    /// The result is a constant for AD.
    Constant,
    /// ∂result/∂operandₖ for each operand (`None`: no dependence; entries
    /// past the operation's arity are `None`).
    Partials([Option<T>; 3]),
    /// A conversion (see [`Partials::Conversion`]).
    Conversion {
        /// The conversion applied to a tangent.
        forward: ConvOp,
        /// The conversion applied to an adjoint.
        backward: ConvOp,
    },
}

/// Applies `op` to `operands` in the algebra (the primal).
pub fn apply<A: RuleAlgebra>(
    alg: &mut A,
    op: ScalarOp,
    operands: &[A::Value],
) -> Result<A::Value, A::Error> {
    match (op, operands) {
        (ScalarOp::Bin(o), [a, b]) => alg.binop(o, a, b),
        (ScalarOp::Un(o), [a]) => alg.unop(o, a),
        (ScalarOp::Tern(o), [a, b, c]) => alg.ternop(o, a, b, c),
        (ScalarOp::Conv(o), [a]) => alg.conv(o, a),
        (ScalarOp::Polygamma(n), [a]) => alg.polygamma(n, a),
        _ => Err(RuleError::Arity {
            op,
            found: operands.len(),
        }
        .into()),
    }
}

/// Evaluates the derivative of `op` at the primal `operands` (of type `t`,
/// the first operand's type) in `alg`. `result` is the primal result if the
/// caller has it; otherwise it is computed (once) where a rule uses it.
/// Allocates nothing: the rule is a static tree, shared values live on the
/// stack.
pub fn eval_partials<A: RuleAlgebra>(
    alg: &mut A,
    op: ScalarOp,
    t: PrimType,
    operands: &[A::Value],
    result: Option<&A::Value>,
) -> Result<Derivative<A::Value>, A::Error> {
    if operands.len() != op.arity() {
        return Err(RuleError::Arity {
            op,
            found: operands.len(),
        }
        .into());
    }
    let rule = match partials(op, t) {
        Partials::Constant => return Ok(Derivative::Constant),
        Partials::Conversion { forward, backward } => {
            return Ok(Derivative::Conversion { forward, backward })
        }
        Partials::Rule(rule) => rule,
    };
    if rule.shared.len() > MAX_SHARED {
        return Err(RuleError::Malformed(format!("{op:?} has too many shared values")).into());
    }
    let mut ev = Evaluator {
        alg,
        op,
        t,
        operands,
        result: result.cloned(),
        shared: Default::default(),
        rule,
    };
    let mut out: [Option<A::Value>; 3] = [None, None, None];
    for (slot, partial) in out.iter_mut().zip(rule.partials) {
        *slot = ev.partial(partial)?;
    }
    Ok(Derivative::Partials(out))
}

/// The state of one evaluation of a rule.
struct Evaluator<'a, A: RuleAlgebra> {
    alg: &'a mut A,
    op: ScalarOp,
    t: PrimType,
    operands: &'a [A::Value],
    result: Option<A::Value>,
    shared: [Option<A::Value>; MAX_SHARED],
    rule: &'static Rule,
}

impl<A: RuleAlgebra> Evaluator<'_, A> {
    /// A partial: `None` where it is (or selects) [`RuleExp::Zero`].
    fn partial(&mut self, e: &'static RuleExp) -> Result<Option<A::Value>, A::Error> {
        match e {
            E::Zero => Ok(None),
            E::Select(c, then, otherwise) => {
                let cond = self.value(c)?;
                match self.alg.decide(&cond) {
                    Some(true) => self.partial(then),
                    Some(false) => self.partial(otherwise),
                    None => {
                        let (x, y) = (self.value(then)?, self.value(otherwise)?);
                        self.alg.select(&cond, &x, &y).map(Some)
                    }
                }
            }
            _ => self.value(e).map(Some),
        }
    }

    /// The value of `e`.
    fn value(&mut self, e: &'static RuleExp) -> Result<A::Value, A::Error> {
        Ok(match e {
            E::Zero => self.alg.constant(PrimValue::zero(self.t))?,
            E::Operand(k) => match self.operands.get(*k as usize) {
                Some(x) => x.clone(),
                None => return Err(malformed(format!("operand {k} of {:?}", self.op))),
            },
            E::Result => match &self.result {
                Some(r) => r.clone(),
                None => {
                    let r = apply(self.alg, self.op, self.operands)?;
                    self.result = Some(r.clone());
                    r
                }
            },
            E::Const(x) => self.alg.constant(constant(self.t, *x))?,
            E::Shared(k) => {
                let k = *k as usize;
                if let Some(Some(v)) = self.shared.get(k) {
                    return Ok(v.clone());
                }
                let Some(e) = self.rule.shared.get(k) else {
                    return Err(malformed(format!("shared value {k} of {:?}", self.op)));
                };
                let v = self.value(e)?;
                self.shared[k] = Some(v.clone());
                v
            }
            E::Bin(o, a, b) => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                self.alg.binop(*o, &a, &b)?
            }
            E::Un(o, a) => {
                let a = self.value(a)?;
                self.alg.unop(*o, &a)?
            }
            E::Cmp(o, a, b) => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                self.alg.cmp(*o, &a, &b)?
            }
            E::Tern(o, a, b, c) => {
                let (a, b, c) = (self.value(a)?, self.value(b)?, self.value(c)?);
                self.alg.ternop(*o, &a, &b, &c)?
            }
            E::Conv(o, a) => {
                let a = self.value(a)?;
                self.alg.conv(*o, &a)?
            }
            E::Select(c, then, otherwise) => {
                let cond = self.value(c)?;
                match self.alg.decide(&cond) {
                    Some(true) => self.value(then)?,
                    Some(false) => self.value(otherwise)?,
                    None => {
                        let (x, y) = (self.value(then)?, self.value(otherwise)?);
                        self.alg.select(&cond, &x, &y)?
                    }
                }
            }
            E::Polygamma(k, x) => {
                let x = self.value(x)?;
                let order = self.op.polygamma_order().saturating_add(*k);
                self.alg.polygamma(order, &x)?
            }
        })
    }
}

fn malformed<E: From<RuleError>>(what: String) -> E {
    RuleError::Malformed(what).into()
}

/// The constant `x` of type `t`, as [`RuleExp::Const`] defines it (floats
/// rounded, integers truncated and wrapped, `bool`: `x != 0`).
pub fn constant(t: PrimType, x: f64) -> PrimValue {
    if t.is_float() {
        PrimValue::from_f64(t, x)
    } else {
        PrimValue::from_i64(t, x as i64)
    }
}

/// The rules evaluated on plain scalars with nabla-prim's semantics.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrimAlgebra;

impl RuleAlgebra for PrimAlgebra {
    type Value = PrimValue;
    type Error = RuleError;
    fn constant(&mut self, value: PrimValue) -> Result<PrimValue, RuleError> {
        Ok(value)
    }
    fn binop(&mut self, op: BinOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, RuleError> {
        Ok(nabla_prim::eval_binop(op, *a, *b)?)
    }
    fn unop(&mut self, op: UnOp, a: &PrimValue) -> Result<PrimValue, RuleError> {
        Ok(nabla_prim::eval_unop(op, *a)?)
    }
    fn ternop(
        &mut self,
        op: TernOp,
        a: &PrimValue,
        b: &PrimValue,
        c: &PrimValue,
    ) -> Result<PrimValue, RuleError> {
        Ok(nabla_prim::eval_ternop(op, *a, *b, *c)?)
    }
    fn conv(&mut self, op: ConvOp, a: &PrimValue) -> Result<PrimValue, RuleError> {
        Ok(nabla_prim::eval_conv(op, *a)?)
    }
    fn cmp(&mut self, op: CmpOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, RuleError> {
        Ok(PrimValue::Bool(nabla_prim::eval_cmpop(op, *a, *b)?))
    }
    fn polygamma(&mut self, order: u32, x: &PrimValue) -> Result<PrimValue, RuleError> {
        eval_polygamma(order, *x)
    }
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
    ) -> Result<PrimValue, RuleError> {
        Ok(if cond.is_true() { *then } else { *otherwise })
    }
}

/// ψ⁽ⁿ⁾(x) of a float scalar, computed in `f64` ([`polygamma`]) and rounded
/// to `x`'s type.
pub fn eval_polygamma(order: u32, x: PrimValue) -> Result<PrimValue, RuleError> {
    match x {
        PrimValue::F64(v) => Ok(PrimValue::F64(polygamma(order, v))),
        PrimValue::F32(v) => Ok(PrimValue::F32(polygamma(order, v as f64) as f32)),
        PrimValue::F16(v) => Ok(PrimValue::F16(nabla_prim::f16::from_f64(polygamma(
            order,
            v.to_f64(),
        )))),
        _ => Err(RuleError::Malformed(format!(
            "polygamma of a {}",
            x.prim_type()
        ))),
    }
}

/// The polygamma function ψ⁽ⁿ⁾(x) (digamma for n = 0), in double precision
/// (nabla-prim's [`nabla_prim::float_math::polygamma`]).
pub fn polygamma(n: u32, x: f64) -> f64 {
    nabla_prim::float_math::polygamma(n, x)
}
