//! Runs `nabla test` over the repository's test corpus (`tests/`), with the
//! IR validator on after every pass (`--validate`).

use std::path::PathBuf;
use std::process::Command;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests")
}

/// Runs the corpus; returns (stdout, passed, failed).
fn run_corpus() -> (String, usize, usize) {
    let o = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("test")
        .arg(corpus())
        .arg("--validate")
        .output()
        .expect("start nabla");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let last = out.lines().last().unwrap_or("").to_string();
    let nums: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    assert!(
        nums.len() == 3
            && last
                == format!(
                    "{} passed, {} failed, {} skipped",
                    nums[0], nums[1], nums[2]
                ),
        "no summary line: {out}"
    );
    // The interpreter skips exactly the `compiled` and `auto output`
    // datasets of the test-block directive example (which the C backend
    // runs: crates/nabla/tests/cbackend.rs).
    let skips: Vec<&str> = out.lines().filter(|l| l.starts_with("SKIP ")).collect();
    assert_eq!(nums[2], 3, "skipped datasets:\n{}", skips.join("\n"));
    assert!(
        skips.iter().all(|l| l.contains("test_directives.fut")),
        "unexpected skips:\n{}",
        skips.join("\n")
    );
    assert_eq!(
        o.status.success(),
        nums[1] == 0,
        "exit status disagrees with the summary"
    );
    (out, nums[0], nums[1])
}

/// Always on: whatever else fails in the corpus, no stage may panic and the
/// elaborated IR must validate.
#[test]
fn corpus_has_no_internal_errors() {
    assert!(corpus().is_dir(), "missing {}", corpus().display());
    let (out, passed, _) = run_corpus();
    assert!(passed > 0, "{out}");
    for line in out.lines() {
        assert!(
            !line.contains("internal error") && !line.contains("internal compiler error"),
            "{line}"
        );
        assert!(!line.contains("IR is invalid"), "{line}");
    }
}

/// Every dataset of the corpus passes.
#[test]
fn corpus_passes() {
    assert!(corpus().is_dir(), "missing {}", corpus().display());
    let (out, _, failed) = run_corpus();
    println!("{}", out.lines().last().unwrap_or(""));
    assert_eq!(failed, 0, "{out}");
}
