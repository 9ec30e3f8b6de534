//! The driver: source file → checked AST → core IR, shared by every
//! subcommand, plus running an entry point on values.
//!
//! Pipeline (see the workspace README): a fresh [`SourceMap`]; the prelude
//! (`nabla_typeck::PRELUDE_SOURCE`) as the first file, path `<prelude>`;
//! the user's file and its imports (`nabla_syntax::load_program`); type
//! checking over `[prelude, files…]`; elaboration; then the passes of
//! [`CompileOptions::pipeline`] (a `nabla_opt::Pipeline`; by default, for
//! this library, the optimiser without static AD; the command line's
//! default adds it), with the IR validator before the first pass
//! and after every pass when the pipeline validates (by default in debug
//! builds only; the command line's `--validate`, and the tests, turn it on).
//! No environment variable changes any of this.

use nabla_ir::Program;
use nabla_opt::{PassError, Pipeline};
use nabla_syntax::{ast, Diagnostic, DiagnosticKind, SourceMap, Span};
use nabla_values::{Value, ValueType};
use std::path::Path;

use crate::frontend;

/// A compiled program: its sources (for locating run-time errors) and its IR.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Every source file: the prelude first, then the user's files.
    pub sources: SourceMap,
    /// The elaborated (and, where enabled, validated) core IR.
    pub program: Program,
    /// The compiler's warnings (Futhark's: an `include` in a module type
    /// that shadows a type).
    pub warnings: Vec<Diagnostic>,
    /// Whether the pipeline validated the IR (tests, debug builds,
    /// `--validate`): then the C backend also keeps the bounds checks of
    /// indices it proved in bounds and reports a failed proof
    /// (`NB_VERIFY_PROOFS`).
    pub validated: bool,
    /// The C the C backend writes for it ([`CompileOptions::target`]).
    pub target: nabla_cgen::Target,
}

/// Why compilation failed: diagnostics (rendered against the program's
/// sources) or an internal error (IR validation).
#[derive(Clone, Debug)]
pub struct CompileError {
    /// The diagnostics, in the order they were reported.
    pub diagnostics: Vec<Diagnostic>,
    /// Every diagnostic rendered (`kind: message`, `path:line:col`, the
    /// source line with the span marked).
    pub rendered: String,
    /// One line: the first diagnostic's `kind: message (at path:line:col)`.
    pub summary: String,
}

impl CompileError {
    fn from_diagnostics(diags: Vec<Diagnostic>, sources: &SourceMap) -> CompileError {
        let rendered = nabla_syntax::diag::render_all(&diags, sources);
        let summary = match diags.first() {
            Some(d) if (d.span.file.0 as usize) < sources.files.len() => {
                format!(
                    "{}: {} (at {})",
                    d.kind_name(),
                    one_line(&d.message),
                    sources.describe_range(d.span)
                )
            }
            Some(d) => format!("{}: {}", d.kind_name(), one_line(&d.message)),
            None => "compilation failed without a diagnostic".to_string(),
        };
        CompileError {
            diagnostics: diags,
            rendered,
            summary,
        }
    }

    /// An error without a diagnostic: `message` is shown as it is.
    fn plain(message: String) -> CompileError {
        let summary = one_line(&message);
        CompileError {
            diagnostics: Vec::new(),
            rendered: message,
            summary,
        }
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

/// Joins a multi-line message into one line.
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A type-checked program (the result of [`check`]).
#[derive(Debug)]
pub struct Checked {
    /// Every source file: the prelude first, then the user's files.
    pub sources: SourceMap,
    /// `[prelude, imports…, main file]`, annotated by the type checker.
    pub files: Vec<ast::Program>,
    /// The front end's warnings.
    pub warnings: Vec<Diagnostic>,
}

/// Parses and type-checks the program whose main file is `path` (with the
/// prelude and every import). Errors are rendered diagnostics.
pub fn check(path: &Path) -> Result<Checked, CompileError> {
    main_file_exists(path)?;
    check_loaded(|sources, next_id| frontend::load(sources, path, next_id))
}

/// Like [`check`], but every file (the main file and each import) is read
/// with `read` (the language server passes the editor's open buffers,
/// falling back to the disk). On failure, the error comes with the source
/// map of the files that were loaded, against which its diagnostics' spans
/// are to be read.
pub fn check_reading(
    path: &Path,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Checked, (CompileError, SourceMap)> {
    let mut loaded = None;
    let result = check_loaded(|sources, next_id| {
        let files = nabla_syntax::load_program_with(sources, path, next_id, read);
        loaded = Some(sources.clone());
        files
    });
    result.map_err(|e| (e, loaded.unwrap_or_default()))
}

/// `Ok` when the main file `path` is there; otherwise "file not found:
/// PATH" (or why it cannot be read).
pub fn main_file_exists(path: &Path) -> Result<(), CompileError> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CompileError::plain(format!(
            "error: file not found: {}",
            path.display()
        ))),
        Err(e) => Err(CompileError::plain(format!(
            "error: cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Parses the prelude, then the user's files as `load` returns them (in
/// dependency order, the main file last; `load` adds them to the source
/// map and draws node ids from the counter), and type-checks the whole.
/// [`check`] loads a file and its imports; `nabla eval` and `nabla repl`
/// add the declarations and the expression typed at the prompt.
pub fn check_loaded(
    load: impl FnOnce(&mut SourceMap, &mut u32) -> Result<Vec<ast::Program>, Vec<Diagnostic>>,
) -> Result<Checked, CompileError> {
    let mut sources = SourceMap::new();
    let mut next_id = 0u32;
    let mut files = Vec::new();
    match frontend::parse_prelude(&mut sources, &mut next_id) {
        Ok(p) => files.push(p),
        Err(d) => return Err(CompileError::from_diagnostics(d, &sources)),
    }
    match load(&mut sources, &mut next_id) {
        Ok(ps) => files.extend(ps),
        Err(d) => return Err(CompileError::from_diagnostics(d, &sources)),
    }
    // The parsed program again, for the check of opaque ascription (only
    // when some module is ascribed a module type).
    let parsed = frontend::copy_if_ascribed(&files);
    let expansion = match frontend::expand_modules(&sources, files, &mut next_id) {
        Ok(e) => e,
        Err(d) => return Err(CompileError::from_diagnostics(d, &sources)),
    };
    let mut files = expansion.files;
    let mut warnings = frontend::user_facing_names(expansion.warnings);
    match frontend::check_expanded(
        &sources,
        &mut files,
        &expansion.value_checks,
        &expansion.applied_declarations,
    ) {
        Ok(w) => warnings.extend(w),
        Err(d) => return Err(CompileError::from_diagnostics(d, &sources)),
    }
    if let Some(parsed) = parsed {
        if let Err(d) = frontend::check_opaque_ascription(&sources, parsed, next_id) {
            return Err(CompileError::from_diagnostics(d, &sources));
        }
    }
    Ok(Checked {
        sources,
        files,
        warnings,
    })
}

/// Where compilation stops (`nabla dump-ir --after`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopAfter {
    /// Straight after elaboration, before any pass (`elab` or `none`).
    Elaboration,
    /// After the first run of the pass with this name.
    Pass(String),
}

impl StopAfter {
    /// `elab` or `none`: after elaboration; otherwise a registered pass
    /// name. An unknown name is an error listing the accepted ones.
    pub fn parse(name: &str) -> Result<StopAfter, String> {
        match name {
            "elab" | "none" => Ok(StopAfter::Elaboration),
            _ if nabla_opt::pass_named(name).is_some() => Ok(StopAfter::Pass(name.to_string())),
            _ => Err(format!(
                "unknown pass `{name}` (expected elab, none or one of: {})",
                nabla_opt::pass_names().join(", ")
            )),
        }
    }
}

/// How to compile: the passes that run after elaboration (and whether the
/// IR is validated before and after each of them), and where to stop.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// The passes run on the elaborated IR; its validation flag
    /// ([`Pipeline::validating`]) decides whether the IR is validated.
    pub pipeline: Pipeline,
    /// Stop early (the IR is then the one after that point); `None`: run
    /// the whole pipeline.
    pub stop_after: Option<StopAfter>,
    /// The C the C backend writes (sequential for `nabla c`, multicore for
    /// `nabla multicore`); the interpreter ignores it.
    pub target: nabla_cgen::Target,
}

impl Default for CompileOptions {
    /// The optimiser without static AD ([`Pipeline::dynamic_ad`]: `jvp`
    /// and `vjp` are left to the interpreter), validating in debug builds
    /// only. The command line's default is [`Pipeline::default_pipeline`].
    fn default() -> Self {
        CompileOptions::new(Pipeline::dynamic_ad().validating(cfg!(debug_assertions)))
    }
}

impl CompileOptions {
    /// Runs all of `pipeline` (validating as it says).
    pub fn new(pipeline: Pipeline) -> CompileOptions {
        CompileOptions {
            pipeline,
            stop_after: None,
            target: nabla_cgen::Target::Sequential,
        }
    }

    /// The same options, validating the IR (before the first and after
    /// every pass) or not.
    pub fn validating(mut self, validate: bool) -> CompileOptions {
        self.pipeline = self.pipeline.validating(validate);
        self
    }

    /// The same options, for the C of `target`, the pipeline's passes
    /// configured for it ([`Pipeline::for_parallel_target`]: the multicore
    /// target gets the parallel forms of reverse rules).
    pub fn for_target(mut self, target: nabla_cgen::Target) -> CompileOptions {
        self.target = target;
        self.pipeline = self
            .pipeline
            .for_parallel_target(target == nabla_cgen::Target::Multicore);
        self
    }

    /// The same options, stopping at `stop`.
    pub fn stopping_after(mut self, stop: StopAfter) -> CompileOptions {
        self.stop_after = Some(stop);
        self
    }
}

/// Turns a pipeline failure into a compile error: invalid IR is an internal
/// compiler error naming the pass after which it was found.
fn pass_error(err: PassError, sources: &SourceMap) -> CompileError {
    let at = |span: Option<Span>| match span {
        Some(sp) if (sp.file.0 as usize) < sources.files.len() => {
            format!(" (at {})", sources.describe(sp))
        }
        _ => String::new(),
    };
    match err {
        PassError::Failed {
            pass,
            message,
            span,
        } => CompileError::plain(format!("error: pass {pass} failed: {message}{}", at(span))),
        PassError::InvalidIr { after, errors } => {
            let mut msg = match after {
                Some(pass) => {
                    format!("internal compiler error: the IR is invalid after pass {pass}:\n")
                }
                None => "internal compiler error: the elaborated IR is invalid:\n".to_string(),
            };
            for e in &errors {
                msg.push_str(&format!("  {e}{}\n", at(e.span)));
            }
            CompileError::plain(msg)
        }
    }
}

/// Compiles the program whose main file is `path` to the core IR with the
/// default options ([`CompileOptions::default`]).
pub fn compile(path: &Path) -> Result<Compiled, CompileError> {
    compile_with(path, &CompileOptions::default())
}

/// Compiles the program whose main file is `path` to the core IR: checks
/// and elaborates it, then runs `opts.pipeline` (up to `opts.stop_after`).
/// Stopping after a pass the pipeline does not contain is an error.
pub fn compile_with(path: &Path, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    compile_checked(check(path)?, opts)
}

/// Elaborates a checked program and runs `opts.pipeline` on it, as
/// [`compile_with`] does.
pub fn compile_checked(checked: Checked, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    let Checked {
        sources,
        files,
        warnings,
    } = checked;
    let mut program = match nabla_elab::elaborate_with_sources(&files, Some(&sources)) {
        Ok(p) => p,
        Err(d) => return Err(CompileError::from_diagnostics(d, &sources)),
    };
    let pipeline = &opts.pipeline;
    let ran = match &opts.stop_after {
        None => pipeline.run(&mut program),
        Some(StopAfter::Elaboration) => Pipeline::empty()
            .validating(pipeline.validates())
            .run(&mut program),
        Some(StopAfter::Pass(name)) if pipeline.contains(name) => {
            pipeline.run_until(&mut program, name).map(|_| ())
        }
        Some(StopAfter::Pass(name)) => {
            return Err(CompileError::plain(format!(
                "error: pass `{name}` is not in the pipeline ({})",
                pipeline.describe()
            )))
        }
    };
    ran.map_err(|e| pass_error(e, &sources))?;
    Ok(Compiled {
        sources,
        program,
        warnings,
        validated: pipeline.validates(),
        target: opts.target,
    })
}

/// The value-format types of an entry point's flat parameters and results.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryTypes {
    /// One per flat IR parameter (the order values are read from input).
    pub params: Vec<ValueType>,
    /// One per flat IR result (the order values are printed).
    pub results: Vec<ValueType>,
}

/// A failed run: the message and where in the source, rendered.
#[derive(Clone, Debug)]
pub struct RunError {
    /// What went wrong (without the location).
    pub message: String,
    /// The source location, when the error comes from a program statement.
    pub span: Option<Span>,
    /// The error rendered with its location and the marked source line.
    pub rendered: String,
    /// One line: `path:line:col: message`.
    pub summary: String,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

impl Compiled {
    /// The core IR in text form (`nabla dump-ir`).
    pub fn dump_ir(&self) -> String {
        nabla_ir::print_program(&self.program)
    }

    /// Names of the entry points.
    pub fn entry_names(&self) -> Vec<&str> {
        self.program
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .collect()
    }

    /// The results of entry point `name` (flat, as [`Compiled::run`]
    /// returns them) as text, one line per source-level result: a record
    /// result as `{a = 1i32, b = 2.0f64}` and a tuple inside a result as
    /// `(1i32, true)`, a sum as `#some 3i32`, an array of those as
    /// `[…, …]`, as Futhark prints them; primitives and arrays in the
    /// textual value format. A result whose layout the entry's signature
    /// does not describe (a program without signatures) is printed as its
    /// flat values, one per line.
    pub fn show_results(&self, name: &str, results: &[Value]) -> String {
        let mut out = String::new();
        let signature = self
            .program
            .entry(name)
            .and_then(|e| e.signature.as_ref().map(|s| (s, &e.result_arity)));
        let flat_lines = |vs: &[Value], out: &mut String| {
            for v in vs {
                out.push_str(&nabla_values::write_value_text(v));
                out.push('\n');
            }
        };
        let Some((sig, arity)) = signature.filter(|(s, a)| {
            s.results.len() == a.len() && a.iter().sum::<usize>() == results.len()
        }) else {
            flat_lines(results, &mut out);
            return out;
        };
        let mut at = 0;
        for (ty, &n) in sig.results.iter().zip(arity.iter()) {
            let vs = &results[at..at + n];
            at += n;
            match show_structured(ty, vs) {
                Some(text) => {
                    out.push_str(&text);
                    out.push('\n');
                }
                None => flat_lines(vs, &mut out),
            }
        }
        out
    }

    /// The parameter and result types of entry point `name` (element type
    /// and rank of each flat IR parameter/result).
    pub fn entry_types(&self, name: &str) -> Result<EntryTypes, String> {
        let Some(e) = self.program.entry(name) else {
            let names = self.entry_names();
            return Err(if names.is_empty() {
                format!("no entry point named {name} (the program has no entry points)")
            } else {
                format!(
                    "no entry point named {name} (entry points: {})",
                    names.join(", ")
                )
            });
        };
        let Some(f) = self.program.functions.get(e.fun.0 as usize) else {
            return Err(format!("entry point {name} refers to a missing function"));
        };
        let vt = |t: &nabla_ir::Type| ValueType::new(t.elem(), t.rank());
        Ok(EntryTypes {
            params: f.params.iter().map(|p| vt(&p.ty)).collect(),
            results: f.ret.iter().map(vt).collect(),
        })
    }

    /// Runs entry point `name` on flat argument values.
    pub fn run(&self, name: &str, args: Vec<Value>) -> Result<Vec<Value>, RunError> {
        self.run_cancellable(name, args, &nabla_interp::Cancel::new())
    }

    /// [`Compiled::run`] that stops with an error once `cancel` is set
    /// (Ctrl-C, a time limit).
    pub fn run_cancellable(
        &self,
        name: &str,
        args: Vec<Value>,
        cancel: &nabla_interp::Cancel,
    ) -> Result<Vec<Value>, RunError> {
        let types = self
            .entry_types(name)
            .map_err(|m| self.run_error(m, None))?;
        if args.len() != types.params.len() {
            return Err(self.run_error(
                format!(
                    "entry point {name} takes {} values, got {}",
                    types.params.len(),
                    args.len()
                ),
                None,
            ));
        }
        for (i, (a, t)) in args.iter().zip(&types.params).enumerate() {
            if a.value_type() != *t {
                return Err(self.run_error(
                    format!(
                        "argument {} of entry point {name} must have type {t}, got {}",
                        i + 1,
                        a.value_type()
                    ),
                    None,
                ));
            }
        }
        nabla_interp::run_entry_cancellable(&self.program, name, args, cancel)
            .0
            .map_err(|e| self.run_error(e.message, e.span))
    }

    /// Reads the arguments of entry point `name` from bytes in either value
    /// format (type-directed by the entry's parameter types) and runs it.
    pub fn run_on_input(&self, name: &str, input: &[u8]) -> Result<Vec<Value>, RunError> {
        self.run_on_input_cancellable(name, input, &nabla_interp::Cancel::new())
    }

    /// [`Compiled::run_on_input`] that stops with an error once `cancel` is set.
    pub fn run_on_input_cancellable(
        &self,
        name: &str,
        input: &[u8],
        cancel: &nabla_interp::Cancel,
    ) -> Result<Vec<Value>, RunError> {
        let types = self
            .entry_types(name)
            .map_err(|m| self.run_error(m, None))?;
        let args = nabla_values::read_values(input, Some(&types.params))
            .map_err(|e| self.run_error(format!("cannot read input: {e}"), None))?;
        self.run_cancellable(name, args, cancel)
    }

    /// Builds a [`RunError`], rendering it against the sources.
    pub fn run_error(&self, message: String, span: Option<Span>) -> RunError {
        match span {
            Some(sp) => {
                let rendered = Diagnostic::new(DiagnosticKind::Runtime, sp, message.clone())
                    .render(&self.sources);
                let summary = format!("{}: {}", self.sources.describe(sp), one_line(&message));
                RunError {
                    message,
                    span,
                    rendered,
                    summary,
                }
            }
            None => {
                let rendered = format!("error: {message}");
                RunError {
                    summary: one_line(&message),
                    message,
                    span,
                    rendered,
                }
            }
        }
    }
}

/// A value of an entry type as Futhark prints it: a record or tuple as
/// `{a = …, b = …}` / `(…, …)`, a sum as `#name payload…` (a payload that
/// is itself a sum with a payload in parentheses), an array of those as
/// `[…, …]` (`empty([0]t)` when empty), a primitive or an array of
/// primitives in the value format. `None` when the values do not fit the
/// type's layout.
pub(crate) fn show_structured(ty: &nabla_ir::EntryType, vs: &[Value]) -> Option<String> {
    let Some(opaque) = &ty.opaque else {
        return match vs {
            [v] => Some(nabla_values::write_value_text(v)),
            _ => None,
        };
    };
    if let Some((rank, elem)) = &opaque.element {
        return show_array_of(*rank, elem, vs);
    }
    if let Some(variants) = &opaque.variants {
        let tag = match vs.first()? {
            Value::Prim(nabla_ir::PrimValue::I8(t)) => usize::try_from(*t).ok()?,
            _ => return None,
        };
        let variant = variants.get(tag)?;
        let mut text = format!("#{}", variant.name);
        for f in &variant.payload {
            let part = show_structured(&f.ty, vs.get(f.start..f.start + f.len)?)?;
            let nested_sum = f.ty.opaque.as_ref().is_some_and(|o| o.variants.is_some());
            if nested_sum && part.contains(' ') {
                text.push_str(&format!(" ({part})"));
            } else {
                text.push(' ');
                text.push_str(&part);
            }
        }
        return Some(text);
    }
    let fields = opaque.fields.as_ref()?;
    let is_tuple = fields
        .iter()
        .enumerate()
        .all(|(i, f)| f.name == i.to_string());
    let mut parts = Vec::with_capacity(fields.len());
    for f in fields {
        let part = vs.get(f.start..f.start + f.len)?;
        let text = show_structured(&f.ty, part)?;
        parts.push(if is_tuple {
            text
        } else {
            format!("{} = {text}", f.name)
        });
    }
    Some(if is_tuple {
        format!("({})", parts.join(", "))
    } else {
        format!("{{{}}}", parts.join(", "))
    })
}

/// An array of `rank` dimensions whose elements have the (opaque) type
/// `elem`, given as the element's flat values with the array's dimensions
/// in front: `[e0, e1, …]`, nested for `rank > 1`.
fn show_array_of(rank: usize, elem: &nabla_ir::EntryType, vs: &[Value]) -> Option<String> {
    if rank == 0 {
        return show_structured(elem, vs);
    }
    let arrays: Vec<&nabla_values::ArrayValue> = vs
        .iter()
        .map(|v| match v {
            Value::Array(a) => Some(a),
            Value::Prim(_) => None,
        })
        .collect::<Option<_>>()?;
    let shape = arrays.first()?.shape();
    let n = *shape.first()?;
    if arrays.iter().any(|a| a.shape().first() != Some(&n)) {
        return None;
    }
    if n == 0 {
        let dims: String = shape.iter().take(rank).map(|d| format!("[{d}]")).collect();
        return Some(format!("empty({dims}{})", elem.name));
    }
    let mut items = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        let rows: Vec<Value> = arrays.iter().map(|a| a.row(i)).collect();
        items.push(show_array_of(rank - 1, elem, &rows)?);
    }
    Some(format!("[{}]", items.join(", ")))
}
