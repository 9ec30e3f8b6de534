//! The one list of passes and the one list of pipelines.
//!
//! [`PASSES`] registers every pass once: its name (what `--passes`,
//! `--after` and the IR filetests accept), one line saying what it does
//! (`nabla passes`), and the function that runs it. [`PIPELINES`] builds
//! every named pipeline from those names. Adding a pass is its file and one
//! line in [`PASSES`] (and, to run it by default, its name in a pipeline
//! below). `crates/nabla/tests/docs_passes.rs` fails when `ARCHITECTURE.md`
//! or `tests/ir/README.md` list other passes than these.

use crate::error::PassError;
use crate::{inline, simplify, InlinePolicy};
use nabla_ir::{Analysis, FunId, FunctionAnalysis, Program};

/// What the registered passes may be configured with (the library's
/// [`crate::optimise_with`]; the command line uses the defaults).
#[derive(Clone, Copy, Debug, Default)]
pub struct PassConfig {
    /// Which calls `inline` inlines.
    pub inline: InlinePolicy,
    /// The target runs segmented operations in parallel (`nabla
    /// multicore`): `ad` uses the parallel forms of the reverse rules that
    /// have one ([`nabla_ad::Options::parallel_target`]).
    pub parallel_target: bool,
}

/// How a registered pass runs: transforms the program in place, given the
/// analysis of the program it receives (see [`crate::pass::Pass::run`]),
/// and says whether anything changed. A failure's pass name is filled in
/// by the pass manager.
pub type RunPass = fn(&mut Program, &Analysis, &PassConfig) -> Result<bool, PassError>;

/// One registered pass.
pub struct PassInfo {
    /// The name the command line uses: lower case, words joined by `-`.
    pub name: &'static str,
    /// One line saying what the pass does.
    pub description: &'static str,
    /// Runs it.
    pub run: RunPass,
}

/// One line of [`PASSES`].
const fn pass(name: &'static str, description: &'static str, run: RunPass) -> PassInfo {
    PassInfo {
        name,
        description,
        run,
    }
}

/// Every pass, in the order `nabla passes` lists them. To add a pass, add
/// its module and one line here.
pub static PASSES: &[PassInfo] = &[
    pass(
        "inline",
        "inline calls to small or once-called functions (callees first, one level)",
        |p, a, c| Ok(crate::inline_calls_with(p, &c.inline, Some(a))),
    ),
    pass(
        "constant-args",
        "a scalar parameter to which every call passes the same integer or boolean constant: that constant in the function's body and types",
        |p, _, _| Ok(crate::constant_args::constant_args(p)),
    ),
    pass(
        "simplify",
        "copy propagation, constant folding and dead-code elimination, repeated",
        |p, a, _| Ok(each_function(p, a, simplify::simplify_function)),
    ),
    pass(
        "propagate",
        "copy propagation and constant folding, one sweep",
        |p, a, _| Ok(each_function(p, a, |f, a| simplify::forward(f, Some(a)))),
    ),
    pass(
        "dce",
        "dead-code elimination of pure statements that cannot fail",
        |p, a, _| Ok(each_function(p, a, |f, a| simplify::dce(f, Some(a)))),
    ),
    pass(
        "cse",
        "common-subexpression elimination of scalar computations",
        |p, a, _| Ok(each_function(p, a, |f, _| crate::cse::cse_function(f))),
    ),
    pass(
        "hoist",
        "loop-invariant code motion of pure scalar statements out of loops and SOAC lambdas",
        |p, a, _| Ok(each_function(p, a, crate::hoist::hoist_function)),
    ),
    pass(
        "fuse",
        "map fusion: replicated scalar inputs, producer maps into their one consumer map",
        |p, a, _| Ok(each_function(p, a, crate::fuse::fuse_function)),
    ),
    pass(
        "unroll",
        "maps and reductions over at most 16 scalars with straight-line lambdas: the lambda once per element; branches that both make a small literal return its elements; small vectors built by replicate, updates and concatenation become literals",
        |p, a, _| Ok(each_function(p, a, crate::unroll::unroll_function)),
    ),
    pass(
        "copies",
        "copy elimination: a copy that no consumption can tell from its operand goes, then a copy whose operand nothing uses afterwards (the consumption rules still hold without it), and its variable becomes the operand",
        |p, _, _| Ok(crate::copies::elide_copies(p)),
    ),
    pass(
        "acc-updates",
        "adjoint arrays summed into an accumulator after a loop, map, branch or with_acc: their producer updates the accumulator instead",
        |p, a, _| Ok(each_function(p, a, crate::accumulate::acc_updates_function)),
    ),
    pass(
        "dead-functions",
        "remove functions that no entry point reaches",
        |p, _, _| Ok(crate::remove_dead_functions(p)),
    ),
    pass(
        "lower",
        "decide how each outermost SOAC runs: a segmented operation (seg_map, seg_red, seg_scan, seg_hist, seg_scatter), in parallel from a width on or sequentially",
        |p, _, _| Ok(crate::lower::lower_program(p)),
    ),
    pass(
        "ad",
        "static AD: compile every jvp and vjp away (forward mode by tangents, a map of jvp at one primal point in vector mode; reverse mode by redundant execution; innermost first)",
        |p, _, c| static_ad(p, true, c.parallel_target),
    ),
    pass(
        "ad-per-seed",
        "static AD as `ad`, but a map of jvp at one primal point differentiates each seed on its own (the primal once per seed, unless hoisted)",
        |p, _, c| static_ad(p, false, c.parallel_target),
    ),
];

/// One stage of a named pipeline.
pub enum Stage {
    /// The pass of this name, once.
    Once(&'static str),
    /// These passes in order, again and again until a round changes
    /// nothing, at most [`crate::MAX_ROUNDS`] rounds.
    Repeat(&'static [&'static str]),
}

/// One named pipeline.
pub struct PipelineInfo {
    /// Its name (the command line's `--ad=NAME` picks it).
    pub name: &'static str,
    /// What it is for.
    pub description: &'static str,
    /// Its stages, in order.
    pub stages: &'static [Stage],
}

/// The optimiser's passes, before AD.
const OPTIMISE: &[&str] = &[
    "inline",
    "constant-args",
    "simplify",
    "cse",
    "hoist",
    "fuse",
    "unroll",
    "dead-functions",
];

/// The optimiser's passes on the derivative code.
const OPTIMISE_AFTER_AD: &[&str] = &[
    "inline",
    "constant-args",
    "simplify",
    "cse",
    "hoist",
    "fuse",
    "unroll",
    "copies",
    "acc-updates",
    "dead-functions",
];

/// The name of the pipeline the command line runs by default.
pub const DEFAULT_PIPELINE: &str = "static";

/// Every named pipeline, the default first.
pub static PIPELINES: &[PipelineInfo] = &[
    PipelineInfo {
        name: "static",
        description:
            "the default: optimise, compile jvp/vjp away, optimise the derivative code, lower",
        stages: &[
            Stage::Repeat(OPTIMISE),
            Stage::Once("ad"),
            Stage::Repeat(OPTIMISE_AFTER_AD),
            Stage::Once("lower"),
        ],
    },
    PipelineInfo {
        name: "per-seed",
        description: "as `static`, with one jvp per seed of a map of jvp",
        stages: &[
            Stage::Repeat(OPTIMISE),
            Stage::Once("ad-per-seed"),
            Stage::Repeat(OPTIMISE_AFTER_AD),
            Stage::Once("lower"),
        ],
    },
    PipelineInfo {
        name: "dynamic",
        description: "optimise only; the interpreter differentiates jvp/vjp as it runs",
        stages: &[Stage::Repeat(OPTIMISE)],
    },
];

/// The registered pass called `name`.
pub fn pass_info(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// The named pipeline called `name`.
pub fn pipeline_info(name: &str) -> Option<&'static PipelineInfo> {
    PIPELINES.iter().find(|p| p.name == name)
}

/// Static AD (crate nabla-ad): every `jvp` and `vjp` compiled away,
/// innermost first (forward mode by tangents; reverse mode by redundant
/// execution). A `map` of a `jvp` at one primal point (`jmp`, a Jacobian
/// one column per seed) is differentiated in vector mode, the primal once
/// for all seeds, unless `vector_jvps` is off (`ad-per-seed`: each seed
/// gets its own `jvp`; see [`nabla_ad::Options::vector_jvps`]). A
/// `jvp`/`vjp` containing a construct it does not differentiate yet is left
/// for the interpreter's dynamic AD.
fn static_ad(
    prog: &mut Program,
    vector_jvps: bool,
    parallel_target: bool,
) -> Result<bool, PassError> {
    let options = nabla_ad::Options {
        vector_jvps,
        parallel_target,
    };
    nabla_ad::differentiate_with_options(prog, options)
        .map(|r| r.changed())
        .map_err(|e| PassError::Failed {
            pass: String::new(),
            span: Some(e.span()),
            message: e.to_string(),
        })
}

/// A per-function pass: transforms one function, given its analysis as the
/// pass received it; returns whether it changed the function.
type FunctionPass = fn(&mut nabla_ir::Function, &FunctionAnalysis) -> bool;

/// Applies `f` to every function in bottom-up call order (callees first),
/// each with its analysis in `analysis` (still that function's: `f`
/// changes only the function it is given); returns whether it changed any.
fn each_function(prog: &mut Program, analysis: &Analysis, f: FunctionPass) -> bool {
    let mut changed = false;
    for i in inline::bottom_up_order(prog) {
        let recomputed;
        let function_analysis = match analysis.function(FunId(i as u32)) {
            Some(a) => a,
            None => {
                // Not the program's analysis (fewer functions): the
                // function's own.
                recomputed = nabla_ir::analyse_program(prog).functions.swap_remove(i);
                &recomputed
            }
        };
        changed |= f(&mut prog.functions[i], function_analysis);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_pipelines_name_registered_passes() {
        for (i, p) in PASSES.iter().enumerate() {
            assert!(
                PASSES[..i].iter().all(|q| q.name != p.name),
                "{} registered twice",
                p.name
            );
        }
        assert_eq!(PIPELINES[0].name, DEFAULT_PIPELINE);
        for pipeline in PIPELINES {
            for stage in pipeline.stages {
                let names = match stage {
                    Stage::Once(n) => std::slice::from_ref(n),
                    Stage::Repeat(ns) => *ns,
                };
                for n in names {
                    assert!(pass_info(n).is_some(), "{}: {n}", pipeline.name);
                }
            }
        }
    }
}
