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

/// (b) the Jensen 2024, §4.2 loop, in its four modes.
fn seed_loop(c: &mut Criterion) {
    let prog = program("seed_loop.fut");
    let mut g = c.benchmark_group("seed_loop");
    g.sample_size(20);
    for (mode, name) in [(0, "primal"), (1, "jvp"), (2, "vjp"), (3, "constant")] {
        let args = vec![
            Value::Prim(PrimValue::I32(mode)),
            Value::Prim(PrimValue::F32(3.0)),
        ];
        if let Err(e) = prog.run("main", args.clone()) {
            panic!("seed_loop mode {mode} ({name}) fails: {e}");
        }
        g.bench_function(name, |b| {
            b.iter(|| prog.run("main", args.clone()).expect("runs"))
        });
    }
    g.finish();
}

/// (c) `vjp` and `jvp` of a 200-step loop whose values each feed two later
/// operations (a DAG with 2^200 paths): the reverse sweep is linear in the
/// tape (crates/nabla-interp/tests/ad.rs checks the tape size and the
/// sweep's visits; this measures the time).
fn sweep_dag(c: &mut Criterion) {
    let prog = program("sweep_dag.fut");
    let args = vec![Value::Prim(PrimValue::F64(0.9))];
    let mut g = c.benchmark_group("ad");
    g.sample_size(20);
    g.bench_function("sweep_dag_200", |b| {
        b.iter(|| prog.run("main", args.clone()).expect("runs"))
    });
    g.finish();
}

/// (d) Lexing `a.b.b.…` with 200000 projections (linear in the length;
/// crates/nabla-syntax/tests/lexer.rs checks the tokens).
fn lex_dotted_chain(c: &mut Criterion) {
    let src = format!("a{}", ".b".repeat(200_000));
    let mut g = c.benchmark_group("lexer");
    g.sample_size(10);
    g.bench_function("dotted_chain_2e5", |b| {
        b.iter(|| {
            let toks = nabla_syntax::lexer::lex(&src, nabla_syntax::FileId(0)).expect("lexes");
            assert_eq!(toks.len(), 400_002);
        })
    });
    g.finish();
}

criterion_group!(benches, map_reduce, seed_loop, sweep_dag, lex_dotted_chain);
criterion_main!(benches);
