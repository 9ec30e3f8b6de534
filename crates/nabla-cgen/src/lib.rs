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
//!   `-O3 -march=native -fno-math-errno -fno-trapping-math -ffp-contract=fast`) and `-lm`.
//!
//! The executable reads the entry point's arguments from stdin (Futhark's
//! text or binary value format) and prints the results as `nabla run` does;
//! options `-e ENTRY`, `-r RUNS`, `-t FILE`, `-b`, `-n`. Run-time errors
//! print `Error: MESSAGE` and `at FILE:LINE:COL` on stderr and exit with
//! status 1.
//!
//! [`generate_library`] writes Futhark's C API instead (`nabla c
//! --library`: C source, header, JSON manifest; see `library.rs`), and with
//! `server` a `main` speaking Futhark's server protocol (`nabla c
//! --server`). There run-time errors do not exit: `nb_fail` longjmps back to
//! the API function, which frees the blocks the call allocated, restores
//! the inputs' reference counts and returns 2 (program error) or 3 (out of
//! memory) with the message (`Error: …` and `at FILE:LINE:COL` lines) in
//! `futhark_context_get_error`. Not thread-safe: one call at a time per
//! process.
//!
//! Constructs the backend cannot lower give a [`CgenError`] (never wrong C):
//! `jvp`/`vjp` left in the program for dynamic AD, arrays of rank above 8.
//! `f16` is computed in `float` and rounded, as `nabla_prim` does, and
//! stored as C's `_Float16` (gcc ≥ 12, clang ≥ 15) or, with older clang,
//! as its storage-only `__fp16` (runtime.c's `nb_f16`).

mod borrow;
mod entry;
mod func;
mod library;
mod multicore;
mod scalar;

pub use library::CLibrary;

use nabla_ir::{FunId, Program, Span};
use std::path::Path;
use std::process::Command;

/// The C runtime included at the top of every generated program.
pub const RUNTIME_C: &str = include_str!("runtime.c");

/// The stack checks of recursive functions (see [`func::StackCheck`]),
/// added after the runtime to the programs that have such functions.
const STACK_C: &str = include_str!("stack.c");

/// Why C generation or compilation failed. Displayed as one line (a
/// failing C compiler's output may have more).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CgenError {
    /// The program uses a construct the backend cannot lower yet (the
    /// test runner and `literate` fall back to the interpreter).
    #[error("the C backend does not support {construct} yet")]
    Unsupported {
        /// The construct, as a noun phrase (`` `jvp` ``, `accumulators`).
        construct: String,
    },
    /// An inconsistency in the IR or a bug in the backend.
    #[error("internal error in the C backend: {0}")]
    Internal(String),
    /// The C compiler could not be run or failed, or its input or output
    /// could not be written.
    #[error("{0}")]
    Compiler(String),
}

impl CgenError {
    /// A construct the C backend cannot lower yet.
    pub fn unsupported(what: &str) -> CgenError {
        CgenError::Unsupported {
            construct: what.to_string(),
        }
    }

    /// An inconsistency in the IR or a bug in the backend.
    pub fn internal(what: &str) -> CgenError {
        CgenError::Internal(what.to_string())
    }

    /// The C compiler could not be run or failed.
    pub fn compiler(what: String) -> CgenError {
        CgenError::Compiler(what)
    }

    /// Whether the program uses a construct the backend does not support
    /// (as opposed to an internal error or a failing C compiler).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, CgenError::Unsupported { .. })
    }
}

/// Which C the backend writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// Sequential C (`nabla c`): every SOAC a loop on one thread; the
    /// lowering's decisions ([`Program::segments`]) are not read.
    #[default]
    Sequential,
    /// Multicore C (`nabla multicore`): the levels `lower` decided to run
    /// in parallel are OpenMP regions (compiled with `-fopenmp`); the
    /// executables take `--num-threads N`, the C API has
    /// `futhark_context_config_set_num_threads`. See `multicore.rs`.
    Multicore,
}

/// A generated C program.
#[derive(Clone, Debug)]
pub struct CProgram {
    /// The C source.
    pub source: String,
    /// Entry points left out because they use (or call a function that
    /// uses) a construct the backend does not support, with the reason;
    /// the executable reports them as unsupported when asked to run them.
    pub unsupported_entries: Vec<(String, CgenError)>,
}

/// Generates the whole C program; any construct the backend does not
/// support is an error. `locate` renders a span as `file:line:col` for
/// run-time error messages.
pub fn generate_c(program: &Program, locate: &dyn Fn(Span) -> String) -> Result<String, CgenError> {
    let p = generate_c_partial(program, locate)?;
    match p.unsupported_entries.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(p.source),
    }
}

/// Generates the C program for the entry points the backend supports,
/// leaving out the others (see [`CProgram::unsupported_entries`]). Errors:
/// an internal error, or no entry point can be generated (then the error
/// says why the first could not).
pub fn generate_c_partial(
    program: &Program,
    locate: &dyn Fn(Span) -> String,
) -> Result<CProgram, CgenError> {
    generate_c_partial_for(program, locate, Target::Sequential)
}

/// The most allocation sites (calls of `nb_alloc` in the generated
/// functions) of a program whose allocations take the runtime's inline
/// fast path (`nb_alloc` in runtime.c); a program with more keeps
/// `nb_alloc` out of line (`NB_ALLOC_OUT_OF_LINE`). Inlined, each site
/// costs GCC about 16 ms at `-O3`: ht's Jacobian (222 sites) compiled in
/// 12.5 s instead of 8.9 s, for a 7 % faster run, and Futhark's
/// `ad/scan9.fut` (1924 sites) in 88 s instead of 55 s.
pub const ALLOCATION_SITES_INLINED: usize = 1000;

/// The line to put before the runtime of a program whose generated
/// functions are `functions`: `#define NB_ALLOC_OUT_OF_LINE` where they
/// have more than [`ALLOCATION_SITES_INLINED`] allocation sites, else
/// nothing (executables, libraries and servers alike).
pub(crate) fn allocation_define(functions: &str) -> &'static str {
    if functions.matches("nb_alloc(").count() > ALLOCATION_SITES_INLINED {
        "#define NB_ALLOC_OUT_OF_LINE\n"
    } else {
        ""
    }
}

/// [`generate_c_partial`] for `target`.
pub fn generate_c_partial_for(
    program: &Program,
    locate: &dyn Fn(Span) -> String,
    target: Target,
) -> Result<CProgram, CgenError> {
    let (why, bodies, unsupported_entries) = analyse(program, locate, target)?;
    let functions = lower_functions(program, &why, bodies, target)?;
    let mut out = String::with_capacity(RUNTIME_C.len() + functions.len() + 4096);
    out.push_str(allocation_define(&functions));
    out.push_str(RUNTIME_C);
    out.push_str("\n/* ---------- generated from the core IR ---------- */\n\n");
    out.push_str(&functions);
    out.push_str(&entry::entries_and_main(program, &unsupported_entries)?);
    if target == Target::Multicore {
        out = multicore::source(&out, false)?;
    }
    Ok(CProgram {
        source: out,
        unsupported_entries,
    })
}

/// Per function: why it is unsupported (if it is), its C body; and the
/// entry points left out.
type Analysis = (
    Vec<Option<CgenError>>,
    Vec<Result<String, CgenError>>,
    Vec<(String, CgenError)>,
);

fn analyse(
    program: &Program,
    locate: &dyn Fn(Span) -> String,
    target: Target,
) -> Result<Analysis, CgenError> {
    let n = program.functions.len();
    let stack = stack_checks(program);
    let mut bodies: Vec<Result<String, CgenError>> = Vec::with_capacity(n);
    let entries: std::collections::HashSet<FunId> = program.entries.iter().map(|e| e.fun).collect();
    for (i, f) in program.functions.iter().enumerate() {
        let id = FunId(i as u32);
        let mut r = func::FnGen::new(program, f, locate)
            .with_stack_check(stack[i])
            .with_parallel(parallel_levels(program, id, target))
            .generate(id);
        if target == Target::Multicore {
            if let Ok(parallel) = &r {
                let sequential = func::FnGen::new(program, f, locate)
                    .with_stack_check(stack[i])
                    .generate(id)?;
                r = multicore_variants(id, f, parallel, &sequential, entries.contains(&id));
            }
        }
        if let Err(e) = &r {
            if !e.is_unsupported() {
                return Err(e.clone());
            }
        }
        bodies.push(r);
    }
    // A function is unsupported when it, or a function it calls, is.
    let callees: Vec<Vec<usize>> = program
        .functions
        .iter()
        .map(|f| func::callees(&f.body))
        .collect();
    let mut why: Vec<Option<CgenError>> =
        bodies.iter().map(|b| b.as_ref().err().cloned()).collect();
    loop {
        let mut changed = false;
        for i in 0..n {
            if why[i].is_some() {
                continue;
            }
            if let Some(e) = callees[i]
                .iter()
                .find_map(|&c| why.get(c).cloned().flatten())
            {
                why[i] = Some(e);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut unsupported_entries = Vec::new();
    let mut supported = Vec::new();
    for e in &program.entries {
        match why.get(e.fun.0 as usize) {
            Some(Some(err)) => unsupported_entries.push((e.name.clone(), err.clone())),
            Some(None) => supported.push(e.name.clone()),
            None => return Err(CgenError::internal("entry point of an unknown function")),
        }
    }
    if supported.is_empty() {
        if let Some((_, e)) = unsupported_entries.first() {
            return Err(e.clone());
        }
    }
    Ok((why, bodies, unsupported_entries))
}

/// The statements of function `f` that run in parallel on `target` (by
/// their first bound variable), with the fewest rows that do: the
/// lowering's decisions ([`nabla_ir::seg`]) for multicore C, none for
/// sequential C.
fn parallel_levels(
    program: &Program,
    f: FunId,
    target: Target,
) -> std::collections::HashMap<nabla_ir::Var, u64> {
    if target == Target::Sequential {
        return Default::default();
    }
    program
        .segments
        .range((f, nabla_ir::Var(0))..=(f, nabla_ir::Var(u32::MAX)))
        .filter_map(|((_, v), op)| match op.level {
            nabla_ir::seg::SegLevel::Parallel { min_width } => Some((*v, min_width)),
            nabla_ir::seg::SegLevel::Sequential => None,
        })
        .collect()
}

/// Generates Futhark's C API for the program (`nabla c --library`): the C
/// source, the header (plain declarations; `header_name` names its include
/// guard) and the manifest, leaving out the entry points the backend does
/// not support. With `server`, the source also has a `main` speaking
/// Futhark's server protocol (`nabla c --server`). Run-time errors in the
/// library return an error code (2: program error, 3: out of memory) with
/// the message in `futhark_context_get_error`; see the crate docs.
pub fn generate_library(
    program: &Program,
    locate: &dyn Fn(Span) -> String,
    header_name: &str,
    server: bool,
) -> Result<CLibrary, CgenError> {
    generate_library_for(program, locate, header_name, server, Target::Sequential)
}

/// [`generate_library`] for `target` (multicore: the manifest's backend
/// is `multicore`, and the API has `futhark_context_config_set_num_threads`).
pub fn generate_library_for(
    program: &Program,
    locate: &dyn Fn(Span) -> String,
    header_name: &str,
    server: bool,
    target: Target,
) -> Result<CLibrary, CgenError> {
    let (why, bodies, unsupported_entries) = analyse(program, locate, target)?;
    let lowered = lower_functions(program, &why, bodies, target)?;
    let mut lib = library::generate(program, &lowered, unsupported_entries, header_name, server)?;
    if target == Target::Multicore {
        lib.source = multicore::source(&lib.source, true)?;
        lib.header = multicore::header(&lib.header)?;
        lib.manifest = lib
            .manifest
            .replacen("\"backend\": \"c\"", "\"backend\": \"multicore\"", 1);
    }
    Ok(lib)
}

/// What each function of the program does about the stack: a program
/// with recursive functions checks, in each of them, the stack used since
/// its entry point started (deep recursion is then an error, not a crash).
fn stack_checks(program: &Program) -> Vec<func::StackCheck> {
    let recursive = nabla_ir::callgraph::recursive_functions(program);
    let mut out: Vec<func::StackCheck> = recursive
        .iter()
        .map(|&r| {
            if r {
                func::StackCheck::Check
            } else {
                func::StackCheck::None
            }
        })
        .collect();
    if recursive.contains(&true) {
        for e in &program.entries {
            if let Some(s) = out.get_mut(e.fun.0 as usize) {
                if *s == func::StackCheck::None {
                    *s = func::StackCheck::Start;
                }
            }
        }
    }
    out
}

/// Multicore C of function `id` (`f`), in three variants (GCC optimises a
/// function that holds OpenMP regions, or counts references with a test
/// of the threads at every count, less well: gmm's Jacobian ran 1.6x,
/// ht's 2x the time on one thread; lstm's sequential parts 6 % slower):
/// - `nb_fun_N`, its `parallel` C, run where no parallel region is: its
///   parallel regions count references atomically and call the
///   `nb_shared_fun_N` of other functions; the rest of it runs on the one
///   thread there is outside regions, so it calls the runtime's unshared
///   helpers (no atomics, no test) and the other functions' `nb_fun_N`;
/// - `nb_seq_fun_N`, its `sequential` C (as `nabla c` prints it) with the
///   unshared helpers, calling the other functions' `nb_seq_fun_N`: an
///   entry point's function runs it where there is one thread, and where
///   its last calls ran no parallel region (its parallel C, renamed
///   `nb_par_fun_N`, runs otherwise; `NB_QUIET_CALLS` in
///   multicore_prelude.c);
/// - `nb_shared_fun_N`, its sequential C with the shared helpers, calling
///   the other functions' `nb_shared_fun_N`: called inside parallel
///   regions, where every level is nested and runs sequentially.
fn multicore_variants(
    id: FunId,
    f: &nabla_ir::Function,
    parallel: &str,
    sequential: &str,
    entry: bool,
) -> Result<String, CgenError> {
    // Its runtime helpers count references without atomics (multicore.rs).
    let mut out =
        multicore::call_unshared_helpers(&sequential.replace("nb_fun_", SEQUENTIAL_PREFIX));
    out.push('\n');
    out.push_str(&sequential.replace("nb_fun_", SHARED_PREFIX));
    out.push('\n');
    let prototype = func::prototype(id, f)?;
    let Some(body) = parallel.strip_prefix(&format!("{prototype} {{\n")) else {
        return Err(CgenError::internal(
            "multicore: a function without its prototype",
        ));
    };
    if entry {
        // The entry point chooses between its parallel C (nb_par_fun_N)
        // and its sequential C (see NB_QUIET_CALLS in multicore_prelude.c).
        let mut args: Vec<String> = (0..f.ret.len()).map(|i| format!("out{i}")).collect();
        args.extend(f.params.iter().map(|p| func::var_name(p.var)));
        let (n, args) = (id.0, args.join(", "));
        let parallel_prototype = prototype.replace("nb_fun_", PARALLEL_PREFIX);
        out.push_str(&format!("{parallel_prototype};\n"));
        let (sequential_call, parallel_call) = (
            format!("{SEQUENTIAL_PREFIX}{n}({args});"),
            format!("{PARALLEL_PREFIX}{n}({args});"),
        );
        for line in [
            &format!("{prototype} {{"),
            "  static int quiet, calls;",
            "  if (nb_threads() == 1) {",
            &format!("    {sequential_call}"),
            "    return;",
            "  }",
            "  if (quiet >= NB_QUIET_CALLS && ++calls % NB_RECHECK_CALLS != 0) {",
            "    NB_NOTE_ENTRY_CALL(1);",
            &format!("    {sequential_call}"),
            "    return;",
            "  }",
            "  NB_NOTE_ENTRY_CALL(0);",
            "  if (quiet >= NB_QUIET_CALLS) nb_level_epoch++;",
            "  uint64_t regions = nb_regions_started;",
            &format!("  {parallel_call}"),
            "  quiet = nb_regions_started == regions ? quiet + 1 : 0;",
            "}\n",
        ] {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&parallel_prototype);
    } else {
        out.push_str(&prototype);
    }
    out.push_str(" {\n");
    // Outside its regions the unshared helpers; inside, shared functions.
    let mut rest = body;
    while let Some(at) = rest.find(func::REGION_BEGIN) {
        out.push_str(&multicore::call_unshared_helpers(&rest[..at]));
        let end = rest[at..]
            .find(func::REGION_END)
            .ok_or_else(|| CgenError::internal("multicore: a parallel region without its end"))?
            + at;
        out.push_str(&rest[at..end].replace("nb_fun_", SHARED_PREFIX));
        rest = &rest[end..];
    }
    out.push_str(&multicore::call_unshared_helpers(rest));
    Ok(out)
}

/// The prefix of the names of the sequential C functions in multicore C
/// (see [`multicore_variants`]).
const SEQUENTIAL_PREFIX: &str = "nb_seq_fun_";

/// The prefix of the name of an entry point's parallel C in multicore C,
/// which its `nb_fun_N` calls where it chooses to (see
/// [`multicore_variants`]).
const PARALLEL_PREFIX: &str = "nb_par_fun_";

/// The prefix of the names of the sequential C functions called inside
/// parallel regions (see [`multicore_variants`]).
const SHARED_PREFIX: &str = "nb_shared_fun_";

/// The C functions of the program (prototypes, then bodies) that are
/// supported (`why[i]` is `None`), after the stack checks' runtime where
/// the program needs them.
fn lower_functions(
    program: &Program,
    why: &[Option<CgenError>],
    bodies: Vec<Result<String, CgenError>>,
    target: Target,
) -> Result<String, CgenError> {
    let mut out = String::new();
    if stack_checks(program).contains(&func::StackCheck::Check) {
        out.push_str(STACK_C);
        out.push('\n');
    }
    for (i, f) in program.functions.iter().enumerate() {
        if why[i].is_none() {
            out.push_str(&func::prototype(FunId(i as u32), f)?);
            out.push_str(";\n");
        }
    }
    if target == Target::Multicore {
        for (i, f) in program.functions.iter().enumerate() {
            if why[i].is_none() {
                let prototype = func::prototype(FunId(i as u32), f)?;
                for prefix in [SEQUENTIAL_PREFIX, SHARED_PREFIX] {
                    out.push_str(&prototype.replace("nb_fun_", prefix));
                    out.push_str(";\n");
                }
            }
        }
    }
    out.push('\n');
    for (i, (f, body)) in program.functions.iter().zip(bodies).enumerate() {
        if why[i].is_some() {
            continue;
        }
        if let Ok(body) = body {
            out.push_str(&format!("/* {} */\n", f.name.replace("*/", "* /")));
            out.push_str(&body);
            out.push('\n');
        }
    }
    Ok(out)
}

/// A first line for generated C that keeps the bounds checks of the
/// indices the backend proved in bounds ([`nabla_ir::bounds::InBounds`]),
/// so that a wrong proof is reported ("internal error: an index proven in
/// bounds is out of bounds") instead of reading outside an array. The
/// driver adds it where the pipeline validates the IR (the tests).
pub const VERIFY_PROOFS: &str = "#define NB_VERIFY_PROOFS 1\n";

/// The default C compiler flags (overridden by `$CFLAGS`).
///
/// `-ffp-contract=fast` lets the C compiler fuse a multiplication and an
/// addition into one fused multiply-add, rounded once (IEEE 754's
/// `fusedMultiplyAdd`; C11 §6.5p8 allows the contraction; it is GCC's
/// default outside strict ISO mode, and the hand-written C++ GradBench
/// compares against is built with it). Results may differ from the
/// interpreter's in the last bits, within `nabla test`'s tolerance.
/// `-fno-trapping-math` tells GCC that no program enables floating-point
/// traps or reads the exception flags (generated code never does; it is
/// clang's default), so it may compute a branch's floating-point
/// arithmetic before the branch and select: a map whose element is
/// `if adjoint != 0 then … else 0` vectorises (ode's gradient: 0.88x the
/// time). Every value stays the IEEE result. No flag here relaxes IEEE
/// semantics otherwise (no `-ffast-math`): NaNs, infinities and signed
/// zeros are kept.
pub const DEFAULT_CFLAGS: &str =
    "-O3 -march=native -fno-math-errno -fno-trapping-math -ffp-contract=fast";

/// Compiles the C file `c_file` into the executable `out` with `$CC`
/// (default `cc`) and `$CFLAGS` (default [`DEFAULT_CFLAGS`]), linking `-lm`.
pub fn compile_c(c_file: &Path, out: &Path) -> Result<(), CgenError> {
    compile_c_for(c_file, out, Target::Sequential)
}

/// [`compile_c`] for `target`. Multicore C is compiled with `$CC`
/// (default `gcc`, which ships OpenMP) and `-fopenmp`; a compiler without
/// OpenMP is an error that says so.
pub fn compile_c_for(c_file: &Path, out: &Path, target: Target) -> Result<(), CgenError> {
    let default_cc = match target {
        Target::Sequential => "cc",
        Target::Multicore => "gcc",
    };
    let cc = std::env::var("CC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default_cc.to_string());
    let flags = std::env::var("CFLAGS").unwrap_or_else(|_| DEFAULT_CFLAGS.to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-D_GNU_SOURCE"]);
    cmd.args(flags.split_whitespace());
    if target == Target::Multicore {
        cmd.args(multicore::compile_flags());
    }
    cmd.arg(c_file).arg("-o").arg(out).arg("-lm");
    let output = cmd
        .output()
        .map_err(|e| CgenError::compiler(format!("cannot run the C compiler `{cc}`: {e}")))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        if target == Target::Multicore {
            if let Some(m) = multicore::explain_compiler_failure(&cc, &err) {
                return Err(CgenError::compiler(m));
            }
        }
        let shown: String = err.lines().take(30).collect::<Vec<_>>().join("\n");
        return Err(CgenError::compiler(format!(
            "the C compiler `{cc}` failed on {}:\n{shown}",
            c_file.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod error_tests {
    use super::CgenError;

    /// The messages are those of the string errors they replace (the CLI
    /// and the tests print them).
    #[test]
    fn errors_display_as_before() {
        let e = CgenError::unsupported("`jvp`");
        assert!(e.is_unsupported());
        assert_eq!(e.to_string(), "the C backend does not support `jvp` yet");
        let e = CgenError::internal("a scalar array");
        assert_eq!(e, CgenError::Internal("a scalar array".into()));
        assert!(!e.is_unsupported());
        assert_eq!(
            e.to_string(),
            "internal error in the C backend: a scalar array"
        );
        let e = CgenError::compiler("cc failed".into());
        assert_eq!(e.to_string(), "cc failed");
        assert!(!e.is_unsupported());
    }
}

#[cfg(test)]
mod allocation_site_tests {
    use super::ALLOCATION_SITES_INLINED;

    /// A function returning `k` arrays, each made by `replicate` (one
    /// allocation site each).
    fn replicates(k: usize) -> nabla_ir::Program {
        let vars: Vec<String> = (1..=k).map(|i| format!("r_{i}")).collect();
        let types = vec!["[n_0]f64"; k].join(", ");
        let mut text = format!("fun main (n_0: i64): ({types}) = {{\n");
        for v in &vars {
            text.push_str(&format!("  let {v}: [n_0]f64 = replicate(n_0, 1.0f64)\n"));
        }
        text.push_str(&format!("  in ({})\n}}\n", vars.join(", ")));
        nabla_ir::parse_program(&text).expect("parses")
    }

    /// Up to ALLOCATION_SITES_INLINED allocation sites keep the runtime's
    /// inline fast path; more compile with `nb_alloc` out of line.
    #[test]
    fn programs_of_many_allocation_sites_keep_nb_alloc_out_of_line() {
        let locate = |_| String::new();
        for (k, out_of_line) in [(10, false), (ALLOCATION_SITES_INLINED + 1, true)] {
            let prog = replicates(k);
            let c = crate::generate_c_partial_for(&prog, &locate, crate::Target::Sequential)
                .expect("C");
            assert!(c.source.matches("nb_alloc(").count() > k);
            assert_eq!(
                c.source.starts_with("#define NB_ALLOC_OUT_OF_LINE\n"),
                out_of_line,
                "{k} sites"
            );
        }
    }
}
