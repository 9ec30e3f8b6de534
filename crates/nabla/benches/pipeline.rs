//! Source-level benchmarks: whole programs compiled by the front end and run
//! by the reference interpreter (compilation is outside the timed region).
//!
//! `cargo bench -p nabla --bench pipeline`

use criterion::{criterion_group, criterion_main, Criterion};
use nabla_prim::PrimValue;
use nabla_values::{ArrayValue, Value};
use std::path::PathBuf;

fn program(name: &str) -> nabla::Compiled {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("benches/programs")
        .join(name);
    match nabla::compile(&path) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

/// (a) `reduce (+) 0 (map f xs)` over 10^7 f64 elements.
fn map_reduce(c: &mut Criterion) {
    let prog = program("map_reduce.fut");
    let n = 10_000_000usize;
    let xs: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 1e-3).collect();
    let arg = Value::Array(ArrayValue::from_vec_f64(&[n as i64], xs));
    let mut g = c.benchmark_group("spine");
    g.sample_size(10);
    g.bench_function("map_reduce_1e7", |b| {
        b.iter(|| prog.run("main", vec![arg.clone()]).expect("runs"))
    });
    g.finish();
}

/// (b) the seed 000 §4.2 loop, in its four modes.
fn seed_loop(c: &mut Criterion) {
    let prog = program("seed_loop.fut");
    let mut g = c.benchmark_group("seed_loop");
    g.sample_size(20);
    for (mode, name) in [(0, "primal"), (1, "jvp"), (2, "vjp"), (3, "constant")] {
        // Modes 1 and 2 need the interpreter's AD; skip them while it is absent.
        let args = vec![
            Value::Prim(PrimValue::I32(mode)),
            Value::Prim(PrimValue::F32(3.0)),
        ];
        if prog.run("main", args.clone()).is_err() {
            eprintln!("seed_loop mode {mode} ({name}) does not run yet; skipped");
            continue;
        }
        g.bench_function(name, |b| {
            b.iter(|| prog.run("main", args.clone()).expect("runs"))
        });
    }
    g.finish();
}

criterion_group!(benches, map_reduce, seed_loop);
criterion_main!(benches);
