//! Why a pipeline stopped ([`PassError`]). A module of its own, below the
//! pass manager (`pass`) and the registry of passes (`registry`), which
//! both use it.

use nabla_ir::{Span, ValidationError};

/// Why a pipeline stopped.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PassError {
    /// A pass could not do its work (a construct it does not handle, …).
    #[error("pass {pass} failed: {message}")]
    Failed {
        /// The pass that failed.
        pass: String,
        /// What went wrong.
        message: String,
        /// Where in the source, when known.
        span: Option<Span>,
    },
    /// The IR does not validate after pass `after`.
    #[error("{}", invalid_ir_message(after.as_deref(), errors))]
    InvalidIr {
        /// The pass after which the IR is invalid; `None` for the
        /// pipeline's input (before any pass ran).
        after: Option<String>,
        /// Every problem the validator found.
        errors: Vec<ValidationError>,
    },
}

/// `the IR is invalid after pass P:` (or `the input IR is invalid:`), then
/// each problem on a line of its own, indented by two spaces.
fn invalid_ir_message(after: Option<&str>, errors: &[ValidationError]) -> String {
    let mut out = match after {
        Some(pass) => format!("the IR is invalid after pass {pass}:"),
        None => "the input IR is invalid:".to_string(),
    };
    for e in errors {
        out.push_str(&format!("\n  {e}"));
    }
    out
}
