//! A short, bounded, reproducible run of the compiled runtime's libFuzzer
//! target (`fuzz/c/`: the generated server's value reader and command
//! parser under AddressSanitizer and UndefinedBehaviorSanitizer): the
//! harness is built by `fuzz/c/run.sh` with this build's `nabla` and run
//! for a fixed number of inputs from a fixed seed, starting from the seeds
//! in `fuzz/c/corpus/`. A sanitizer report, a crash, a leak or a slow input
//! fails the test, with libFuzzer's report. clang with libFuzzer is needed
//! (`.ci/setup` installs it): a missing one is a failure, not a skip.
//!
//! The open-ended runs are `fuzz/c/run.sh SECONDS` (see README.md,
//! "Fuzzing").

use std::path::{Path, PathBuf};
use std::process::Command;

/// Inputs run by the test (each a server session).
const RUNS: u32 = 20_000;

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("nabla-fuzz-runtime-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn the_compiled_runtime_survives_a_seeded_libfuzzer_run() {
    let root = repository_root();
    let out = scratch("run");
    let seeds = std::fs::read_dir(root.join("fuzz/c/corpus"))
        .expect("fuzz/c/corpus exists")
        .count();
    assert!(seeds > 0, "fuzz/c/corpus has no seeds");
    let o = Command::new("sh")
        .arg(root.join("fuzz/c/run.sh"))
        .args(["0", &format!("-runs={RUNS}"), "-seed=1"])
        .env("NABLA", env!("CARGO_BIN_EXE_nabla"))
        .env("OUT", &out)
        .output()
        .expect("sh runs fuzz/c/run.sh");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "fuzz/c/run.sh failed (clang with libFuzzer missing? run .ci/setup):\n{stderr}"
    );
    for report in [
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
        "ERROR: libFuzzer",
        "SUMMARY:",
    ] {
        assert!(!stderr.contains(report), "{report} in the run:\n{stderr}");
    }
    // The run did what it claims: every seed read, then RUNS inputs.
    assert!(
        stderr.contains(&format!("INFO: seed corpus: files: {seeds} ")),
        "the seeds were not all read:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("Done {RUNS} runs")),
        "the run did not reach {RUNS} inputs:\n{stderr}"
    );
}
