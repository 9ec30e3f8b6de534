//! The cost of derivatives relative to their primal (issue 8's cost table):
//! for each construct of `programs/ad_cost.fut`, the interpreter's time for
//! the primal, for the static `vjp` (the `ad` pass) and for the dynamic
//! `vjp`, at two input sizes (the ratio must not grow with the size).
//!
//! `cargo bench -p nabla --bench ad_cost` prints one line per construct and
//! size: the best of five runs of each, in milliseconds, and the ratios.
//!
//! A second table compiles the constructs whose reverse rule has a parallel
//! form (the generic `reduce_by_index` rule, on scalars and on rows: chunks
//! of values reduced in parallel) and runs them on 1M values through
//! sequential C (sequential form), multicore C with the sequential form, and
//! multicore C with the parallel form (what `nabla multicore` uses), on 1
//! and 2 threads: the best of five runs of the primal and the gradient.

use nabla::cbackend::{binary_input, build_executable, Executable};
use nabla::{compile_with, CompileOptions, Compiled, Pipeline};
use nabla_cgen::Target;
use nabla_prim::{PrimType, PrimValue};
use nabla_values::ValueType;
use nabla_values::{ArrayValue, Value};
use std::path::PathBuf;
use std::sync::Arc;
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

/// The benchmark program, `programs/ad_cost.fut`.
fn source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/programs/ad_cost.fut")
}

fn program(pipeline: Pipeline) -> Compiled {
    compile_with(&source(), &CompileOptions::new(pipeline)).unwrap_or_else(|e| panic!("{e}"))
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

/// The constructs of `ad_cost.fut` whose reverse rule has a parallel form.
const PARALLEL_FORMS: [usize; 2] = [9, 14];

/// `ad_cost.fut` compiled for `target`, with the parallel forms of reverse
/// rules or not, as an executable in `dir`.
fn executable(dir: &std::path::Path, target: Target, parallel: bool) -> (Compiled, Executable) {
    let mut opts = CompileOptions::new(Pipeline::default_pipeline()).for_target(target);
    opts.pipeline = opts.pipeline.for_parallel_target(parallel);
    let compiled = compile_with(&source(), &opts).unwrap_or_else(|e| panic!("{e}"));
    let exe = dir.join(format!("ad_cost_{target:?}_{parallel}"));
    build_executable(&compiled, &exe).unwrap_or_else(|e| panic!("{e:?}"));
    (compiled, Executable::new(exe))
}

/// The best of five runs of `entry` of `exe`, in milliseconds.
fn best_compiled_ms(
    prog: &Compiled,
    exe: &Executable,
    entry: &str,
    input: &Arc<Vec<u8>>,
    result: ValueType,
) -> f64 {
    let (_, times) = exe
        .run_input(prog, entry, input, &[result], Some(5))
        .unwrap_or_else(|e| panic!("{entry}: {e:?}"));
    times.into_iter().min().expect("five run times") as f64 / 1e3
}

/// The second table (see the module documentation).
fn compiled_table() {
    let dir = std::env::temp_dir().join(format!("nabla-ad-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let builds = [
        (
            "c, sequential form",
            executable(&dir, Target::Sequential, false),
            1,
        ),
        (
            "multicore, sequential form",
            executable(&dir, Target::Multicore, false),
            2,
        ),
        (
            "multicore, parallel form",
            executable(&dir, Target::Multicore, true),
            1,
        ),
        (
            "multicore, parallel form",
            executable(&dir, Target::Multicore, true),
            2,
        ),
    ];
    println!();
    println!(
        "{:16} {:>8} {:28} {:>7} {:>10} {:>10} {:>7}",
        "construct", "n", "compiled", "threads", "primal ms", "grad ms", "ratio"
    );
    let n = 1_000_000usize;
    for k in PARALLEL_FORMS {
        let xs: Vec<f64> = (0..n).map(|i| ((i * 37) % 1000) as f64 * 1e-3).collect();
        let input = Arc::new(binary_input(&[
            Value::Prim(PrimValue::I32(k as i32)),
            Value::Array(ArrayValue::from_vec_f64(&[n as i64], xs)),
        ]));
        for (label, (prog, exe), threads) in &builds {
            let exe = if prog.target == Target::Multicore {
                exe.with_args(vec!["--num-threads".into(), threads.to_string()])
            } else {
                exe.clone()
            };
            let p = best_compiled_ms(
                prog,
                &exe,
                "primal",
                &input,
                ValueType::new(PrimType::F64, 0),
            );
            let g = best_compiled_ms(prog, &exe, "grad", &input, ValueType::new(PrimType::F64, 1));
            println!(
                "{:16} {n:>8} {label:28} {threads:>7} {p:>10.2} {g:>10.2} {:>7.1}",
                NAMES[k],
                g / p
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
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
    compiled_table();
}
