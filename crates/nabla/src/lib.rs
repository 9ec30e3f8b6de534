//! The `nabla` command's library: the compilation driver (shared by every
//! subcommand), the `nabla test` runner and the GradBench tool (`nabla gradbench`). `main.rs` only parses arguments.

pub mod driver;
mod frontend;
pub mod gradbench;
pub mod testrunner;

pub use driver::{check, compile, Checked, CompileError, Compiled, EntryTypes, RunError};
