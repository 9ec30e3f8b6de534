//! The `nabla` command's library: the compilation driver (shared by every
//! subcommand), the `nabla test` runner and the GradBench tool (`nabla gradbench`). `main.rs` only parses arguments.

pub mod bench;
pub mod cbackend;
pub mod driver;
mod frontend;
pub mod fuzzing;
pub mod gradbench;
pub mod pkg;
pub mod testrunner;

pub use driver::{
    check, compile, compile_with, Checked, CompileError, CompileOptions, Compiled, EntryTypes,
    RunError, StopAfter,
};
pub use nabla_opt::Pipeline;
