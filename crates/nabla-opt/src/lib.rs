//! The IR optimiser: inlining, copy propagation, constant folding,
//! dead-code elimination and removal of unused functions.
//!
//! In the spirit of Futhark's compiler (aggressive inlining followed by
//! simplification), and a prerequisite for static AD (Schenck et al., SC22;
//! Shaikhha et al., ICFP19), which wants first-order code without calls
//! inside SOAC lambdas. Every pass keeps the core IR's invariants (see `nabla_ir`): A-normal form, each
//! variable bound once per function, new variables appended to the
//! function's `var_names` (the interpreter's frame slots), every statement
//! with the span of the source it came from, and the program valid for
//! `nabla_ir::validate_program` when its input was. Entry points keep their
//! functions and signatures.
//!
//! Semantics are the interpreter's, run-time errors included: nothing that
//! can fail at run time (an index, an integer division, an assertion, a size
//! check, an in-place update…) is removed or folded away, and the size
//! checks a call makes on entry to its callee are kept as explicit
//! `assert_eq_sizes` statements when the call is inlined.
//!
//! The transformations are passes ([`Pass`]) that a [`Pipeline`] runs in
//! order, validating the IR after each one if asked (module [`pass`]). The
//! one list of passes and of the pipelines built from them is module
//! [`registry`]. [`optimise`] runs the optimiser alone (no static AD).

mod accumulate;
mod constant_args;
mod copies;
mod cse;
mod error;
mod fuse;
mod hoist;
mod inline;
pub mod lower;
pub mod pass;
pub mod registry;
mod simplify;
mod sink_updates;
mod unroll;
mod walk;

pub use inline::InlinePolicy;
pub use pass::{pass_named, pass_names, registered_passes, Pass, PassError, Pipeline, UnknownPass};
pub use registry::{PassConfig, PassInfo, PipelineInfo, DEFAULT_PIPELINE, PASSES, PIPELINES};
pub use simplify::{dce, fold, forward, removable, simplify_function, SizeFacts};
pub use walk::count_stms;

use nabla_ir::{FunId, Program};

/// Optimises a program in place with the optimiser alone (the pipeline
/// [`Pipeline::dynamic_ad`], no static AD), without validation: up to
/// [`MAX_ROUNDS`] rounds, each inlining eligible calls into every function
/// (callees first), simplifying every function, and removing functions no
/// entry point reaches; stops early at a fixpoint.
pub fn optimise(prog: &mut Program) {
    optimise_with(prog, &InlinePolicy::default());
}

/// The most rounds [`optimise`] runs.
pub const MAX_ROUNDS: usize = 6;

/// [`optimise`] with a given inlining policy.
pub fn optimise_with(prog: &mut Program, policy: &InlinePolicy) {
    // The built-in passes never fail, and validation is off.
    let config = PassConfig {
        inline: *policy,
        ..PassConfig::default()
    };
    let pipeline = Pipeline::named_with("dynamic", config).expect("a registered pipeline");
    let _ = pipeline.run(prog);
}

/// Inlining alone: one round over every function (callees first), without
/// simplification. Returns whether a call was inlined.
pub fn inline_calls(prog: &mut Program, policy: &InlinePolicy) -> bool {
    inline_calls_with(prog, policy, None)
}

/// [`inline_calls`] given the analysis of `prog` (the pass manager's).
pub(crate) fn inline_calls_with(
    prog: &mut Program,
    policy: &InlinePolicy,
    analysis: Option<&nabla_ir::Analysis>,
) -> bool {
    let info = inline::CallInfo::new(prog);
    let total: usize = prog
        .functions
        .iter()
        .map(|f| walk::count_stms(&f.body))
        .sum();
    let mut budget = policy.max_program.saturating_sub(total);
    let mut changed = false;
    for f in inline::bottom_up_order(prog) {
        // Function `f` is still as analysed: inlining changes only the
        // function it inlines into, and each is visited once.
        let function_analysis = analysis.and_then(|a| a.function(FunId(f as u32)));
        changed |= inline::inline_into(prog, f, &info, policy, &mut budget, function_analysis);
    }
    changed
}

/// Removes the functions no entry point reaches through calls, renumbering
/// the others (calls and entry points are updated). A program without entry
/// points is left alone. Returns whether a function was removed.
pub fn remove_dead_functions(prog: &mut Program) -> bool {
    let n = prog.functions.len();
    if prog.entries.is_empty() {
        return false;
    }
    let mut reached = vec![false; n];
    let mut stack: Vec<usize> = prog
        .entries
        .iter()
        .map(|e| e.fun.0 as usize)
        .filter(|&f| f < n)
        .collect();
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut reached[f], true) {
            continue;
        }
        for g in walk::callees(&prog.functions[f].body) {
            let g = g.0 as usize;
            if g < n && !reached[g] {
                stack.push(g);
            }
        }
    }
    if reached.iter().all(|&r| r) {
        return false;
    }
    let mut new_id = vec![None; n];
    let mut k = 0u32;
    for (i, r) in reached.iter().enumerate() {
        if *r {
            new_id[i] = Some(FunId(k));
            k += 1;
        }
    }
    let old = std::mem::take(&mut prog.functions);
    for (i, mut f) in old.into_iter().enumerate() {
        if reached[i] {
            let mut r = Renumber(&new_id);
            walk::walk_body_deep(&mut f.body, &mut r);
            prog.functions.push(f);
        }
    }
    for e in &mut prog.entries {
        if let Some(Some(id)) = new_id.get(e.fun.0 as usize) {
            e.fun = *id;
        }
    }
    true
}

/// Rewrites called function numbers.
struct Renumber<'a>(&'a [Option<FunId>]);

impl walk::Visitor for Renumber<'_> {
    fn atom(&mut self, _a: &mut nabla_ir::Atom) {}
    fn var(&mut self, _v: &mut nabla_ir::Var) {}
    fn bind(&mut self, _v: &mut nabla_ir::Var) {}
    fn dim(&mut self, _d: &mut nabla_ir::Dim) {}
    fn fun(&mut self, f: &mut FunId) {
        if let Some(Some(id)) = self.0.get(f.0 as usize) {
            *f = *id;
        }
    }
    fn body(&mut self, b: &mut nabla_ir::Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            walk::walk_body_deep(b, self)
        })
    }
}
