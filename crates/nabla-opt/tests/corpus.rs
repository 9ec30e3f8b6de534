//! Equivalence on the whole test corpus (`/tests` of the repository): every
//! dataset passes both without the optimiser (`NABLA_OPT=0`) and with it,
//! with the IR validator fully on (`NABLA_VALIDATE=1`), so the optimised IR
//! is valid (sizes included) wherever the elaborated IR is.
//!
//! The only test in this binary: it sets environment variables.

use nabla::testrunner::{run_tests, TestOptions};
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn corpus_passes_with_and_without_the_optimiser() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    assert!(root.is_dir(), "missing {}", root.display());
    let opts = TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
    };
    std::env::set_var("NABLA_VALIDATE", "1");
    std::env::set_var("NABLA_OPT", "0");
    let plain = run_tests(std::slice::from_ref(&root), opts);
    std::env::remove_var("NABLA_OPT");
    let opt = run_tests(std::slice::from_ref(&root), opts);
    assert!(plain.passed > 0);
    assert_eq!(
        plain.failed,
        0,
        "without the optimiser:\n{}",
        plain.failures.join("\n")
    );
    assert_eq!(
        opt.failed,
        0,
        "with the optimiser:\n{}",
        opt.failures.join("\n")
    );
    assert_eq!(plain.passed, opt.passed);
}
