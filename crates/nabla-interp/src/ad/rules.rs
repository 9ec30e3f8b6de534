//! Derivative rules of every scalar primitive (nabla-prim's `BinOp`, `UnOp`,
//! `TernOp`, `ConvOp`).
//!
//! As in seed 000 §3.3, the partial derivatives are computed with the same
//! AD-aware scalar operations as the program ([`AdState::prim`]) on the
//! operands' primals, so a derivative computed inside an outer `jvp`/`vjp`
//! is itself differentiated: derivatives of derivatives work at any depth.
//!
//! Where Futhark's compiler has a rule (`Futhark.AD.Derivatives`, functions
//! `pdBinOp`, `pdUnOp`, `pdBuiltin`) we follow it, except where that rule is
//! mathematically wrong or marked FIXME there; each rule's comment says which
//! value it takes at the edges. Results of non-differentiable operations
//! (comparisons, bitwise and logical operations, `isnan`, `isinf`, `clz`,
//! `ctz`, `popc`, `sgn`, rounding) are constants ([`Deriv::Const`]).

use super::value::V;
use super::AdState;
use nabla_prim::{BinOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};

/// The scalar arithmetic the rules are written in: AD-aware operations on
/// [`V`] ([`AdState`], for nested AD) or plain operations on [`PrimValue`]
/// ([`Plain`], the fast path of first-order AD). The rules are generic, so
/// both compute the same derivatives.
pub(crate) trait Alg {
    type T: Clone;
    /// Applies a scalar operation.
    fn op(&mut self, op: AdOp, args: &[Self::T]) -> Result<Self::T, String>;
    /// A constant of type `t`.
    fn konst(t: PrimType, x: f64) -> Self::T;
    /// The plain scalar under a value (to choose a rule's branch).
    fn sp(x: &Self::T) -> PrimValue;
}

impl Alg for AdState {
    type T = V;
    fn op(&mut self, op: AdOp, args: &[V]) -> Result<V, String> {
        self.prim(op, args)
    }
    fn konst(t: PrimType, x: f64) -> V {
        V::prim(konst(t, x))
    }
    fn sp(x: &V) -> PrimValue {
        x.strip_prim().unwrap_or(PrimValue::Bool(false))
    }
}

/// Plain scalar arithmetic (see [`Alg`]).
pub(crate) struct Plain;

impl Alg for Plain {
    type T = PrimValue;
    #[inline]
    fn op(&mut self, op: AdOp, args: &[PrimValue]) -> Result<PrimValue, String> {
        apply_plain(op, args)
    }
    fn konst(t: PrimType, x: f64) -> PrimValue {
        konst(t, x)
    }
    fn sp(x: &PrimValue) -> PrimValue {
        *x
    }
}

/// A scalar operation that AD records. `Polygamma(n)` is ψ⁽ⁿ⁾ (digamma for
/// `n = 0`), needed for the derivatives of `lgamma` and `gamma` and not a
/// user-visible operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum AdOp {
    Bin(BinOp),
    Un(UnOp),
    Tern(TernOp),
    Conv(ConvOp),
    Polygamma(u32),
}

/// How an operation's output depends on its operands.
pub(crate) enum Deriv<T> {
    /// The result is a constant (non-differentiable, or zero derivative).
    Const,
    /// ∂out/∂operand_i for each operand (`None`: zero).
    Partials([Option<T>; 3]),
    /// A conversion: the tangent is converted with `fwd`, the adjoint with
    /// `back` (seed 000 §3.4: conversions are applied to tangents and, in
    /// reverse, to adjoints).
    Conv { fwd: ConvOp, back: ConvOp },
}

/// Applies a scalar `op` to plain operands.
#[inline]
pub(crate) fn apply_plain(op: AdOp, a: &[PrimValue]) -> Result<PrimValue, String> {
    use crate::scalar;
    match (op, a) {
        (AdOp::Bin(o), [x, y]) => scalar::binop(o, *x, *y),
        (AdOp::Un(o), [x]) => scalar::unop(o, *x),
        (AdOp::Tern(o), [x, y, z]) => scalar::ternop(o, *x, *y, *z),
        (AdOp::Conv(o), [x]) => scalar::conv(o, *x),
        (AdOp::Polygamma(n), [x]) => match x {
            PrimValue::F64(v) => Ok(PrimValue::F64(polygamma(n, *v))),
            PrimValue::F32(v) => Ok(PrimValue::F32(polygamma(n, *v as f64) as f32)),
            PrimValue::F16(v) => Ok(PrimValue::F16(nabla_prim::f16::from_f64(polygamma(
                n,
                v.to_f64(),
            )))),
            _ => Err("internal error: polygamma of a non-float".into()),
        },
        _ => Err(format!(
            "internal error: {op:?} applied to {} operands",
            a.len()
        )),
    }
}

/// Whether `op`'s result is a constant whatever its operands (so AD need
/// not track it). `t` is the type of the first operand.
#[inline]
pub(crate) fn is_constant(op: AdOp, t: PrimType) -> bool {
    match op {
        AdOp::Bin(b) => {
            t == PrimType::Bool
                || matches!(
                    b,
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::LogAnd | BinOp::LogOr
                )
        }
        AdOp::Un(u) => {
            t == PrimType::Bool
                || matches!(
                    u,
                    UnOp::Sgn
                        | UnOp::Floor
                        | UnOp::Ceil
                        | UnOp::Round
                        | UnOp::Trunc
                        | UnOp::IsNan
                        | UnOp::IsInf
                        | UnOp::Clz
                        | UnOp::Ctz
                        | UnOp::Popc
                )
        }
        AdOp::Tern(_) | AdOp::Polygamma(_) => false,
        AdOp::Conv(ConvOp::Convert(a, b) | ConvOp::BitCast(a, b)) => {
            a == PrimType::Bool || b == PrimType::Bool
        }
    }
}

/// A constant of type `t` (floats from `x`, integers from `x` truncated).
pub(crate) fn konst(t: PrimType, x: f64) -> PrimValue {
    if t.is_float() {
        PrimValue::from_f64(t, x)
    } else {
        PrimValue::from_i64(t, x as i64)
    }
}

/// Shorthands for writing rules.
struct R<'a, A: Alg> {
    st: &'a mut A,
    t: PrimType,
}

impl<A: Alg> R<'_, A> {
    fn k(&self, x: f64) -> A::T {
        A::konst(self.t, x)
    }
    fn b(&mut self, op: BinOp, a: &A::T, b: &A::T) -> Result<A::T, String> {
        self.st.op(AdOp::Bin(op), &[a.clone(), b.clone()])
    }
    fn u(&mut self, op: UnOp, a: &A::T) -> Result<A::T, String> {
        self.st.op(AdOp::Un(op), std::slice::from_ref(a))
    }
    fn add(&mut self, a: &A::T, b: &A::T) -> Result<A::T, String> {
        self.b(BinOp::Add, a, b)
    }
    fn sub(&mut self, a: &A::T, b: &A::T) -> Result<A::T, String> {
        self.b(BinOp::Sub, a, b)
    }
    fn mul(&mut self, a: &A::T, b: &A::T) -> Result<A::T, String> {
        self.b(BinOp::Mul, a, b)
    }
    fn div(&mut self, a: &A::T, b: &A::T) -> Result<A::T, String> {
        self.b(BinOp::Div, a, b)
    }
    fn neg(&mut self, a: &A::T) -> Result<A::T, String> {
        self.u(UnOp::Neg, a)
    }
    fn sq(&mut self, a: &A::T) -> Result<A::T, String> {
        self.mul(a, a)
    }
    /// `1 / a`
    fn recip(&mut self, a: &A::T) -> Result<A::T, String> {
        let one = self.k(1.0);
        self.div(&one, a)
    }
}

/// The derivative of `op` at the (primal) operands `x`.
pub(crate) fn deriv<A: Alg>(st: &mut A, op: AdOp, x: &[A::T]) -> Result<Deriv<A::T>, String> {
    let sp = |v: &A::T| A::sp(v);
    let t = x.first().map_or(PrimType::F64, |v| sp(v).prim_type());
    if is_constant(op, t) {
        return Ok(Deriv::Const);
    }
    let mut r = R { st, t };
    let p1 = |a: A::T| Ok(Deriv::Partials([Some(a), None, None]));
    let p2 = |a: Option<A::T>, b: Option<A::T>| Ok(Deriv::Partials([a, b, None]));
    let float = t.is_float();
    match op {
        AdOp::Conv(c) => {
            let back = match c {
                ConvOp::Convert(a, b) => ConvOp::Convert(b, a),
                ConvOp::BitCast(a, b) => ConvOp::BitCast(b, a),
            };
            Ok(Deriv::Conv { fwd: c, back })
        }
        AdOp::Polygamma(n) => p1(r.st.op(AdOp::Polygamma(n + 1), &[x[0].clone()])?),
        AdOp::Tern(o) => {
            let (a, b, c) = (&x[0], &x[1], &x[2]);
            match o {
                // fma a b c = a*b + c: (b, a, 1), as Futhark's pdBuiltin "fma".
                TernOp::Fma | TernOp::Mad => Ok(Deriv::Partials([
                    Some(b.clone()),
                    Some(a.clone()),
                    Some(r.k(1.0)),
                ])),
                // lerp v0 v1 t = v0 + (v1 - v0)*t: (1 - t, t, v1 - v0). Futhark's
                // pdBuiltin clamps t to [0,1] here, but its (and our) lerp does
                // not clamp, so we differentiate the formula as evaluated.
                TernOp::Lerp => {
                    let one = r.k(1.0);
                    let d0 = r.sub(&one, c)?;
                    let d2 = r.sub(b, a)?;
                    Ok(Deriv::Partials([Some(d0), Some(c.clone()), Some(d2)]))
                }
            }
        }
        AdOp::Bin(o) => {
            let (a, b) = (&x[0], &x[1]);
            match o {
                BinOp::Add => p2(Some(r.k(1.0)), Some(r.k(1.0))),
                BinOp::Sub => p2(Some(r.k(1.0)), Some(r.k(-1.0))),
                BinOp::Mul => p2(Some(b.clone()), Some(a.clone())),
                // Floats: (1/b, -a/b²). Integers (sdiv, udiv, quot): Futhark's
                // (1 quot b, -(a quot b²)), with 0 where b² wraps to 0.
                BinOp::Div | BinOp::IntDiv | BinOp::Quot => {
                    if float {
                        let d0 = r.recip(b)?;
                        let b2 = r.sq(b)?;
                        let q = r.div(a, &b2)?;
                        p2(Some(d0), Some(r.neg(&q)?))
                    } else {
                        let b2 = r.sq(b)?;
                        if sp(&b2).as_i64() == 0 {
                            return p2(None, None);
                        }
                        let one = r.k(1.0);
                        let d0 = r.b(BinOp::Quot, &one, b)?;
                        let q = r.b(BinOp::Quot, a, &b2)?;
                        p2(Some(d0), Some(r.neg(&q)?))
                    }
                }
                // Floats (fmod, truncated): (1, -trunc(a/b)) — Futhark's rule
                // (1, 0) is marked FIXME and disagrees with finite differences.
                // Integers: Futhark's (1, 0).
                BinOp::Mod | BinOp::IntMod | BinOp::Rem => {
                    if float {
                        let q = r.div(a, b)?;
                        let q = r.u(UnOp::Trunc, &q)?;
                        p2(Some(r.k(1.0)), Some(r.neg(&q)?))
                    } else {
                        p2(Some(r.k(1.0)), None)
                    }
                }
                // Floats: (b·a^(b-1), a^b·ln a) as Futhark's FPow rule, except at
                // the edges where that formula gives 0·∞ = NaN: ∂/∂a = 0 when
                // b = 0 (a^0 is constant 1), and ∂/∂b = 0 when a = 0 (the
                // one-sided limit of a^b·ln a for b > 0). Integers: Futhark's
                // (a^(b-1)·b, 0).
                BinOp::Pow => {
                    let one = r.k(1.0);
                    let bm1 = r.sub(b, &one)?;
                    let zero_b = sp(b).as_f64() == 0.0;
                    let d0 = if zero_b {
                        None
                    } else {
                        let pw = r.b(BinOp::Pow, a, &bm1)?;
                        Some(r.mul(b, &pw)?)
                    };
                    if !float {
                        return p2(d0, None);
                    }
                    let d1 = if sp(a).as_f64() == 0.0 {
                        None
                    } else {
                        let pw = r.b(BinOp::Pow, a, b)?;
                        let l = r.u(UnOp::Log, a)?;
                        Some(r.mul(&pw, &l)?)
                    };
                    p2(d0, d1)
                }
                // Shifts as multiplication/division by 2^b (Futhark's pdBinOp
                // Shl/AShr/LShr): ∂/∂a = 1 << b resp. 1 >> b; ∂/∂b = 0.
                BinOp::Shl | BinOp::Shr | BinOp::LShr => {
                    let one = r.k(1.0);
                    let d = r.b(o, &one, b)?;
                    p2(Some(d), None)
                }
                // min: (a <= b, a > b); max: (a >= b, a < b) — ties go to the
                // first operand, as Futhark's FMin/FMax/SMin/… rules. When one
                // operand is NaN (fmin/fmax return the other one) the derivative
                // is that of the returned operand.
                BinOp::Min | BinOp::Max => {
                    let (pa, pb) = (sp(a), sp(b));
                    let (na, nb) = (pa.as_f64().is_nan(), pb.as_f64().is_nan());
                    let ord = nabla_prim::eval_cmpop(
                        if o == BinOp::Min {
                            nabla_prim::CmpOp::Le
                        } else {
                            nabla_prim::CmpOp::Ge
                        },
                        pa,
                        pb,
                    )
                    .unwrap_or(true);
                    let first = if na || nb { nb } else { ord };
                    if first {
                        p2(Some(r.k(1.0)), None)
                    } else {
                        p2(None, Some(r.k(1.0)))
                    }
                }
                // atan2 a b (= atan(a/b) in the right half plane):
                // (b/(a²+b²), -a/(a²+b²)); NaN at the origin.
                BinOp::Atan2 => {
                    let a2 = r.sq(a)?;
                    let b2 = r.sq(b)?;
                    let d = r.add(&a2, &b2)?;
                    let d0 = r.div(b, &d)?;
                    let q = r.div(a, &d)?;
                    p2(Some(d0), Some(r.neg(&q)?))
                }
                // hypot a b: (a/h, b/h) with h = hypot a b; 0 at the origin (a
                // subgradient), where the formula gives 0/0.
                BinOp::Hypot => {
                    let h = r.b(BinOp::Hypot, a, b)?;
                    if sp(&h).as_f64() == 0.0 {
                        return p2(None, None);
                    }
                    let d0 = r.div(a, &h)?;
                    let d1 = r.div(b, &h)?;
                    p2(Some(d0), Some(d1))
                }
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::LogAnd | BinOp::LogOr => {
                    Ok(Deriv::Const)
                }
            }
        }
        AdOp::Un(o) => {
            let a = &x[0];
            let ln2 = std::f64::consts::LN_2;
            let ln10 = std::f64::consts::LN_10;
            let d = match o {
                UnOp::Neg => r.k(-1.0),
                // Bitwise complement ~a = -a - 1 on integers: -1 (Futhark's
                // pdUnOp gives `complement a`, which is not the derivative).
                UnOp::Not => r.k(-1.0),
                // abs: sgn a, so 0 at a = 0 (Futhark's pdUnOp Abs/FAbs).
                UnOp::Abs => r.u(UnOp::Sgn, a)?,
                // sqrt: 1/(2·sqrt a), +inf at 0 (Futhark's pdBuiltin "sqrt").
                UnOp::Sqrt => {
                    let s = r.u(UnOp::Sqrt, a)?;
                    let two = r.k(2.0);
                    let d = r.mul(&two, &s)?;
                    r.recip(&d)?
                }
                // cbrt: 1/(3·cbrt(a)²), +inf at 0 (Futhark's pdBuiltin "cbrt").
                UnOp::Cbrt => {
                    let s = r.u(UnOp::Cbrt, a)?;
                    let s2 = r.sq(&s)?;
                    let three = r.k(3.0);
                    let d = r.mul(&three, &s2)?;
                    r.recip(&d)?
                }
                UnOp::Exp | UnOp::Expm1 => r.u(UnOp::Exp, a)?,
                UnOp::Exp2 => {
                    let e = r.u(UnOp::Exp2, a)?;
                    let c = r.k(ln2);
                    r.mul(&e, &c)?
                }
                UnOp::Log => r.recip(a)?,
                UnOp::Log2 | UnOp::Log10 => {
                    let c = r.k(if o == UnOp::Log2 { ln2 } else { ln10 });
                    let d = r.mul(a, &c)?;
                    r.recip(&d)?
                }
                UnOp::Log1p => {
                    let one = r.k(1.0);
                    let d = r.add(&one, a)?;
                    r.recip(&d)?
                }
                UnOp::Sin => r.u(UnOp::Cos, a)?,
                UnOp::Cos => {
                    let s = r.u(UnOp::Sin, a)?;
                    r.neg(&s)?
                }
                UnOp::Tan => {
                    let c = r.u(UnOp::Cos, a)?;
                    let c2 = r.sq(&c)?;
                    r.recip(&c2)?
                }
                UnOp::Asin | UnOp::Acos => {
                    let one = r.k(1.0);
                    let a2 = r.sq(a)?;
                    let d = r.sub(&one, &a2)?;
                    let s = r.u(UnOp::Sqrt, &d)?;
                    let q = r.recip(&s)?;
                    if o == UnOp::Asin {
                        q
                    } else {
                        r.neg(&q)?
                    }
                }
                UnOp::Atan => {
                    let one = r.k(1.0);
                    let a2 = r.sq(a)?;
                    let d = r.add(&one, &a2)?;
                    r.recip(&d)?
                }
                UnOp::Sinh => r.u(UnOp::Cosh, a)?,
                UnOp::Cosh => r.u(UnOp::Sinh, a)?,
                UnOp::Tanh => {
                    let th = r.u(UnOp::Tanh, a)?;
                    let t2 = r.sq(&th)?;
                    let one = r.k(1.0);
                    r.sub(&one, &t2)?
                }
                UnOp::Asinh | UnOp::Acosh => {
                    let one = r.k(1.0);
                    let a2 = r.sq(a)?;
                    let d = if o == UnOp::Asinh {
                        r.add(&a2, &one)?
                    } else {
                        r.sub(&a2, &one)?
                    };
                    let s = r.u(UnOp::Sqrt, &d)?;
                    r.recip(&s)?
                }
                // atanh: 1/(1 - a²) (Futhark's pdBuiltin "atanh" gives cosh²,
                // which is wrong).
                UnOp::Atanh => {
                    let one = r.k(1.0);
                    let a2 = r.sq(a)?;
                    let d = r.sub(&one, &a2)?;
                    r.recip(&d)?
                }
                // lgamma: digamma; gamma: gamma·digamma (no Futhark rule).
                UnOp::Lgamma => r.st.op(AdOp::Polygamma(0), std::slice::from_ref(a))?,
                UnOp::Gamma => {
                    let g = r.u(UnOp::Gamma, a)?;
                    let psi = r.st.op(AdOp::Polygamma(0), std::slice::from_ref(a))?;
                    r.mul(&g, &psi)?
                }
                // erf: 2/√π·e^(-a²); erfc: its negation (Futhark's pdBuiltin).
                UnOp::Erf | UnOp::Erfc => {
                    let a2 = r.sq(a)?;
                    let na2 = r.neg(&a2)?;
                    let e = r.u(UnOp::Exp, &na2)?;
                    let c = r
                        .k(if o == UnOp::Erf { 1.0 } else { -1.0 }
                            * std::f64::consts::FRAC_2_SQRT_PI);
                    r.mul(&c, &e)?
                }
                UnOp::Sgn
                | UnOp::Floor
                | UnOp::Ceil
                | UnOp::Round
                | UnOp::Trunc
                | UnOp::IsNan
                | UnOp::IsInf
                | UnOp::Clz
                | UnOp::Ctz
                | UnOp::Popc => return Ok(Deriv::Const),
            };
            p1(d)
        }
    }
}

/// The polygamma function ψ⁽ⁿ⁾(x) (digamma for n = 0), in double precision:
/// the recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) − (−1)ⁿ n!/x⁽ⁿ⁺¹⁾ shifts x above 12, then
/// the asymptotic expansion with Bernoulli numbers; digamma at negative x
/// uses the reflection ψ(x) = ψ(1−x) − π·cot(πx). Poles give NaN or ±inf.
pub(crate) fn polygamma(n: u32, x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if n == 0 && x < 0.0 {
        let pi = std::f64::consts::PI;
        return polygamma(0, 1.0 - x) - pi / (pi * x).tan();
    }
    if x == f64::INFINITY {
        return if n == 0 { f64::INFINITY } else { 0.0 };
    }
    if x < -1e6 {
        return f64::NAN;
    }
    let nf = n as f64;
    let fact = |k: u32| (1..=k).fold(1.0f64, |a, i| a * i as f64);
    let sign = if n.is_multiple_of(2) { -1.0 } else { 1.0 }; // (-1)^(n+1)
    let mut acc = 0.0;
    let mut x = x;
    while x < 12.0 {
        // ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) + (-1)^(n+1) n! / x^(n+1)
        acc += sign * fact(n) / x.powf(nf + 1.0);
        x += 1.0;
    }
    // Bernoulli numbers B_2k, k = 1..8.
    const B: [f64; 8] = [
        1.0 / 6.0,
        -1.0 / 30.0,
        1.0 / 42.0,
        -1.0 / 30.0,
        5.0 / 66.0,
        -691.0 / 2730.0,
        7.0 / 6.0,
        -3617.0 / 510.0,
    ];
    let asym = if n == 0 {
        let mut s = x.ln() - 0.5 / x;
        for (k, b) in B.iter().enumerate() {
            let k2 = 2.0 * (k as f64 + 1.0);
            s -= b / (k2 * x.powf(k2));
        }
        s
    } else {
        // (-1)^(n+1) [ (n-1)!/x^n + n!/(2x^(n+1)) + Σ B_2k (2k+n-1)!/((2k)! x^(2k+n)) ]
        let mut s = fact(n - 1) / x.powf(nf) + fact(n) / (2.0 * x.powf(nf + 1.0));
        for (k, b) in B.iter().enumerate() {
            let k2 = 2 * (k as u32 + 1);
            s += b * fact(k2 + n - 1) / (fact(k2) * x.powf(k2 as f64 + nf));
        }
        sign * s
    };
    asym + acc
}
