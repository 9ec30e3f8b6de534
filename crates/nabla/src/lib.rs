//! The `nabla` command's library: the compilation driver (shared by every
//! subcommand) and the `nabla test` runner. `main.rs` only parses arguments.

pub mod driver;
mod frontend;
pub mod testrunner;

pub use driver::{check, compile, Checked, CompileError, Compiled, EntryTypes, RunError};
