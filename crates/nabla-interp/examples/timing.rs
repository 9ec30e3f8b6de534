//! Runs the two benchmark programs a few times and prints wall times:
//! `cargo run --release -p nabla-interp --example timing`.

use nabla_interp::run_entry;
use nabla_values::{ArrayValue, Value};
use std::time::Instant;

#[path = "../tests/common/mod.rs"]
mod common;
use common::benchprogs;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    if which != "loop" {
        let p = benchprogs::map_reduce();
        let xs: Vec<f64> = (0..10_000_000).map(|i| (i % 1000) as f64 * 0.001).collect();
        let arg = Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs));
        for _ in 0..5 {
            let t = Instant::now();
            let r = run_entry(&p, "main", vec![arg.clone()]).unwrap();
            println!("map_reduce 1e7 f64: {:?} ({r:?})", t.elapsed());
        }
    }
    if which != "mapreduce" {
        let p = benchprogs::seed_loop(100_000);
        for _ in 0..5 {
            let t = Instant::now();
            let r = run_entry(
                &p,
                "main",
                vec![Value::Prim(nabla_prim::PrimValue::F32(1.5))],
            )
            .unwrap();
            println!("seed loop 1e5 f32: {:?} ({r:?})", t.elapsed());
        }
    }
}
