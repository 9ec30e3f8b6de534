//! Evaluating expressions outside a program's entry points: `nabla eval`
//! and `nabla repl` (as Futhark's `futhark eval` and `futhark repl`).
//!
//! A [`Session`] holds an optional loaded file and the declarations typed
//! at the prompt. Each expression is checked and run as a program of its
//! own: the prelude, the file with its imports, the prompt's declarations
//! (each parsed from a source of its own, `<repl>`, and opened as a module
//! `open { … }` of its own, so that it may redefine a name), and the expression
//! (from the source `<expr>`) bound to a constant that is made an entry
//! point. So a type error in the expression is located in the expression
//! itself, and running it is running an entry point with the interpreter,
//! whose results are printed as `nabla run` prints them.

use crate::driver::{
    check_loaded, compile_checked, main_file_exists, Checked, CompileError, CompileOptions,
};
use nabla_interp::{StackFrame, StopReason};
use nabla_syntax::ast::{Dec, Ident, ModExp, NodeId, Program, ValBind};
use nabla_syntax::types::Type;
use nabla_syntax::{Diagnostic, DiagnosticKind, SourceMap, Span};
use nabla_values::Value;
use std::path::{Path, PathBuf};

/// The name the expression is bound to (no user program is likely to
/// refer to it; the expression cannot, as it is bound after it).
const RESULT_NAME: &str = "nabla_eval_result";

/// Whether `name` is the function an evaluated expression becomes (in a
/// debugger's stack).
pub fn is_result_function(name: &str) -> bool {
    name == RESULT_NAME
}

/// The source path of an expression, in messages.
const EXPR_SOURCE: &str = "<expr>";

/// The source path of a declaration typed at the prompt, in messages.
const PROMPT_SOURCE: &str = "<repl>";

/// A file (maybe), the declarations added since, and how to compile.
#[derive(Clone, Debug)]
pub struct Session {
    file: Option<PathBuf>,
    decls: Vec<String>,
    options: CompileOptions,
}

/// What a line typed at the prompt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// One or more declarations (`def`, `let`, `type`, `module`, …).
    Declaration,
    /// Anything else: an expression (maybe one with a syntax error).
    Expression,
}

impl Session {
    /// A session without a file and without declarations.
    pub fn new(options: CompileOptions) -> Session {
        Session {
            file: None,
            decls: Vec::new(),
            options,
        }
    }

    /// The loaded file, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Loads `file` (type-checking it) in place of the loaded file and the
    /// declarations typed so far; `None` loads no file. On an error the
    /// session is unchanged.
    pub fn load(&mut self, file: Option<PathBuf>) -> Result<(), String> {
        let next = Session {
            file,
            decls: Vec::new(),
            options: self.options.clone(),
        };
        if let Some(f) = &next.file {
            main_file_exists(f).map_err(|e| e.to_string())?;
        }
        next.check(&[], None).map_err(|e| e.to_string())?;
        *self = next;
        Ok(())
    }

    /// Whether `line` is a declaration or an expression: a declaration when
    /// it parses as one (Futhark's rule: what could be either is a
    /// declaration), or when it starts with a declaration's keyword.
    pub fn classify(line: &str) -> LineKind {
        let mut sources = SourceMap::new();
        let fid = sources.add(PathBuf::from(PROMPT_SOURCE), line.to_string());
        let mut ids = 0;
        match nabla_syntax::parse_program_text(line, fid, &mut ids) {
            Ok(p) if !p.decs.is_empty() => LineKind::Declaration,
            _ => {
                let first = line.split_whitespace().next().unwrap_or("");
                let keywords = [
                    "def", "entry", "type", "type^", "type~", "module", "open", "import", "local",
                    "include",
                ];
                // `let` starts an expression (`let x = 1 in x`) as often as
                // a declaration; only a failed `let … in` is an expression.
                let let_decl = first == "let" && !has_word(line, "in");
                if keywords.contains(&first) || let_decl {
                    LineKind::Declaration
                } else {
                    LineKind::Expression
                }
            }
        }
    }

    /// Adds the declarations of `text` when the program with them still
    /// type-checks; otherwise the errors, and the session is unchanged.
    pub fn declare(&mut self, text: &str) -> Result<(), String> {
        let mut more = self.decls.clone();
        more.push(text.to_string());
        self.check(&more, None).map_err(|e| e.to_string())?;
        self.decls = more;
        Ok(())
    }

    /// The type of `expr` (as Futhark shows it: `expr : type`).
    pub fn type_of(&self, expr: &str) -> Result<String, String> {
        let checked = self
            .check(&self.decls, Some((expr, false)))
            .map_err(|e| e.to_string())?;
        let ty = result_type(&checked)
            .ok_or_else(|| "internal error: the expression's type is unknown".to_string())?;
        Ok(format!("{} : {ty}", expr.trim()))
    }

    /// Evaluates `expr` with the interpreter: its value in Futhark's value
    /// format (a tuple or record as `(…)`/`{…}`, one line). `cancel` stops
    /// a long evaluation (Ctrl-C).
    pub fn eval(&self, expr: &str, cancel: &nabla_interp::Cancel) -> Result<String, String> {
        self.eval_debugged(expr, cancel, None)
    }

    /// [`Session::eval`] under a debugger (`nabla repl`'s breakpoints): when
    /// the program has a `#[break]` or the debugger wants new NaNs to stop
    /// the run, it is run straight after elaboration (the optimiser would
    /// remove the breakpoints' marks) and `debugger` decides where it stops.
    pub fn eval_debugged(
        &self,
        expr: &str,
        cancel: &nabla_interp::Cancel,
        debugger: Option<&mut dyn SessionDebugger>,
    ) -> Result<String, String> {
        // First as a constant: its type errors are the expression's.
        let checked = self
            .check(&self.decls, Some((expr, false)))
            .map_err(|e| e.to_string())?;
        let ty = result_type(&checked);
        if let Some(ty) = &ty {
            if let Some(why) = unprintable(ty) {
                return Err(format!(
                    "error: the value of type `{ty}` cannot be printed: {why}"
                ));
            }
        }
        // Then as an entry point, whose results are values.
        let checked = self
            .check(&self.decls, Some((expr, true)))
            .map_err(|e| e.to_string())?;
        let debugger = debugger.filter(|d| {
            d.nan_breaks()
                || checked
                    .sources
                    .files
                    .iter()
                    .any(|f| has_breakpoint(&f.text))
        });
        let mut options = self.options.clone();
        if debugger.is_some() {
            options.stop_after = Some(crate::driver::StopAfter::Elaboration);
        }
        let compiled = compile_checked(checked, &options).map_err(|e| e.to_string())?;
        let results = match debugger {
            None => compiled.run_cancellable(RESULT_NAME, Vec::new(), cancel),
            Some(inner) => {
                let mut hook = DebugAdapter {
                    inner,
                    sources: &compiled.sources,
                };
                let (r, _) = nabla_interp::run_entry_debugged(
                    &compiled.program,
                    RESULT_NAME,
                    Vec::new(),
                    cancel,
                    &mut hook,
                );
                r.map_err(|e| compiled.run_error(e.message, e.span))
            }
        }
        .map_err(|e| e.to_string())?;
        let text = compiled.show_results(RESULT_NAME, &results);
        let lines: Vec<&str> = text.lines().collect();
        // An entry point returns a tuple's components as results of their
        // own, one line each: shown as the tuple they are.
        let arity = ty.as_ref().and_then(|t| t.as_tuple()).map(|ts| ts.len());
        if arity.is_some_and(|n| n > 1 && n == lines.len()) {
            return Ok(format!("({})", lines.join(", ")));
        }
        Ok(text.trim_end().to_string())
    }

    /// This session with the variables `values` declared last (so that
    /// they shadow the program's names): how expressions at a breakpoint
    /// see the variables of the frame shown. Each value becomes
    /// `def name = literal` (an empty array `replicate n (…)`).
    pub fn with_values(&self, values: &[(String, Value)]) -> Session {
        let mut next = self.clone();
        if !values.is_empty() {
            let decls: Vec<String> = values
                .iter()
                .map(|(name, v)| format!("def {name} = {}", value_expression(v)))
                .collect();
            next.decls.push(decls.join("\n"));
        }
        next
    }

    /// Type-checks the file, `decls` and, when given, the expression (as a
    /// constant, or as an entry point when the flag says so).
    fn check(&self, decls: &[String], expr: Option<(&str, bool)>) -> Result<Checked, CompileError> {
        let file = self.file.clone();
        check_loaded(|sources, next_id| {
            let mut files = match &file {
                Some(f) => nabla_syntax::load_program(sources, f, next_id)?,
                None => {
                    let fid = sources.add(PathBuf::from(PROMPT_SOURCE), String::new());
                    vec![Program {
                        file: fid,
                        decs: Vec::new(),
                    }]
                }
            };
            let mut added = Vec::new();
            for text in decls {
                let fid = sources.add(PathBuf::from(PROMPT_SOURCE), text.clone());
                let prog = nabla_syntax::parse_file(sources, fid, next_id)?;
                if let Some(span) = prog.decs.iter().find_map(import_span) {
                    return Err(vec![Diagnostic::new(
                        DiagnosticKind::Import,
                        span,
                        "`import` is not supported at the prompt; `:load` a file that imports instead"
                            .to_string(),
                    )]);
                }
                // As `open { … }`: its names shadow earlier ones (a file may
                // define a name only once; the prompt may redefine one).
                let span = prog.decs.iter().map(dec_span).reduce(Span::to);
                if let Some(span) = span {
                    added.push(Dec::OpenModule(ModExp::Struct(prog.decs, span), span));
                }
            }
            if let Some((text, entry)) = expr {
                let fid = sources.add(PathBuf::from(EXPR_SOURCE), text.to_string());
                let body = nabla_syntax::parse_expr_text(text, fid)?;
                let span = body.span;
                let id = NodeId(*next_id);
                *next_id += 1;
                added.push(Dec::Val(ValBind {
                    id,
                    entry,
                    name: Ident {
                        name: RESULT_NAME.into(),
                        span: Span::new(span.file, span.start, span.start),
                    },
                    type_params: Vec::new(),
                    params: Vec::new(),
                    ret: None,
                    body,
                    attrs: Vec::new(),
                    span,
                    ty: None,
                }));
            }
            if let Some(main) = files.last_mut() {
                main.decs.extend(added);
            }
            Ok(files)
        })
    }
}

/// Whether `text` starts with the attribute `#[break]` (spaces allowed
/// inside the brackets, as the elaborator reads it).
fn starts_with_break(text: &str) -> bool {
    text.strip_prefix("#[")
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(inner, _)| inner.trim() == "break")
}

/// Whether a source text has a `#[break]` attribute.
fn has_breakpoint(text: &str) -> bool {
    text.match_indices("#[")
        .any(|(at, _)| starts_with_break(&text[at..]))
}

/// A debugger of a [`Session`]'s evaluations ([`Session::eval_debugged`]):
/// [`nabla_interp::DebugHook`] with the compiled program's sources, for
/// locations.
pub trait SessionDebugger {
    /// Whether to stop at `location` (see [`nabla_interp::DebugHook::should_stop`]).
    fn should_stop(&mut self, reason: StopReason, location: Span, sources: &SourceMap) -> bool;
    /// The run is stopped (see [`nabla_interp::DebugHook::stopped`]).
    fn stopped(&mut self, reason: StopReason, stack: &[StackFrame], sources: &SourceMap);
    /// Whether new NaNs stop the run.
    fn nan_breaks(&self) -> bool;
}

/// Whether `location` is a `#[break]` expression (the marks the elaborator
/// makes; other copies of variables have other spans).
pub fn is_breakpoint(location: Span, sources: &SourceMap) -> bool {
    let Some(file) = sources.files.get(location.file.0 as usize) else {
        return false;
    };
    file.text
        .get(location.start as usize..location.end as usize)
        .is_some_and(starts_with_break)
}

/// A [`SessionDebugger`] as the interpreter's hook.
struct DebugAdapter<'d, 's> {
    inner: &'d mut dyn SessionDebugger,
    sources: &'s SourceMap,
}

impl nabla_interp::DebugHook for DebugAdapter<'_, '_> {
    fn should_stop(&mut self, reason: StopReason, location: Span) -> bool {
        self.inner.should_stop(reason, location, self.sources)
    }
    fn stopped(&mut self, reason: StopReason, stack: &[StackFrame]) {
        self.inner.stopped(reason, stack, self.sources)
    }
    fn nan_breaks(&self) -> bool {
        self.inner.nan_breaks()
    }
}

/// `v` as a Futhark expression: the value format's text, except that an
/// empty array is `replicate d₀ (… (replicate dₖ zero))`.
fn value_expression(v: &Value) -> String {
    let Value::Array(a) = v else {
        return nabla_values::write_value_text(v);
    };
    if a.num_elems() > 0 {
        return nabla_values::write_value_text(v);
    }
    let elem = a.elem_type();
    let zero = if elem == nabla_prim::PrimType::Bool {
        "false".to_string()
    } else {
        format!("0{}", elem.name())
    };
    a.shape()
        .iter()
        .rev()
        .fold(zero, |inner, d| format!("(replicate {d} {inner})"))
}

/// Whether `word` occurs in `line` as a word of its own.
fn has_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .any(|w| w == word)
}

/// Where a declaration is.
fn dec_span(d: &Dec) -> Span {
    match d {
        Dec::Val(vb) => vb.span,
        Dec::Type(tb) => tb.span,
        Dec::Module(mb) => mb.span,
        Dec::ModType(mt) => mt.span,
        Dec::Open(_, s)
        | Dec::OpenModule(_, s)
        | Dec::Include(_, s)
        | Dec::Import(_, s)
        | Dec::Local(_, s) => *s,
    }
}

/// The span of an `import` among the declarations `d` (also under `local`).
fn import_span(d: &Dec) -> Option<Span> {
    match d {
        Dec::Import(_, s) => Some(*s),
        Dec::Local(inner, _) => import_span(inner),
        _ => None,
    }
}

/// The checked type of the expression's constant (the last one so named).
fn result_type(checked: &Checked) -> Option<Type> {
    let main = checked.files.last()?;
    main.decs.iter().rev().find_map(|d| match d {
        Dec::Val(vb) if vb.name.name.as_str() == RESULT_NAME => vb.ty.clone(),
        _ => None,
    })
}

/// Why a value of type `t` cannot be printed: a function, or a type not
/// fully known (an empty array literal's element type).
fn unprintable(t: &Type) -> Option<&'static str> {
    fn walk(t: &Type, arrow: &mut bool, param: &mut bool) {
        match t {
            Type::Arrow { .. } => *arrow = true,
            Type::Param(_) | Type::Var(_) => *param = true,
            _ => t.for_each_child(|c| walk(c, arrow, param)),
        }
    }
    let (mut arrow, mut param) = (false, false);
    walk(t, &mut arrow, &mut param);
    if arrow {
        Some("it is or contains a function")
    } else if param {
        Some("its type is ambiguous (annotate the expression with a type)")
    } else {
        None
    }
}
