//! The pass manager: passes as values, a registry of them by name, and
//! [`Pipeline`]s that run them in order, optionally validating the IR after
//! each one.
//!
//! A pass is anything that implements [`Pass`]. [`registered_passes`] lists
//! every pass the command line can name (`--passes=inline,simplify`);
//! adding a pass is one line there. The default pipeline
//! ([`Pipeline::default_pipeline`]) repeats `inline`, `simplify` and
//! `dead-functions` until nothing changes, at most [`MAX_ROUNDS`] times.
//!
//! [`MAX_ROUNDS`]: crate::MAX_ROUNDS

use crate::{inline, simplify, InlinePolicy, MAX_ROUNDS};
use nabla_ir::{Program, Span, ValidationError};
use std::ops::ControlFlow;
use std::sync::Arc;

/// One IR → IR transformation.
///
/// A pass keeps the IR's invariants (see the crate docs); the pipeline can
/// check this after every pass with `nabla_ir::validate_program`.
pub trait Pass: Send + Sync {
    /// The name the command line uses (`--passes`, `--after`): lower case,
    /// words joined by `-`.
    fn name(&self) -> &'static str;
    /// One line saying what the pass does (`nabla passes`).
    fn description(&self) -> &'static str;
    /// Transforms `prog` in place. Returns whether anything changed (a
    /// fixpoint group stops when no pass changes anything).
    fn run(&self, prog: &mut Program) -> Result<bool, PassError>;
}

/// Every pass that can be named, in the order `nabla passes` lists them.
/// To add a pass, add one line here.
pub fn registered_passes() -> Vec<Arc<dyn Pass>> {
    vec![
        Arc::new(Inline::default()),
        Arc::new(Simplify),
        Arc::new(Propagate),
        Arc::new(Dce),
        Arc::new(Cse),
        Arc::new(Hoist),
        Arc::new(Fuse),
        Arc::new(Unroll),
        Arc::new(AccUpdates),
        Arc::new(DeadFunctions),
        Arc::new(StaticAd::default()),
        Arc::new(StaticAd { per_seed: true }),
    ]
}

/// The registered pass called `name`.
pub fn pass_named(name: &str) -> Option<Arc<dyn Pass>> {
    registered_passes().into_iter().find(|p| p.name() == name)
}

/// The names of the registered passes, in registry order.
pub fn pass_names() -> Vec<&'static str> {
    registered_passes().iter().map(|p| p.name()).collect()
}

/// Why a pipeline stopped.
#[derive(Clone, Debug)]
pub enum PassError {
    /// A pass could not do its work (a construct it does not handle, …).
    Failed {
        /// The pass that failed.
        pass: String,
        /// What went wrong.
        message: String,
        /// Where in the source, when known.
        span: Option<Span>,
    },
    /// The IR does not validate after pass `after`.
    InvalidIr {
        /// The pass after which the IR is invalid; `None` for the
        /// pipeline's input (before any pass ran).
        after: Option<String>,
        /// Every problem the validator found.
        errors: Vec<ValidationError>,
    },
}

impl std::fmt::Display for PassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PassError::Failed { pass, message, .. } => write!(f, "pass {pass} failed: {message}"),
            PassError::InvalidIr { after, errors } => {
                match after {
                    Some(pass) => write!(f, "the IR is invalid after pass {pass}:")?,
                    None => write!(f, "the input IR is invalid:")?,
                }
                for e in errors {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PassError {}

/// A pass name that is not registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPass {
    /// The name asked for.
    pub name: String,
}

impl std::fmt::Display for UnknownPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown pass `{}` (known passes: {})",
            self.name,
            pass_names().join(", ")
        )
    }
}

impl std::error::Error for UnknownPass {}

/// One step of a pipeline.
#[derive(Clone)]
enum Step {
    /// Run the pass once.
    Once(Arc<dyn Pass>),
    /// Run the passes in order, again and again until a round changes
    /// nothing, at most `max_rounds` rounds.
    Fixpoint {
        passes: Vec<Arc<dyn Pass>>,
        max_rounds: usize,
    },
}

/// An ordered list of passes (some grouped to run until a fixpoint), and
/// whether to validate the IR before the first and after every pass.
#[derive(Clone)]
pub struct Pipeline {
    steps: Vec<Step>,
    validate: bool,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("passes", &self.describe())
            .field("validate", &self.validate)
            .finish()
    }
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::default_pipeline()
    }
}

impl Pipeline {
    /// No passes (the IR stays as elaborated), no validation.
    pub fn empty() -> Pipeline {
        Pipeline {
            steps: Vec::new(),
            validate: false,
        }
    }

    /// The optimiser: `inline`, `simplify`, `cse`, `hoist`, `fuse`,
    /// `unroll`, `dead-functions`, repeated until nothing changes (at most
    /// [`MAX_ROUNDS`] rounds); no validation. The pipeline of
    /// `--ad=dynamic` (the default one, with static AD, is
    /// [`Pipeline::with_static_ad`]).
    pub fn default_pipeline() -> Pipeline {
        Pipeline::optimiser(InlinePolicy::default())
    }

    /// The default pipeline with static AD: the optimiser, then `ad`, then
    /// the optimiser again on the derivative code, with `acc-updates`
    /// among its passes.
    pub fn with_static_ad() -> Pipeline {
        Pipeline::static_ad_pipeline(false)
    }

    /// [`Pipeline::with_static_ad`] with the `ad-per-seed` pass (one `jvp`
    /// per seed for a map of a `jvp` at one primal point) in place of `ad`.
    pub fn with_static_ad_per_seed() -> Pipeline {
        Pipeline::static_ad_pipeline(true)
    }

    fn static_ad_pipeline(per_seed: bool) -> Pipeline {
        let optimiser = || -> Vec<Arc<dyn Pass>> {
            vec![
                Arc::new(Inline::default()),
                Arc::new(Simplify),
                Arc::new(Cse),
                Arc::new(Hoist),
                Arc::new(Fuse),
                Arc::new(Unroll),
                Arc::new(DeadFunctions),
            ]
        };
        let mut after_ad = optimiser();
        after_ad.insert(6, Arc::new(AccUpdates));
        Pipeline::empty()
            .then_fixpoint(optimiser(), MAX_ROUNDS)
            .then(Arc::new(StaticAd { per_seed }))
            .then_fixpoint(after_ad, MAX_ROUNDS)
    }

    /// [`Pipeline::default_pipeline`] with a given inlining policy.
    pub fn optimiser(policy: InlinePolicy) -> Pipeline {
        Pipeline::empty().then_fixpoint(
            vec![
                Arc::new(Inline { policy }),
                Arc::new(Simplify),
                Arc::new(Cse),
                Arc::new(Hoist),
                Arc::new(Fuse),
                Arc::new(Unroll),
                Arc::new(DeadFunctions),
            ],
            MAX_ROUNDS,
        )
    }

    /// The registered passes `names`, each run once, in order; no
    /// validation. An empty list is the empty pipeline.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Pipeline, UnknownPass> {
        let mut pipeline = Pipeline::empty();
        for name in names {
            let name = name.as_ref();
            let pass = pass_named(name).ok_or_else(|| UnknownPass {
                name: name.to_string(),
            })?;
            pipeline = pipeline.then(pass);
        }
        Ok(pipeline)
    }

    /// Parses a comma-separated list of pass names (`inline,simplify`);
    /// blanks around names are ignored and the empty string is the empty
    /// pipeline.
    pub fn parse(list: &str) -> Result<Pipeline, UnknownPass> {
        let names: Vec<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        Pipeline::from_names(&names)
    }

    /// This pipeline followed by `pass`, run once.
    pub fn then(mut self, pass: Arc<dyn Pass>) -> Pipeline {
        self.steps.push(Step::Once(pass));
        self
    }

    /// This pipeline followed by `passes` repeated until a round changes
    /// nothing, at most `max_rounds` rounds.
    pub fn then_fixpoint(mut self, passes: Vec<Arc<dyn Pass>>, max_rounds: usize) -> Pipeline {
        self.steps.push(Step::Fixpoint { passes, max_rounds });
        self
    }

    /// The same passes, validating (or not) before the first and after
    /// every pass.
    pub fn validating(mut self, validate: bool) -> Pipeline {
        self.validate = validate;
        self
    }

    /// Whether the pipeline validates the IR.
    pub fn validates(&self) -> bool {
        self.validate
    }

    /// Whether the pipeline has no passes.
    pub fn is_empty(&self) -> bool {
        self.steps.iter().all(|s| match s {
            Step::Once(_) => false,
            Step::Fixpoint { passes, .. } => passes.is_empty(),
        })
    }

    /// Whether a pass called `name` is part of the pipeline.
    pub fn contains(&self, name: &str) -> bool {
        self.steps.iter().any(|s| match s {
            Step::Once(p) => p.name() == name,
            Step::Fixpoint { passes, .. } => passes.iter().any(|p| p.name() == name),
        })
    }

    /// The pipeline in words: `inline, simplify` or
    /// `repeat up to 6 times: (inline, simplify, dead-functions)`.
    pub fn describe(&self) -> String {
        let names =
            |ps: &[Arc<dyn Pass>]| ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ");
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Once(p) => p.name().to_string(),
                Step::Fixpoint { passes, max_rounds } => format!(
                    "repeat until nothing changes, at most {max_rounds} times: ({})",
                    names(passes)
                ),
            })
            .collect();
        if steps.is_empty() {
            "no passes".to_string()
        } else {
            steps.join(", ")
        }
    }

    /// Runs every pass on `prog`, validating as configured.
    pub fn run(&self, prog: &mut Program) -> Result<(), PassError> {
        self.run_observed(prog, &mut |_, _| ControlFlow::Continue(()))
            .map(|_| ())
    }

    /// Runs the passes up to and including the first run of pass `name`
    /// (the first round of a fixpoint group), validating as configured.
    /// Returns whether that pass ran (`false`: it is not in the pipeline,
    /// and every pass ran).
    pub fn run_until(&self, prog: &mut Program, name: &str) -> Result<bool, PassError> {
        self.run_observed(prog, &mut |pass, _| {
            if pass == name {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
    }

    /// Runs the passes, calling `after(name, prog)` after each pass (and
    /// its validation); the run stops early, returning `Ok(true)`, when
    /// `after` breaks. Returns `Ok(false)` when every pass ran.
    pub fn run_observed(
        &self,
        prog: &mut Program,
        after: &mut dyn FnMut(&str, &Program) -> ControlFlow<()>,
    ) -> Result<bool, PassError> {
        if self.validate {
            validate(prog, None)?;
        }
        for step in &self.steps {
            match step {
                Step::Once(pass) => {
                    if self.run_pass(pass.as_ref(), prog, after)?.is_break() {
                        return Ok(true);
                    }
                }
                Step::Fixpoint { passes, max_rounds } => {
                    for _ in 0..*max_rounds {
                        let mut changed = false;
                        for pass in passes {
                            match self.run_pass(pass.as_ref(), prog, after)? {
                                ControlFlow::Break(()) => return Ok(true),
                                ControlFlow::Continue(c) => changed |= c,
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                }
            }
        }
        Ok(false)
    }

    /// Runs one pass, validates, and asks `after` whether to go on.
    /// Continues with whether the pass changed anything.
    fn run_pass(
        &self,
        pass: &dyn Pass,
        prog: &mut Program,
        after: &mut dyn FnMut(&str, &Program) -> ControlFlow<()>,
    ) -> Result<ControlFlow<(), bool>, PassError> {
        let changed = pass.run(prog)?;
        if self.validate {
            validate(prog, Some(pass.name()))?;
        }
        Ok(match after(pass.name(), prog) {
            ControlFlow::Break(()) => ControlFlow::Break(()),
            ControlFlow::Continue(()) => ControlFlow::Continue(changed),
        })
    }
}

/// Runs the validator (sizes included); `after` names the pass that just ran.
fn validate(prog: &Program, after: Option<&str>) -> Result<(), PassError> {
    nabla_ir::validate_program(prog)
        .map(|_| ())
        .map_err(|errors| PassError::InvalidIr {
            after: after.map(str::to_string),
            errors,
        })
}

/// `inline`: inlines calls to small or once-called functions into every
/// function, callees first (one level per run).
#[derive(Clone, Copy, Debug, Default)]
pub struct Inline {
    /// Which calls are inlined.
    pub policy: InlinePolicy,
}

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }
    fn description(&self) -> &'static str {
        "inline calls to small or once-called functions (callees first, one level)"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(crate::inline_calls(prog, &self.policy))
    }
}

/// `simplify`: copy propagation, constant folding and dead-code elimination
/// on every function, repeated a few times.
#[derive(Clone, Copy, Debug, Default)]
pub struct Simplify;

impl Pass for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }
    fn description(&self) -> &'static str {
        "copy propagation, constant folding and dead-code elimination, repeated"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, simplify::simplify_function))
    }
}

/// `cse`: common-subexpression elimination of scalar computations (see
/// `cse.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }
    fn description(&self) -> &'static str {
        "common-subexpression elimination of scalar computations"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, crate::cse::cse_function))
    }
}

/// `hoist`: loop-invariant code motion out of loops and SOAC lambdas (see
/// `hoist.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hoist;

impl Pass for Hoist {
    fn name(&self) -> &'static str {
        "hoist"
    }
    fn description(&self) -> &'static str {
        "loop-invariant code motion of pure scalar statements out of loops and SOAC lambdas"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, crate::hoist::hoist_function))
    }
}

/// `fuse`: map fusion (replicated scalar inputs read directly; a map
/// whose results feed only one later map of the same width fused into it;
/// see `fuse.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fuse;

impl Pass for Fuse {
    fn name(&self) -> &'static str {
        "fuse"
    }
    fn description(&self) -> &'static str {
        "map fusion: replicated scalar inputs, producer maps into their one consumer map"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, crate::fuse::fuse_function))
    }
}

/// `unroll`: maps and reductions of a small constant width over scalars,
/// with straight-line lambdas, become scalar code (see `unroll.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unroll;

impl Pass for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }
    fn description(&self) -> &'static str {
        "maps and reductions over at most 4 scalars with straight-line lambdas: the lambda once per element; branches that both make a small literal return its elements; small vectors built by replicate, updates and concatenation become literals"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, crate::unroll::unroll_function))
    }
}

/// `acc-updates`: dense adjoint arrays built element by element in a loop
/// and then added whole into an accumulator become element updates of the
/// accumulator in the loop (see `accumulate.rs`), and an array that a map,
/// a branch or a `with_acc` over zeros builds only to add it whole into an
/// accumulator is added by its producer instead (`sink_updates.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AccUpdates;

impl Pass for AccUpdates {
    fn name(&self) -> &'static str {
        "acc-updates"
    }
    fn description(&self) -> &'static str {
        "adjoint arrays summed into an accumulator after a loop, map, branch or with_acc: their producer updates the accumulator instead"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(
            prog,
            crate::accumulate::acc_updates_function,
        ))
    }
}

/// `propagate`: one forward sweep of copy propagation and constant folding
/// on every function (the first half of `simplify`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Propagate;

impl Pass for Propagate {
    fn name(&self) -> &'static str {
        "propagate"
    }
    fn description(&self) -> &'static str {
        "copy propagation and constant folding, one sweep"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, simplify::forward))
    }
}

/// `dce`: dead-code elimination of pure, total statements in every
/// function (the second half of `simplify`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }
    fn description(&self) -> &'static str {
        "dead-code elimination of pure statements that cannot fail"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(for_each_function(prog, simplify::dce))
    }
}

/// `dead-functions`: removes the functions no entry point reaches.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeadFunctions;

impl Pass for DeadFunctions {
    fn name(&self) -> &'static str {
        "dead-functions"
    }
    fn description(&self) -> &'static str {
        "remove functions that no entry point reaches"
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        Ok(crate::remove_dead_functions(prog))
    }
}

/// Static AD (crate nabla-ad): every `jvp` and `vjp` compiled away,
/// innermost first (forward mode by tangents; reverse mode by redundant
/// execution). A `map` of a `jvp` at one primal point (`jmp`, a Jacobian
/// one column per seed) is differentiated in vector mode, the primal once
/// for all seeds (see [`nabla_ad::Options::vector_jvps`]); with
/// `per_seed` (the pass `ad-per-seed`), each seed gets its own `jvp`. A
/// `jvp`/`vjp` containing a construct it does not differentiate yet is
/// left for the interpreter's dynamic AD.
#[derive(Default)]
pub struct StaticAd {
    pub per_seed: bool,
}

impl Pass for StaticAd {
    fn name(&self) -> &'static str {
        if self.per_seed {
            "ad-per-seed"
        } else {
            "ad"
        }
    }
    fn description(&self) -> &'static str {
        if self.per_seed {
            "static AD as `ad`, but a map of jvp at one primal point differentiates each seed on its own (the primal once per seed, unless hoisted)"
        } else {
            "static AD: compile every jvp and vjp away (forward mode by tangents, a map of jvp at one primal point in vector mode; reverse mode by redundant execution; innermost first)"
        }
    }
    fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
        let options = nabla_ad::Options {
            vector_jvps: !self.per_seed,
        };
        nabla_ad::differentiate_with_options(prog, options)
            .map(|r| r.changed())
            .map_err(|e| PassError::Failed {
                pass: self.name().to_string(),
                message: e.message,
                span: Some(e.span),
            })
    }
}

/// Applies `f` to every function in bottom-up call order (callees first);
/// returns whether it changed any.
fn for_each_function(prog: &mut Program, f: fn(&mut nabla_ir::Function) -> bool) -> bool {
    let mut changed = false;
    for i in inline::bottom_up_order(prog) {
        changed |= f(&mut prog.functions[i]);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use nabla_ir::{Atom, Body, EntryPoint, FunId, Function, Param, PrimType, Type, Var};

    /// `entry main (x: i32) = x`.
    fn identity_program() -> Program {
        Program {
            functions: vec![Function {
                name: "main".to_string(),
                params: vec![Param::new(Var(0), Type::Prim(PrimType::I32))],
                unique_ret: vec![false],
                ret: vec![Type::Prim(PrimType::I32)],
                body: Body {
                    stms: vec![],
                    result: vec![Atom::Var(Var(0))],
                },
                var_names: vec!["x".to_string()],
                span: Span::default(),
            }],
            entries: vec![EntryPoint {
                name: "main".to_string(),
                fun: FunId(0),
                param_arity: vec![1],
                result_arity: vec![1],
                signature: None,
            }],
        }
    }

    /// Makes every function return a variable that is never bound.
    struct ReturnUnboundVariable;

    impl Pass for ReturnUnboundVariable {
        fn name(&self) -> &'static str {
            "return-unbound"
        }
        fn description(&self) -> &'static str {
            "breaks the IR on purpose"
        }
        fn run(&self, prog: &mut Program) -> Result<bool, PassError> {
            for f in &mut prog.functions {
                f.var_names.push("ghost".to_string());
                let ghost = Var(f.var_names.len() as u32 - 1);
                f.body.result = vec![Atom::Var(ghost)];
            }
            Ok(true)
        }
    }

    #[test]
    fn a_pass_that_breaks_the_ir_is_reported_by_name() {
        let mut prog = identity_program();
        let pipeline = Pipeline::default_pipeline()
            .then(Arc::new(ReturnUnboundVariable))
            .then(Arc::new(Simplify))
            .validating(true);
        match pipeline.run(&mut prog) {
            Err(PassError::InvalidIr { after, errors }) => {
                assert_eq!(after.as_deref(), Some("return-unbound"));
                assert!(!errors.is_empty());
            }
            other => panic!("expected invalid IR after return-unbound, got {other:?}"),
        }
    }

    #[test]
    fn without_validation_a_broken_pass_goes_unnoticed() {
        let mut prog = identity_program();
        let pipeline = Pipeline::empty().then(Arc::new(ReturnUnboundVariable));
        assert!(pipeline.run(&mut prog).is_ok());
    }

    #[test]
    fn invalid_input_is_reported_before_any_pass() {
        let mut prog = identity_program();
        prog.functions[0].body.result = vec![Atom::Var(Var(7))];
        let err = Pipeline::empty()
            .validating(true)
            .run(&mut prog)
            .unwrap_err();
        assert!(matches!(err, PassError::InvalidIr { after: None, .. }));
        assert!(err.to_string().starts_with("the input IR is invalid"));
    }

    #[test]
    fn unknown_names_are_errors_listing_the_known_passes() {
        let err = Pipeline::from_names(&["inline", "inlne"]).unwrap_err();
        assert_eq!(err.name, "inlne");
        let msg = err.to_string();
        for name in pass_names() {
            assert!(msg.contains(name), "{msg}");
        }
    }

    #[test]
    fn names_are_unique_and_resolve() {
        let names = pass_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} registered twice");
            assert_eq!(pass_named(n).map(|p| p.name()), Some(*n));
        }
        for n in ["inline", "simplify", "propagate", "dce", "dead-functions"] {
            assert!(names.contains(&n), "{n}");
        }
    }

    #[test]
    fn parsing_a_list() {
        let p = Pipeline::parse(" inline, simplify ,dce").unwrap();
        assert_eq!(p.describe(), "inline, simplify, dce");
        assert!(Pipeline::parse("").unwrap().is_empty());
        assert!(Pipeline::parse(",").unwrap().is_empty());
        assert_eq!(Pipeline::parse("inline,,bogus").unwrap_err().name, "bogus");
    }

    /// Counts the runs of a pass and reports a change for the first `k`.
    struct ChangesTimes {
        k: usize,
        runs: std::sync::atomic::AtomicUsize,
    }

    impl Pass for ChangesTimes {
        fn name(&self) -> &'static str {
            "changes-times"
        }
        fn description(&self) -> &'static str {
            "reports a change a given number of times"
        }
        fn run(&self, _prog: &mut Program) -> Result<bool, PassError> {
            let n = self.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(n < self.k)
        }
    }

    #[test]
    fn a_fixpoint_group_stops_when_nothing_changes_or_after_max_rounds() {
        let pass = Arc::new(ChangesTimes {
            k: 2,
            runs: Default::default(),
        });
        let pipeline = Pipeline::empty().then_fixpoint(vec![pass.clone()], 10);
        pipeline.run(&mut identity_program()).unwrap();
        // Two rounds that change, one that does not.
        assert_eq!(pass.runs.load(std::sync::atomic::Ordering::SeqCst), 3);

        let pass = Arc::new(ChangesTimes {
            k: 100,
            runs: Default::default(),
        });
        let pipeline = Pipeline::empty().then_fixpoint(vec![pass.clone()], 4);
        pipeline.run(&mut identity_program()).unwrap();
        assert_eq!(pass.runs.load(std::sync::atomic::Ordering::SeqCst), 4);
    }

    #[test]
    fn run_until_stops_after_the_first_run_of_the_pass() {
        let mut seen = Vec::new();
        let mut prog = identity_program();
        let stopped = Pipeline::parse("propagate,dce,simplify")
            .unwrap()
            .run_observed(&mut prog, &mut |name, _| {
                seen.push(name.to_string());
                if name == "dce" {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap();
        assert!(stopped);
        assert_eq!(seen, ["propagate", "dce"]);
        let mut prog = identity_program();
        assert!(!Pipeline::parse("dce")
            .unwrap()
            .run_until(&mut prog, "inline")
            .unwrap());
        assert!(Pipeline::default_pipeline()
            .run_until(&mut prog, "dead-functions")
            .unwrap());
    }
}
