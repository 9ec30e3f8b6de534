//! `lower`: where parallelism is decided.
//!
//! Every outermost SOAC statement of every function (one not inside
//! another SOAC's lambda: [`nabla_ir::seg::outermost_soacs`]) becomes a
//! segmented operation whose outermost level runs sequentially or in
//! parallel ([`nabla_ir::seg`]); the decisions go to
//! [`Program::segments`], which `nabla dump-ir --after=lower` prints and
//! the multicore C backend reads. Nested SOACs run sequentially inside
//! their thread. The pass changes no statement; run again, it decides
//! again from scratch (a pass run after it drops its decisions: the pass
//! manager clears them).
//!
//! What runs in parallel in this first slice:
//! * `map` whose inputs are arrays (each thread writes its own rows).
//! * `map` that takes accumulators (the updates of a `with_acc`: reverse
//!   mode AD's adjoints), where each accumulator's operator is `add` or an
//!   operator lambda and the lambda updates no accumulator free in it
//!   ([`trace_accumulators`]): the first thread updates the accumulators
//!   themselves, every other one private copies filled with the neutral
//!   element, which are combined into them in thread order afterwards (so
//!   a non-commutative operator gives the sequential result, up to
//!   floating-point reassociation). `write` accumulators (scatter: the
//!   last write wins) stay sequential.
//! * `reduce` of scalars (each thread reduces its own contiguous rows
//!   from the neutral element; the partial results are combined in
//!   thread order, so a non-commutative operator gives the sequential
//!   result, up to floating-point reassociation), and `reduce` by an
//!   operator that combines rows element by element (`map2 (+)`, with
//!   scalar components beside them:
//!   [`nabla_ir::seg::componentwise_operator`]): each thread combines its
//!   rows into a row of its own, and those are combined in thread order.
//!   Reductions by other operators on arrays stay sequential.
//! * `scan` of scalars, in two passes: each thread scans its own rows,
//!   then the rows after the first thread's get the carry of the threads
//!   before them (the operator on the carry and the value, in that
//!   order). Scans of arrays stay sequential.
//! * `hist` (`reduce_by_index`) of scalars: the first thread updates the
//!   destination, every other one a histogram of its own filled with the
//!   neutral element; those are combined into the destination in thread
//!   order afterwards. Histograms of rows stay sequential.
//! * `scatter`: each thread writes the cells of its own part of each
//!   destination, reading every index in the order of the rows, so a cell
//!   written more than once gets its last write, as sequentially.
//!
//! The threshold: a parallel level needs enough work to pay for waking
//! the threads (a few microseconds). The work of one row is estimated
//! from its lambda ([`row_work`]); the level runs in parallel from
//! `max(2, PARALLEL_WORK / work)` rows on, a number printed in the
//! decision and tested by the generated code at run time. A width known
//! to be below it makes the decision sequential.

use nabla_ir::seg::{outermost_soacs, SegKind, SegLevel, SegOp};
use nabla_ir::{AccOp, Atom, Body, Exp, FunId, Lambda, LoopForm, PrimValue, Program, Soac, Type};
use std::collections::HashMap;

/// The work (in [`row_work`]'s units, about one scalar operation, a
/// nanosecond or less, each) a parallel level needs at least: below it
/// threads cost more than they gain.
///
/// Measured with `bench/region_cost.c` on the 2-core machine this
/// project runs on (a virtual machine; gcc's OpenMP, default wait
/// policy): a region on 2 threads costs 1–2 µs right after another, 7 µs
/// after 10 µs of sequential work, about 60 µs after 100 µs and 200–300 µs
/// after 1 ms, when the idle thread has gone to sleep and its processor
/// must be woken (`OMP_WAIT_POLICY=active` keeps it spinning: 1–2 µs
/// after 100 µs). Levels alternate with sequential code, so the threshold
/// is about 130 µs of work, twice the usual wake-up: the former 16 384
/// units made ht's Jacobian run 4-row maps of 4×4 matrices inside its
/// loop over bones in parallel, 21 regions a call.
pub const PARALLEL_WORK: u64 = 131_072;

/// The trips assumed for a loop, a nested SOAC or a call whose trip count
/// the estimate does not know.
const UNKNOWN_TRIPS: u64 = 64;

/// Runs the lowering on `prog`: replaces [`Program::segments`] by a
/// decision for each outermost SOAC statement. Returns whether the
/// decisions changed.
pub fn lower_program(prog: &mut Program) -> bool {
    let mut segments = nabla_ir::seg::Segments::new();
    for (i, f) in prog.functions.iter().enumerate() {
        let mut accumulators = Accumulators::new();
        trace_accumulators(&f.body, &mut accumulators);
        for stm in outermost_soacs(&f.body) {
            let (Exp::Soac(soac), Some(first)) = (&stm.exp, stm.pat.first()) else {
                continue;
            };
            segments.insert(
                (FunId(i as u32), first.var),
                decide_with(soac, &accumulators),
            );
        }
    }
    let changed = segments != prog.segments;
    prog.segments = segments;
    changed
}

/// The decision for one outermost SOAC that takes no accumulators.
pub fn decide(soac: &Soac) -> SegOp {
    decide_with(soac, &Accumulators::new())
}

/// The accumulators of a function (every variable of an accumulator type
/// bound in it), each with whether its operator lets threads update
/// private copies that are combined afterwards: `add` and an operator
/// lambda (associative, with a neutral element) do; `write` (scatter's
/// rule: the last write wins) and accumulators whose `with_acc` the trace
/// does not follow (through a branch or a loop) do not.
pub type Accumulators = HashMap<nabla_ir::Var, bool>;

/// Records the accumulators bound in `body` (see [`Accumulators`]),
/// following each from its `with_acc` through copies, `update_acc` and
/// the accumulator parameters and results of maps.
pub fn trace_accumulators(body: &Body, accs: &mut Accumulators) {
    for stm in &body.stms {
        let mut results: Vec<Option<bool>> = vec![None; stm.pat.len()];
        match &stm.exp {
            Exp::WithAcc { inputs, lam } => {
                for (input, p) in inputs.iter().zip(&lam.params) {
                    accs.insert(p.var, !matches!(input.op, AccOp::Write));
                }
                trace_accumulators(&lam.body, accs);
            }
            Exp::Atoms(atoms) => {
                for (k, a) in atoms.iter().enumerate().take(results.len()) {
                    if let Atom::Var(a) = a {
                        results[k] = accs.get(a).copied();
                    }
                }
            }
            Exp::UpdateAcc { acc, .. } => results[0] = accs.get(acc).copied(),
            Exp::Soac(Soac::Map { lam, arrs, .. }) => {
                let inputs: Vec<Option<bool>> = lam
                    .params
                    .iter()
                    .zip(arrs)
                    .filter(|(p, _)| p.ty.is_acc())
                    .map(|(p, a)| {
                        let combinable = accs.get(a).copied();
                        accs.insert(p.var, combinable.unwrap_or(false));
                        combinable
                    })
                    .collect();
                trace_accumulators(&lam.body, accs);
                // The i-th accumulator result is the i-th accumulator input.
                let acc_results = stm.pat.iter().enumerate().filter(|(_, p)| p.ty.is_acc());
                for ((k, _), input) in acc_results.zip(inputs) {
                    results[k] = input;
                }
            }
            Exp::Soac(
                Soac::Reduce { lam, .. } | Soac::Scan { lam, .. } | Soac::Hist { lam, .. },
            ) => trace_accumulators(&lam.body, accs),
            Exp::If { then_, else_, .. } => {
                trace_accumulators(then_, accs);
                trace_accumulators(else_, accs);
            }
            Exp::Loop {
                params, form, body, ..
            } => {
                for p in params.iter().filter(|p| p.ty.is_acc()) {
                    accs.insert(p.var, false);
                }
                if let LoopForm::While { cond } = form {
                    trace_accumulators(cond, accs);
                }
                trace_accumulators(body, accs);
            }
            _ => {}
        }
        for (p, combinable) in stm.pat.iter().zip(results) {
            if p.ty.is_acc() {
                accs.insert(p.var, combinable.unwrap_or(false));
            }
        }
    }
}

/// Whether a map's lambda `lam` over `arrs` may run its rows on several
/// threads: it updates only the accumulators it takes as inputs (never
/// one free in it), each one whose private per-thread copies combine
/// ([`Accumulators`]).
fn accumulators_combine(lam: &Lambda, arrs: &[nabla_ir::Var], accs: &Accumulators) -> bool {
    let inputs_combine = lam
        .params
        .iter()
        .zip(arrs)
        .filter(|(p, _)| p.ty.is_acc())
        .all(|(_, a)| accs.get(a) == Some(&true));
    let no_free_accumulator = nabla_ir::free_vars_lambda(lam)
        .iter()
        .all(|v| !accs.contains_key(v));
    inputs_combine && no_free_accumulator
}

/// The decision for one outermost SOAC of a function whose accumulators
/// are `accs` ([`trace_accumulators`]).
pub fn decide_with(soac: &Soac, accs: &Accumulators) -> SegOp {
    let kind = SegKind::of(soac);
    // The work of one row, where the level may run in parallel.
    let parallel_work = match soac {
        Soac::Map { lam, arrs, .. } => accumulators_combine(lam, arrs, accs).then(|| row_work(lam)),
        Soac::Reduce { lam, .. } => (scalar_operator(lam)
            || nabla_ir::seg::componentwise_operator(lam).is_some())
        .then(|| row_work(lam)),
        Soac::Scan { lam, .. } | Soac::Hist { lam, .. } => {
            scalar_operator(lam).then(|| row_work(lam))
        }
        // A write per destination.
        Soac::Scatter { dest, .. } => Some(dest.len() as u64),
    };
    let level = match parallel_work {
        None => SegLevel::Sequential,
        Some(work) => {
            let min_width = (PARALLEL_WORK / work.max(1)).max(2);
            match soac.width() {
                Atom::Const(c) if known_width(c).is_some_and(|w| w < min_width) => {
                    SegLevel::Sequential
                }
                _ => SegLevel::Parallel { min_width },
            }
        }
    };
    SegOp { kind, level }
}

/// Whether an operator combines scalars only.
fn scalar_operator(lam: &Lambda) -> bool {
    lam.params.iter().all(|p| matches!(p.ty, Type::Prim(_)))
}

fn known_width(c: &PrimValue) -> Option<u64> {
    match c {
        PrimValue::I64(n) => Some((*n).max(0) as u64),
        _ => None,
    }
}

/// The estimated work of one run of `lam`: one unit per statement; a
/// loop or nested SOAC counts its trips times its body (the trip count
/// where it is a constant — a `for` bound, a SOAC's width, as the 4×4
/// matrices of ht's bones — else [`UNKNOWN_TRIPS`]); a call counts
/// [`UNKNOWN_TRIPS`] units, a branch its longer arm.
pub fn row_work(lam: &Lambda) -> u64 {
    body_work(&lam.body)
}

/// The trips of a loop or SOAC whose count is `count` (a width, or a
/// `for` bound of any integer type: `for i < 3i32`).
fn trips(count: &Atom) -> u64 {
    match count {
        Atom::Const(c) if c.prim_type().is_int() => c.as_i64().max(0) as u64,
        _ => UNKNOWN_TRIPS,
    }
}

fn body_work(body: &Body) -> u64 {
    body.stms
        .iter()
        .map(|s| match &s.exp {
            Exp::If { then_, else_, .. } => 1 + body_work(then_).max(body_work(else_)),
            Exp::Loop { body, form, .. } => {
                let count = match form {
                    LoopForm::For { bound, .. } => trips(bound),
                    LoopForm::While { .. } => UNKNOWN_TRIPS,
                };
                1 + count.saturating_mul(body_work(body))
            }
            Exp::Soac(soac) => {
                let lam = match soac {
                    Soac::Map { lam, .. }
                    | Soac::Reduce { lam, .. }
                    | Soac::Scan { lam, .. }
                    | Soac::Hist { lam, .. } => Some(lam),
                    Soac::Scatter { .. } => None,
                };
                1 + trips(soac.width()).saturating_mul(lam.map_or(1, row_work))
            }
            Exp::WithAcc { lam, .. } => 1 + row_work(lam),
            Exp::Apply(..) => UNKNOWN_TRIPS,
            _ => 1,
        })
        .fold(0u64, u64::saturating_add)
}
