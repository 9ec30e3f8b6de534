//! The cost of derivatives relative to their primal (issue 8's cost table):
//! for each construct of `programs/ad_cost.fut`, the interpreter's time for
//! the primal, for the static `vjp` (the `ad` pass) and for the dynamic
//! `vjp`, at two input sizes (the ratio must not grow with the size).
//!
//! `cargo bench -p nabla --bench ad_cost` prints one line per construct and
//! size: the best of five runs of each, in milliseconds, and the ratios.

use nabla::{compile_with, CompileOptions, Compiled, Pipeline};
use nabla_prim::PrimValue;
use nabla_values::{ArrayValue, Value};
use std::path::PathBuf;
use std::time::Instant;

const NAMES: [&str; 15] = [
    "reduce +",
    "reduce *",
    "reduce max",
    "reduce generic",
    "scan +",
    "scan *",
    "scan tuple",
    "hist +",
    "hist max",
    "hist generic",
    "scatter",
    "map, free array",
    "sequential loop",
    "scan rows",
    "hist rows",
];

fn program(pipeline: Pipeline) -> Compiled {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/programs/ad_cost.fut");
    compile_with(&path, &CompileOptions::new(pipeline)).unwrap_or_else(|e| panic!("{e}"))
}

/// The best of five runs, in milliseconds.
fn best_ms(prog: &Compiled, entry: &str, args: &[Value]) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            prog.run(entry, args.to_vec())
                .unwrap_or_else(|e| panic!("{entry}: {e:?}"));
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let static_ = program(Pipeline::default_pipeline());
    let dynamic = program(Pipeline::dynamic_ad());
    println!(
        "{:16} {:>8} {:>10} {:>10} {:>7} {:>10} {:>7}",
        "construct", "n", "primal ms", "static ms", "ratio", "dynamic ms", "ratio"
    );
    for (k, name) in NAMES.iter().enumerate() {
        for n in [10_000usize, 100_000] {
            let xs: Vec<f64> = (0..n).map(|i| ((i * 37) % 1000) as f64 * 1e-3).collect();
            let args = vec![
                Value::Prim(PrimValue::I32(k as i32)),
                Value::Array(ArrayValue::from_vec_f64(&[n as i64], xs)),
            ];
            let p = best_ms(&static_, "primal", &args);
            let s = best_ms(&static_, "grad", &args);
            let d = best_ms(&dynamic, "grad", &args);
            println!(
                "{name:16} {n:>8} {p:>10.2} {s:>10.2} {:>7.1} {d:>10.2} {:>7.1}",
                s / p,
                d / p
            );
        }
    }
}
