//! The C backend beyond the default C compiler and flags:
//!
//! * `clang_compiles_the_corpus`: `nabla test --backend=c` with `CC=clang`
//!   on part of `tests/` (the numeric, prelude and program directories:
//!   every primitive type, f16 included, every conversion and most SOACs).
//!   With clang 14 (Debian 12's), f16 takes runtime.c's `__fp16` path.
//! * `part_of_the_corpus_runs_under_the_sanitizers`: the same with
//!   AddressSanitizer (leak check on) and UndefinedBehaviorSanitizer on
//!   the AD and program directories: the generated code's memory
//!   management, in-place updates, accumulators and checkpoints.
//!
//! Each also compiles one program with the same settings and checks the
//! executable for the compiler's or the sanitizers' marks, so that a
//! setting the backend ignored would fail the test.
//!
//! Needs `clang` and a C compiler with the sanitizers (`cc`, or `$CC`);
//! `.ci/run` installs both.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Datasets of the directories of `clang_compiles_the_corpus` that pass
/// with gcc (raise it when more pass; a drop is a regression).
const MIN_PASSED_WITH_CLANG: usize = 360;

/// Datasets of the directories of `part_of_the_corpus_runs_under_the_sanitizers`.
const MIN_PASSED_WITH_SANITIZERS: usize = 241;

/// Flags that turn the sanitizers on, every report fatal.
const SANITIZER_CFLAGS: &str =
    "-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-c-compilers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `nabla ARGS` in the repository root with the environment `env`.
fn nabla(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nabla"));
    cmd.args(args).current_dir(root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("nabla runs")
}

/// Runs `nabla test --backend=c DIRS` with `env` and returns the number
/// of datasets passed; fails on any failure.
fn corpus_passes(dirs: &[&str], env: &[(&str, &str)]) -> usize {
    let mut args = vec!["test", "--backend=c"];
    args.extend_from_slice(dirs);
    let out = nabla(&args, env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout
        .lines()
        .chain(stderr.lines())
        .rev()
        .find_map(|l| {
            let (passed, rest) = l.trim().split_once(" passed, ")?;
            // `N failed` or `N failed, K skipped`.
            let (failed, _) = rest.split_once(" failed")?;
            Some((passed.parse::<usize>().ok()?, failed.parse::<usize>().ok()?))
        })
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}\n{stderr}"));
    assert_eq!(summary.1, 0, "failures:\n{stdout}\n{stderr}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    summary.0
}

/// Compiles `tests/programs/NAME.fut` with `nabla c` and `env` in a
/// scratch directory of its own for the test `test` (the tests run at
/// once, on the same program), and returns the executable's bytes.
fn compiled_bytes(test: &str, name: &str, env: &[(&str, &str)]) -> Vec<u8> {
    let dir = scratch(&format!("{test}-{name}"));
    let src = dir.join(format!("{name}.fut"));
    std::fs::copy(root().join(format!("tests/programs/{name}.fut")), &src)
        .expect("the test program exists");
    let exe = dir.join(name);
    let out = nabla(
        &["c", src.to_str().unwrap(), "-o", exe.to_str().unwrap()],
        env,
    );
    assert!(
        out.status.success(),
        "nabla c failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&exe).expect("the executable exists")
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// A program of `tests/programs/` used to check the compiler's marks.
fn some_program() -> String {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/programs"))
        .expect("tests/programs exists")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "fut" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .next()
        .expect("a program in tests/programs")
}

#[test]
fn clang_compiles_the_corpus() {
    let env = [("CC", "clang")];
    let bytes = compiled_bytes("clang", &some_program(), &env);
    assert!(
        contains(&bytes, "clang version"),
        "the executable was not built by clang"
    );
    let passed = corpus_passes(&["tests/numeric", "tests/prelude", "tests/programs"], &env);
    assert!(
        passed >= MIN_PASSED_WITH_CLANG,
        "only {passed} datasets passed with clang (expected at least {MIN_PASSED_WITH_CLANG})"
    );
}

#[test]
fn part_of_the_corpus_runs_under_the_sanitizers() {
    let env = [
        ("CFLAGS", SANITIZER_CFLAGS),
        ("ASAN_OPTIONS", "detect_leaks=1"),
        ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
    ];
    let bytes = compiled_bytes("sanitizers", &some_program(), &env);
    assert!(
        contains(&bytes, "__asan_init") && contains(&bytes, "__ubsan_handle"),
        "the executable is not instrumented by the sanitizers"
    );
    let passed = corpus_passes(&["tests/ad", "tests/programs"], &env);
    assert!(
        passed >= MIN_PASSED_WITH_SANITIZERS,
        "only {passed} datasets passed under the sanitizers (expected at least {MIN_PASSED_WITH_SANITIZERS})"
    );
}
