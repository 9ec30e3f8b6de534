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
//! * `map` whose inputs are arrays (each thread writes its own rows); a
//!   map that takes accumulators (the updates of a `with_acc`) stays
//!   sequential: two threads could update one cell.
//! * `reduce` of scalars (each thread reduces its own contiguous rows
//!   from the neutral element; the partial results are combined in
//!   thread order, so a non-commutative operator gives the sequential
//!   result, up to floating-point reassociation). Reductions of arrays
//!   (a row-wise operator) stay sequential.
//! * `scan`, `hist` and `scatter` stay sequential (two-pass scans,
//!   per-thread histograms and scatter with Futhark's rule for repeated
//!   indices are the next steps).
//!
//! The threshold: a parallel level needs enough work to pay for waking
//! the threads (a few microseconds). The work of one row is estimated
//! from its lambda ([`row_work`]); the level runs in parallel from
//! `max(2, PARALLEL_WORK / work)` rows on, a number printed in the
//! decision and tested by the generated code at run time. A width known
//! to be below it makes the decision sequential.

use nabla_ir::seg::{outermost_soacs, SegKind, SegLevel, SegOp};
use nabla_ir::{Atom, Body, Exp, FunId, Lambda, PrimValue, Program, Soac, Type};

/// The work (in [`row_work`]'s units, about one scalar operation each) a
/// parallel level needs at least: below it threads cost more than they
/// gain. An estimate, not a measurement yet.
pub const PARALLEL_WORK: u64 = 16_384;

/// The trips assumed for a loop, a nested SOAC or a call whose trip count
/// the estimate does not know.
const UNKNOWN_TRIPS: u64 = 64;

/// Runs the lowering on `prog`: replaces [`Program::segments`] by a
/// decision for each outermost SOAC statement. Returns whether the
/// decisions changed.
pub fn lower_program(prog: &mut Program) -> bool {
    let mut segments = nabla_ir::seg::Segments::new();
    for (i, f) in prog.functions.iter().enumerate() {
        for stm in outermost_soacs(&f.body) {
            let (Exp::Soac(soac), Some(first)) = (&stm.exp, stm.pat.first()) else {
                continue;
            };
            segments.insert((FunId(i as u32), first.var), decide(soac));
        }
    }
    let changed = segments != prog.segments;
    prog.segments = segments;
    changed
}

/// The decision for one outermost SOAC.
pub fn decide(soac: &Soac) -> SegOp {
    let kind = SegKind::of(soac);
    let parallel_lambda = match soac {
        Soac::Map { lam, .. } => (!lam.params.iter().any(|p| p.ty.is_acc())
            && !lam.ret.iter().any(Type::is_acc))
        .then_some(lam),
        Soac::Reduce { lam, .. } => lam
            .params
            .iter()
            .all(|p| matches!(p.ty, Type::Prim(_)))
            .then_some(lam),
        Soac::Scan { .. } | Soac::Hist { .. } | Soac::Scatter { .. } => None,
    };
    let level = match parallel_lambda {
        None => SegLevel::Sequential,
        Some(lam) => {
            let min_width = (PARALLEL_WORK / row_work(lam).max(1)).max(2);
            match width(soac) {
                Atom::Const(c) if known_width(c).is_some_and(|w| w < min_width) => {
                    SegLevel::Sequential
                }
                _ => SegLevel::Parallel { min_width },
            }
        }
    };
    SegOp { kind, level }
}

fn width(soac: &Soac) -> &Atom {
    match soac {
        Soac::Map { w, .. }
        | Soac::Reduce { w, .. }
        | Soac::Scan { w, .. }
        | Soac::Hist { w, .. }
        | Soac::Scatter { w, .. } => w,
    }
}

fn known_width(c: &PrimValue) -> Option<u64> {
    match c {
        PrimValue::I64(n) => Some((*n).max(0) as u64),
        _ => None,
    }
}

/// The estimated work of one run of `lam`: one unit per statement, a
/// loop, nested SOAC or call counting [`UNKNOWN_TRIPS`] runs of its
/// body (a call: of that many units), a branch its longer arm.
pub fn row_work(lam: &Lambda) -> u64 {
    body_work(&lam.body)
}

fn body_work(body: &Body) -> u64 {
    body.stms
        .iter()
        .map(|s| match &s.exp {
            Exp::If { then_, else_, .. } => 1 + body_work(then_).max(body_work(else_)),
            Exp::Loop { body, .. } => 1 + UNKNOWN_TRIPS.saturating_mul(body_work(body)),
            Exp::Soac(soac) => {
                let lam = match soac {
                    Soac::Map { lam, .. }
                    | Soac::Reduce { lam, .. }
                    | Soac::Scan { lam, .. }
                    | Soac::Hist { lam, .. } => Some(lam),
                    Soac::Scatter { .. } => None,
                };
                1 + UNKNOWN_TRIPS.saturating_mul(lam.map_or(1, row_work))
            }
            Exp::WithAcc { lam, .. } => 1 + row_work(lam),
            Exp::Apply(..) => UNKNOWN_TRIPS,
            _ => 1,
        })
        .fold(0u64, u64::saturating_add)
}
