//! Text printer for the core IR (`nabla dump-ir`).

use crate::Program;

/// Prints a program in a stable, readable text form.
pub fn print_program(prog: &Program) -> String {
    format!("{prog:#?}")
}
