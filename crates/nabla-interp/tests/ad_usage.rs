//! Scalars whose derivatives are never used (`src/ad/usage.rs`) are computed
//! on primals alone; values that do reach a result through conversions keep
//! their derivatives.

#[path = "common/front.rs"]
mod front;

use nabla_interp::{run_entry, run_entry_with_stats};
use nabla_prim::PrimValue;
use nabla_values::Value;

const SRC: &str = r#"
-- The integer reaches the result through a conversion back to f64: its
-- derivative (Futhark's rule for conversions: the converted tangent) counts.
entry fwd_conv (x: f64) = jvp (\x -> f64.i64 (i64.f64 (x * 3.0)) + x) x 1.0
entry rev_conv (x: f64) = vjp (\x -> f64.i64 (i64.f64 (x * 3.0)) + x) x 1.0
-- The integer only picks a branch.
entry fwd_branch (x: f64) =
  jvp (\x -> let k = i64.f64 (x * 3.0) % 4 in if k > 1 then x * x else x) x 1.0
entry rev_branch (x: f64) =
  vjp (\x -> let k = i64.f64 (x * 3.0) % 4 in if k > 1 then x * x else x) x 1.0
-- The integer is returned: its tangent is a result.
entry fwd_int (x: f64) = jvp (\x -> i64.f64 (x * 3.0) + 1) x 2.0
"#;

fn run(p: &nabla_ir::Program, e: &str, x: f64) -> PrimValue {
    match &run_entry(p, e, vec![Value::Prim(PrimValue::F64(x))]).unwrap()[0] {
        Value::Prim(p) => *p,
        v => panic!("unexpected {v:?}"),
    }
}

#[test]
fn derivatives_through_integers() {
    let p = front::compile(SRC);
    assert_eq!(run(&p, "fwd_conv", 1.7), PrimValue::F64(4.0));
    assert_eq!(run(&p, "rev_conv", 1.7), PrimValue::F64(4.0));
    // 3·1.7 = 5.1 → 5 % 4 = 1: the identity branch.
    assert_eq!(run(&p, "fwd_branch", 1.7), PrimValue::F64(1.0));
    assert_eq!(run(&p, "rev_branch", 1.7), PrimValue::F64(1.0));
    // 3·2.5 = 7.5 → 7 % 4 = 3: x², derivative 2x.
    assert_eq!(run(&p, "fwd_branch", 2.5), PrimValue::F64(5.0));
    assert_eq!(run(&p, "rev_branch", 2.5), PrimValue::F64(5.0));
    assert_eq!(run(&p, "fwd_int", 1.0), PrimValue::I64(6));
}

/// Which scalars were computed on primals alone (`Stats::primal_only_scalars`).
fn primal_only(p: &nabla_ir::Program, e: &str, x: f64) -> u64 {
    let (r, st) = run_entry_with_stats(p, e, vec![Value::Prim(PrimValue::F64(x))]);
    r.unwrap_or_else(|err| panic!("{e}: {}", err.message));
    st.primal_only_scalars
}

#[test]
fn unused_derivatives_are_not_computed() {
    let p = front::compile(SRC);
    // The branch-picking integer (its conversion and `%`) needs no derivative.
    for e in ["fwd_branch", "rev_branch"] {
        assert!(primal_only(&p, e, 1.7) >= 2, "{e}");
    }
    // Where the integer reaches the result, every scalar keeps its derivative.
    for e in ["fwd_conv", "rev_conv", "fwd_int"] {
        assert_eq!(primal_only(&p, e, 1.7), 0, "{e}");
    }
}
