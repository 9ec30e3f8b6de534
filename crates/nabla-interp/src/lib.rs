//! The reference interpreter of the core IR. See `run_entry`.

use nabla_syntax::Span;
use nabla_values::Value;

/// A run-time error: what went wrong and where in the source.
#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub message: String,
    pub span: Option<Span>,
}

/// Runs the entry point `entry` on flat argument values (one per IR parameter
/// of the entry function) and returns its flat results.
pub fn run_entry(prog: &nabla_ir::Program, entry: &str, _args: Vec<Value>) -> Result<Vec<Value>, RuntimeError> {
    let _ = prog;
    Err(RuntimeError { message: format!("entry point {entry} not implemented"), span: None })
}
