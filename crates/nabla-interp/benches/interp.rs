//! Benchmarks of the interpreter on hand-built IR programs (independent of the
//! front end): (a) `reduce (+) 0 (map (\x -> x*x + 1) xs)` over 10^7 f64, and
//! (b) Jensen 2024's 100000-iteration loop (§4.2) on f32.

use criterion::{criterion_group, criterion_main, Criterion};
use nabla_interp::run_entry;
use nabla_values::{ArrayValue, Value};
use std::hint::black_box;

#[path = "../tests/common/mod.rs"]
mod common;
use common::benchprogs;

fn map_reduce(c: &mut Criterion) {
    let p = benchprogs::map_reduce();
    let xs: Vec<f64> = (0..10_000_000).map(|i| (i % 1000) as f64 * 0.001).collect();
    let arg = Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs));
    let mut g = c.benchmark_group("interp");
    g.sample_size(10);
    g.bench_function("map_reduce_1e7_f64", |b| {
        b.iter(|| run_entry(&p, "main", vec![black_box(arg.clone())]).unwrap())
    });
    g.finish();
}

fn seed_loop(c: &mut Criterion) {
    let p = benchprogs::seed_loop(100_000);
    let mut g = c.benchmark_group("interp");
    g.sample_size(20);
    g.bench_function("seed_loop_1e5_f32", |b| {
        b.iter(|| {
            run_entry(
                &p,
                "main",
                vec![black_box(Value::Prim(nabla_prim::PrimValue::F32(1.5)))],
            )
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, map_reduce, seed_loop);
criterion_main!(benches);
