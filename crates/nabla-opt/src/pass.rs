//! The pass manager: passes as values, and [`Pipeline`]s that run them in
//! order, optionally validating the IR after each one.
//!
//! A pass is anything that implements [`Pass`]. It receives the program
//! and the [`Analysis`] of that program (variable types, use counts,
//! consumption, aliases): the validator's when the pipeline validates,
//! otherwise computed once by [`nabla_ir::analyse_program`] before the
//! pass (and kept for the next pass when a pass changes nothing), so no
//! pass recomputes these tables for the program it receives. The passes the command line
//! can name, and the named pipelines built from them, are the lists of
//! module [`crate::registry`]; [`pass_named`] and [`Pipeline::named`] turn
//! their entries into values. The default pipeline
//! ([`Pipeline::default_pipeline`], the command line's) optimises, compiles
//! `jvp`/`vjp` away (`ad`) and optimises again, each optimisation a group of
//! passes repeated until nothing changes, at most [`MAX_ROUNDS`] times.
//!
//! [`MAX_ROUNDS`]: crate::MAX_ROUNDS

use crate::registry::{
    pass_info, pipeline_info, PassConfig, PassInfo, Stage, DEFAULT_PIPELINE, PASSES,
};
use crate::MAX_ROUNDS;
use nabla_ir::{Analysis, Program};
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
    /// Transforms `prog` in place; `analysis` is the analysis of `prog` as
    /// received (stale for a function once the pass changes it). Returns
    /// whether anything changed (a fixpoint group stops when no pass
    /// changes anything; a pass that changed nothing hands its analysis on
    /// to the next pass, so `false` must mean `prog` is untouched).
    fn run(&self, prog: &mut Program, analysis: &Analysis) -> Result<bool, PassError>;

    /// This pass for a target that runs segmented operations in parallel
    /// (`parallel_target`) or not, where its choices depend on it; `None`
    /// (the default): the pass is the same for every target.
    fn for_target(&self, parallel_target: bool) -> Option<Arc<dyn Pass>> {
        let _ = parallel_target;
        None
    }
}

/// A pass of [`PASSES`] with its configuration.
struct Registered {
    info: &'static PassInfo,
    config: PassConfig,
}

impl Pass for Registered {
    fn name(&self) -> &'static str {
        self.info.name
    }
    fn description(&self) -> &'static str {
        self.info.description
    }
    fn run(&self, prog: &mut Program, analysis: &Analysis) -> Result<bool, PassError> {
        // The lowering's decisions hold for the program it saw: any other
        // pass drops them (run `lower` again after it).
        if self.info.name != "lower" {
            prog.segments.clear();
        }
        (self.info.run)(prog, analysis, &self.config).map_err(|e| match e {
            PassError::Failed { message, span, .. } => PassError::Failed {
                pass: self.info.name.to_string(),
                message,
                span,
            },
            other => other,
        })
    }

    fn for_target(&self, parallel_target: bool) -> Option<Arc<dyn Pass>> {
        let config = PassConfig {
            parallel_target,
            ..self.config
        };
        Some(registered(self.info, config))
    }
}

/// Every registered pass, in the order `nabla passes` lists them (the list
/// is [`PASSES`]).
pub fn registered_passes() -> &'static [PassInfo] {
    PASSES
}

/// The registered pass called `name`, with the default configuration.
pub fn pass_named(name: &str) -> Option<Arc<dyn Pass>> {
    pass_info(name).map(|info| registered(info, PassConfig::default()))
}

/// A registered pass as a value.
fn registered(info: &'static PassInfo, config: PassConfig) -> Arc<dyn Pass> {
    Arc::new(Registered { info, config })
}

/// The names of the registered passes, in registry order.
pub fn pass_names() -> Vec<&'static str> {
    PASSES.iter().map(|p| p.name).collect()
}

pub use crate::error::PassError;

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

    /// The pipeline the command line runs by default (`--ad=static`): the
    /// optimiser, then `ad`, then the optimiser again on the derivative
    /// code, with `acc-updates` among its passes (see
    /// [`crate::registry::PIPELINES`]); no validation.
    pub fn default_pipeline() -> Pipeline {
        Pipeline::named(DEFAULT_PIPELINE).expect("the default pipeline is registered")
    }

    /// The optimiser alone, without static AD (`--ad=dynamic`: the
    /// interpreter differentiates `jvp`/`vjp` as it runs); no validation.
    pub fn dynamic_ad() -> Pipeline {
        Pipeline::named("dynamic").expect("the dynamic pipeline is registered")
    }

    /// The default pipeline with `ad-per-seed` (one `jvp` per seed for a
    /// map of a `jvp` at one primal point) in place of `ad`
    /// (`--ad=per-seed`); no validation.
    pub fn per_seed_ad() -> Pipeline {
        Pipeline::named("per-seed").expect("the per-seed pipeline is registered")
    }

    /// The named pipeline `name` of [`crate::registry::PIPELINES`], its
    /// passes configured by default; no validation.
    pub fn named(name: &str) -> Option<Pipeline> {
        Pipeline::named_with(name, PassConfig::default())
    }

    /// The named pipeline `name`, its passes configured by `config`; no
    /// validation.
    pub fn named_with(name: &str, config: PassConfig) -> Option<Pipeline> {
        let info = pipeline_info(name)?;
        let pass = |n: &str| {
            registered(
                pass_info(n).expect("a pipeline names a registered pass"),
                config,
            )
        };
        let mut pipeline = Pipeline::empty();
        for stage in info.stages {
            pipeline = match stage {
                Stage::Once(n) => pipeline.then(pass(n)),
                Stage::Repeat(ns) => {
                    pipeline.then_fixpoint(ns.iter().map(|n| pass(n)).collect(), MAX_ROUNDS)
                }
            };
        }
        Some(pipeline)
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

    /// The same passes, configured for a target that runs segmented
    /// operations in parallel or not ([`Pass::for_target`]; passes that
    /// do not depend on the target stay as they are).
    pub fn for_parallel_target(mut self, parallel_target: bool) -> Pipeline {
        let retarget =
            |p: &Arc<dyn Pass>| p.for_target(parallel_target).unwrap_or_else(|| p.clone());
        for step in &mut self.steps {
            match step {
                Step::Once(p) => *p = retarget(p),
                Step::Fixpoint { passes, .. } => {
                    for p in passes.iter_mut() {
                        *p = retarget(p);
                    }
                }
            }
        }
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
        // The analysis of the program as it is now, when known: the
        // validator's, or the one the last pass received if it changed
        // nothing.
        let mut analysis = if self.validate {
            Some(validate(prog, None)?)
        } else {
            None
        };
        for step in &self.steps {
            match step {
                Step::Once(pass) => {
                    if self
                        .run_pass(pass.as_ref(), prog, &mut analysis, after)?
                        .is_break()
                    {
                        return Ok(true);
                    }
                }
                Step::Fixpoint { passes, max_rounds } => {
                    for _ in 0..*max_rounds {
                        let mut changed = false;
                        for pass in passes {
                            match self.run_pass(pass.as_ref(), prog, &mut analysis, after)? {
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

    /// Runs one pass on `prog` with its analysis (`analysis`, computed
    /// first when unknown; afterwards the analysis of the pass's output
    /// when known), validates, and asks `after` whether to go on.
    /// Continues with whether the pass changed anything.
    fn run_pass(
        &self,
        pass: &dyn Pass,
        prog: &mut Program,
        analysis: &mut Option<Analysis>,
        after: &mut dyn FnMut(&str, &Program) -> ControlFlow<()>,
    ) -> Result<ControlFlow<(), bool>, PassError> {
        let received = analysis
            .take()
            .unwrap_or_else(|| nabla_ir::analyse_program(prog));
        let changed = pass.run(prog, &received)?;
        if self.validate {
            *analysis = Some(validate(prog, Some(pass.name()))?);
        } else if !changed {
            *analysis = Some(received);
        }
        Ok(match after(pass.name(), prog) {
            ControlFlow::Break(()) => ControlFlow::Break(()),
            ControlFlow::Continue(()) => ControlFlow::Continue(changed),
        })
    }
}

/// Runs the validator (sizes included); `after` names the pass that just
/// ran. Returns the analysis of the valid program.
fn validate(prog: &Program, after: Option<&str>) -> Result<Analysis, PassError> {
    nabla_ir::validate_program(prog).map_err(|errors| PassError::InvalidIr {
        after: after.map(str::to_string),
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nabla_ir::{Atom, Body, EntryPoint, FunId, Function, Param, PrimType, Span, Type, Var};

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
            ..Default::default()
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
        fn run(&self, prog: &mut Program, _: &Analysis) -> Result<bool, PassError> {
            for f in &mut prog.functions {
                f.var_names.push("ghost".to_string());
                let ghost = Var(f.var_names.len() as u32 - 1);
                f.body.result = vec![Atom::Var(ghost)];
            }
            Ok(true)
        }
    }

    /// Binds `copy = x` in every function (one more use of `x`, `Var(0)`).
    struct CopyTheParameter;

    impl Pass for CopyTheParameter {
        fn name(&self) -> &'static str {
            "copy-parameter"
        }
        fn description(&self) -> &'static str {
            "adds a use of the first parameter"
        }
        fn run(&self, prog: &mut Program, _: &Analysis) -> Result<bool, PassError> {
            for f in &mut prog.functions {
                f.var_names.push("copy".to_string());
                let copy = Var(f.var_names.len() as u32 - 1);
                f.body.stms.push(nabla_ir::Stm {
                    pat: vec![Param::new(copy, Type::Prim(PrimType::I32))],
                    exp: nabla_ir::Exp::Atoms(vec![Atom::Var(Var(0))]),
                    span: Span::default(),
                });
            }
            Ok(true)
        }
    }

    /// Records, for each run, the uses of `x` (`Var(0)`) in `main` and the
    /// number of variables typed by the analysis it receives; changes
    /// nothing.
    #[derive(Default)]
    struct ProbeAnalysis {
        seen: std::sync::Mutex<Vec<(usize, usize)>>,
    }

    impl Pass for ProbeAnalysis {
        fn name(&self) -> &'static str {
            "probe-analysis"
        }
        fn description(&self) -> &'static str {
            "records the analysis it receives"
        }
        fn run(&self, prog: &mut Program, analysis: &Analysis) -> Result<bool, PassError> {
            assert_eq!(analysis.functions.len(), prog.functions.len());
            let main = analysis.function(FunId(0)).unwrap();
            let typed = main.types().iter().filter(|t| t.is_some()).count();
            self.seen
                .lock()
                .unwrap()
                .push((analysis.uses(FunId(0), Var(0)), typed));
            Ok(false)
        }
    }

    #[test]
    fn each_pass_receives_the_analysis_of_the_program_it_receives() {
        for validate in [false, true] {
            let probe = Arc::new(ProbeAnalysis::default());
            let pipeline = Pipeline::empty()
                .then(probe.clone())
                .then(Arc::new(CopyTheParameter))
                .then(probe.clone())
                .then(probe.clone())
                .then(Arc::new(CopyTheParameter))
                .then(probe.clone())
                .validating(validate);
            pipeline.run(&mut identity_program()).unwrap();
            // `x` is read by the result, then by each copy; the copies are
            // typed too.
            assert_eq!(
                *probe.seen.lock().unwrap(),
                [(1, 1), (2, 2), (2, 2), (3, 3)],
                "validating: {validate}"
            );
        }
    }

    #[test]
    fn a_pass_that_breaks_the_ir_is_reported_by_name() {
        let mut prog = identity_program();
        let pipeline = Pipeline::default_pipeline()
            .then(Arc::new(ReturnUnboundVariable))
            .then(pass_named("simplify").unwrap())
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
        fn run(&self, _prog: &mut Program, _: &Analysis) -> Result<bool, PassError> {
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
