//! Equivalence on the whole test corpus (`/tests` of the repository): every
//! dataset passes both with the empty pipeline (the elaborated IR as is) and
//! with the default pipeline, with the IR validator on after every pass
//! (sizes included), so the optimised IR is valid wherever the elaborated IR
//! is.

use nabla::testrunner::{run_tests, TestOptions};
use nabla::{CompileOptions, Pipeline};
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn corpus_passes_with_and_without_the_optimiser() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    assert!(root.is_dir(), "missing {}", root.display());
    let options = |pipeline: Pipeline| TestOptions {
        jobs: 2,
        timeout: Some(Duration::from_secs(600)),
        compile: CompileOptions::new(pipeline.validating(true)),
        ..TestOptions::default()
    };
    let plain = run_tests(
        std::slice::from_ref(&root),
        &options(Pipeline::parse("").expect("the empty list")),
    );
    let opt = run_tests(
        std::slice::from_ref(&root),
        &options(Pipeline::default_pipeline()),
    );
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
