//! The front end's syntax layer: source files and spans, diagnostics, the
//! lexer, the parser, the AST, and loading a program with its imports.
//!
//! The AST carries slots (`ty`, `res`) that the type checker (`nabla-typeck`)
//! fills in place; the elaborator (`nabla-elab`) reads them.

pub mod ast;
pub mod diag;
pub mod size_expr;
pub mod span;
pub mod types;

pub use diag::{Diagnostic, DiagnosticKind};
pub use span::{FileId, SourceMap, Span};
pub mod lexer;
pub mod load;
pub mod parser;

pub use load::{load_program, load_program_with};
pub use parser::{
    parse_expr_text, parse_file, parse_pat_text, parse_program_text, parse_type_text,
};
