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
        run_args: Vec::new(),
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

/// Builds `module`'s executable for `target` and checks every stored
/// input (or those named in `only`, as `module/file.json`), once per set
/// of the executable's options in `run_args` (once without options where
/// it is empty); returns the number of inputs checked.
fn check_module(
    module: &str,
    work: &Path,
    target: nabla_cgen::Target,
    run_args: &[Vec<String>],
    only: Option<&[&str]>,
) -> Result<usize, String> {
    let mut programs =
        nabla::gradbench::Programs::new().compiled_with(static_ad_options().for_target(target));
    let compiled = programs.get(module)?.clone();
    let exe_path = work.join(module);
    build_executable(&compiled, &exe_path).map_err(|e| format!("{module}: {e}"))?;
    let no_options = [Vec::new()];
    let run_args = if run_args.is_empty() {
        &no_options[..]
    } else {
        run_args
    };
    let mut checked = 0;
    for file in pair_files(module) {
        let rel = format!(
            "{module}/{}",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
        if only.is_some_and(|only| !only.contains(&rel.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{rel}: {e}"))?;
        let pair: Json = serde_json::from_str(&text).map_err(|e| format!("{rel}: {e}"))?;
        let function = pair["function"].as_str().unwrap_or_default();
        let call = nabla::gradbench::prepare(module, function, &pair["input"])
            .map_err(|e| format!("{rel}: {e}"))?;
        let types = compiled
            .entry_types(&call.entry)
            .map_err(|e| format!("{rel}: {e}"))?;
        let want = if SLOW_IN_INTERPRETER.contains(&rel.as_str()) {
            None
        } else {
            Some(
                compiled
                    .run(&call.entry, call.args.clone())
                    .map_err(|e| format!("{rel}: the interpreter failed: {}", e.summary))?,
            )
        };
        for args in run_args {
            let exe = Executable::new(exe_path.clone()).with_args(args.clone());
            let rel = format!("{rel} {}", args.join(" "));
            let got = exe
                .run(&compiled, &call.entry, &call.args, &types.results)
                .map_err(|e| format!("{rel}: the executable failed: {}", e.summary))?;
            if let Some(want) = &want {
                nabla_values::compare_value_lists(want, &got)
                    .map_err(|m| format!("{rel}: C and interpreter differ: {m}"))?;
            }
            let output = (call.output)(&got).map_err(|e| format!("{rel}: {e}"))?;
            compare(&pair["output"], &output, TOLERANCE)
                .map_err(|e| format!("{rel}: differs from the reference output: {e}"))?;
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn gradbench_through_c() {
    gradbench_through(nabla_cgen::Target::Sequential, &[], None);
}

/// The stored GradBench inputs `gradbench_through_multicore` checks (CI
/// runs it): one Jacobian of each eval whose parallel levels matter (gmm's
/// map over points of accumulators, ba's, ht's complicated Jacobian, whose
/// in-place rows once went unwritten, lstm's), the smallest of each, and
/// gmm's that once differed from the reference output (compared with it
/// only: [`SLOW_IN_INTERPRETER`]).
/// `gradbench_through_multicore_every_input` checks them all (about 20
/// minutes on 2 busy cores).
const MULTICORE_CI_INPUTS: &[&str] = &[
    "gmm/jacobian-2_5_1000.json",
    "gmm/jacobian-10_10_1000.json",
    "ba/jacobian-ba1_n49_m7776_p31843.json",
    "ht/jacobian-complicated_small-hand1_t26_c100.json",
    "lstm/jacobian-lstm_l2_c1024.json",
];

/// The GradBench inputs of [`MULTICORE_CI_INPUTS`] through multicore C,
/// with 1, 2 and 3 threads and every parallel level in parallel from 2
/// rows on, against the interpreter and the reference outputs.
#[test]
fn gradbench_through_multicore() {
    let checked = gradbench_through(
        nabla_cgen::Target::Multicore,
        &multicore_run_args(),
        Some(MULTICORE_CI_INPUTS),
    );
    assert_eq!(checked, MULTICORE_CI_INPUTS.len());
}

/// Every GradBench program through multicore C, every stored input with 1,
/// 2 and 3 threads and every parallel level in parallel from 2 rows on,
/// against the interpreter and the reference outputs.
#[test]
#[ignore = "about 20 minutes on 2 busy cores; CI runs gradbench_through_multicore, a subset"]
fn gradbench_through_multicore_every_input() {
    gradbench_through(nabla_cgen::Target::Multicore, &multicore_run_args(), None);
}

/// Every GradBench program's executable for `target` on every stored
/// input, or only on those of `only` (`module/file.json`; see
/// [`check_module`]). Returns the number of inputs checked.
fn gradbench_through(
    target: nabla_cgen::Target,
    run_args: &[Vec<String>],
    only: Option<&'static [&'static str]>,
) -> usize {
    let work = std::env::temp_dir().join(format!(
        "nabla-cbackend-gb-{target:?}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&work).expect("a work directory");
    let modules: Vec<&str> = nabla::gradbench::EVALS
        .iter()
        .copied()
        .filter(|m| only.is_none_or(|only| only.iter().any(|i| i.starts_with(&format!("{m}/")))))
        .collect();
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
                let run_args = run_args.to_vec();
                // The interpreter wants a large stack.
                let r = std::thread::Builder::new()
                    .stack_size(nabla::testrunner::runner::STACK_SIZE)
                    .spawn(move || check_module(&m2, &work, target, &run_args, only))
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
    assert_eq!(results.len(), modules.len());
    if only.is_none() {
        let stored: usize = modules.iter().map(|m| pair_files(m).len()).sum();
        assert_eq!(total, stored, "every stored GradBench input is checked");
        assert!(total >= 86, "only {total} GradBench inputs checked");
    }
    total
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
        args: Vec::new(),
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

/// The options of the corpus's runs through multicore C: 1, 2 and 3
/// threads, every parallel level in parallel from 2 rows on (the corpus's
/// inputs are small).
fn multicore_run_args() -> Vec<Vec<String>> {
    (1..=3)
        .map(|t| {
            ["--num-threads", &t.to_string(), "--parallel-from", "2"]
                .map(String::from)
                .to_vec()
        })
        .collect()
}

/// The corpus through multicore C (`nabla test --backend=multicore`),
/// each dataset with 1, 2 and 3 threads, against the interpreter: the
/// same datasets pass and the same programs are skipped as through
/// sequential C (`corpus_through_c`). Integer results are compared
/// exactly (`nabla test`'s rule), floats within its tolerance (a parallel
/// reduction may reassociate).
#[test]
fn corpus_through_multicore() {
    let root = root();
    let tests = root.join("tests");
    let opts = TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
        compile: static_ad_options().for_target(nabla_cgen::Target::Multicore),
        backend: Backend::C,
        run_args: multicore_run_args(),
    };
    let report = run_tests(std::slice::from_ref(&tests), &opts);
    assert_eq!(
        report.failed,
        0,
        "failures through multicore C:\n{}",
        report.failures.join("\n")
    );
    assert!(
        report.passed >= 3 * MIN_CORPUS_PASSED,
        "only {} dataset runs passed through multicore C (expected at least {})",
        report.passed,
        3 * MIN_CORPUS_PASSED
    );
    assert_eq!(
        report.skips.len(),
        EXPECTED_SKIPS.len(),
        "skipped programs:\n{}",
        report.skips.join("\n")
    );
}

/// Programs of `tests/` reduced from wrong multicore results (each file
/// says which), run alone: quicker than [`corpus_through_multicore`],
/// which runs them too.
const MULTICORE_REGRESSIONS: &[&str] = &["tests/programs/multicore_rows_in_place.fut"];

/// The programs of [`MULTICORE_REGRESSIONS`] through multicore C with 2
/// and 3 threads, every level parallel from 2 rows on, against the
/// interpreter: every dataset passes on both.
#[test]
fn multicore_regressions_with_two_and_three_threads() {
    let root = root();
    let files: Vec<PathBuf> = MULTICORE_REGRESSIONS.iter().map(|f| root.join(f)).collect();
    let run_args: Vec<Vec<String>> = multicore_run_args()
        .into_iter()
        .filter(|args| args[1] != "1")
        .collect();
    assert_eq!(run_args.len(), 2);
    let opts = TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
        compile: static_ad_options().for_target(nabla_cgen::Target::Multicore),
        backend: Backend::C,
        run_args,
    };
    let report = run_tests(&files, &opts);
    assert_eq!(
        report.failed,
        0,
        "failures through multicore C:\n{}",
        report.failures.join("\n")
    );
    assert!(report.skips.is_empty(), "{}", report.skips.join("\n"));
    // One dataset per file so far, each run with 2 and with 3 threads.
    assert_eq!(report.passed, 2 * MULTICORE_REGRESSIONS.len());
}

/// A multicore C executable of `program`, compiled with
/// `-DNB_REPORT_THREADS` (it reports on stderr the most threads a
/// parallel level ran on) in a fresh folder named after `name`.
struct ReportingExecutable {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
}

impl ReportingExecutable {
    fn compile(name: &str, program: &str) -> ReportingExecutable {
        let dir = std::env::temp_dir().join(format!("nabla-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let src = dir.join("prog.fut");
        std::fs::write(&src, program).expect("write the program");
        let compiled = nabla::compile_with(
            &src,
            &static_ad_options().for_target(nabla_cgen::Target::Multicore),
        )
        .expect("compiles");
        let c = nabla::cbackend::c_source(&compiled).expect("C");
        assert!(
            c.source.contains("nb_regions_started++;"),
            "no parallel region"
        );
        let c_file = dir.join("prog.c");
        std::fs::write(&c_file, &c.source).expect("write C");
        let exe = dir.join("prog");
        let cc = std::env::var("CC")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "gcc".into());
        let status = std::process::Command::new(&cc)
            .args([
                "-std=c11",
                "-D_GNU_SOURCE",
                "-O1",
                "-fopenmp",
                "-DNB_REPORT_THREADS",
            ])
            .arg(&c_file)
            .arg("-o")
            .arg(&exe)
            .arg("-lm")
            .status()
            .expect("run the C compiler");
        assert!(status.success(), "{cc} failed on {}", c_file.display());
        ReportingExecutable { dir, exe }
    }

    /// Runs it with `args` on `input`; its standard output and error.
    fn run(&self, args: &[&str], input: &[u8]) -> (String, String) {
        let mut child = std::process::Command::new(&self.exe)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the executable");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write input");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs it on `input` with one thread, then with two and `args`;
    /// asserts that both print the same, and returns the two threads' run's
    /// standard output and error.
    fn run_on_one_and_two_threads(&self, args: &[&str], input: &[u8]) -> (String, String) {
        let (one, _) = self.run(&["--num-threads", "1"], input);
        let two_args: Vec<&str> = ["--num-threads", "2"].iter().chain(args).copied().collect();
        let (two, err) = self.run(&two_args, input);
        assert_eq!(one, two, "results differ between 1 and 2 threads");
        (two, err)
    }
}

impl Drop for ReportingExecutable {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A scan by a non-commutative operator, a histogram, a reduction of
/// rows and a scatter, each the only level of its entry point, run on the
/// threads asked for and give the sequential results, computed here: the
/// scan composes the affine maps x -> a*x + b (each thread's carry must
/// come before its values), the histogram adds into 33 bins with some
/// indices out of range, the reduction sums the rows [i, i*i mod 7, -i],
/// the scatter writes the same 33 indices into 33 cells (each cell
/// written many times keeps its last write).
#[test]
fn scans_histograms_row_reductions_and_scatters_run_on_the_threads_asked_for() {
    let exe = ReportingExecutable::compile(
        "multicore-scan-hist",
        "entry prefixes [n] (as: [n]i64) (bs: [n]i64) =\n\
         unzip (scan (\\(a1, b1) (a2, b2) -> (a1 * a2, b1 * a2 + b2)) (1, 0) (zip as bs))\n\
         entry bins [n] (k: i64) (is: [n]i64) (vs: [n]i64) =\n\
         reduce_by_index (replicate k 0) (+) 0 is vs\n\
         entry column_sums [n] (xss: [n][3]i64) = reduce (map2 (+)) (replicate 3 0) xss\n\
         entry last_writes [n] (k: i64) (is: [n]i64) (vs: [n]i64) = scatter (replicate k 0) is vs\n",
    );
    let n = 1000i64;
    let array = |f: &dyn Fn(i64) -> i64| {
        let items: Vec<String> = (0..n).map(|i| format!("{}i64", f(i))).collect();
        format!("[{}]", items.join(", "))
    };
    let a = |i: i64| if i % 3 == 0 { -1 } else { 1 };
    let b = |i: i64| (i * 7) % 11 - 5;
    let index = |i: i64| (i * 13) % 37 - 2;
    let value = |i: i64| i % 17 - 8;
    let (mut prefix_a, mut prefix_b) = (Vec::new(), Vec::new());
    let (mut x, mut y) = (1i64, 0i64);
    for i in 0..n {
        (x, y) = (x * a(i), y * a(i) + b(i));
        prefix_a.push(format!("{x}i64"));
        prefix_b.push(format!("{y}i64"));
    }
    let mut bins = vec![0i64; 33];
    for i in 0..n {
        if (0..33).contains(&index(i)) {
            bins[index(i) as usize] += value(i);
        }
    }
    let rows: Vec<String> = (0..n)
        .map(|i| format!("[{i}i64, {}i64, {}i64]", i * i % 7, -i))
        .collect();
    let sums = [
        (0..n).sum::<i64>(),
        (0..n).map(|i| i * i % 7).sum(),
        -(0..n).sum::<i64>(),
    ];
    let mut last = vec![0i64; 33];
    for i in 0..n {
        if (0..33).contains(&index(i)) {
            last[index(i) as usize] = value(i);
        }
    }
    let last: Vec<String> = last.iter().map(|v| format!("{v}i64")).collect();
    let show = |xs: &[String]| format!("[{}]", xs.join(", "));
    let bins: Vec<String> = bins.iter().map(|v| format!("{v}i64")).collect();
    let cases = [
        (
            "prefixes",
            format!("{} {}", array(&a), array(&b)),
            format!("{}\n{}\n", show(&prefix_a), show(&prefix_b)),
        ),
        (
            "bins",
            format!("33i64 {} {}", array(&index), array(&value)),
            format!("{}\n", show(&bins)),
        ),
        (
            "last_writes",
            format!("33i64 {} {}", array(&index), array(&value)),
            format!("{}\n", show(&last)),
        ),
        (
            "column_sums",
            show(&rows),
            format!("[{}i64, {}i64, {}i64]\n", sums[0], sums[1], sums[2]),
        ),
    ];
    for (entry, input, expected) in cases {
        for threads in ["1", "3"] {
            let (out, err) = exe.run(
                &[
                    "-e",
                    entry,
                    "--num-threads",
                    threads,
                    "--parallel-from",
                    "2",
                ],
                input.as_bytes(),
            );
            assert_eq!(out, expected, "{entry} on {threads} threads");
            let report = if threads == "1" {
                "every level ran its sequential copy"
            } else {
                "up to 3 threads"
            };
            assert!(err.contains(report), "{entry} on {threads} threads: {err}");
        }
    }
}

/// The parallel levels of multicore C really run on the threads asked
/// for (compiled with `-DNB_REPORT_THREADS`, the executable reports the
/// most threads a level ran on; with one thread, every level runs its
/// sequential copy), and give the sequential results: a
/// non-commutative reduction (the last element of each pair wins unless
/// larger), a map of rows and a sum of integers.
#[test]
fn multicore_levels_run_on_the_threads_asked_for() {
    let exe = ReportingExecutable::compile(
        "multicore",
        "entry main (n: i64) =\n\
         let xs = map (\\i -> (i * 7919) % 1009) (iota n)\n\
         let s = reduce (+) 0 xs\n\
         let f = reduce (\\(a: i64, b: i64) (c, d) -> (a * d + c, b * d)) (0, 1) (map (\\x -> (x % 3, 2)) (take 40 xs))\n\
         let rows = map (\\i -> map (\\j -> i * j) (iota 3)) (iota n)\n\
         in (s, f, rows[n - 1])\n",
    );
    let run = |threads: &str| {
        exe.run(
            &["--num-threads", threads, "--parallel-from", "2"],
            b"1000\n",
        )
    };
    let (one, one_err) = run("1");
    let (three, three_err) = run("3");
    assert_eq!(one, three, "results differ between 1 and 3 threads");
    assert!(one.starts_with("504678i64\n"), "{one}");
    // One thread runs each level's sequential copy (the code of `nabla c`).
    assert!(
        one_err.contains("every level ran its sequential copy"),
        "{one_err}"
    );
    assert!(three_err.contains("up to 3 threads"), "{three_err}");
}

/// An entry point whose calls run no parallel region runs its sequential
/// C (`nb_seq_fun_N`, the code of `nabla c`) once two calls in a row ran
/// none, and its parallel C again every 16th call (NB_QUIET_CALLS in
/// multicore_prelude.c); one whose calls run regions keeps its parallel C.
#[test]
fn an_entry_point_whose_calls_run_no_region_runs_its_sequential_c() {
    let exe = ReportingExecutable::compile(
        "quiet-entry",
        "entry main (n: i64) = reduce (+) 0 (map (\\i -> i * i) (iota n))\n",
    );
    // Three rows: below every level's width. `-r 40` calls the entry point
    // 41 times (a warm-up first); calls 1 and 2 run the parallel C, then
    // every call but the 16th and 32nd of the rest (39) the sequential C.
    let (out, err) = exe.run(&["--num-threads", "2", "-r", "40"], b"3\n");
    assert!(out.starts_with("5i64"), "{out}");
    assert!(
        err.contains("nabla: 37 of 41 calls on threads ran the sequential C"),
        "{err}"
    );
    // Every call runs a region: the parallel C throughout.
    let (out, err) = exe.run(
        &["--num-threads", "2", "-r", "40", "--parallel-from", "2"],
        b"1000\n",
    );
    assert!(out.starts_with("332833500i64"), "{out}");
    assert!(
        err.contains("nabla: 0 of 41 calls on threads ran the sequential C"),
        "{err}"
    );
    // One thread always runs the sequential C, without the count.
    let (_, err) = exe.run(&["--num-threads", "1", "-r", "40"], b"3\n");
    assert!(
        err.contains("nabla: 0 of 0 calls on threads ran the sequential C"),
        "{err}"
    );
}

/// A block that a thread of a parallel region allocates is that thread's
/// until the region ends (its owner tag: NB_OWNER_ENTER in
/// multicore_prelude.c), so its reference counts are plain, not atomic.
/// Each row here builds arrays of its own (a scan, a reversal); the
/// region's counts are of those, none atomic. Counted with
/// NB_REPORT_THREADS.
#[test]
fn blocks_allocated_in_a_region_are_counted_without_atomics() {
    let exe = ReportingExecutable::compile(
        "owned-blocks",
        "entry main (n: i64) =\n\
         map (\\i -> let a = scan (+) 0 (map (+ i) (iota 40))\n\
                     in reduce (+) 0 (map2 (*) a (reverse a))) (iota n)\n",
    );
    let (_, err) = exe.run_on_one_and_two_threads(&["--parallel-from", "2"], b"100\n");
    assert!(err.contains("up to 2 threads"), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("reference counts in regions"))
        .unwrap_or_else(|| panic!("no count of reference counts: {err}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{line}");
    assert!(numbers[0] > 0, "the rows made no reference count: {line}");
    assert_eq!(
        numbers[1], 0,
        "atomic counts of the rows' own blocks: {line}"
    );
}

/// A concatenation of large arrays (from 1 MiB, NB_PARALLEL_COPY_BYTES in
/// multicore_prelude.c) is copied by the threads, outside any parallel
/// level; a small one by the calling thread. Counted with
/// NB_REPORT_THREADS.
#[test]
fn large_concatenations_are_copied_by_the_threads() {
    let exe = ReportingExecutable::compile(
        "parallel-copy",
        "entry main (n: i64) =\n\
         let xs = iota n ++ map (* 3) (iota n)\n\
         in (xs[1], xs[n + 5], xs[2 * n - 1], length xs)\n",
    );
    // 2 x 200 000 i64: 1.6 MB each, one copy of each piece.
    let (two, err) = exe.run_on_one_and_two_threads(&[], b"200000\n");
    assert_eq!(
        two.split_whitespace().collect::<Vec<_>>(),
        ["1i64", "15i64", "599997i64", "400000i64"]
    );
    assert!(err.contains("nabla: 2 large copies on threads"), "{err}");
    let (_, small) = exe.run(&["--num-threads", "2"], b"1000\n");
    assert!(
        small.contains("nabla: 0 large copies on threads"),
        "{small}"
    );
}

/// A map fused into the reduction of its results (a redomap) runs in
/// parallel from the map's width, not from the reduction's: each row
/// does the map's work too. Here each row runs a loop of 200 steps, so
/// `lower` decides the map parallel from a few dozen rows and the sum
/// (one addition a row) from thousands; with the reduction's width the
/// fused level over 1000 rows stayed sequential (as gmm's objective did).
/// The widths `lower` decided are used: no `--parallel-from`.
#[test]
fn a_fused_map_and_reduction_runs_in_parallel_from_the_maps_width() {
    let exe = ReportingExecutable::compile(
        "redomap-width",
        "entry main (n: i64) =\n\
         reduce (+) 0 (map (\\i -> loop acc = f64.i64 i for k < 200 do acc * 0.999 + f64.i64 k) (iota n))\n",
    );
    let (one, _) = exe.run(&["--num-threads", "1"], b"1000\n");
    let (two, two_err) = exe.run(&["--num-threads", "2"], b"1000\n");
    let (one, two): (f64, f64) = (
        one.trim().trim_end_matches("f64").parse().expect("a f64"),
        two.trim().trim_end_matches("f64").parse().expect("a f64"),
    );
    assert!((one - two).abs() <= 1e-9 * one.abs(), "{one} vs {two}");
    assert!(two_err.contains("up to 2 threads"), "{two_err}");
    // Below the map's width it stays sequential.
    let (_, small_err) = exe.run(&["--num-threads", "2"], b"3\n");
    assert!(
        small_err.contains("every level ran its sequential copy"),
        "{small_err}"
    );
}
