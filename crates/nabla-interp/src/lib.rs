//! The reference interpreter of the core IR. See [`run_entry`].
//!
//! Values are nabla-values' flat typed arrays: SOACs bind their lambdas'
//! parameters to rows (scalars for rank 1, O(1) views sharing the buffer
//! otherwise) and collect results into typed buffers; `Update`,
//! `reduce_by_index` and `scatter` write in place when the consumed array is
//! unshared (copy-on-write otherwise). Every variable is a slot in a per-call
//! frame indexed by its number. Scalar operators are applied in one place,
//! [`scalar::apply_prim`].
//!
//! Accumulators (`with_acc`/`update_acc`, Schenck et al., SC22, §5.4) live on a stack of
//! states in the interpreter, each owning the array it writes into; an
//! accumulator value is the index of its state, so `map`s, loops and
//! branches thread it like a scalar and updates happen in place. The
//! dynamic AD (`jvp`/`vjp`) does not support them yet and says so.
//!
//! `jvp`/`vjp` (IR `Exp::Jvp`/`Exp::Vjp`) are dynamic AD in the manner of
//! Jensen 2024, §3: the `ad` module evaluates the differentiated function on dual
//! values (forward mode) or on values recorded on a tape that is swept once
//! backwards (reverse mode), tagged by nesting level so that calls nest and
//! mix to any depth. Programs without AD never enter that module.
//! A custom derivative (`Exp::WithVjp`, Futhark's `with_vjp`) is its
//! function outside AD; inside, the innermost `vjp` records a tape entry
//! whose sweep step runs the rule (`ad/eval.rs`), as static AD does.
//!
//! The modules import each other without cycles (checked by
//! `crates/nabla/tests/code_limits.rs`). Below the evaluator are the values
//! (`array`, `scalar`, `alloc`) and the AD's data and pure rules: its state
//! (`ad`), the tape and its sweep (`ad::tape`), the bulk records and their
//! backward rules (`ad::bulk`), native float partials (`ad::partials`),
//! `ad::rules`, `ad::lin` and `ad::value`. The evaluator (`eval`) holds the
//! AD state in its `Interp`. Above it are the AD's evaluation methods, which
//! extend `Interp` (`ad::eval`, `ad::bulk_eval`, `ad::fast`): the evaluator
//! reaches them by method calls only, the mutual recursion of evaluating a
//! differentiated function's body.
//!
//! Run-time errors follow Futhark's dynamic semantics: out-of-bounds
//! `Index`/`Update`/slices, size mismatches, integer division by zero, failed
//! assertions and negative `iota`/`replicate` sizes are [`RuntimeError`]s
//! naming the statement's source span; out-of-bounds indices of
//! `reduce_by_index`/`scatter` are ignored. Call depth is limited to
//! [`MAX_CALL_DEPTH`]; the native stack grows on demand, so deep IR nesting does
//! not overflow it.

#[macro_use]
mod array;
mod ad;
mod alloc;
mod cancel;
mod debug;
mod eval;
mod live;
pub mod scalar;
mod stats;
mod stops;

pub use alloc::MAX_ARRAY_BYTES;

/// Stack space kept free before growing the stack (see `stacker`).
pub(crate) const RED_ZONE: usize = 128 * 1024;
/// Size of each new stack segment.
pub(crate) const STACK_SEGMENT: usize = 4 * 1024 * 1024;
pub use cancel::{Cancel, CancelReason, Watchdog};
pub use debug::{DebugHook, StackFrame, StopReason};
pub use eval::MAX_CALL_DEPTH;
pub use stats::Stats;

use nabla_ir::{Program, Type};
use nabla_syntax::{SourceMap, Span};
use nabla_values::{Value, ValueType};

/// A run-time error: what went wrong and where in the source (the span of
/// the IR statement that failed, or of the function for errors on entry).
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub message: String,
    pub span: Option<Span>,
}

impl RuntimeError {
    /// An error without a location.
    pub fn new(message: impl Into<String>) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            span: None,
        }
    }

    /// `path:line:col: message` (just the message when there is no span).
    pub fn render(&self, sources: &SourceMap) -> String {
        match self.span {
            Some(sp) => format!("{}: {}", sources.describe(sp), self.message),
            None => self.message.clone(),
        }
    }
}

impl std::fmt::Display for RuntimeError {
    /// The message alone (use [`RuntimeError::render`] for the location).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}

fn type_name(t: &Type) -> String {
    ValueType::new(t.elem(), t.rank()).to_string()
}

/// Runs the entry point `entry` on flat argument values (one per IR parameter
/// of the entry function) and returns its flat results.
///
/// Checks the argument count, element types and ranks against the entry
/// function's parameters and binds the size variables in the parameters'
/// types to the arguments' dimensions (sizes that are constants, explicit
/// size parameters or repeated must agree). Errors: unknown entry point,
/// argument mismatches, and every run-time error of the program.
pub fn run_entry(
    prog: &Program,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    run_entry_with_stats(prog, entry, args).0
}

/// [`run_entry`], also returning how often the run took each counted code
/// path ([`Stats`]; all zero when the arguments are rejected before the run).
pub fn run_entry_with_stats(
    prog: &Program,
    entry: &str,
    args: Vec<Value>,
) -> (Result<Vec<Value>, RuntimeError>, Stats) {
    run_entry_cancellable(prog, entry, args, &Cancel::new())
}

/// [`run_entry_with_stats`] that stops with a run-time error (at the
/// statement executing) once `cancel` is set: it is checked at every loop
/// iteration and every SOAC element.
pub fn run_entry_cancellable(
    prog: &Program,
    entry: &str,
    args: Vec<Value>,
    cancel: &Cancel,
) -> (Result<Vec<Value>, RuntimeError>, Stats) {
    let mut interp = eval::Interp::new(prog);
    interp.cancel = cancel.clone();
    let r = run_in(&mut interp, entry, args);
    let mut stats = interp.stats;
    stats.sweep_steps = interp.ad.sweep_steps;
    (r, stats)
}

/// [`run_entry_cancellable`] under a debugger: `hook` is asked at each
/// possible stop (a `#[break]` expression's mark, a new NaN while the hook
/// wants those) and shown the call stack where it stops (see [`DebugHook`]).
/// Breakpoints inside `jvp`/`vjp` (evaluated by the AD) do not stop.
pub fn run_entry_debugged(
    prog: &Program,
    entry: &str,
    args: Vec<Value>,
    cancel: &Cancel,
    hook: &mut dyn DebugHook,
) -> (Result<Vec<Value>, RuntimeError>, Stats) {
    let mut interp = eval::Interp::new(prog);
    interp.cancel = cancel.clone();
    interp.nan_checks = hook.nan_breaks();
    // The entry point's call (missing when the entry is: `run_in` says so).
    let calls = prog
        .entry(entry)
        .and_then(|ep| {
            let fun = prog.functions.get(ep.fun.0 as usize)?;
            Some(debug::CallRecord {
                callee: ep.fun,
                site: fun.span,
                args: args.clone(),
            })
        })
        .into_iter()
        .collect();
    interp.debug = Some(debug::Debugging { hook, calls });
    let r = run_in(&mut interp, entry, args);
    let mut stats = interp.stats;
    stats.sweep_steps = interp.ad.sweep_steps;
    (r, stats)
}

fn run_in(
    interp: &mut eval::Interp<'_>,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    let prog = interp.prog;
    let Some(ep) = prog.entry(entry) else {
        return Err(RuntimeError::new(format!("no entry point named {entry}")));
    };
    let Some(fun) = prog.functions.get(ep.fun.0 as usize) else {
        return Err(RuntimeError::new(format!(
            "entry point {entry} names a missing function"
        )));
    };
    let span = Some(fun.span);
    if args.len() != fun.params.len() {
        return Err(RuntimeError {
            message: format!(
                "entry point {entry} takes {} argument value(s), but {} were given",
                fun.params.len(),
                args.len()
            ),
            span,
        });
    }
    for (i, (p, a)) in fun.params.iter().zip(&args).enumerate() {
        if a.elem_type() != p.ty.elem() || a.rank() != p.ty.rank() {
            return Err(RuntimeError {
                message: format!(
                    "entry point {entry}: argument {} has type {}, but type {} was expected",
                    i + 1,
                    a.value_type(),
                    type_name(&p.ty)
                ),
                span,
            });
        }
    }
    interp.call(ep.fun, args, true).map_err(|e| *e)
}
