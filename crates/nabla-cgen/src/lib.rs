//! The C backend: lowers the (AD-free, optimised) core IR to sequential C11
//! and compiles it with the system C compiler into an executable with
//! Futhark's command-line interface for compiled programs.
//!
//! * [`generate_c`] turns a [`Program`] into one C source file: the runtime
//!   (`runtime.c`, embedded: reference-counted arrays, the scalar helpers that
//!   mirror `nabla_prim`'s semantics, the value reader and printer, the
//!   options), one C function per IR function (`func.rs`, scalars in
//!   `scalar.rs`), one wrapper per entry point and `main` (`entry.rs`).
//! * [`compile_c`] runs `$CC` (default `cc`) with `$CFLAGS` (default
//!   `-O3 -march=native -fno-math-errno`) and `-lm`.
//!
//! The executable reads the entry point's arguments from stdin (Futhark's
//! text or binary value format) and prints the results as `nabla run` does;
//! options `-e ENTRY`, `-r RUNS`, `-t FILE`, `-b`, `-n`. Run-time errors
//! print `Error: MESSAGE` and `at FILE:LINE:COL` on stderr and exit with
//! status 1.
//!
//! Constructs the backend cannot lower give a [`CgenError`] (never wrong C):
//! `jvp`/`vjp` left in the program for dynamic AD, `f16`, arrays of rank
//! above 8.

mod entry;
mod func;
mod scalar;

use nabla_ir::{FunId, Program, Span};
use std::path::Path;
use std::process::Command;

/// The C runtime included at the top of every generated program.
pub const RUNTIME_C: &str = include_str!("runtime.c");

/// Why C generation or compilation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgenError {
    /// The message (one line).
    pub message: String,
    /// Whether the program uses a construct the backend does not support
    /// (as opposed to an internal error or a failing C compiler).
    pub unsupported: bool,
}

impl CgenError {
    /// A construct the C backend cannot lower yet.
    pub fn unsupported(what: &str) -> CgenError {
        CgenError {
            message: format!("the C backend does not support {what} yet"),
            unsupported: true,
        }
    }

    /// An inconsistency in the IR or a bug in the backend.
    pub fn internal(what: &str) -> CgenError {
        CgenError {
            message: format!("internal error in the C backend: {what}"),
            unsupported: false,
        }
    }

    /// The C compiler could not be run or failed.
    pub fn compiler(what: String) -> CgenError {
        CgenError {
            message: what,
            unsupported: false,
        }
    }
}

impl std::fmt::Display for CgenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CgenError {}

/// Generates the whole C program. `locate` renders a span as
/// `file:line:col` for run-time error messages.
pub fn generate_c(program: &Program, locate: &dyn Fn(Span) -> String) -> Result<String, CgenError> {
    let mut out = String::with_capacity(RUNTIME_C.len() + 4096);
    out.push_str(RUNTIME_C);
    out.push_str("\n/* ---------- generated from the core IR ---------- */\n\n");
    for (i, f) in program.functions.iter().enumerate() {
        out.push_str(&func::prototype(FunId(i as u32), f)?);
        out.push_str(";\n");
    }
    out.push('\n');
    for (i, f) in program.functions.iter().enumerate() {
        let body = func::FnGen::new(program, f, locate).generate(FunId(i as u32))?;
        out.push_str(&format!("/* {} */\n", f.name.replace("*/", "* /")));
        out.push_str(&body);
        out.push('\n');
    }
    out.push_str(&entry::entries_and_main(program)?);
    Ok(out)
}

/// The default C compiler flags (overridden by `$CFLAGS`).
pub const DEFAULT_CFLAGS: &str = "-O3 -march=native -fno-math-errno";

/// Compiles the C file `c_file` into the executable `out` with `$CC`
/// (default `cc`) and `$CFLAGS` (default [`DEFAULT_CFLAGS`]), linking `-lm`.
pub fn compile_c(c_file: &Path, out: &Path) -> Result<(), CgenError> {
    let cc = std::env::var("CC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string());
    let flags = std::env::var("CFLAGS").unwrap_or_else(|_| DEFAULT_CFLAGS.to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-D_GNU_SOURCE"]);
    cmd.args(flags.split_whitespace());
    cmd.arg(c_file).arg("-o").arg(out).arg("-lm");
    let output = cmd
        .output()
        .map_err(|e| CgenError::compiler(format!("cannot run the C compiler `{cc}`: {e}")))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let shown: String = err.lines().take(30).collect::<Vec<_>>().join("\n");
        return Err(CgenError::compiler(format!(
            "the C compiler `{cc}` failed on {}:\n{shown}",
            c_file.display()
        )));
    }
    Ok(())
}
