//! The errors of the IR's text parser ([`ParseError`]) and of its validator
//! ([`ValidationError`]).
//!
//! They live in a module of their own, below `parse`, `validate` and
//! `analysis`, so that the validator and the uniqueness analysis (which
//! reports through the validator) share the type without importing each
//! other.

use crate::Span;

/// A syntax error in IR text: where (1-based line and column, in
/// characters) and what. Displayed as `line:column: problem`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {problem}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// What is wrong.
    pub problem: ParseProblem,
}

/// What is wrong with IR text; displayed as a sentence without the
/// location.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseProblem {
    /// The text cannot be cut into tokens: an unexpected character, an
    /// unterminated string, an unknown escape in a string.
    #[error("{0}")]
    Lexical(String),
    /// A token other than the one the grammar needs here.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the grammar allows here (`` `fun` or `entry` ``, `a type`, …).
        expected: String,
        /// The token found, as an error message names it.
        found: String,
    },
    /// A call or an entry point names a function that the program does not
    /// define.
    #[error("no function named `{name}`")]
    UnknownFunction {
        /// The name written.
        name: String,
    },
    /// Bodies (branches, loop bodies, lambdas) nested deeper than the
    /// parser accepts (`nabla_ir::parse::MAX_NESTING`).
    #[error("bodies nested more than {limit} deep")]
    TooDeep {
        /// The deepest nesting accepted.
        limit: usize,
    },
    /// Any other violation of the grammar or of its limits (a constant out
    /// of range, a wrong number of arguments, a function number that does
    /// not match its name, …).
    #[error("{0}")]
    Invalid(String),
}

/// What is wrong with the IR, and where. Displayed as
/// `in function NAME: problem`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("in function {function}: {problem}")]
pub struct ValidationError {
    /// The name of the function the problem is in.
    pub function: String,
    /// The statement's span, where the problem is in a statement.
    pub span: Option<Span>,
    /// What is wrong.
    pub problem: ValidationProblem,
}

impl ValidationError {
    /// The problem is only about sizes (dimensions that are statically known
    /// to differ, or size variables out of scope); element types and ranks
    /// are fine. Callers that trust the run-time size checks may ignore
    /// these.
    pub fn is_size_error(&self) -> bool {
        matches!(self.problem, ValidationProblem::Size(_))
    }
}

/// The kinds of problem the validator reports, each with its message (a
/// sentence that names the variables and types involved).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationProblem {
    /// Scoping, single binding, operand and result types, function
    /// references: the IR is malformed.
    #[error("{0}")]
    Malformed(String),
    /// Only sizes disagree (see [`ValidationError::is_size_error`]).
    #[error("{0}")]
    Size(String),
    /// Consumption, aliasing or the linearity of accumulators (the
    /// uniqueness analysis: Futhark's uniqueness rules, and Schenck et al.,
    /// SC22, §5.4 for accumulators).
    #[error("{0}")]
    Uniqueness(String),
    /// An entry point refers to a missing function, or its parameter or
    /// result arities do not add up to its function's.
    #[error("{0}")]
    Entry(String),
}

impl ValidationProblem {
    /// The message, without the function's name.
    pub fn message(&self) -> &str {
        match self {
            ValidationProblem::Malformed(m)
            | ValidationProblem::Size(m)
            | ValidationProblem::Uniqueness(m)
            | ValidationProblem::Entry(m) => m,
        }
    }
}
