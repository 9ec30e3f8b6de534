//! Type checking with inference. See `check_program`.

use nabla_syntax::{ast, Diagnostic, SourceMap};

/// The prelude, in our Futhark subset: array and function utilities that are
/// not intrinsics. Loaded as the first file of every program.
pub const PRELUDE_SOURCE: &str = include_str!("prelude.fut");

/// Type-checks `files` (in dependency order: the prelude first, the main file
/// last) and fills the AST's `ty`, `res` and `inst` slots.
pub fn check_program(_sources: &SourceMap, _files: &mut [ast::Program]) -> Result<(), Vec<Diagnostic>> {
    Ok(())
}
