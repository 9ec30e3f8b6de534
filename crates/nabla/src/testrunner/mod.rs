//! `nabla test`: test blocks in `.fut` files, following futhark-test(1).
//!
//! * [`spec`] parses the test blocks;
//! * [`random`] generates `random input` datasets;
//! * [`runner`] compiles the programs, runs the datasets and compares results.

pub mod random;
pub mod runner;
pub mod spec;

pub use runner::{
    find_fut_files, run_tests, test_file, test_file_with, Backend, FileReport, TestOptions,
};
pub use spec::{parse_test_spec, Dataset, Expected, InputSpec, SpecError, TestBlock, TestSpec};
