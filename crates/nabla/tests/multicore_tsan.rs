//! Multicore C under ThreadSanitizer (issue 31): programs of `tests/`
//! compiled with `nabla multicore`, clang's `-fsanitize=thread` and LLVM's
//! OpenMP runtime, run with 2 and 3 threads and every parallel level
//! parallel from 2 rows on, against the interpreter; a data race makes
//! the executable exit with status 66 and print TSan's report, which
//! fails the dataset.
//!
//! TSan sees OpenMP's synchronisation (a region's closing barrier) only
//! through Archer, LLVM's OpenMP tool (`libarcher.so`, loaded by
//! `OMP_TOOL_LIBRARIES`); without it every region's join would be
//! reported. `ignore_noninstrumented_modules=1` keeps the runtime's own
//! accesses out of the reports. A planted race checks that the set-up
//! does report races. Needs clang with LLVM's OpenMP (Debian's
//! `libomp-dev`) and compiler-rt (`libclang-rt-N-dev`): `.ci/setup`
//! installs them; a machine without them fails this test.
//!
//! One test function: it sets the process's environment (`CC`, `CFLAGS`,
//! `OMP_TOOL_LIBRARIES`, `TSAN_OPTIONS`), which the compilation and the
//! executables read.

use nabla::testrunner::{run_tests, Backend, TestOptions};
use nabla::{CompileOptions, Pipeline};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The programs run under TSan: each has parallel levels (maps, reductions
/// of scalars and of rows, scans, histograms, scatters and maps that add
/// into accumulators, in the primal and in derivatives).
const PROGRAMS: &[&str] = &[
    "tests/programs/multicore_rows_in_place.fut",
    "tests/programs/multicore_scans_histograms.fut",
    "tests/programs/multicore_row_reductions.fut",
    "tests/programs/multicore_scatter.fut",
    "tests/programs/accumulators.fut",
    "tests/ad/accumulators.fut",
    "tests/ad/histograms.fut",
    "tests/ad/loops_in_maps.fut",
    "tests/ad/nested.fut",
    "tests/ad/row_operators.fut",
    "tests/ad/sums.fut",
];

/// The exit status TSan gives an executable that raced.
const RACE_STATUS: i32 = 66;

/// The C flags: TSan, debug lines for its reports, and compiler-rt's
/// builtins (the runtime's `f16` conversions need them with clang 14).
const TSAN_CFLAGS: &str = "-O1 -g -fsanitize=thread -rtlib=compiler-rt -lgcc_s";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Archer, LLVM's OpenMP tool for TSan: `libarcher.so` beside clang's
/// libraries (`<llvm>/lib`, two levels above its resource directory).
fn archer() -> PathBuf {
    let out = Command::new("clang")
        .arg("-print-resource-dir")
        .output()
        .expect("run clang (`.ci/setup` installs it)");
    let resource = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let lib = resource
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("libarcher.so"))
        .expect("clang's resource directory");
    assert!(
        lib.is_file(),
        "no {} (LLVM's OpenMP tool for ThreadSanitizer): install Debian's libomp-dev (`.ci/setup` does)",
        lib.display()
    );
    lib
}

/// Compiles `source` (C with OpenMP) with the test's clang and TSan flags
/// into `dir` and runs it: its exit status and standard error.
fn run_c(dir: &Path, name: &str, source: &str) -> (Option<i32>, String) {
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&c, source).expect("write C");
    let status = Command::new("clang")
        .args(TSAN_CFLAGS.split_whitespace())
        .arg("-fopenmp")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run clang");
    assert!(status.success(), "clang failed on {}", c.display());
    let out = Command::new(&exe).output().expect("run the executable");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn multicore_programs_have_no_data_race_under_thread_sanitizer() {
    let archer = archer();
    std::env::set_var("CC", "clang");
    std::env::set_var("CFLAGS", TSAN_CFLAGS);
    std::env::set_var("OMP_TOOL_LIBRARIES", &archer);
    std::env::set_var(
        "TSAN_OPTIONS",
        format!("ignore_noninstrumented_modules=1 halt_on_error=1 exitcode={RACE_STATUS}"),
    );

    // The set-up reports a race (two threads adding to one variable) and
    // nothing for the same loop as an OpenMP reduction.
    let dir = std::env::temp_dir().join(format!("nabla-tsan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let body = |clause: &str| {
        format!(
            "#include <stdio.h>\nint main(void) {{\n  long total = 0;\n#pragma omp parallel for num_threads(2){clause}\n  for (int i = 0; i < 1000; i++) total += i;\n  printf(\"%ld\\n\", total);\n  return 0;\n}}\n"
        )
    };
    let (status, err) = run_c(&dir, "race", &body(""));
    assert_eq!(
        status,
        Some(RACE_STATUS),
        "the planted race was not reported:\n{err}"
    );
    assert!(err.contains("ThreadSanitizer: data race"), "{err}");
    assert!(
        err.contains("race.c:5"),
        "the report does not name the racing line:\n{err}"
    );
    let (status, err) = run_c(&dir, "reduction", &body(" reduction(+:total)"));
    assert_eq!(
        status,
        Some(0),
        "a race-free OpenMP reduction was reported:\n{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    let root = root();
    let files: Vec<PathBuf> = PROGRAMS.iter().map(|f| root.join(f)).collect();
    let run_args: Vec<Vec<String>> = [2, 3]
        .iter()
        .map(|t: &i32| {
            ["--num-threads", &t.to_string(), "--parallel-from", "2"]
                .map(String::from)
                .to_vec()
        })
        .collect();
    let opts = TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
        compile: CompileOptions::new(Pipeline::default_pipeline().validating(true))
            .for_target(nabla_cgen::Target::Multicore),
        backend: Backend::C,
        run_args,
    };
    let report = run_tests(&files, &opts);
    assert_eq!(
        report.failed,
        0,
        "failures (a data race exits with {RACE_STATUS} and TSan's report) through multicore C under ThreadSanitizer:\n{}",
        report.failures.join("\n")
    );
    assert!(
        report.skips.is_empty(),
        "skipped:\n{}",
        report.skips.join("\n")
    );
    assert!(
        report.passed >= 2 * PROGRAMS.len(),
        "only {} dataset runs passed",
        report.passed
    );
}
