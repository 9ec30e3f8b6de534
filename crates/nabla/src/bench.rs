//! `nabla bench`: times a program's entry points on the datasets of its
//! test blocks, as `futhark bench` does.
//!
//! For every dataset that is not skipped (`compiled`/`script` datasets of
//! the interpreter, `notest`, `disable`, `nobench`) and does not expect an
//! error, and every entry point it names: one warm-up run, then `runs`
//! timed runs. The interpreter is timed around each run; an executable of
//! the C backend times itself (`-r RUNS -t FILE`, microseconds, its own
//! warm-up run first). Results are reported as
//! `prog.fut:ENTRY (dataset DESC):  MEAN µs (RSD x.xx; min: …, max: …)` and,
//! with `--json`, in `futhark bench`'s JSON layout:
//! `{"prog.fut:ENTRY": {"datasets": {"DESC": {"runtimes": [µs, …],
//! "bytes": 0, "stderr": ""}}}}`.

use crate::cbackend::{binary_input, build_executable, Executable};
use crate::driver::{compile_with, CompileOptions, Compiled};
use crate::testrunner::runner::dataset_args;
use crate::testrunner::spec::{parse_test_spec, Expected, InputSpec};
use serde_json::{json, Map, Value as Json};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The timings of one entry point on one dataset.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// `prog.fut:ENTRY`.
    pub key: String,
    /// The dataset's description (its name, or its input abbreviated).
    pub dataset: String,
    /// One duration per timed run, in microseconds.
    pub runtimes: Vec<u64>,
}

impl Measurement {
    /// The line `futhark bench` prints: mean, relative standard deviation,
    /// minimum and maximum.
    pub fn line(&self) -> String {
        let n = self.runtimes.len().max(1) as f64;
        let mean = self.runtimes.iter().sum::<u64>() as f64 / n;
        let var = self
            .runtimes
            .iter()
            .map(|&t| (t as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        let rsd = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
        let min = self.runtimes.iter().min().copied().unwrap_or(0);
        let max = self.runtimes.iter().max().copied().unwrap_or(0);
        format!(
            "{} (dataset {}): {:10.0}µs (RSD {rsd:.2}; min: {min}, max: {max})",
            self.key, self.dataset, mean
        )
    }
}

/// What runs the program.
pub enum BenchBackend {
    /// The interpreter.
    Interp,
    /// An executable of the C backend (built in a temporary folder).
    C,
}

/// The measurements in `futhark bench`'s JSON layout (see the module docs).
pub fn to_json(ms: &[Measurement]) -> Json {
    let mut out = Map::new();
    for m in ms {
        let entry = out
            .entry(m.key.clone())
            .or_insert_with(|| json!({"datasets": {}}));
        entry["datasets"][m.dataset.as_str()] =
            json!({"runtimes": m.runtimes, "bytes": 0, "stderr": ""});
    }
    Json::Object(out)
}

/// Benchmarks `path` (see the module docs): `runs` timed runs per entry
/// point and dataset, only entry point `only_entry` when given. Each
/// measurement is passed to `report` as it is made. Errors: a program or
/// test block that does not parse or compile, a dataset that cannot be
/// read, or a failing run (with its message).
pub fn bench(
    path: &Path,
    options: &CompileOptions,
    backend: BenchBackend,
    runs: u64,
    only_entry: Option<&str>,
    report: &mut dyn FnMut(&Measurement),
) -> Result<Vec<Measurement>, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let spec = parse_test_spec(&source, dir)
        .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message))?;
    let compiled = compile_with(path, options).map_err(|e| e.rendered)?;
    let work = tempdir()?;
    let result = (|| {
        let exe = match backend {
            BenchBackend::Interp => None,
            BenchBackend::C => {
                let exe = work.join("prog");
                build_executable(&compiled, &exe).map_err(|e| e.to_string())?;
                let mut exe = Executable::new(exe);
                exe.timeout = None;
                Some(exe)
            }
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut out = Vec::new();
        let mut idx = 0;
        for block in &spec.blocks {
            if block.compile_only() {
                idx += 1;
                continue;
            }
            for (in_block, ds) in block.datasets.iter().enumerate() {
                let this = idx;
                idx += 1;
                let interp_only = matches!(backend, BenchBackend::Interp);
                let skipped = (interp_only && ds.skipped())
                    || ds.tags.iter().any(|t| {
                        t == "nobench" || t == "script" || crate::testrunner::spec::excluded_tag(t)
                    })
                    || matches!(ds.expected, Expected::Error(_));
                if skipped {
                    continue;
                }
                for entry in &ds.entries {
                    if only_entry.is_some_and(|e| e != entry) {
                        continue;
                    }
                    let runtimes =
                        time_dataset(&compiled, exe.as_ref(), path, entry, ds, this, runs)?;
                    let m = Measurement {
                        key: format!("{name}:{entry}"),
                        dataset: dataset_name(ds, in_block),
                        runtimes,
                    };
                    report(&m);
                    out.push(m);
                }
            }
        }
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// A dataset's name in the report: its quoted name, its file, or its
/// position in its test block and its input abbreviated (`#0 ("[1.0]")`).
fn dataset_name(ds: &crate::testrunner::Dataset, in_block: usize) -> String {
    if let Some(n) = &ds.name {
        return n.clone();
    }
    match &ds.input {
        InputSpec::File(p) => p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default(),
        InputSpec::Values(t) | InputSpec::Random(t) => format!(
            "#{in_block} (\"{}\")",
            crate::testrunner::spec::abbreviate(t, 30).trim()
        ),
    }
}

/// One warm-up run and `runs` timed runs of `entry` on dataset `ds`.
fn time_dataset(
    c: &Compiled,
    exe: Option<&Executable>,
    path: &Path,
    entry: &str,
    ds: &crate::testrunner::Dataset,
    idx: usize,
    runs: u64,
) -> Result<Vec<u64>, String> {
    let types = c.entry_types(entry)?;
    let args = dataset_args(path, entry, ds, idx, &types.params)
        .map_err(|e| format!("{}:{entry} ({}): {e}", path.display(), ds.describe()))?;
    let failed = |e: crate::driver::RunError| {
        format!(
            "{}:{entry} ({}): {}",
            path.display(),
            ds.describe(),
            e.summary
        )
    };
    match exe {
        Some(exe) => {
            let input = Arc::new(binary_input(&args));
            let (_, micros) = exe
                .run_input(c, entry, &input, &types.results, Some(runs))
                .map_err(failed)?;
            Ok(micros)
        }
        None => {
            c.run(entry, args.clone()).map_err(failed)?;
            let mut out = Vec::new();
            for _ in 0..runs {
                let a = args.clone();
                let t0 = Instant::now();
                c.run(entry, a).map_err(failed)?;
                out.push(t0.elapsed().as_micros() as u64);
            }
            Ok(out)
        }
    }
}

/// A fresh temporary folder for the executable.
fn tempdir() -> Result<std::path::PathBuf, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "nabla-bench-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    Ok(d)
}
