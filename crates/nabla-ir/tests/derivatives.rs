//! Tests of the derivative table (`nabla_ir::derivatives`).
//!
//! * Every differentiable float operation, at `f16`, `f32` and `f64`: the
//!   table's partials evaluated on plain values against central finite
//!   differences of the primal operation computed directly with nabla-prim's
//!   evaluation (never a rule against itself), at several points including
//!   the documented edge points where a finite difference exists.
//! * The documented edge values where it does not (ties, infinite slopes).
//! * Integers, `bool` and conversions: the conventions (wrapping integer
//!   derivatives, constants, converted tangents).
//! * Every operation at every type: well-formed rules, evaluation never
//!   fails where the primal succeeds, and evaluating every branch of a
//!   `Select` (as an IR builder does) gives the same partials.

use nabla_ir::derivatives::{
    eval_partials, partials, polygamma, Derivative, Partials, PrimAlgebra, RuleAlgebra, RuleError,
    ScalarOp, MAX_SHARED,
};
use nabla_ir::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};

// ----- every operator -----------------------------------------------------------------

const BINOPS: [BinOp; 22] = BinOp::ALL;

const UNOPS: [UnOp; 40] = UnOp::ALL;

const TERNOPS: [TernOp; 3] = TernOp::ALL;

const FLOATS: [PrimType; 3] = [PrimType::F16, PrimType::F32, PrimType::F64];

// ----- helpers ------------------------------------------------------------------------

/// The primal of `op`, with nabla-prim's evaluation.
fn primal(op: ScalarOp, x: &[PrimValue]) -> Result<PrimValue, String> {
    let r = match (op, x) {
        (ScalarOp::Bin(o), [a, b]) => nabla_prim::eval_binop(o, *a, *b),
        (ScalarOp::Un(o), [a]) => nabla_prim::eval_unop(o, *a),
        (ScalarOp::Tern(o), [a, b, c]) => nabla_prim::eval_ternop(o, *a, *b, *c),
        (ScalarOp::Conv(o), [a]) => nabla_prim::eval_conv(o, *a),
        (ScalarOp::Polygamma(n), [a]) => return Ok(PrimValue::F64(polygamma(n, a.as_f64()))),
        _ => return Err("wrong arity".into()),
    };
    r.map_err(|e| e.to_string())
}

/// The table's partials at plain operands (`None`: no dependence).
fn table(op: ScalarOp, x: &[PrimValue]) -> Derivative<PrimValue> {
    eval_partials(&mut PrimAlgebra, op, x[0].prim_type(), x, None)
        .unwrap_or_else(|e| panic!("{op:?} at {x:?}: {e}"))
}

/// The table's partials as `f64`s (no dependence: 0).
fn table_f64(op: ScalarOp, x: &[PrimValue]) -> Vec<f64> {
    match table(op, x) {
        Derivative::Constant => vec![0.0; x.len()],
        Derivative::Partials(ds) => ds[..x.len()]
            .iter()
            .map(|d| d.map_or(0.0, |d| d.as_f64()))
            .collect(),
        Derivative::Conversion { .. } => panic!("{op:?} is a conversion"),
    }
}

fn round(t: PrimType, x: f64) -> PrimValue {
    PrimValue::from_f64(t, x)
}

/// Central finite difference of `op` in operand `k` at `x` (type `t`), the
/// step rounded to `t`.
fn central_difference(op: ScalarOp, x: &[PrimValue], k: usize) -> f64 {
    let t = x[0].prim_type();
    let rel = match t {
        PrimType::F16 => 1.0 / 32.0,
        PrimType::F32 => 1e-3,
        _ => 1e-6,
    };
    let xk = x[k].as_f64();
    let h = rel * xk.abs().max(1.0);
    let (mut hi, mut lo) = (x.to_vec(), x.to_vec());
    hi[k] = round(t, xk + h);
    lo[k] = round(t, xk - h);
    let step = if xk.is_nan() {
        2.0 * h
    } else {
        hi[k].as_f64() - lo[k].as_f64()
    };
    let f = |y: &[PrimValue]| primal(op, y).unwrap().as_f64();
    let (fh, fl) = (f(&hi), f(&lo));
    if fh == fl {
        return 0.0;
    }
    (fh - fl) / step
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn tolerance(t: PrimType) -> f64 {
    match t {
        PrimType::F16 => 5e-2,
        PrimType::F32 => 2e-3,
        _ => 1e-5,
    }
}

/// Checks every partial of `op` at each point against finite differences,
/// at every float type.
fn check_against_differences(op: ScalarOp, points: &[&[f64]]) {
    for t in FLOATS {
        for pt in points {
            let x: Vec<PrimValue> = pt.iter().map(|&v| round(t, v)).collect();
            let d = table_f64(op, &x);
            for (k, dk) in d.iter().enumerate() {
                let fd = central_difference(op, &x, k);
                assert!(
                    close(*dk, fd, tolerance(t)),
                    "∂{op:?}/∂x{k} at {pt:?} in {t}: table {dk} vs finite difference {fd}"
                );
            }
        }
    }
}

// ----- float rules against finite differences -------------------------------------------

#[test]
fn binop_partials_match_central_differences() {
    let cases: &[(BinOp, &[&[f64]])] = &[
        (BinOp::Add, &[&[0.3, 1.3], &[-2.0, 0.5]]),
        (BinOp::Sub, &[&[0.3, 1.3], &[-2.0, 0.5]]),
        (BinOp::Mul, &[&[0.3, 1.3], &[-2.0, 0.5]]),
        (BinOp::Div, &[&[0.3, 1.3], &[-2.0, 0.5]]),
        (BinOp::Mod, &[&[2.3, 0.7], &[-2.3, 0.7], &[5.5, -1.5]]),
        // Edges: ∂/∂b = 0 at a = 0; ∂/∂a = 0 at b = 0.
        (
            BinOp::Pow,
            &[
                &[0.3, 1.3],
                &[2.0, -0.5],
                &[1.7, 3.0],
                &[0.0, 2.0],
                &[2.0, 0.0],
            ],
        ),
        // Edge: a NaN operand (the other one is returned).
        (
            BinOp::Min,
            &[
                &[0.3, 1.3],
                &[2.0, -0.5],
                &[f64::NAN, 1.0],
                &[1.0, f64::NAN],
            ],
        ),
        (
            BinOp::Max,
            &[
                &[0.3, 1.3],
                &[2.0, -0.5],
                &[f64::NAN, 1.0],
                &[1.0, f64::NAN],
            ],
        ),
        (BinOp::Atan2, &[&[0.3, 1.3], &[2.0, -0.5], &[-1.0, -2.0]]),
        // Edge: the origin (subgradient 0).
        (BinOp::Hypot, &[&[0.3, 1.3], &[2.0, -0.5], &[0.0, 0.0]]),
    ];
    for (op, points) in cases {
        check_against_differences(ScalarOp::Bin(*op), points);
    }
}

#[test]
fn unop_partials_match_central_differences() {
    let cases: &[(UnOp, &[&[f64]])] = &[
        (UnOp::Neg, &[&[0.3], &[-1.7]]),
        // Edge: 0 (sgn 0 = 0, the symmetric difference).
        (UnOp::Abs, &[&[0.3], &[-1.7], &[0.0]]),
        (UnOp::Sqrt, &[&[0.3], &[2.5]]),
        (UnOp::Cbrt, &[&[0.3], &[-2.5]]),
        (UnOp::Exp, &[&[0.3], &[-1.2]]),
        (UnOp::Exp2, &[&[0.3], &[1.7]]),
        (UnOp::Expm1, &[&[0.3], &[-0.8]]),
        (UnOp::Log, &[&[0.3], &[2.5]]),
        (UnOp::Log2, &[&[0.3], &[2.5]]),
        (UnOp::Log10, &[&[0.3], &[2.5]]),
        (UnOp::Log1p, &[&[0.3], &[-0.5]]),
        (UnOp::Sin, &[&[0.3], &[2.5]]),
        (UnOp::Cos, &[&[0.3], &[2.5]]),
        (UnOp::Tan, &[&[0.3], &[-1.1]]),
        (UnOp::Asin, &[&[0.3], &[-0.7]]),
        (UnOp::Acos, &[&[0.3], &[-0.7]]),
        (UnOp::Atan, &[&[0.3], &[-2.7]]),
        (UnOp::Sinh, &[&[0.3], &[-1.7]]),
        (UnOp::Cosh, &[&[0.3], &[-1.7]]),
        (UnOp::Tanh, &[&[0.3], &[-1.7]]),
        (UnOp::Asinh, &[&[0.3], &[-1.7]]),
        (UnOp::Acosh, &[&[1.3], &[3.7]]),
        (UnOp::Atanh, &[&[0.3], &[-0.6]]),
        (UnOp::Lgamma, &[&[0.3], &[4.6], &[-1.5]]),
        (UnOp::Gamma, &[&[0.3], &[3.6], &[-0.5]]),
        (UnOp::Erf, &[&[0.3], &[-1.1]]),
        (UnOp::Erfc, &[&[0.3], &[-1.1]]),
        // Constants: zero derivative away from their jumps.
        (UnOp::Sgn, &[&[0.3], &[-2.0]]),
        (UnOp::Floor, &[&[0.3], &[2.5]]),
        (UnOp::Ceil, &[&[0.3], &[-1.7]]),
        (UnOp::Round, &[&[0.3], &[-1.7]]),
        (UnOp::Trunc, &[&[0.3], &[-1.7]]),
    ];
    for (op, points) in cases {
        check_against_differences(ScalarOp::Un(*op), points);
    }
}

#[test]
fn ternop_partials_match_central_differences() {
    check_against_differences(
        ScalarOp::Tern(TernOp::Fma),
        &[&[0.3, 1.3, -0.4], &[-2.0, 0.5, 1.5]],
    );
    check_against_differences(
        ScalarOp::Tern(TernOp::Mad),
        &[&[0.3, 1.3, -0.4], &[-2.0, 0.5, 1.5]],
    );
    check_against_differences(
        ScalarOp::Tern(TernOp::Lerp),
        &[&[0.3, 1.3, 0.4], &[-1.0, 2.0, 1.75]],
    );
}

/// ψ⁽ⁿ⁾'s rule (ψ⁽ⁿ⁺¹⁾) against differences of ψ⁽ⁿ⁾, and digamma against
/// differences of nabla-prim's `lgamma` (the rule of `lgamma`, in `f64`).
#[test]
fn polygamma_partials_match_central_differences() {
    for n in 0..4 {
        for x in [0.3, 2.5, 13.7, -1.5] {
            if n > 0 && x < 0.0 {
                continue;
            }
            let op = ScalarOp::Polygamma(n);
            let d = table_f64(op, &[PrimValue::F64(x)])[0];
            let h = 1e-5;
            let fd = (polygamma(n, x + h) - polygamma(n, x - h)) / (2.0 * h);
            assert!(close(d, fd, 1e-5), "ψ⁽{n}⁾' at {x}: {d} vs {fd}");
        }
    }
    for x in [0.3, 2.5, 13.7, -1.5, -0.25] {
        let h = 1e-6;
        let lg = |y: f64| {
            nabla_prim::eval_unop(UnOp::Lgamma, PrimValue::F64(y))
                .unwrap()
                .as_f64()
        };
        let fd = (lg(x + h) - lg(x - h)) / (2.0 * h);
        assert!(close(polygamma(0, x), fd, 1e-6), "ψ({x}) vs {fd}");
    }
}

// ----- documented edge values ------------------------------------------------------------

fn partials_at(op: ScalarOp, x: &[f64]) -> Vec<Option<f64>> {
    let x: Vec<PrimValue> = x.iter().map(|&v| PrimValue::F64(v)).collect();
    match table(op, &x) {
        Derivative::Partials(ds) => ds[..x.len()]
            .iter()
            .map(|d| d.map(|d| d.as_f64()))
            .collect(),
        other => panic!("{op:?}: {other:?}"),
    }
}

/// The edge values documented on the rules where finite differences do
/// not apply (ties, infinite slopes) or where the rule's convention is
/// "no dependence" rather than a zero partial.
#[test]
fn edge_values_follow_the_conventions() {
    let bin = |o| ScalarOp::Bin(o);
    let un = |o| ScalarOp::Un(o);
    // pow: ∂/∂b is no dependence at a = 0, ∂/∂a at b = 0.
    assert_eq!(partials_at(bin(BinOp::Pow), &[0.0, 2.0]), [Some(0.0), None]);
    assert_eq!(
        partials_at(bin(BinOp::Pow), &[2.0, 0.0]),
        [None, Some(std::f64::consts::LN_2)]
    );
    assert_eq!(partials_at(bin(BinOp::Pow), &[0.0, 0.0]), [None, None]);
    // min/max ties go to the first operand; NaN: the returned one.
    assert_eq!(partials_at(bin(BinOp::Min), &[1.0, 1.0]), [Some(1.0), None]);
    assert_eq!(partials_at(bin(BinOp::Max), &[1.0, 1.0]), [Some(1.0), None]);
    assert_eq!(
        partials_at(bin(BinOp::Min), &[f64::NAN, 1.0]),
        [None, Some(1.0)]
    );
    assert_eq!(
        partials_at(bin(BinOp::Max), &[1.0, f64::NAN]),
        [Some(1.0), None]
    );
    // hypot at the origin: no dependence.
    assert_eq!(partials_at(bin(BinOp::Hypot), &[0.0, 0.0]), [None, None]);
    assert_eq!(partials_at(bin(BinOp::Hypot), &[-0.0, 0.0]), [None, None]);
    // atan2 at the origin: NaN.
    assert!(partials_at(bin(BinOp::Atan2), &[0.0, 0.0])
        .iter()
        .all(|d| d.unwrap().is_nan()));
    // abs at 0: sgn 0 = 0.
    assert_eq!(partials_at(un(UnOp::Abs), &[0.0]), [Some(0.0)]);
    // Infinite slopes.
    assert_eq!(partials_at(un(UnOp::Sqrt), &[0.0]), [Some(f64::INFINITY)]);
    assert_eq!(partials_at(un(UnOp::Cbrt), &[0.0]), [Some(f64::INFINITY)]);
    assert_eq!(partials_at(un(UnOp::Log), &[0.0]), [Some(f64::INFINITY)]);
    assert_eq!(partials_at(un(UnOp::Atanh), &[1.0]), [Some(f64::INFINITY)]);
    assert_eq!(partials_at(un(UnOp::Asin), &[1.0]), [Some(f64::INFINITY)]);
    assert_eq!(
        partials_at(un(UnOp::Acos), &[1.0]),
        [Some(f64::NEG_INFINITY)]
    );
    // lgamma and gamma at a pole: NaN.
    assert!(partials_at(un(UnOp::Lgamma), &[-2.0])[0].unwrap().is_nan());
    assert!(partials_at(un(UnOp::Gamma), &[0.0])[0].unwrap().is_nan());
    // Rounding, sgn and classification: constants.
    for o in [
        UnOp::Sgn,
        UnOp::Floor,
        UnOp::Ceil,
        UnOp::Round,
        UnOp::Trunc,
        UnOp::IsNan,
        UnOp::IsInf,
    ] {
        for t in FLOATS {
            assert_eq!(partials(un(o), t), Partials::Constant, "{o:?} at {t}");
        }
    }
}

// ----- integers, bool, conversions ---------------------------------------------------------

const INTS: [PrimType; 8] = [
    PrimType::I8,
    PrimType::I16,
    PrimType::I32,
    PrimType::I64,
    PrimType::U8,
    PrimType::U16,
    PrimType::U32,
    PrimType::U64,
];

/// Integer partials are computed in wrapping arithmetic of the operands'
/// type (Futhark's rules); `None` is no dependence.
#[test]
fn integer_partials_follow_the_conventions() {
    for t in INTS {
        let v = |i: i64| PrimValue::from_i64(t, i);
        let at = |op: ScalarOp, x: &[i64]| -> Derivative<PrimValue> {
            let x: Vec<PrimValue> = x.iter().map(|&i| v(i)).collect();
            table(op, &x)
        };
        let p = |a: Option<i64>, b: Option<i64>| Derivative::Partials([a.map(v), b.map(v), None]);
        let bin = |o| ScalarOp::Bin(o);
        assert_eq!(at(bin(BinOp::Add), &[7, 2]), p(Some(1), Some(1)));
        assert_eq!(at(bin(BinOp::Sub), &[7, 2]), p(Some(1), Some(-1)));
        assert_eq!(at(bin(BinOp::Mul), &[7, 2]), p(Some(2), Some(7)));
        // (1 quot b, -(a quot b²)); no dependence where b² wraps to 0.
        for o in [BinOp::Div, BinOp::IntDiv, BinOp::Quot] {
            assert_eq!(at(bin(o), &[7, 2]), p(Some(0), Some(-1)), "{o:?} {t}");
            assert_eq!(at(bin(o), &[7, 1]), p(Some(1), Some(-7)), "{o:?} {t}");
            assert_eq!(at(bin(o), &[7, 0]), p(None, None), "{o:?} {t}");
            let wraps = 1i64 << (t.bits() / 2);
            assert_eq!(at(bin(o), &[7, wraps]), p(None, None), "{o:?} {t}");
        }
        for o in [BinOp::Mod, BinOp::IntMod, BinOp::Rem] {
            assert_eq!(at(bin(o), &[7, 2]), p(Some(1), None), "{o:?} {t}");
        }
        // (b·a^(b-1), 0); no dependence on a where b = 0.
        assert_eq!(at(bin(BinOp::Pow), &[7, 2]), p(Some(14), None));
        assert_eq!(at(bin(BinOp::Pow), &[3, 3]), p(Some(27), None));
        assert_eq!(at(bin(BinOp::Pow), &[7, 0]), p(None, None));
        // Shifts: (1 << b, 0), (1 >> b, 0).
        assert_eq!(at(bin(BinOp::Shl), &[7, 2]), p(Some(4), None));
        assert_eq!(at(bin(BinOp::Shr), &[7, 0]), p(Some(1), None));
        assert_eq!(at(bin(BinOp::Shr), &[7, 2]), p(Some(0), None));
        assert_eq!(at(bin(BinOp::LShr), &[7, 2]), p(Some(0), None));
        // min/max select an operand, ties to the first.
        assert_eq!(at(bin(BinOp::Min), &[7, 2]), p(None, Some(1)));
        assert_eq!(at(bin(BinOp::Min), &[2, 2]), p(Some(1), None));
        assert_eq!(at(bin(BinOp::Max), &[7, 2]), p(Some(1), None));
        assert_eq!(at(bin(BinOp::Max), &[2, 7]), p(None, Some(1)));
        for o in [BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor] {
            assert_eq!(partials(bin(o), t), Partials::Constant, "{o:?} {t}");
        }
        // Negation and complement: -1; abs: sgn.
        let un = |o| ScalarOp::Un(o);
        assert_eq!(at(un(UnOp::Neg), &[7]), p(Some(-1), None));
        assert_eq!(at(un(UnOp::Not), &[7]), p(Some(-1), None));
        assert_eq!(at(un(UnOp::Abs), &[7]), p(Some(1), None));
        assert_eq!(at(un(UnOp::Abs), &[0]), p(Some(0), None));
        if t.is_signed_int() {
            assert_eq!(at(un(UnOp::Abs), &[-7]), p(Some(-1), None));
        }
        for o in [UnOp::Sgn, UnOp::Clz, UnOp::Ctz, UnOp::Popc] {
            assert_eq!(partials(un(o), t), Partials::Constant, "{o:?} {t}");
        }
    }
}

#[test]
fn bool_operations_are_constants() {
    for o in BINOPS {
        assert_eq!(
            partials(ScalarOp::Bin(o), PrimType::Bool),
            Partials::Constant
        );
    }
    for o in UNOPS {
        assert_eq!(
            partials(ScalarOp::Un(o), PrimType::Bool),
            Partials::Constant
        );
    }
    for t in PrimType::ALL {
        for op in [
            ConvOp::Convert(t, PrimType::Bool),
            ConvOp::Convert(PrimType::Bool, t),
        ] {
            assert_eq!(partials(ScalarOp::Conv(op), t), Partials::Constant);
        }
    }
}

/// Conversions convert tangents forward and adjoints back.
#[test]
fn conversions_convert_tangents_and_adjoints() {
    let numeric = PrimType::ALL.into_iter().filter(|t| *t != PrimType::Bool);
    for from in numeric.clone() {
        for to in numeric.clone() {
            let op = ConvOp::Convert(from, to);
            assert_eq!(
                partials(ScalarOp::Conv(op), from),
                Partials::Conversion {
                    forward: op,
                    backward: ConvOp::Convert(to, from)
                }
            );
            let x = PrimValue::from_f64(from, 3.0);
            assert_eq!(
                table(ScalarOp::Conv(op), &[x]),
                Derivative::Conversion {
                    forward: op,
                    backward: ConvOp::Convert(to, from)
                }
            );
        }
    }
    let op = ConvOp::BitCast(PrimType::F64, PrimType::U64);
    assert_eq!(
        partials(ScalarOp::Conv(op), PrimType::F64),
        Partials::Conversion {
            forward: op,
            backward: ConvOp::BitCast(PrimType::U64, PrimType::F64)
        }
    );
}

// ----- every operation at every type ---------------------------------------------------------

fn every_op() -> Vec<ScalarOp> {
    let mut ops: Vec<ScalarOp> = BINOPS.iter().map(|&o| ScalarOp::Bin(o)).collect();
    ops.extend(UNOPS.iter().map(|&o| ScalarOp::Un(o)));
    ops.extend(TERNOPS.iter().map(|&o| ScalarOp::Tern(o)));
    ops.extend((0..3).map(ScalarOp::Polygamma));
    ops
}

#[test]
fn every_rule_is_well_formed() {
    for op in every_op() {
        for t in PrimType::ALL {
            match partials(op, t) {
                Partials::Constant => {}
                Partials::Rule(rule) => {
                    assert_eq!(rule.partials.len(), op.arity(), "{op:?} at {t}");
                    assert!(rule.shared.len() <= MAX_SHARED, "{op:?} at {t}");
                }
                Partials::Conversion { .. } => panic!("{op:?} at {t} is not a conversion"),
            }
        }
    }
}

/// [`PrimAlgebra`] that cannot decide conditions, as an IR builder: every
/// branch of a `Select` is computed, then selected.
struct Undecided;

impl RuleAlgebra for Undecided {
    type Value = PrimValue;
    type Error = RuleError;
    fn constant(&mut self, value: PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.constant(value)
    }
    fn binop(&mut self, op: BinOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.binop(op, a, b)
    }
    fn unop(&mut self, op: UnOp, a: &PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.unop(op, a)
    }
    fn ternop(
        &mut self,
        op: TernOp,
        a: &PrimValue,
        b: &PrimValue,
        c: &PrimValue,
    ) -> Result<PrimValue, RuleError> {
        PrimAlgebra.ternop(op, a, b, c)
    }
    fn conv(&mut self, op: ConvOp, a: &PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.conv(op, a)
    }
    fn cmp(&mut self, op: CmpOp, a: &PrimValue, b: &PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.cmp(op, a, b)
    }
    fn polygamma(&mut self, order: u32, x: &PrimValue) -> Result<PrimValue, RuleError> {
        PrimAlgebra.polygamma(order, x)
    }
    fn select(
        &mut self,
        cond: &PrimValue,
        then: &PrimValue,
        otherwise: &PrimValue,
    ) -> Result<PrimValue, RuleError> {
        PrimAlgebra.select(cond, then, otherwise)
    }
}

fn same(a: &PrimValue, b: &PrimValue) -> bool {
    a == b || (a.as_f64().is_nan() && b.as_f64().is_nan())
}

/// Wherever the primal is defined, the rule evaluates without error, and
/// computing every branch of its selects gives the same partials (no
/// dependence reads as a zero there).
#[test]
fn rules_evaluate_wherever_the_primal_does() {
    let samples = [
        -3.0,
        -1.0,
        -0.5,
        0.0,
        0.5,
        1.0,
        2.0,
        3.0,
        f64::NAN,
        f64::INFINITY,
    ];
    for op in every_op() {
        for t in PrimType::ALL {
            let n = op.arity();
            for (i, &a) in samples.iter().enumerate() {
                for (j, &b) in samples.iter().enumerate() {
                    let c = samples[(i + 2 * j) % samples.len()];
                    let x: Vec<PrimValue> = [a, b, c][..n]
                        .iter()
                        .map(|&v| PrimValue::from_f64(t, v))
                        .collect();
                    if primal(op, &x).is_err()
                        || (matches!(op, ScalarOp::Polygamma(_)) && !t.is_float())
                    {
                        continue;
                    }
                    let decided = eval_partials(&mut PrimAlgebra, op, t, &x, None)
                        .unwrap_or_else(|e| panic!("{op:?} at {x:?}: {e}"));
                    let undecided = eval_partials(&mut Undecided, op, t, &x, None)
                        .unwrap_or_else(|e| panic!("{op:?} at {x:?}, every branch: {e}"));
                    match (decided, undecided) {
                        (Derivative::Partials(d), Derivative::Partials(u)) => {
                            for k in 0..n {
                                let zero = PrimValue::zero(t);
                                let (d, u) = (d[k].unwrap_or(zero), u[k].unwrap_or(zero));
                                assert!(
                                    same(&d, &u),
                                    "{op:?} at {x:?}, operand {k}: {d:?} vs {u:?}"
                                );
                            }
                        }
                        (d, u) => assert_eq!(d, u, "{op:?} at {x:?}"),
                    }
                }
            }
        }
    }
}

/// The primal result, when given, is used instead of recomputing it.
#[test]
fn a_given_result_is_used() {
    let x = [PrimValue::F64(4.0)];
    let Derivative::Partials(d) = eval_partials(
        &mut PrimAlgebra,
        ScalarOp::Un(UnOp::Exp),
        PrimType::F64,
        &x,
        Some(&PrimValue::F64(10.0)),
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(d[0], Some(PrimValue::F64(10.0)));
    let err = eval_partials(
        &mut PrimAlgebra,
        ScalarOp::Bin(BinOp::Add),
        PrimType::F64,
        &x,
        None,
    );
    assert!(matches!(err, Err(RuleError::Arity { found: 1, .. })));
}
