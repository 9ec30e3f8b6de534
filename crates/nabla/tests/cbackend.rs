//! The C backend against the interpreter (the oracle).
//!
//! * `corpus_through_c`: every test program of `tests/` compiled with
//!   `nabla c`'s pipeline (static AD) and its datasets run by the
//!   executable (`nabla test --backend=c`): no failure, at least
//!   [`MIN_CORPUS_PASSED`] datasets passed, and exactly the programs in
//!   [`EXPECTED_SKIPS`] skipped (so a new skip fails the test).
//! * `gradbench_through_c`: every GradBench program compiled to an
//!   executable; every stored input in `testdata/gradbench/` run through
//!   it: the results must equal the interpreter's (`nabla test`'s rule:
//!   integers exact, floats within its tolerance; the slowest workloads in
//!   the interpreter are compared with the stored reference output only)
//!   and the reference output (GradBench's rule).
//!
//! Needs a C compiler (`cc`, or `$CC`).

use nabla::cbackend::{build_executable, Executable};
use nabla::gradbench::json::{compare, TOLERANCE};
use nabla::testrunner::{run_tests, Backend, TestOptions};
use nabla::{CompileOptions, Pipeline};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Datasets of `tests/` that pass through the C backend (raise it when
/// more pass; a drop is a regression).
const MIN_CORPUS_PASSED: usize = 664;

/// The entry points of `tests/` the C backend leaves out: static AD
/// compiles every `jvp`/`vjp` of `tests/` away except the `vjp`s of
/// recursive functions (reverse mode inlines calls), which it leaves to the
/// interpreter's dynamic AD.
const EXPECTED_SKIPS: &[&str] = &[
    "tests/ad/recursion.fut:pow_vjp",
    "tests/ad/recursion.fut:sumsq_vjp",
];

/// Stored GradBench inputs whose interpreter run is too slow for CI: the
/// executable's output is compared with the stored reference output only.
const SLOW_IN_INTERPRETER: &[&str] = &[
    "gmm/jacobian-10_10_1000.json",
    "gmm/jacobian-10_25_1000.json",
    "gmm/jacobian-20_5_1000.json",
    "gmm/jacobian-20_10_1000.json",
    "gmm/jacobian-20_25_1000.json",
    "lstm/jacobian-lstm_l2_c4096.json",
    "lstm/jacobian-lstm_l4_c4096.json",
    "ba/jacobian-ba2_n21_m11315_p36455.json",
    "ht/jacobian-complicated_small-hand2_t26_c192.json",
    "ht/jacobian-simple_small-hand2_t26_c192.json",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn static_ad_options() -> CompileOptions {
    CompileOptions::new(Pipeline::default_pipeline().validating(true))
}

#[test]
fn corpus_through_c() {
    let root = root();
    let tests = root.join("tests");
    let opts = TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
        compile: static_ad_options(),
        backend: Backend::C,
    };
    let report = run_tests(std::slice::from_ref(&tests), &opts);
    let prefix = format!("SKIP {}/", root.display());
    let skips: Vec<String> = report
        .skips
        .iter()
        .map(|s| s.replacen(&prefix, "", 1))
        .collect();
    assert_eq!(
        report.failed,
        0,
        "failures through the C backend:\n{}",
        report.failures.join("\n")
    );
    assert!(
        report.passed >= MIN_CORPUS_PASSED,
        "only {} datasets passed through the C backend (expected at least {MIN_CORPUS_PASSED})",
        report.passed
    );
    assert_eq!(
        skips.len(),
        EXPECTED_SKIPS.len(),
        "skipped programs:\n{}",
        skips.join("\n")
    );
    for (got, want) in skips.iter().zip(EXPECTED_SKIPS) {
        assert!(
            got.starts_with(want),
            "unexpected skip: {got} (expected one starting with {want})"
        );
    }
}

/// The stored pair files of one eval.
fn pair_files(module: &str) -> Vec<PathBuf> {
    let dir = root().join("testdata/gradbench").join(module);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Builds `module`'s executable and checks every stored input; returns
/// the number of inputs checked.
fn check_module(module: &str, work: &Path) -> Result<usize, String> {
    let mut programs = nabla::gradbench::Programs::new().compiled_with(static_ad_options());
    let compiled = programs.get(module)?.clone();
    let exe_path = work.join(module);
    build_executable(&compiled, &exe_path).map_err(|e| format!("{module}: {e}"))?;
    let exe = Executable::new(exe_path);
    let mut checked = 0;
    for file in pair_files(module) {
        let rel = format!(
            "{module}/{}",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{rel}: {e}"))?;
        let pair: Json = serde_json::from_str(&text).map_err(|e| format!("{rel}: {e}"))?;
        let function = pair["function"].as_str().unwrap_or_default();
        let call = nabla::gradbench::prepare(module, function, &pair["input"])
            .map_err(|e| format!("{rel}: {e}"))?;
        let types = compiled
            .entry_types(&call.entry)
            .map_err(|e| format!("{rel}: {e}"))?;
        let got = exe
            .run(&compiled, &call.entry, &call.args, &types.results)
            .map_err(|e| format!("{rel}: the executable failed: {}", e.summary))?;
        if !SLOW_IN_INTERPRETER.contains(&rel.as_str()) {
            let want = compiled
                .run(&call.entry, call.args.clone())
                .map_err(|e| format!("{rel}: the interpreter failed: {}", e.summary))?;
            nabla_values::compare_value_lists(&want, &got)
                .map_err(|m| format!("{rel}: C and interpreter differ: {m}"))?;
        }
        let output = (call.output)(&got).map_err(|e| format!("{rel}: {e}"))?;
        compare(&pair["output"], &output, TOLERANCE)
            .map_err(|e| format!("{rel}: differs from the reference output: {e}"))?;
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn gradbench_through_c() {
    let work = std::env::temp_dir().join(format!("nabla-cbackend-gb-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let modules: Vec<&str> = nabla::gradbench::EVALS.to_vec();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<(String, Result<usize, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(m) = modules.get(i) else { break };
                let work = work.clone();
                let m2 = m.to_string();
                // The interpreter wants a large stack.
                let r = std::thread::Builder::new()
                    .stack_size(nabla::testrunner::runner::STACK_SIZE)
                    .spawn(move || check_module(&m2, &work))
                    .expect("spawn")
                    .join()
                    .unwrap_or_else(|_| Err(format!("{m}: the test thread panicked")));
                results.lock().unwrap().push((m.to_string(), r));
            });
        }
    });
    let _ = std::fs::remove_dir_all(&work);
    let results = results.into_inner().unwrap();
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().cloned())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let total: usize = results.iter().filter_map(|(_, r)| r.as_ref().ok()).sum();
    let stored: usize = modules.iter().map(|m| pair_files(m).len()).sum();
    assert_eq!(results.len(), modules.len());
    assert_eq!(total, stored, "every stored GradBench input is checked");
    assert!(total >= 86, "only {total} GradBench inputs checked");
}

#[test]
fn an_endless_compiled_program_is_stopped_by_the_timeout() {
    let dir = std::env::temp_dir().join(format!("nabla-cbackend-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a work directory");
    let src = dir.join("endless.fut");
    std::fs::write(
        &src,
        "entry main (n: i64) = loop x = n while x >= 0 do (x + 1) % 1000\n",
    )
    .expect("write the program");
    let compiled = nabla::compile_with(&src, &static_ad_options()).expect("compiles");
    let exe_path = dir.join("endless");
    build_executable(&compiled, &exe_path).expect("builds");
    let exe = Executable {
        path: exe_path,
        timeout: Some(Duration::from_millis(500)),
    };
    let types = compiled.entry_types("main").expect("an entry point");
    let err = exe
        .run(
            &compiled,
            "main",
            &[nabla_values::Value::Prim(nabla_ir::PrimValue::I64(1))],
            &types.results,
        )
        .expect_err("the run is stopped");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.message.contains("was stopped"), "{}", err.message);
}
