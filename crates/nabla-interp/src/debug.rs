//! Stopping a run for a debugger (`nabla repl`'s breakpoints, as
//! `futhark repl` has them): a [`DebugHook`] passed to
//! [`crate::run_entry_debugged`] is asked at every possible stop and, when it
//! wants one, is shown the call stack and its variables; the run goes on when
//! it returns. Without a hook none of this runs (one `Option` test per
//! `Exp::Atoms` statement and one flag per scalar operator).
//!
//! Possible stops:
//! - a breakpoint: every `Exp::Atoms` statement. The elaborator marks an
//!   expression `#[break] e` with one, before `e`, that copies the variables
//!   in scope there under their source names, with the span of the attributed
//!   expression; the hook decides by that span.
//! - a new NaN (Futhark's `:nanbreak`), while [`DebugHook::nan_breaks`]: a
//!   floating-point operator (`BinOp`, `UnOp`, `TernOp`, `Conv`) whose result
//!   is a NaN although none of its operands is.
//!
//! This module holds the hook's types and the run's state; the evaluator's
//! methods that stop are in `stops.rs` (above `eval.rs`).

use nabla_ir::FunId;
use nabla_prim::PrimValue;
use nabla_syntax::Span;
use nabla_values::Value;

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// At a `#[break]` expression.
    Breakpoint,
    /// A floating-point operator made a NaN from operands that are not.
    NewNan,
}

/// One frame of the call stack at a stop, innermost (the stop itself) first.
#[derive(Clone, Debug)]
pub struct StackFrame {
    /// The IR function executing in this frame (a monomorphised source
    /// function, or the entry point).
    pub function: String,
    /// For the innermost frame, where the run stopped; for the others, the
    /// call of the next inner frame's function.
    pub location: Span,
    /// The variables that can be shown, by source name: at a breakpoint the
    /// variables in scope there; in the other frames (and at a NaN) the
    /// function's parameters. Functions, records, tuples, accumulators and
    /// the sizes the type checker named (`n₀`) are left out.
    pub variables: Vec<(String, Value)>,
}

/// What a debugger does with a run ([`crate::run_entry_debugged`]).
pub trait DebugHook {
    /// Whether to stop at `location` for `reason` (asked at every possible
    /// stop, so it should be cheap).
    fn should_stop(&mut self, reason: StopReason, location: Span) -> bool;
    /// The run is stopped; `stack` is its call stack, innermost first (never
    /// empty). The run continues when this returns.
    fn stopped(&mut self, reason: StopReason, stack: &[StackFrame]);
    /// Whether new NaNs stop the run (read at the start and after each stop).
    fn nan_breaks(&self) -> bool;
}

/// A debugged run's state in the interpreter.
pub(crate) struct Debugging<'h> {
    pub(crate) hook: &'h mut dyn DebugHook,
    /// The calls in progress, outermost (the entry point) first.
    pub(crate) calls: Vec<CallRecord>,
}

/// A call in progress: the function called, where, and its arguments.
pub(crate) struct CallRecord {
    pub(crate) callee: FunId,
    pub(crate) site: Span,
    pub(crate) args: Vec<Value>,
}

/// Whether `name` is one the program can have written (not empty, not a
/// size the type checker named, such as `n₀`).
pub(crate) fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'')
}

pub(crate) fn is_nan(x: PrimValue) -> bool {
    match x {
        PrimValue::F16(v) => v.is_nan(),
        PrimValue::F32(v) => v.is_nan(),
        PrimValue::F64(v) => v.is_nan(),
        _ => false,
    }
}
