//! The module pass: Futhark's module system, erased before type checking.
//!
//! [`expand_modules`] takes the parsed files (the prelude first, the main
//! file last) and returns them with every module construct gone: `module`
//! declarations (structures, functors and their applications), `module
//! type`s, `open`, `include`, `import` as a module, local opens `M.(e)` and
//! qualified names `M.x`, `M.t`, `x M.+ y`. What remains are flat `def`s and
//! `type`s that the type checker and the elaborator already understand.
//!
//! How: declarations are processed in order against a static environment
//! ([`env::Env`]: for each visible name, the flat name it stands for).
//! A member `x` of a module bound as `M.N` becomes the top-level declaration
//! named `M.N.x` (a name no user can write, so it cannot clash; a second
//! module of the same path gets `M.N.x#2`), and that is also the name type
//! errors show. A functor is a closure over its defining scope; each
//! application expands its body again (fresh node ids, names prefixed by the
//! module the result is bound to). A functor parameter bound to a built-in
//! numeric module (`f64`) maps `R.t` to `f64` and `R.sqrt` to `f64.sqrt`.
//!
//! Invariants of the output: no `Dec::Module`, `Dec::ModType`,
//! `Dec::Include`, `Dec::OpenModule`, `Dec::Open` or `ExprKind::LocalOpen`
//! remains; every `QualName` with qualifiers names a built-in module member
//! or is a field access the type checker resolves; spans are the user's.
//!
//! Module types, checked as Futhark checks them (`sig.rs`, `matching.rs`;
//! stages in order):
//! 1. A module type expression is checked where it is written: no name
//!    specified twice, each specification in the scope of the earlier ones,
//!    type specifications under the rules of type abbreviations, `val`
//!    types without anonymous sizes in parameters, `with` only on an
//!    abstract type with the same parameters.
//! 2. A module ascribed to (or passed for a parameter of, or returned by a
//!    functor with) a module type is matched against it: every specified
//!    `type`, `module` and `val` must exist; an abstract type at most as
//!    lifted as specified, with the specified parameters, each size
//!    parameter used as an array size; a defined (or refined) type equal to
//!    the module's after expanding abbreviations (`types.rs`); a functor
//!    against a functor type through a functor that applies it. Only the
//!    specified names stay visible. Errors are Futhark's ("Module defines
//!    … but module type requires …"), at the ascription.
//! 3. Each `val` specification becomes a declaration of its specified type
//!    with a hole for a body (`def M.x.<spec> … = ???`); after type checking,
//!    [`ValueChecks::check`] matches the member's inferred type against it
//!    (`valspec.rs`: the specification's type parameters and sizes rigid,
//!    the member's instantiated, uniqueness as subtyping) and the driver
//!    drops those declarations.
//! 4. In the program [`expand_program`] returns, abstract types are
//!    transparent (`M.t` is its definition): that is the program that is
//!    elaborated. Opaque ascription is checked by a second expansion,
//!    [`expand_modules_sealed`], in which each abstract type is a new type
//!    and each `val` a declaration of its specified type, and each functor
//!    body (also of a module lambda, and of a functor ascribed a functor
//!    type) is expanded once more against its parameters' module types; the
//!    driver type-checks it after the first and reports its errors.
//!
//! Rules on types that need the liftedness of named types (which only this
//! pass knows for abstract types) are checked here for every type
//! expression and declaration (`resolve.rs`): no array of a lifted or
//! size-lifted type, no type abbreviation less lifted than its definition
//! or (non-lifted) with existential sizes, no unused size parameter. A
//! module body or file may not define a name twice (`checks.rs`).

mod checks;
mod env;
mod matching;
mod resolve;
mod sig;
#[cfg(test)]
mod tests;
mod types;
mod valspec;

use env::{Env, Functor, ModVal, ValTarget};
use matching::{Outer, Site, ValCheck};
use nabla_syntax::ast::*;
use nabla_syntax::load::resolve_import;
use nabla_syntax::{Diagnostic, DiagnosticKind, SourceMap, Span};
use resolve::Resolver;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
pub use valspec::ValueChecks;

/// The name of Futhark's module of intrinsics: its members may be named
/// (`intrinsics.x`, resolved by the type checker), but it is no module
/// the module pass knows.
pub(crate) const INTRINSICS: &str = "intrinsics";

/// How deeply functor applications may nest (one inside another's body).
const MAX_APPLICATION_DEPTH: usize = 200;

/// Expands the module constructs of `files` (in dependency order, the
/// prelude first) into flat declarations; see the crate docs. The
/// declarations made up for the `val` specifications of ascriptions stay
/// in the result (they are never used); see [`expand_program`] to check
/// them.
///
/// Node ids for declarations copied out of functor bodies are drawn from
/// `next_id`. Errors are located diagnostics (kind `Type`).
pub fn expand_modules(
    sources: &SourceMap,
    files: Vec<Program>,
    next_id: &mut u32,
) -> Result<Vec<Program>, Vec<Diagnostic>> {
    let expanded = expand(sources, files, next_id, false)?;
    Ok(expanded.files)
}

/// The result of the module pass on a program.
#[derive(Debug)]
pub struct Expansion {
    /// The flat declarations, abstract types transparent: the program to
    /// type-check and elaborate.
    pub files: Vec<Program>,
    /// The `val` specifications of its ascriptions, to match against the
    /// members once `files` is type-checked ([`ValueChecks::check`], then
    /// [`ValueChecks::remove_declarations`]).
    pub value_checks: ValueChecks,
    /// Warnings (Futhark's: an `include` in a module type that shadows a
    /// type).
    pub warnings: Vec<Diagnostic>,
    /// The flat names of the `def`s made by applying a functor (its body
    /// expanded for an argument). Futhark checks a functor's body once,
    /// against its parameters' module types, where a value of an abstract
    /// type is no array; in these copies the types are the argument's, so
    /// rules that depend on a value being an array (a function's result
    /// may not alias a top-level array) are the sealed check's to apply
    /// ([`expand_modules_sealed`], which checks each body once so).
    pub applied_declarations: HashSet<String>,
}

/// Expands `files` like [`expand_modules`] and also returns what to check
/// after type checking, and the warnings.
pub fn expand_program(
    sources: &SourceMap,
    files: Vec<Program>,
    next_id: &mut u32,
) -> Result<Expansion, Vec<Diagnostic>> {
    let expanded = expand(sources, files, next_id, false)?;
    Ok(Expansion {
        files: expanded.files,
        value_checks: expanded.value_checks,
        warnings: expanded.warnings,
        applied_declarations: expanded.applied,
    })
}

/// The program as [`expand_modules_sealed`] expands it, for checking
/// opaque ascription.
#[derive(Debug)]
pub struct SealedProgram {
    /// The flat declarations, in which every abstract type of an ascribed
    /// module is a type of its own.
    pub files: Vec<Program>,
    /// The spans of the declarations the pass made up for the ascribed
    /// modules' values (a type error there is the pass's fault, not the
    /// program's: the caller should then not trust the check).
    pub generated: Vec<Span>,
    /// The `val` specifications to match after type checking, as in
    /// [`Expansion::value_checks`] (those of functor bodies checked
    /// against their parameters' module types are only here).
    pub value_checks: ValueChecks,
    /// As [`Expansion::applied_declarations`]: the `def`s of functor
    /// applications (not those of the bodies checked against their
    /// parameters' module types).
    pub applied_declarations: HashSet<String>,
}

/// Expands `files` like [`expand_modules`], but with opaque ascription: a
/// module ascribed to a module type (`module M: S = …`, `m : S`, or a
/// functor's result type) shows only what `S` says. Each abstract type of
/// `S` (`type t`, not refined by `with`) becomes a new type that equals no
/// other (the one-constructor sum type of
/// [`nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR`], a fresh one for
/// each ascription and each functor application), and each `val` becomes
/// a declaration of its specified type in terms of those types (`def
/// M.f#2 (x: M.t#2) : i32 = ???`). Type-checking the result rejects the
/// programs that rely on the definition of an abstract type outside its
/// module, as Futhark does.
///
/// Each functor's body is also expanded once with its parameters bound to
/// modules made from their module types alone (new abstract types, `val`s
/// as declarations), so that the body may use of its parameters only what
/// their module types say, as Futhark checks it (in the ordinary
/// expansion the body only ever sees the modules it is applied to); a
/// functor ascribed a functor type is checked against it the same way.
/// Errors of the module pass found only so (a functor body that lacks
/// what its result type specifies, an array of a lifted parameter type)
/// are returned.
///
/// The result is only for type checking (its values are holes). `None`
/// when no module hides a type and no functor body was checked (nothing
/// to check).
pub fn expand_modules_sealed(
    sources: &SourceMap,
    files: Vec<Program>,
    next_id: &mut u32,
) -> Result<Option<SealedProgram>, Vec<Diagnostic>> {
    let expanded = expand(sources, files, next_id, true)?;
    Ok(expanded.sealed_any.then_some(SealedProgram {
        files: expanded.files,
        generated: expanded.generated,
        value_checks: expanded.value_checks,
        applied_declarations: expanded.applied,
    }))
}

/// What one run of the pass produced.
struct Expanded {
    files: Vec<Program>,
    /// Whether an abstract type was hidden or a functor body checked
    /// (only when `opaque`).
    sealed_any: bool,
    /// The spans of made-up declarations (only when `opaque`).
    generated: Vec<Span>,
    value_checks: ValueChecks,
    warnings: Vec<Diagnostic>,
    /// See [`Expansion::applied_declarations`].
    applied: HashSet<String>,
}

fn expand(
    sources: &SourceMap,
    files: Vec<Program>,
    next_id: &mut u32,
    opaque: bool,
) -> Result<Expanded, Vec<Diagnostic>> {
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|f| canonical(&sources.file(f.file).path))
        .collect();
    // Deeply nested (but bounded) input must not overflow the caller's stack.
    let result = std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || {
                let mut ex = Expander {
                    val_checks: Vec::new(),
                    next_id: *next_id,
                    used_flat: HashMap::new(),
                    diags: Vec::new(),
                    warnings: Vec::new(),
                    exports: HashMap::new(),
                    depth: 0,
                    opaque,
                    sealed: Vec::new(),
                    sealed_any: false,
                    generated: Vec::new(),
                    applied: HashSet::new(),
                    types: HashMap::new(),
                    value_checks: Vec::new(),
                    file: PathBuf::new(),
                };
                let out = ex.files(files, &paths);
                let expanded = Expanded {
                    files: out,
                    sealed_any: ex.sealed_any,
                    generated: ex.generated,
                    value_checks: ValueChecks {
                        checks: ex.value_checks,
                    },
                    warnings: dedup(ex.warnings),
                    applied: ex.applied,
                };
                (expanded, ex.diags, ex.next_id)
            });
        match h {
            Ok(h) => h.join().ok(),
            Err(_) => None,
        }
    });
    match result {
        Some((out, diags, id)) => {
            *next_id = id;
            let diags = dedup(diags);
            if diags.is_empty() {
                Ok(out)
            } else {
                Err(diags)
            }
        }
        None => Err(vec![Diagnostic::new(
            DiagnosticKind::Type,
            Span::default(),
            "internal error in the module pass (please report)",
        )]),
    }
}

/// `diags` with each (span, message) once: a functor body is expanded once
/// per application, a module type once per use.
fn dedup(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.span, d.message.clone())));
    diags
}

fn canonical(p: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn error(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, message)
}

/// Where declarations are being expanded.
#[derive(Clone)]
struct Ctx {
    /// The module path that prefixes member names (`""` at top level).
    prefix: String,
    /// The file being expanded (imports are relative to it).
    file: PathBuf,
    /// Inside a functor body: declarations get fresh node ids.
    fresh_ids: bool,
}

impl Ctx {
    fn child(&self, name: &str) -> Ctx {
        let prefix = if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        };
        Ctx {
            prefix,
            ..self.clone()
        }
    }
}

struct Expander {
    /// `val` specifications checked since the last [`Expander::emit_val_checks`].
    val_checks: Vec<ValCheck>,
    next_id: u32,
    /// Flat names given so far (`true` for types), with how often.
    used_flat: HashMap<(bool, String), usize>,
    diags: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    /// Every type declaration output so far, by flat name (for comparing
    /// types, which needs their definitions).
    types: HashMap<String, Rc<env::TypeInfo>>,
    /// The declarations made for `val` specifications, to match after
    /// type checking.
    value_checks: Vec<valspec::ValueCheck>,
    /// The file being expanded.
    file: PathBuf,
    /// The top-level names each file exports, by canonical path.
    exports: HashMap<PathBuf, Rc<Env>>,
    /// Current nesting of functor applications.
    depth: usize,
    /// Check opaque ascription (see [`expand_modules_sealed`]).
    opaque: bool,
    /// The declarations of sealed types and values made since the last
    /// [`Expander::emit_val_checks`].
    sealed: Vec<Dec>,
    /// Whether an abstract type was sealed.
    sealed_any: bool,
    /// The spans of the sealed values' declarations.
    generated: Vec<Span>,
    /// See [`Expansion::applied_declarations`].
    applied: HashSet<String>,
}

impl Expander {
    fn files(&mut self, files: Vec<Program>, paths: &[PathBuf]) -> Vec<Program> {
        let mut base = Env::default();
        for m in nabla_typeck::builtin_modules() {
            if let Some(members) = nabla_typeck::builtin_module_members(m) {
                base.mods.insert(
                    m.to_string(),
                    ModVal::Struct(Rc::new(Env::builtin_module(m, members))),
                );
            }
        }
        let mut out = Vec::new();
        for (i, f) in files.into_iter().enumerate() {
            let mut scope = base.clone();
            let mut exports = Env::default();
            let ctx = Ctx {
                prefix: String::new(),
                file: paths[i].clone(),
                fresh_ids: false,
            };
            let mut decs = Vec::new();
            self.file = paths[i].clone();
            self.decs(f.decs, &ctx, &mut scope, &mut exports, &mut decs);
            if i == 0 {
                // Everything sees the prelude.
                base.merge(&exports);
            }
            self.exports.insert(paths[i].clone(), Rc::new(exports));
            out.push(Program { file: f.file, decs });
        }
        out
    }

    fn fresh_id(&mut self) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// The flat name of member `name` of the module at `prefix` (`""` at
    /// the top level), in the value or the type namespace. A name given
    /// before gets a `#k` suffix, so that a redefinition never captures the
    /// references (for instance from functor bodies) to the earlier one.
    fn flat_name(&mut self, prefix: &str, name: &str, is_type: bool) -> String {
        let base = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        let n = self.used_flat.entry((is_type, base.clone())).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            format!("{base}#{n}")
        }
    }

    /// Expands `decs` in `scope` (which they extend), recording in `exports`
    /// what they export and appending the flat declarations to `out`.
    fn decs(
        &mut self,
        decs: Vec<Dec>,
        ctx: &Ctx,
        scope: &mut Env,
        exports: &mut Env,
        out: &mut Vec<Dec>,
    ) {
        self.diags.extend(checks::duplicate_definitions(&decs));
        for d in decs {
            self.dec(d, ctx, scope, exports, out, false);
        }
    }

    fn dec(
        &mut self,
        d: Dec,
        ctx: &Ctx,
        scope: &mut Env,
        exports: &mut Env,
        out: &mut Vec<Dec>,
        local: bool,
    ) {
        // A top-level `local def`/`local type` gets a mangled name prefixed by
        // its file's name: no other file can name it, yet functor bodies
        // that use it still reach it when applied in another file.
        let prefix = if local && ctx.prefix.is_empty() {
            ctx.file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "local".to_string())
        } else {
            ctx.prefix.clone()
        };
        match d {
            Dec::Val(mut vb) => {
                if vb.entry && !ctx.prefix.is_empty() {
                    self.diags.push(error(
                        vb.name.span,
                        "Entry points may not be declared inside modules: declare the entry point at the top level, calling the module's function",
                    ));
                }
                if ctx.fresh_ids {
                    vb.id = self.fresh_id();
                }
                let mut r = Resolver::new(scope);
                r.val_bind(&mut vb);
                self.diags.append(&mut r.diags);
                let flat = self.flat_name(&prefix, &vb.name.name, false);
                // Entry points keep their names (the command line uses them).
                let flat = if vb.entry { vb.name.name.clone() } else { flat };
                let target = ValTarget::flat(&flat);
                scope.vals.insert(vb.name.name.clone(), target.clone());
                if !local {
                    exports.vals.insert(vb.name.name.clone(), target);
                }
                vb.name.name = flat;
                out.push(Dec::Val(vb));
            }
            Dec::Type(mut tb) => {
                let mut r = Resolver::new(scope);
                r.check_type_bind(&mut tb);
                self.diags.append(&mut r.diags);
                let flat = self.flat_name(&prefix, &tb.name.name, true);
                let target =
                    self.register_type(&flat, &tb.params, tb.liftedness, Some(tb.def.clone()));
                scope.types.insert(tb.name.name.clone(), target.clone());
                if !local {
                    exports.types.insert(tb.name.name.clone(), target);
                }
                tb.name.name = flat;
                out.push(Dec::Type(tb));
            }
            Dec::Local(d, _) => self.dec(*d, ctx, scope, exports, out, true),
            // As in Futhark, the names `open` brings into scope are also
            // members of the enclosing module (or exports of the file),
            // unless the `open` is `local`.
            Dec::Open(q, span) => {
                if let Some(env) = self.module_struct(&ModExp::Var(q), scope, span) {
                    scope.open(&env);
                    if !local {
                        exports.open(&env);
                    }
                }
            }
            Dec::OpenModule(m, span) => {
                let anon = ctx.child(&describe(&m));
                if let Some(v) = self.eval(m, &anon, scope, out) {
                    if let Some(env) = self.expect_struct(v, span) {
                        scope.open(&env);
                        if !local {
                            exports.open(&env);
                        }
                    }
                }
            }
            Dec::Include(m, span) => {
                let inner = if ctx.prefix.is_empty() {
                    ctx.child(&describe(&m))
                } else {
                    ctx.clone()
                };
                if let Some(v) = self.eval(m, &inner, scope, out) {
                    if let Some(env) = self.expect_struct(v, span) {
                        scope.open(&env);
                        if !local {
                            exports.merge(&env);
                        }
                    }
                }
            }
            Dec::Import(path, span) => {
                if let Some(env) = self.import(&ctx.file, &path, span) {
                    scope.open(&env);
                }
                out.push(Dec::Import(path, span));
            }
            Dec::Module(mb) => {
                let name = mb.name.name.clone();
                let value = if mb.params.is_empty() {
                    let inner = ctx.child(&name);
                    let v = self.eval(mb.body, &inner, scope, out);
                    match (v, mb.sig) {
                        (Some(v), Some(sig)) => {
                            let v = self.eval_sig(&sig, scope).and_then(|s| {
                                let what = format!("the module `{name}`");
                                let site = Site {
                                    what,
                                    sig_span: sig.span(),
                                    span: mb.name.span,
                                    path: String::new(),
                                };
                                self.ascribe(v, &s, &site, Some(&inner.prefix), &Outer::default())
                            });
                            self.emit_val_checks(out);
                            v
                        }
                        (v, _) => v,
                    }
                } else {
                    let functor = Rc::new(Functor {
                        name: name.clone(),
                        params: mb.params,
                        ret: mb.sig,
                        body: mb.body,
                        scope: Rc::new(scope.clone()),
                    });
                    if self.opaque {
                        self.check_functor_body(&functor, &ctx.child(&name), out);
                    }
                    Some(ModVal::Functor(functor))
                };
                if let Some(v) = value {
                    scope.mods.insert(name.clone(), v.clone());
                    if !local {
                        exports.mods.insert(name, v);
                    }
                }
            }
            Dec::ModType(mt) => {
                if let Some(s) = self.eval_sig(&mt.def, scope) {
                    scope.sigs.insert(mt.name.name.clone(), s.clone());
                    if !local {
                        exports.sigs.insert(mt.name.name, s);
                    }
                }
            }
        }
    }

    /// The exports of the file `import "rel"` in `importer` names.
    fn import(&mut self, importer: &std::path::Path, rel: &str, span: Span) -> Option<Rc<Env>> {
        let target = canonical(&resolve_import(importer, rel));
        match self.exports.get(&target) {
            Some(env) => Some(env.clone()),
            None => {
                self.diags.push(error(
                    span,
                    format!("the imported file `{rel}` was not loaded before this file"),
                ));
                None
            }
        }
    }

    fn expect_struct(&mut self, v: ModVal, span: Span) -> Option<Rc<Env>> {
        match v {
            ModVal::Struct(env) => Some(env),
            ModVal::Functor(f) => {
                self.diags.push(error(
                    span,
                    format!(
                        "`{}` is a parametric module: apply it to a module before opening or including it",
                        f.name
                    ),
                ));
                None
            }
        }
    }

    /// Evaluates a module expression that must be a structure.
    fn module_struct(&mut self, m: &ModExp, scope: &Env, span: Span) -> Option<Rc<Env>> {
        let v = self.lookup_mod_path(m, scope)?;
        self.expect_struct(v, span)
    }

    fn lookup_mod_path(&mut self, m: &ModExp, scope: &Env) -> Option<ModVal> {
        let ModExp::Var(q) = m else { return None };
        let mut path = q.quals.clone();
        path.push(q.name.clone());
        let mut cur = match scope.mods.get(&path[0]) {
            Some(v) => v.clone(),
            None if path[0] == INTRINSICS => {
                self.diags.push(error(
                    q.span,
                    "The 'intrinsics' module may not be used in module expressions.",
                ));
                return None;
            }
            None => {
                self.diags
                    .push(error(q.span, format!("unknown module `{}`", path[0])));
                return None;
            }
        };
        for (i, n) in path.iter().enumerate().skip(1) {
            let env = self.expect_struct(cur, q.span)?;
            cur = match env.mods.get(n) {
                Some(v) => v.clone(),
                None => {
                    self.diags.push(error(
                        q.span,
                        format!("module `{}` has no submodule `{n}`", path[..i].join(".")),
                    ));
                    return None;
                }
            };
        }
        Some(cur)
    }

    /// Evaluates a module expression; structures it contains are expanded
    /// into `out` with member names prefixed by `ctx.prefix`.
    fn eval(&mut self, m: ModExp, ctx: &Ctx, scope: &Env, out: &mut Vec<Dec>) -> Option<ModVal> {
        match m {
            ModExp::Var(_) => self.lookup_mod_path(&m, scope),
            ModExp::Struct(decs, _) => {
                let mut inner = scope.clone();
                inner.builtin = false;
                let mut exports = Env::default();
                self.decs(decs, ctx, &mut inner, &mut exports, out);
                Some(ModVal::Struct(Rc::new(exports)))
            }
            ModExp::Apply(f, arg, span) => {
                let fv = self.eval(*f, ctx, scope, out)?;
                let functor = match fv {
                    ModVal::Functor(f) => f,
                    ModVal::Struct(_) => {
                        self.diags.push(error(
                            span,
                            "only a parametric module can be applied to a module",
                        ));
                        return None;
                    }
                };
                let arg_ctx = ctx.child(&functor.params[0].name.name);
                let av = self.eval(*arg, &arg_ctx, scope, out)?;
                self.apply(&functor, av, span, ctx, out)
            }
            ModExp::Ascribe(m, sig, span) => {
                let what = format!("the module `{}`", describe(&m));
                let path = if ctx.prefix.is_empty() {
                    describe(&m)
                } else {
                    ctx.prefix.clone()
                };
                let v = self.eval(*m, ctx, scope, out)?;
                let s = self.eval_sig(&sig, scope)?;
                let site = Site {
                    what,
                    sig_span: sig.span(),
                    span,
                    path: String::new(),
                };
                let v = self.ascribe(v, &s, &site, Some(&path), &Outer::default());
                self.emit_val_checks(out);
                v
            }
            ModExp::Lambda(param, ret, body, _) => {
                let functor = Rc::new(Functor {
                    name: "\\(…) -> …".to_string(),
                    params: vec![*param],
                    ret,
                    body: *body,
                    scope: Rc::new(scope.clone()),
                });
                if self.opaque {
                    self.check_functor_body(&functor, ctx, out);
                }
                Some(ModVal::Functor(functor))
            }
            ModExp::Import(rel, span) => self.import(&ctx.file, &rel, span).map(ModVal::Struct),
        }
    }

    /// Applies `f` to the module `arg`.
    fn apply(
        &mut self,
        f: &Functor,
        arg: ModVal,
        span: Span,
        ctx: &Ctx,
        out: &mut Vec<Dec>,
    ) -> Option<ModVal> {
        if self.depth >= MAX_APPLICATION_DEPTH {
            self.diags.push(error(
                span,
                format!(
                    "module applications nested too deeply (the limit is {MAX_APPLICATION_DEPTH})"
                ),
            ));
            return None;
        }
        let param = &f.params[0];
        let sig = self.eval_sig(&param.sig, &f.scope)?;
        let site = Site {
            what: format!("the argument for `{}`", param.name.name),
            sig_span: span,
            span,
            path: String::new(),
        };
        let arg = self.ascribe(arg, &sig, &site, None, &Outer::default());
        self.emit_val_checks(out);
        let arg = arg?;
        let mut scope = (*f.scope).clone();
        scope.mods.insert(param.name.name.clone(), arg);
        if f.params.len() > 1 {
            return Some(ModVal::Functor(Rc::new(Functor {
                name: f.name.clone(),
                params: f.params[1..].to_vec(),
                ret: f.ret.clone(),
                body: f.body.clone(),
                scope: Rc::new(scope),
            })));
        }
        let before = out.len();
        let v = self.expand_functor_body(f, &scope, ctx, span, out);
        for d in &out[before..] {
            if let Dec::Val(vb) = d {
                self.applied.insert(vb.name.name.clone());
            }
        }
        v
    }

    /// Expands the body of `f` in `scope` (which binds its parameters),
    /// ascribed to `f`'s result type if it has one (errors at `span`); its
    /// members are named after `ctx.prefix` (or `f`'s name at the top).
    fn expand_functor_body(
        &mut self,
        f: &Functor,
        scope: &Env,
        ctx: &Ctx,
        span: Span,
        out: &mut Vec<Dec>,
    ) -> Option<ModVal> {
        let body_ctx = Ctx {
            fresh_ids: true,
            ..ctx.clone()
        };
        self.depth += 1;
        let v = self.eval(f.body.clone(), &body_ctx, scope, out);
        self.depth -= 1;
        let v = v?;
        let Some(ret) = &f.ret else {
            return Some(v);
        };
        let s = self.eval_sig(ret, scope)?;
        let path = if ctx.prefix.is_empty() {
            f.name.clone()
        } else {
            ctx.prefix.clone()
        };
        let site = Site {
            what: format!("the result of `{}`", f.name),
            sig_span: ret.span(),
            span,
            path: String::new(),
        };
        let v = self.ascribe(v, &s, &site, Some(&path), &Outer::default());
        self.emit_val_checks(out);
        v
    }
}

/// A short user-facing name for a module expression (used for the names of
/// anonymous modules' members and in messages).
fn describe(m: &ModExp) -> String {
    match m {
        ModExp::Var(q) => q.to_string(),
        ModExp::Apply(f, _, _) => describe(f),
        ModExp::Ascribe(m, _, _) => describe(m),
        ModExp::Struct(..) => "{…}".to_string(),
        ModExp::Lambda(..) => "\\(…) -> …".to_string(),
        ModExp::Import(p, _) => format!("import \"{p}\""),
    }
}
