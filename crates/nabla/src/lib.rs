//! The `nabla` command's library: the compilation driver (shared by every
//! subcommand), the `nabla test` runner and the GradBench tool (`nabla gradbench`). `main.rs` only parses arguments.

pub mod bench;
pub mod cbackend;
pub mod dataset;
pub mod doc;
pub mod driver;
pub mod fmt;
mod frontend;
pub mod fuzzing;
pub mod gradbench;
pub mod interactive;
pub mod literate;
pub mod lsp;
pub mod pkg;
pub mod repl;
pub mod script;
pub mod testrunner;

pub use driver::{
    check, check_loaded, compile, compile_checked, compile_with, Checked, CompileError,
    CompileOptions, Compiled, EntryTypes, RunError, StopAfter,
};
pub use nabla_opt::Pipeline;
