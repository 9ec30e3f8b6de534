//! Counters of the code paths one run takes ([`crate::run_entry_with_stats`]).
//!
//! Tests use them to check that a path they claim to exercise was taken (a
//! bulk AD rule rather than the element-by-element path, an in-place update
//! rather than a copy, no AD at all in a program without `jvp`/`vjp`), not
//! only that the values are right. Each counter is a plain integer field of
//! the interpreter, incremented once per statement or per `jvp`/`vjp` (the
//! sweep: once per tape entry), so counting costs next to nothing.

/// How often each counted path was taken during one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `jvp`/`vjp` statements reached from the plain evaluator: the AD
    /// module was entered (0 for a program that never calls `jvp`/`vjp`).
    pub ad_entries: u64,
    /// `jvp` calls evaluated (nested ones included).
    pub jvps: u64,
    /// `vjp` calls evaluated (nested ones included).
    pub vjps: u64,
    /// Scalar statements evaluated by AD's first-order fast path (`fast.rs`).
    pub fast_scalars: u64,
    /// Of those, the ones computed on primals alone because their
    /// derivative is never used (`usage.rs`).
    pub primal_only_scalars: u64,
    /// `map`s in forward mode evaluated by the bulk rule (`bulk.rs`).
    pub bulk_maps_fwd: u64,
    /// `map`s in reverse mode evaluated by the bulk rule (`bulk.rs`).
    pub bulk_maps_rev: u64,
    /// `reduce`s in forward mode evaluated by the bulk rule (`bulk.rs`).
    pub bulk_reduces_fwd: u64,
    /// `reduce`s in reverse mode evaluated by the bulk rule (`bulk.rs`).
    pub bulk_reduces_rev: u64,
    /// `map`s on AD values evaluated element by element (the generic path).
    pub generic_maps: u64,
    /// `reduce`s on AD values evaluated element by element (the generic path).
    pub generic_reduces: u64,
    /// Entries recorded on the tapes of all `vjp`s (inputs included).
    pub tape_entries: u64,
    /// Tape entries visited by the reverse sweeps.
    pub sweep_steps: u64,
    /// Writes into a consumed array (`Update`, `reduce_by_index` and
    /// `scatter` destinations) on the plain evaluator.
    pub array_writes: u64,
    /// Of those, the writes that had to copy the array first because its
    /// buffer was shared or was a window of a larger one (copy-on-write);
    /// the others were in place.
    pub cow_copies: u64,
}

impl Stats {
    /// All bulk AD rule applications (`map`s and `reduce`s, both modes).
    pub fn bulk_total(&self) -> u64 {
        self.bulk_maps_fwd + self.bulk_maps_rev + self.bulk_reduces_fwd + self.bulk_reduces_rev
    }
}
