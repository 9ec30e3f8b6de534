//! A property of AD on every construct of tests/ad/constructs.fut at random
//! points: `jvp` and `vjp` must both agree with central finite differences
//! of the primal along a random direction, and with each other (the duality
//! ⟨vjp(x, ȳ), ẋ⟩ = ⟨ȳ, jvp(x, ẋ)⟩).
//!
//! Duality alone cannot catch a partial derivative that is wrong in the same
//! way in both modes (both use one rule table); finite differences alone
//! check only the directions tried. Together, on the same points, a wrong
//! partial fails at least one of them.
//!
//! Some constructs jump (a comparison chooses between formulas, `floor`) or
//! have kinks (`max`, `min`). Where the primal is not smooth around the
//! point, the finite difference means nothing: an output is left out when
//! its central differences with steps h and h/2 disagree, and only the
//! constructs listed in [`NOT_SMOOTH`] may have such outputs.

#[path = "common/front.rs"]
mod front;

use nabla_interp::run_entry;
use nabla_ir::Program;
use nabla_values::{ArrayValue, Value};
use proptest::prelude::*;
use std::sync::OnceLock;

/// The number of constructs (`fK`, K = 1 …) in tests/ad/constructs.fut.
const N_CONSTRUCTS: usize = 16;

/// The constructs whose primal has jumps or kinks: f2 (`max`/`min`), f5
/// (`hist` with `max`), f9 and f16 (comparisons choose the formula), f15
/// (`floor`, comparisons).
const NOT_SMOOTH: &[usize] = &[2, 5, 9, 15, 16];

fn constructs() -> &'static Program {
    static P: OnceLock<Program> = OnceLock::new();
    P.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/ad/constructs.fut");
        let src =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        front::compile(&src)
    })
}

fn arr(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}

fn run(p: &Program, e: &str, args: Vec<Value>) -> Vec<f64> {
    run_entry(p, e, args)
        .unwrap_or_else(|err| panic!("{e}: {}", err.message))
        .iter()
        .flat_map(|v| match v {
            Value::Prim(p) => vec![p.as_f64()],
            Value::Array(a) => a.iter_prims().map(|p| p.as_f64()).collect(),
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Central differences of construct `k` at `x` along `dx` with step `h`,
/// one per output.
fn central(k: usize, x: &[f64], dx: &[f64], h: f64) -> Vec<f64> {
    let p = constructs();
    let at = |s: f64| -> Vec<f64> {
        let y: Vec<f64> = x.iter().zip(dx).map(|(a, d)| a + s * d).collect();
        run(p, &format!("p{k}"), vec![arr(&y)])
    };
    let (fp, fm) = (at(h), at(-h));
    assert_eq!(fp.len(), fm.len());
    fp.iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

/// Checks construct `k` at `x` along `dx`, with output weights drawn from
/// `ybar` (cycled); returns the number of outputs left out as not smooth.
fn check(k: usize, x: &[f64], dx: &[f64], ybar: &[f64]) -> Result<usize, TestCaseError> {
    let p = constructs();
    let h = 1e-6;
    let fd = central(k, x, dx, h);
    let fd2 = central(k, x, dx, h / 2.0);
    let j = run(p, &format!("j{k}"), vec![arr(x), arr(dx)]);
    prop_assert_eq!(j.len(), fd.len(), "f{}: jvp and primal lengths", k);
    // The outputs where the primal is smooth around x.
    let smooth: Vec<bool> = fd
        .iter()
        .zip(&fd2)
        .map(|(a, b)| close(*a, *b, 1e-4))
        .collect();
    let skipped = smooth.iter().filter(|s| !**s).count();
    prop_assert!(
        skipped == 0 || NOT_SMOOTH.contains(&k),
        "f{} is not smooth at {:?} along {:?}: h gives {:?}, h/2 gives {:?}",
        k,
        x,
        dx,
        fd,
        fd2
    );
    // jvp against the finite differences, output by output.
    for m in 0..j.len() {
        if smooth[m] {
            prop_assert!(
                close(j[m], fd[m], 1e-5),
                "f{} at {:?} along {:?}, output {}: jvp {} vs finite difference {}",
                k,
                x,
                dx,
                m,
                j[m],
                fd[m]
            );
        }
    }
    // vjp against the finite differences, with weight 0 on outputs that are
    // not smooth, and against jvp (duality) with all the weights.
    let w: Vec<f64> = (0..j.len()).map(|m| ybar[m % ybar.len()]).collect();
    let w_smooth: Vec<f64> = w
        .iter()
        .zip(&smooth)
        .map(|(y, s)| if *s { *y } else { 0.0 })
        .collect();
    let g = run(p, &format!("v{k}"), vec![arr(x), arr(&w_smooth)]);
    prop_assert_eq!(g.len(), x.len(), "f{}: one adjoint per input", k);
    let (lhs, rhs) = (dot(&g, dx), dot(&w_smooth, &fd));
    let scale: f64 = w_smooth.iter().zip(&fd).map(|(y, d)| (y * d).abs()).sum();
    prop_assert!(
        (lhs - rhs).abs() <= 1e-5 * (1.0 + scale),
        "f{} at {:?} along {:?}: <vjp x y, dx> = {} but <y, finite difference> = {}",
        k,
        x,
        dx,
        lhs,
        rhs
    );
    let g = run(p, &format!("v{k}"), vec![arr(x), arr(&w)]);
    let (lhs, rhs) = (dot(&g, dx), dot(&w, &j));
    prop_assert!(
        close(lhs, rhs, 1e-9),
        "f{}: <vjp x y, dx> = {} but <y, jvp x dx> = {}",
        k,
        lhs,
        rhs
    );
    Ok(skipped)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn jvp_and_vjp_match_finite_differences_and_each_other(
        x in proptest::collection::vec(0.1f64..2.0, 6),
        dx in proptest::collection::vec(-1.0f64..1.0, 6),
        ybar in proptest::collection::vec(-1.0f64..1.0, 1..8),
    ) {
        let mut outputs_checked = 0;
        for k in 1..=N_CONSTRUCTS {
            let n = run(constructs(), &format!("p{k}"), vec![arr(&x)]).len();
            outputs_checked += n - check(k, &x, &dx, &ybar)?;
        }
        // Most outputs are smooth at a random point: the comparison is not
        // vacuous.
        prop_assert!(outputs_checked > 100, "only {} outputs compared", outputs_checked);
    }
}

/// The finite-difference check rejects a wrong derivative: a `jvp` scaled
/// by 1.01 fails it (so the property above can fail).
#[test]
fn a_wrong_derivative_is_caught() {
    let x = [0.3, 1.2, 0.7, 1.9, 0.5, 1.1];
    let dx = [0.5, -0.25, 1.0, 0.125, -0.75, 0.3];
    let p = constructs();
    let fd = central(1, &x, &dx, 1e-6);
    let j = run(p, "j1", vec![arr(&x), arr(&dx)]);
    assert!(j.iter().zip(&fd).all(|(a, b)| close(*a, *b, 1e-5)));
    assert!(j.iter().zip(&fd).any(|(a, b)| !close(a * 1.01, *b, 1e-5)));
}
