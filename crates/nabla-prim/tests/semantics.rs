//! Futhark scalar semantics, through the public API.

use nabla_prim::*;
use PrimType as T;
use PrimValue as V;

fn bin(op: BinOp, a: PrimValue, b: PrimValue) -> PrimValue {
    eval_binop(op, a, b).unwrap_or_else(|e| panic!("{op:?} {a:?} {b:?}: {e}"))
}

fn un(op: UnOp, a: PrimValue) -> PrimValue {
    eval_unop(op, a).unwrap_or_else(|e| panic!("{op:?} {a:?}: {e}"))
}

fn f64_of(v: PrimValue) -> f64 {
    match v {
        V::F64(x) => x,
        other => panic!("expected f64, got {other:?}"),
    }
}

#[test]
fn integer_arithmetic_wraps() {
    assert_eq!(bin(BinOp::Add, V::I8(127), V::I8(1)), V::I8(-128));
    assert_eq!(bin(BinOp::Sub, V::U8(0), V::U8(1)), V::U8(255));
    assert_eq!(bin(BinOp::Mul, V::I32(65536), V::I32(65536)), V::I32(0));
    assert_eq!(
        bin(BinOp::Mul, V::U64(u64::MAX), V::U64(u64::MAX)),
        V::U64(1)
    );
    assert_eq!(un(UnOp::Neg, V::I8(-128)), V::I8(-128));
    assert_eq!(un(UnOp::Neg, V::U8(1)), V::U8(255));
    assert_eq!(un(UnOp::Abs, V::I8(-128)), V::I8(-128));
    assert_eq!(un(UnOp::Abs, V::I32(-5)), V::I32(5));
    assert_eq!(un(UnOp::Abs, V::U16(65535)), V::U16(65535));
}

#[test]
fn signed_division_rounding() {
    // `/` rounds towards negative infinity, `%` has the sign of the divisor.
    let cases = [
        (7, 2, 3, 1),
        (-7, 2, -4, 1),
        (7, -2, -4, -1),
        (-7, -2, 3, -1),
        (6, -3, -2, 0),
        (-6, 3, -2, 0),
    ];
    for (x, y, q, r) in cases {
        assert_eq!(
            bin(BinOp::Div, V::I32(x), V::I32(y)),
            V::I32(q),
            "{x} / {y}"
        );
        assert_eq!(
            bin(BinOp::Mod, V::I32(x), V::I32(y)),
            V::I32(r),
            "{x} % {y}"
        );
        assert_eq!(
            bin(BinOp::Div, V::I64(x as i64), V::I64(y as i64)),
            V::I64(q as i64)
        );
        assert_eq!(
            bin(BinOp::Mod, V::I8(x as i8), V::I8(y as i8)),
            V::I8(r as i8)
        );
    }
    // `//`, `%%`, quot and rem truncate (sign of the dividend).
    let cases = [
        (7, 2, 3, 1),
        (-7, 2, -3, -1),
        (7, -2, -3, 1),
        (-7, -2, 3, -1),
    ];
    for (x, y, q, r) in cases {
        for (d, m) in [(BinOp::IntDiv, BinOp::IntMod), (BinOp::Quot, BinOp::Rem)] {
            assert_eq!(bin(d, V::I16(x), V::I16(y)), V::I16(q), "{x} {d:?} {y}");
            assert_eq!(bin(m, V::I16(x), V::I16(y)), V::I16(r), "{x} {m:?} {y}");
        }
    }
    // The one overflowing case wraps.
    assert_eq!(bin(BinOp::Div, V::I8(-128), V::I8(-1)), V::I8(-128));
    assert_eq!(bin(BinOp::Mod, V::I8(-128), V::I8(-1)), V::I8(0));
    assert_eq!(
        bin(BinOp::Quot, V::I64(i64::MIN), V::I64(-1)),
        V::I64(i64::MIN)
    );
    assert_eq!(bin(BinOp::Rem, V::I64(i64::MIN), V::I64(-1)), V::I64(0));
}

#[test]
fn unsigned_division() {
    assert_eq!(bin(BinOp::Div, V::U8(250), V::U8(7)), V::U8(35));
    assert_eq!(bin(BinOp::Mod, V::U8(250), V::U8(7)), V::U8(5));
    assert_eq!(
        bin(BinOp::IntDiv, V::U32(u32::MAX), V::U32(2)),
        V::U32(u32::MAX / 2)
    );
    assert_eq!(bin(BinOp::IntMod, V::U32(u32::MAX), V::U32(2)), V::U32(1));
}

#[test]
fn division_by_zero_is_an_error() {
    for op in [
        BinOp::Div,
        BinOp::Mod,
        BinOp::IntDiv,
        BinOp::IntMod,
        BinOp::Quot,
        BinOp::Rem,
    ] {
        assert_eq!(
            eval_binop(op, V::I32(1), V::I32(0)),
            Err(PrimError::DivisionByZero)
        );
        assert_eq!(
            eval_binop(op, V::U8(1), V::U8(0)),
            Err(PrimError::DivisionByZero)
        );
        assert_eq!(
            eval_binop(op, V::I64(i64::MIN), V::I64(0)),
            Err(PrimError::DivisionByZero)
        );
    }
    // Floats follow IEEE.
    assert_eq!(
        f64_of(bin(BinOp::Div, V::F64(1.0), V::F64(0.0))),
        f64::INFINITY
    );
    assert_eq!(
        f64_of(bin(BinOp::Div, V::F64(-1.0), V::F64(0.0))),
        f64::NEG_INFINITY
    );
    assert!(f64_of(bin(BinOp::Div, V::F64(0.0), V::F64(0.0))).is_nan());
    assert!(f64_of(bin(BinOp::Mod, V::F64(1.0), V::F64(0.0))).is_nan());
}

#[test]
fn integer_power() {
    assert_eq!(bin(BinOp::Pow, V::I32(3), V::I32(4)), V::I32(81));
    assert_eq!(bin(BinOp::Pow, V::I32(2), V::I32(31)), V::I32(i32::MIN));
    assert_eq!(bin(BinOp::Pow, V::I32(2), V::I32(32)), V::I32(0));
    assert_eq!(bin(BinOp::Pow, V::U8(3), V::U8(5)), V::U8(243));
    assert_eq!(
        bin(BinOp::Pow, V::U8(3), V::U8(6)),
        V::U8((729u32 % 256) as u8)
    );
    assert_eq!(bin(BinOp::Pow, V::I64(0), V::I64(0)), V::I64(1));
    assert_eq!(bin(BinOp::Pow, V::I64(-3), V::I64(3)), V::I64(-27));
    // Negative exponents: the exponent's bits as unsigned (Futhark's C loop).
    assert_eq!(bin(BinOp::Pow, V::I32(2), V::I32(-1)), V::I32(0));
    assert_eq!(bin(BinOp::Pow, V::I32(1), V::I32(-5)), V::I32(1));
    assert_eq!(bin(BinOp::Pow, V::I32(-1), V::I32(-1)), V::I32(-1));
    assert_eq!(bin(BinOp::Pow, V::I8(-1), V::I8(-2)), V::I8(1));
    // 3^(2^64-1) mod 2^64 is the inverse of 3 modulo 2^64 (3 has order 2^62).
    assert_eq!(
        bin(BinOp::Pow, V::I64(3), V::I64(-1)),
        V::I64(0xAAAA_AAAA_AAAA_AAABu64 as i64)
    );
}

#[test]
fn shifts() {
    assert_eq!(bin(BinOp::Shl, V::I32(1), V::I32(31)), V::I32(i32::MIN));
    assert_eq!(bin(BinOp::Shl, V::I32(1), V::I32(32)), V::I32(0));
    assert_eq!(bin(BinOp::Shl, V::I32(1), V::I32(-1)), V::I32(0));
    assert_eq!(bin(BinOp::Shl, V::U8(0xff), V::U8(4)), V::U8(0xf0));
    assert_eq!(bin(BinOp::Shr, V::I8(-16), V::I8(2)), V::I8(-4));
    assert_eq!(bin(BinOp::Shr, V::I8(-16), V::I8(8)), V::I8(-1));
    assert_eq!(bin(BinOp::Shr, V::I8(16), V::I8(100)), V::I8(0));
    assert_eq!(bin(BinOp::Shr, V::U8(0x80), V::U8(7)), V::U8(1));
    assert_eq!(bin(BinOp::Shr, V::U8(0x80), V::U8(8)), V::U8(0));
    assert_eq!(bin(BinOp::LShr, V::I8(-1), V::I8(4)), V::I8(0x0f));
    assert_eq!(bin(BinOp::LShr, V::I64(-1), V::I64(63)), V::I64(1));
    assert_eq!(bin(BinOp::LShr, V::I64(-1), V::I64(64)), V::I64(0));
    assert_eq!(bin(BinOp::LShr, V::U16(0x8000), V::U16(15)), V::U16(1));
}

#[test]
fn bitwise_and_minmax() {
    assert_eq!(
        bin(BinOp::BitAnd, V::I32(0b1100), V::I32(0b1010)),
        V::I32(0b1000)
    );
    assert_eq!(
        bin(BinOp::BitOr, V::U8(0b1100), V::U8(0b1010)),
        V::U8(0b1110)
    );
    assert_eq!(bin(BinOp::BitXor, V::I16(-1), V::I16(5)), V::I16(-6));
    assert_eq!(un(UnOp::Not, V::I32(0)), V::I32(-1));
    assert_eq!(un(UnOp::Not, V::U8(0x0f)), V::U8(0xf0));
    assert_eq!(bin(BinOp::Min, V::I32(-3), V::I32(2)), V::I32(-3));
    assert_eq!(
        bin(BinOp::Max, V::U32(u32::MAX), V::U32(2)),
        V::U32(u32::MAX)
    );
    assert_eq!(bin(BinOp::Min, V::U8(200), V::U8(100)), V::U8(100));
}

#[test]
fn float_min_max_ignore_nan() {
    let nan = V::F64(f64::NAN);
    assert_eq!(bin(BinOp::Min, nan, V::F64(1.0)), V::F64(1.0));
    assert_eq!(bin(BinOp::Max, V::F64(1.0), nan), V::F64(1.0));
    assert!(f64_of(bin(BinOp::Max, nan, nan)).is_nan());
    assert_eq!(bin(BinOp::Min, V::F32(2.0), V::F32(-3.0)), V::F32(-3.0));
    assert_eq!(
        bin(BinOp::Max, V::F16(f16::from_f32(2.0)), V::F16(f16::NAN)),
        V::F16(f16::from_f32(2.0))
    );
}

#[test]
fn float_binops() {
    // `%` on floats is C's fmod: sign of the dividend.
    assert_eq!(bin(BinOp::Mod, V::F64(5.5), V::F64(2.0)), V::F64(1.5));
    assert_eq!(bin(BinOp::Mod, V::F64(-5.5), V::F64(2.0)), V::F64(-1.5));
    assert_eq!(bin(BinOp::Mod, V::F64(5.5), V::F64(-2.0)), V::F64(1.5));
    assert_eq!(
        bin(BinOp::Pow, V::F64(2.0), V::F64(0.5)),
        V::F64(2f64.sqrt())
    );
    assert_eq!(bin(BinOp::Pow, V::F32(2.0), V::F32(-2.0)), V::F32(0.25));
    assert_eq!(
        bin(BinOp::Atan2, V::F64(1.0), V::F64(0.0)),
        V::F64(std::f64::consts::FRAC_PI_2)
    );
    assert_eq!(
        bin(BinOp::Atan2, V::F64(0.0), V::F64(-1.0)),
        V::F64(std::f64::consts::PI)
    );
    assert_eq!(bin(BinOp::Hypot, V::F64(3.0), V::F64(4.0)), V::F64(5.0));
    assert_eq!(
        bin(BinOp::Hypot, V::F64(1e300), V::F64(1e300)),
        V::F64(1e300 * 2f64.sqrt())
    );
    // f16 arithmetic rounds to f16.
    let third = bin(BinOp::Div, V::F16(f16::ONE), V::F16(f16::from_f32(3.0)));
    assert_eq!(third, V::F16(f16::from_f64(1.0 / 3.0)));
    assert_eq!(
        bin(BinOp::Add, V::F16(f16::MAX), V::F16(f16::MAX)),
        V::F16(f16::INFINITY)
    );
}

#[test]
fn bool_ops() {
    assert_eq!(
        bin(BinOp::LogAnd, V::Bool(true), V::Bool(false)),
        V::Bool(false)
    );
    assert_eq!(
        bin(BinOp::LogOr, V::Bool(true), V::Bool(false)),
        V::Bool(true)
    );
    assert_eq!(un(UnOp::Not, V::Bool(true)), V::Bool(false));
    assert!(eval_binop(BinOp::Add, V::Bool(true), V::Bool(true)).is_err());
    assert!(eval_binop(BinOp::LogAnd, V::I32(1), V::I32(1)).is_err());
}

#[test]
fn type_errors_do_not_panic() {
    let bad = [
        eval_binop(BinOp::Add, V::I32(1), V::I64(1)),
        eval_binop(BinOp::Add, V::F32(1.0), V::F64(1.0)),
        eval_binop(BinOp::Shl, V::F64(1.0), V::F64(1.0)),
        eval_binop(BinOp::IntDiv, V::F64(1.0), V::F64(1.0)),
        eval_binop(BinOp::Atan2, V::I32(1), V::I32(1)),
        eval_unop(UnOp::Sqrt, V::I32(4)),
        eval_unop(UnOp::Not, V::F64(1.0)),
        eval_unop(UnOp::Popc, V::F32(1.0)),
        eval_unop(UnOp::IsNan, V::I32(1)),
        eval_unop(UnOp::Abs, V::Bool(true)),
        eval_ternop(TernOp::Fma, V::I32(1), V::I32(1), V::I32(1)),
        eval_ternop(TernOp::Fma, V::F64(1.0), V::F32(1.0), V::F64(1.0)),
    ];
    for r in bad {
        assert!(matches!(r, Err(PrimError::TypeMismatch(_))), "{r:?}");
    }
    assert!(matches!(
        eval_cmpop(CmpOp::Eq, V::I32(1), V::U32(1)),
        Err(PrimError::TypeMismatch(_))
    ));
    let msg = eval_binop(BinOp::Add, V::I32(1), V::I64(1))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("i32") && msg.contains("i64"), "{msg}");
}

#[test]
fn comparisons() {
    use CmpOp::*;
    assert!(eval_cmpop(Lt, V::I8(-1), V::I8(0)).unwrap());
    // Unsigned compares as unsigned.
    assert!(eval_cmpop(Gt, V::U8(255), V::U8(0)).unwrap());
    assert!(eval_cmpop(Ge, V::U64(u64::MAX), V::U64(1)).unwrap());
    assert!(eval_cmpop(Lt, V::Bool(false), V::Bool(true)).unwrap());
    assert!(!eval_cmpop(Lt, V::Bool(true), V::Bool(true)).unwrap());
    assert!(eval_cmpop(Le, V::Bool(true), V::Bool(true)).unwrap());
    assert!(eval_cmpop(Gt, V::Bool(true), V::Bool(false)).unwrap());
    let nan = V::F64(f64::NAN);
    for op in [Eq, Lt, Le, Gt, Ge] {
        assert!(!eval_cmpop(op, nan, nan).unwrap(), "{op:?}");
        assert!(!eval_cmpop(op, nan, V::F64(1.0)).unwrap(), "{op:?}");
    }
    assert!(eval_cmpop(Neq, nan, nan).unwrap());
    assert!(eval_cmpop(Eq, V::F64(0.0), V::F64(-0.0)).unwrap());
    assert!(eval_cmpop(Lt, V::F16(f16::from_f32(1.0)), V::F16(f16::from_f32(1.5))).unwrap());
    assert!(!eval_cmpop(Neq, V::F32(2.0), V::F32(2.0)).unwrap());
}

#[test]
fn rounding() {
    let r = |x: f64| f64_of(un(UnOp::Round, V::F64(x)));
    assert_eq!(r(0.5), 0.0);
    assert_eq!(r(1.5), 2.0);
    assert_eq!(r(2.5), 2.0);
    assert_eq!(r(-2.5), -2.0);
    assert_eq!(r(-3.5), -4.0);
    assert_eq!(r(2.6), 3.0);
    assert_eq!(un(UnOp::Round, V::F32(4.5)), V::F32(4.0));
    assert_eq!(
        un(UnOp::Round, V::F16(f16::from_f32(5.5))),
        V::F16(f16::from_f32(6.0))
    );
    assert_eq!(f64_of(un(UnOp::Floor, V::F64(-1.5))), -2.0);
    assert_eq!(f64_of(un(UnOp::Ceil, V::F64(-1.5))), -1.0);
    assert_eq!(f64_of(un(UnOp::Trunc, V::F64(-1.5))), -1.0);
    assert_eq!(f64_of(un(UnOp::Trunc, V::F64(1e300))), 1e300);
}

#[test]
fn sign_functions() {
    assert_eq!(un(UnOp::Sgn, V::I32(-7)), V::I32(-1));
    assert_eq!(un(UnOp::Sgn, V::I32(0)), V::I32(0));
    assert_eq!(un(UnOp::Sgn, V::I8(100)), V::I8(1));
    assert_eq!(un(UnOp::Sgn, V::U8(200)), V::U8(1));
    assert_eq!(un(UnOp::Sgn, V::U8(0)), V::U8(0));
    assert_eq!(un(UnOp::Sgn, V::F64(-2.5)), V::F64(-1.0));
    assert_eq!(un(UnOp::Sgn, V::F64(3.0)), V::F64(1.0));
    assert!(f64_of(un(UnOp::Sgn, V::F64(-0.0))).is_sign_positive());
    assert!(f64_of(un(UnOp::Sgn, V::F64(f64::NAN))).is_nan());
    assert_eq!(un(UnOp::Abs, V::F64(-0.0)), V::F64(0.0));
}

#[test]
fn bit_counting() {
    assert_eq!(un(UnOp::Clz, V::I32(1)), V::I32(31));
    assert_eq!(un(UnOp::Clz, V::I8(0)), V::I32(8));
    assert_eq!(un(UnOp::Clz, V::I8(-1)), V::I32(0));
    assert_eq!(un(UnOp::Clz, V::U64(1)), V::I32(63));
    assert_eq!(un(UnOp::Ctz, V::I16(0)), V::I32(16));
    assert_eq!(un(UnOp::Ctz, V::U32(8)), V::I32(3));
    assert_eq!(un(UnOp::Popc, V::I64(-1)), V::I32(64));
    assert_eq!(un(UnOp::Popc, V::U8(0b1011)), V::I32(3));
}

#[test]
fn float_predicates_and_math() {
    assert_eq!(un(UnOp::IsNan, V::F64(f64::NAN)), V::Bool(true));
    assert_eq!(un(UnOp::IsNan, V::F32(1.0)), V::Bool(false));
    assert_eq!(un(UnOp::IsInf, V::F16(f16::NEG_INFINITY)), V::Bool(true));
    assert_eq!(un(UnOp::IsInf, V::F64(f64::MAX)), V::Bool(false));
    assert_eq!(un(UnOp::Neg, V::F64(0.0)), V::F64(-0.0));
    assert_eq!(un(UnOp::Sqrt, V::F64(2.0)), V::F64(2f64.sqrt()));
    assert!(f64_of(un(UnOp::Sqrt, V::F64(-1.0))).is_nan());
    assert_eq!(un(UnOp::Cbrt, V::F64(-27.0)), V::F64(-3.0));
    assert_eq!(un(UnOp::Exp, V::F64(0.0)), V::F64(1.0));
    assert_eq!(un(UnOp::Exp2, V::F64(10.0)), V::F64(1024.0));
    assert_eq!(un(UnOp::Log2, V::F64(1024.0)), V::F64(10.0));
    assert_eq!(un(UnOp::Log10, V::F64(1000.0)), V::F64(3.0));
    assert_eq!(un(UnOp::Log, V::F64(0.0)), V::F64(f64::NEG_INFINITY));
    assert_eq!(un(UnOp::Log1p, V::F64(1e-20)), V::F64(1e-20));
    assert_eq!(un(UnOp::Expm1, V::F64(1e-20)), V::F64(1e-20));
    assert_eq!(un(UnOp::Atanh, V::F64(1.0)), V::F64(f64::INFINITY));
    assert_eq!(un(UnOp::Acosh, V::F64(1.0)), V::F64(0.0));
    assert_eq!(un(UnOp::Asinh, V::F64(0.0)), V::F64(0.0));
    assert_eq!(un(UnOp::Tanh, V::F64(1000.0)), V::F64(1.0));
    for op in [UnOp::Sin, UnOp::Tan, UnOp::Asin, UnOp::Atan, UnOp::Sinh] {
        assert_eq!(un(op, V::F64(0.0)), V::F64(0.0), "{op:?}");
    }
    assert_eq!(un(UnOp::Cos, V::F64(0.0)), V::F64(1.0));
    assert_eq!(un(UnOp::Cosh, V::F64(0.0)), V::F64(1.0));
    assert_eq!(un(UnOp::Acos, V::F64(1.0)), V::F64(0.0));
    assert_eq!(un(UnOp::Gamma, V::F64(5.0)), V::F64(24.0));
    assert_eq!(un(UnOp::Gamma, V::F32(5.0)), V::F32(24.0));
    assert_eq!(un(UnOp::Lgamma, V::F64(1.0)), V::F64(0.0));
    assert_eq!(un(UnOp::Erf, V::F32(0.0)), V::F32(0.0));
    assert_eq!(un(UnOp::Erfc, V::F16(f16::ZERO)), V::F16(f16::ONE));
    assert_eq!(
        un(UnOp::Sqrt, V::F16(f16::from_f32(2.0))),
        V::F16(f16::from_f64(2f64.sqrt()))
    );
}

#[test]
fn ternary() {
    // fma rounds once: (1 + 2^-30)^2 - 1 keeps the 2^-60 term.
    let a = 1.0 + 2f64.powi(-30);
    let fused = eval_ternop(TernOp::Fma, V::F64(a), V::F64(a), V::F64(-1.0)).unwrap();
    assert_eq!(fused, V::F64(2f64.powi(-29) + 2f64.powi(-60)));
    let unfused = eval_ternop(TernOp::Mad, V::F64(a), V::F64(a), V::F64(-1.0)).unwrap();
    assert_eq!(unfused, V::F64(2f64.powi(-29)));
    assert_eq!(
        eval_ternop(TernOp::Lerp, V::F32(2.0), V::F32(4.0), V::F32(0.25)).unwrap(),
        V::F32(2.5)
    );
    assert_eq!(
        eval_ternop(
            TernOp::Fma,
            V::F16(f16::from_f32(2.0)),
            V::F16(f16::from_f32(3.0)),
            V::F16(f16::from_f32(1.0))
        )
        .unwrap(),
        V::F16(f16::from_f32(7.0))
    );
}

#[test]
fn helpers() {
    for t in PrimType::ALL {
        assert_eq!(PrimValue::zero(t).prim_type(), t);
        assert_eq!(PrimValue::one(t).prim_type(), t);
        assert_eq!(t.highest().prim_type(), t);
        assert_eq!(t.lowest().prim_type(), t);
        if t.is_numeric() {
            assert_eq!(PrimValue::zero(t).as_f64(), 0.0);
            assert_eq!(PrimValue::one(t).as_f64(), 1.0);
            assert_eq!(PrimValue::one(t).as_i64(), 1);
            assert_eq!(
                eval_binop(BinOp::Add, PrimValue::zero(t), PrimValue::one(t)).unwrap(),
                PrimValue::one(t)
            );
        }
    }
    assert_eq!(PrimValue::zero(T::Bool), V::Bool(false));
    assert_eq!(PrimValue::one(T::Bool), V::Bool(true));
    assert_eq!(T::I8.highest(), V::I8(127));
    assert_eq!(T::I8.lowest(), V::I8(-128));
    assert_eq!(T::U32.highest(), V::U32(u32::MAX));
    assert_eq!(T::U32.lowest(), V::U32(0));
    assert_eq!(T::F64.highest(), V::F64(f64::INFINITY));
    assert_eq!(T::F32.lowest(), V::F32(f32::NEG_INFINITY));
    assert_eq!(PrimValue::from_f64(T::I32, -3.9), V::I32(-3));
    assert_eq!(PrimValue::from_f64(T::F32, 0.1), V::F32(0.1));
    assert_eq!(PrimValue::from_f64(T::U8, f64::NAN), V::U8(0));
    assert_eq!(PrimValue::from_f64(T::Bool, 0.0), V::Bool(false));
    assert_eq!(PrimValue::from_i64(T::U8, 257), V::U8(1));
    assert_eq!(PrimValue::from_i64(T::I8, -1), V::I8(-1));
    assert_eq!(PrimValue::from_i64(T::U64, -1), V::U64(u64::MAX));
    assert_eq!(
        PrimValue::from_i64(T::F64, 1 << 53),
        V::F64(9007199254740992.0)
    );
    assert_eq!(V::U64(u64::MAX).as_i64(), -1);
    assert_eq!(V::U32(u32::MAX).as_i64(), u32::MAX as i64);
    assert_eq!(V::I8(-5).as_i64(), -5);
    assert_eq!(V::F64(-7.9).as_i64(), -7);
    assert_eq!(V::F32(f32::NAN).as_i64(), 0);
    assert_eq!(V::U64(u64::MAX).as_f64(), 18446744073709551615.0);
    assert_eq!(V::Bool(true).as_f64(), 1.0);
    assert!(V::Bool(true).is_true());
    assert!(!V::Bool(false).is_true());
    assert!(!V::I32(1).is_true());
    assert_eq!(PrimValue::from_bits(T::F32, 0x3f800000), V::F32(1.0));
    assert_eq!(V::I8(-1).to_bits(), 0xff);
    assert_eq!(unop_result_type(UnOp::Popc, T::U16), Some(T::I32));
    assert_eq!(unop_result_type(UnOp::IsNan, T::F16), Some(T::Bool));
    assert_eq!(unop_result_type(UnOp::Sqrt, T::I32), None);
}

#[test]
fn display() {
    let cases: [(PrimValue, &str); 22] = [
        (V::I32(3), "3i32"),
        (V::I8(-2), "-2i8"),
        (V::U8(255), "255u8"),
        (V::I64(i64::MIN), "-9223372036854775808i64"),
        (V::U64(u64::MAX), "18446744073709551615u64"),
        (V::Bool(true), "true"),
        (V::Bool(false), "false"),
        (V::F64(1.0), "1.0f64"),
        (V::F64(1.5), "1.5f64"),
        (V::F64(-0.0), "-0.0f64"),
        (V::F64(0.1), "0.1f64"),
        (V::F64(1e-300), "1e-300f64"),
        (V::F64(1e16), "1e16f64"),
        (V::F64(123456.0), "123456.0f64"),
        (V::F64(f64::NAN), "f64.nan"),
        (V::F64(f64::INFINITY), "f64.inf"),
        (V::F64(f64::NEG_INFINITY), "-f64.inf"),
        (V::F32(0.1), "0.1f32"),
        (V::F32(f32::NAN), "f32.nan"),
        (V::F16(f16::from_f32(0.1)), "0.1f16"),
        (V::F16(f16::from_f32(1.5)), "1.5f16"),
        (V::F16(f16::NEG_INFINITY), "-f16.inf"),
    ];
    for (v, s) in cases {
        assert_eq!(v.to_string(), s, "{v:?}");
    }
}

#[test]
fn display_round_trips() {
    let mut vals = vec![
        V::F64(std::f64::consts::PI),
        V::F64(f64::MAX),
        V::F64(f64::MIN_POSITIVE),
        V::F64(5e-324),
        V::F32(f32::MAX),
        V::F32(1.0e-45),
        V::F32(16777217.0),
        V::F16(f16::MAX),
        V::F16(f16::MIN_POSITIVE_SUBNORMAL),
        V::F16(f16::from_f32(-0.333)),
        V::I16(-300),
        V::U16(65535),
        V::Bool(false),
    ];
    for bits in (0..=0xffffu32).step_by(97) {
        vals.push(V::F16(f16::from_bits(bits as u16)));
        vals.push(V::F32(f32::from_bits(bits.wrapping_mul(65599))));
        vals.push(V::F64(f64::from_bits(
            (bits as u64).wrapping_mul(0x9e3779b97f4a7c15),
        )));
    }
    for v in vals {
        let s = v.to_string();
        let back = parse_prim_literal(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        match (v, back) {
            (V::F16(a), V::F16(b)) if a.is_nan() => assert!(b.is_nan(), "{s}"),
            (V::F32(a), V::F32(b)) if a.is_nan() => assert!(b.is_nan(), "{s}"),
            (V::F64(a), V::F64(b)) if a.is_nan() => assert!(b.is_nan(), "{s}"),
            _ => assert_eq!(back.to_bits(), v.to_bits(), "{s}"),
        }
        assert_eq!(back.prim_type(), v.prim_type(), "{s}");
    }
}

/// A small deterministic generator (xorshift) for property-style checks.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn division_identities_hold() {
    let mut s = 0x1234_5678_9abc_def0u64;
    for i in 0..20_000 {
        let x = xorshift(&mut s) as i32 >> (i % 24);
        let y = (xorshift(&mut s) as i32) >> (i % 31);
        if y == 0 {
            continue;
        }
        let get = |op| match bin(op, V::I32(x), V::I32(y)) {
            V::I32(v) => v,
            other => panic!("{other:?}"),
        };
        let (q, r) = (get(BinOp::Div), get(BinOp::Mod));
        assert_eq!(q.wrapping_mul(y).wrapping_add(r), x, "{x} / {y}");
        assert!(r == 0 || (r < 0) == (y < 0), "{x} % {y} = {r}");
        assert!(r.unsigned_abs() < y.unsigned_abs());
        if x != i32::MIN || y != -1 {
            assert_eq!(q as f64, (x as f64 / y as f64).floor(), "{x} / {y}");
        }
        let (tq, tr) = (get(BinOp::IntDiv), get(BinOp::IntMod));
        assert_eq!(tq.wrapping_mul(y).wrapping_add(tr), x);
        assert!(tr == 0 || (tr < 0) == (x < 0), "{x} %% {y} = {tr}");
    }
}

#[test]
fn conversions_round_trip_through_wider_types() {
    let mut s = 0xdead_beef_cafe_f00du64;
    for _ in 0..5_000 {
        let bits = xorshift(&mut s);
        for t in [T::I8, T::I16, T::I32, T::U8, T::U16, T::U32] {
            let v = PrimValue::from_bits(t, bits);
            let wide = if t.is_signed_int() { T::I64 } else { T::U64 };
            assert_eq!(v.convert(wide).convert(t), v, "{v:?}");
            // Integers of at most 32 bits are exact in f64.
            assert_eq!(v.convert(T::F64).convert(t), v, "{v:?}");
            assert_eq!(v.as_f64() as i64, v.as_i64());
        }
    }
}

#[test]
fn comparisons_follow_each_types_order() {
    let cmp = |op, a, b| eval_cmpop(op, a, b).unwrap();
    // bool: false < true.
    assert!(cmp(CmpOp::Lt, V::Bool(false), V::Bool(true)));
    assert!(!cmp(CmpOp::Lt, V::Bool(true), V::Bool(false)));
    assert!(cmp(CmpOp::Ge, V::Bool(true), V::Bool(true)));
    // Unsigned integers compare as unsigned, signed as signed.
    assert!(cmp(CmpOp::Gt, V::U8(200), V::U8(100)));
    assert!(cmp(CmpOp::Lt, V::I8(-56), V::I8(100)));
    // NaN: every comparison is false except `!=`.
    let nan = V::F64(f64::NAN);
    for op in [CmpOp::Eq, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
        assert!(!cmp(op, nan, nan));
    }
    assert!(cmp(CmpOp::Neq, nan, nan));
    // Mismatched operand types are an error, not a panic.
    assert!(eval_cmpop(CmpOp::Eq, V::I32(1), V::I64(1)).is_err());
}
