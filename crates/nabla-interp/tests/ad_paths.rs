//! AD's first-order scalar fast path (`src/ad/fast.rs`) against the generic
//! path, checked through the interpreter's path counters ([`Stats`]): plain
//! first-order `f64` code takes the fast path for every operation, records
//! one tape entry per operation and sweeps each once; an operation that
//! mixes two nesting levels takes the generic path. Values are checked
//! against the derivatives written out.

#[path = "common/front.rs"]
mod front;

use nabla_interp::{run_entry_with_stats, Stats};
use nabla_prim::PrimValue;
use nabla_values::Value;

const SRC: &str = "
entry v (x: f64) = vjp (\\y -> f64.sin y * y + y / 3) x 1
entry j (x: f64) = jvp (\\y -> f64.sin y * y + y / 3) x 1
entry h (x: f64) = jvp (\\s -> vjp (\\y -> f64.sin y * y * s + y / 3) x 1) 2 1
";

fn run(p: &nabla_ir::Program, e: &str, x: f64) -> (f64, Stats) {
    let (r, st) = run_entry_with_stats(p, e, vec![Value::Prim(PrimValue::F64(x))]);
    match r
        .unwrap_or_else(|err| panic!("{e}: {}", err.message))
        .as_slice()
    {
        [Value::Prim(PrimValue::F64(y))] => (*y, st),
        r => panic!("{e}: unexpected {r:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-14 * (1.0 + b.abs())
}

#[test]
fn first_order_scalars_take_the_fast_path() {
    let p = front::compile(SRC);
    let x = 0.5f64;
    // d/dy (sin y · y + y / 3) = cos y · y + sin y + 1/3.
    let d = x.cos() * x + x.sin() + 1.0 / 3.0;
    let (g, st) = run(&p, "v", x);
    assert!(close(g, d), "vjp {g} vs {d}");
    // sin, *, /, +: four operations, each on the fast path, each one tape
    // entry (after the input's), each visited once by the sweep.
    assert_eq!(st.fast_scalars, 4, "{st:?}");
    assert_eq!((st.tape_entries, st.sweep_steps), (5, 4), "{st:?}");
    let (t, st) = run(&p, "j", x);
    assert!(close(t, d), "jvp {t} vs {d}");
    assert_eq!(st.fast_scalars, 4, "{st:?}");
    assert_eq!(st.tape_entries, 0, "{st:?}");
}

#[test]
fn mixed_levels_take_the_generic_path() {
    let p = front::compile(SRC);
    let x = 0.5f64;
    // d/ds of ∂/∂y (sin y · y · s + y / 3) = cos y · y + sin y.
    let d = x.cos() * x + x.sin();
    let (r, st) = run(&p, "h", x);
    assert!(close(r, d), "{r} vs {d}");
    assert_eq!((st.jvps, st.vjps), (1, 1), "{st:?}");
    // Five operations; the product with `s` (a value of the outer jvp
    // times one of the inner vjp) and the sum after it (whose operand
    // now carries both levels) cannot take the fast path.
    assert!(st.fast_scalars <= 3, "{st:?}");
    assert!(st.fast_scalars >= 1, "{st:?}");
}
