//! Elaboration: checked AST → core IR. See `elaborate`.

use nabla_syntax::{ast, Diagnostic};

/// Elaborates a checked program (files in dependency order, the main file
/// last) into the core IR. Entry points are the main file's `entry`
/// declarations (and a `def main` when no entry is named `main`).
pub fn elaborate(_files: &[ast::Program]) -> Result<nabla_ir::Program, Vec<Diagnostic>> {
    Ok(nabla_ir::Program::default())
}
