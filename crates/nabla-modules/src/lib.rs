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
//! Module types: a module ascribed to (or passed for a parameter of, or
//! returned by a functor with) a module type must define every `val`,
//! `type` and `module` it specifies (a located error otherwise), and only
//! those names stay visible. In the program [`expand_modules`] returns,
//! abstract types are transparent (`M.t` is its definition): that is the
//! program that is elaborated. A monomorphic `val x: T` without named sizes
//! is checked by emitting `def M.x.<spec> : T = M.x` (with `T`'s abstract
//! types read as the module's) for the type checker; other `val` types are
//! checked where the values are used. Opaque ascription is checked by a
//! second expansion, [`expand_modules_sealed`], in which each abstract type
//! is a new type and each `val` a declaration of its specified type, and
//! each functor body is expanded once more against its parameters' module
//! types; the driver type-checks it after the first and reports its errors.

mod checks;
mod env;
mod resolve;
#[cfg(test)]
mod tests;

use env::{
    Env, Functor, ModVal, Refinement, Sig, SigStruct, TypeSpec, TypeTarget, ValSpec, ValTarget,
};
use nabla_syntax::ast::*;
use nabla_syntax::load::resolve_import;
use nabla_syntax::{Diagnostic, DiagnosticKind, SourceMap, Span};
use resolve::Resolver;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// The name of Futhark's module of intrinsics: its members may be named
/// (`intrinsics.x`, resolved by the type checker), but it is no module
/// the module pass knows.
pub(crate) const INTRINSICS: &str = "intrinsics";

/// How deeply functor applications may nest (one inside another's body).
const MAX_APPLICATION_DEPTH: usize = 200;

/// Expands the module constructs of `files` (in dependency order, the
/// prelude first) into flat declarations; see the crate docs.
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
/// their module types say, as Futhark checks it. (In the ordinary
/// expansion the body only ever sees the modules it is applied to.)
///
/// The result is only for type checking (its values are holes). `None`
/// when no module hides a type (nothing to check) or when the pass
/// reports anything (the ordinary expansion reports it).
pub fn expand_modules_sealed(
    sources: &SourceMap,
    files: Vec<Program>,
    next_id: &mut u32,
) -> Option<SealedProgram> {
    let expanded = expand(sources, files, next_id, true).ok()?;
    expanded.sealed_any.then_some(SealedProgram {
        files: expanded.files,
        generated: expanded.generated,
    })
}

/// What one run of the pass produced.
struct Expanded {
    files: Vec<Program>,
    /// Whether an abstract type was hidden (only when `opaque`).
    sealed_any: bool,
    /// The spans of made-up declarations (only when `opaque`).
    generated: Vec<Span>,
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
                    exports: HashMap::new(),
                    depth: 0,
                    opaque,
                    sealed: Vec::new(),
                    sealed_any: false,
                    generated: Vec::new(),
                };
                let out = ex.files(files, &paths);
                let expanded = Expanded {
                    files: out,
                    sealed_any: ex.sealed_any,
                    generated: ex.generated,
                };
                (expanded, ex.diags, ex.next_id)
            });
        match h {
            Ok(h) => h.join().ok(),
            Err(_) => None,
        }
    });
    match result {
        Some((out, mut diags, id)) => {
            *next_id = id;
            // A functor body is expanded once per application: report
            // each of its errors once.
            let mut seen = std::collections::HashSet::new();
            diags.retain(|d| seen.insert((d.span, d.message.clone())));
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

/// Where a module is matched against a module type, for messages.
struct Site {
    /// The module, as messages name it ("the module `M`").
    what: String,
    /// The module type.
    sig_span: Span,
    /// Where the errors point.
    span: Span,
}

/// A `val` specification to check against the member that implements it:
/// becomes `def M.x.<spec> : T = M.x` for the type checker.
struct ValCheck {
    target: ValTarget,
    ty: TypeExp,
    /// Where the module was ascribed.
    span: Span,
    /// The scope the module type was written in.
    scope: Rc<Env>,
    /// The ascribed module's (visible) types and submodules, which the
    /// specification's type names refer to.
    types: Option<Rc<Env>>,
}

struct Expander {
    /// `val` specifications checked since the last [`Expander::emit_val_checks`].
    val_checks: Vec<ValCheck>,
    next_id: u32,
    /// Flat names given so far (`true` for types), with how often.
    used_flat: HashMap<(bool, String), usize>,
    diags: Vec<Diagnostic>,
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
                        "entry points must be declared at the top level, not inside a module",
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
                r.type_bind(&mut tb);
                self.diags.append(&mut r.diags);
                let flat = self.flat_name(&prefix, &tb.name.name, true);
                let target = TypeTarget::Flat(flat.clone());
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
                                };
                                self.ascribe(v, &s, &site, Some(&inner.prefix), &Env::default())
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
                };
                let v = self.ascribe(v, &s, &site, Some(&path), &Env::default());
                self.emit_val_checks(out);
                v
            }
            ModExp::Lambda(param, ret, body, _) => Some(ModVal::Functor(Rc::new(Functor {
                name: "\\(…) -> …".to_string(),
                params: vec![*param],
                ret,
                body: *body,
                scope: Rc::new(scope.clone()),
            }))),
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
        };
        let arg = self.ascribe(arg, &sig, &site, None, &Env::default());
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
        self.expand_functor_body(f, &scope, ctx, span, out)
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
        };
        let v = self.ascribe(v, &s, &site, Some(&path), &Env::default());
        self.emit_val_checks(out);
        v
    }

    /// Emits the declarations that make the type checker check the `val`
    /// specifications recorded by [`Expander::ascribe`]; their type names
    /// are resolved in the module type's scope extended by the ascribed
    /// module's types.
    fn emit_val_checks(&mut self, out: &mut Vec<Dec>) {
        out.append(&mut self.sealed);
        for check in std::mem::take(&mut self.val_checks) {
            let mut env = (*check.scope).clone();
            if let Some(types) = &check.types {
                for (n, t) in &types.types {
                    env.types.insert(n.clone(), t.clone());
                }
                for (n, m) in &types.mods {
                    env.mods.insert(n.clone(), m.clone());
                }
            }
            let mut ty = check.ty;
            let mut r = Resolver::new(&env);
            r.ty(&mut ty);
            self.diags.append(&mut r.diags);
            let name = self.flat_name(&check.target.name, "<spec>", false);
            let body = Expr {
                kind: ExprKind::Var {
                    name: QualName {
                        quals: check.target.quals,
                        name: check.target.name,
                        span: check.span,
                    },
                    res: None,
                    inst: vec![],
                },
                span: check.span,
                ty: None,
            };
            out.push(Dec::Val(ValBind {
                id: self.fresh_id(),
                entry: false,
                name: Ident {
                    name,
                    span: check.span,
                },
                type_params: vec![],
                params: vec![],
                ret: Some(ty),
                body,
                attrs: vec![],
                span: check.span,
                ty: None,
            }));
        }
    }

    /// Checks that `v` has everything `sig` specifies (errors at
    /// `site`) and keeps only that visible. With `seal` (for an
    /// ascription rather than a functor argument: the path of the module,
    /// `M.N`), when the pass checks opaque ascription, the kept types and
    /// values are the sealed ones ([`Expander::seal_type`],
    /// [`Expander::seal_val`]), named after that path. `outer`: the types
    /// and submodules of the enclosing modules, when `sig` is a module
    /// specification inside another module type (its specifications may
    /// name them).
    fn ascribe(
        &mut self,
        v: ModVal,
        sig: &Sig,
        site: &Site,
        seal: Option<&str>,
        outer: &Env,
    ) -> Option<ModVal> {
        let (what, sig_span, span) = (&site.what, site.sig_span, site.span);
        match (sig, v) {
            (Sig::Functor, v @ ModVal::Functor(_)) => Some(v),
            (Sig::Functor, ModVal::Struct(_)) => {
                self.diags.push(
                    error(span, format!("{what} must be a parametric module"))
                        .with_label(sig_span, "required by this module type"),
                );
                None
            }
            (Sig::Struct(_), ModVal::Functor(f)) => {
                self.diags.push(
                    error(
                        span,
                        format!(
                            "{what} is the parametric module `{}`, but a structure is required",
                            f.name
                        ),
                    )
                    .with_label(sig_span, "required by this module type"),
                );
                None
            }
            (Sig::Struct(s), ModVal::Struct(env)) => {
                let sealing = seal.filter(|_| self.opaque);
                let mut kept = Env {
                    builtin: env.builtin && sealing.is_none(),
                    ..Env::default()
                };
                let mut ok = true;
                let checks_from = self.val_checks.len();
                for spec in &s.types {
                    match env.types.get(&spec.name) {
                        Some(t) => {
                            let t = if let (Some(path), None) = (sealing, &spec.refinement) {
                                self.seal_type(spec, path, &Self::spec_env(outer, &kept))
                            } else {
                                t.clone()
                            };
                            kept.types.insert(spec.name.clone(), t);
                        }
                        None => {
                            ok = false;
                            self.missing(site, "type", &spec.name, spec.span);
                        }
                    }
                }
                for (n, sub, spec_span) in &s.mods {
                    match env.mods.get(n) {
                        Some(m) => {
                            let sub_site = Site {
                                what: format!("the module `{n}` in {}", site.what),
                                sig_span: *spec_span,
                                span: site.span,
                            };
                            let m = self.ascribe(
                                m.clone(),
                                sub,
                                &sub_site,
                                seal.map(|p| format!("{p}.{n}")).as_deref(),
                                &Self::spec_env(outer, &kept),
                            );
                            match m {
                                Some(m) => {
                                    kept.mods.insert(n.clone(), m);
                                }
                                None => ok = false,
                            }
                        }
                        None => {
                            ok = false;
                            self.missing(site, "module", n, *spec_span);
                        }
                    }
                }
                for spec in &s.vals {
                    match env.vals.get(&spec.name) {
                        Some(t) => {
                            let target = if let Some(path) = sealing {
                                self.seal_val(spec, path, &Self::spec_env(outer, &kept))
                            } else {
                                t.clone()
                            };
                            kept.vals.insert(spec.name.clone(), target);
                            // The opaque expansion runs after the ordinary
                            // one has checked the specifications.
                            if let (Some(ty), false, false) =
                                (&spec.checked_type, env.builtin, self.opaque)
                            {
                                self.val_checks.push(ValCheck {
                                    target: t.clone(),
                                    ty: ty.clone(),
                                    span,
                                    scope: spec.scope.clone(),
                                    types: None,
                                });
                            }
                        }
                        None => {
                            ok = false;
                            self.missing(site, "value", &spec.name, spec.span);
                        }
                    }
                }
                let visible = Rc::new(Self::spec_env(outer, &kept));
                for c in self.val_checks[checks_from..].iter_mut() {
                    c.types.get_or_insert_with(|| visible.clone());
                }
                let kept = Rc::new(kept);
                ok.then_some(ModVal::Struct(kept))
            }
        }
    }

    /// Expands the body of `f` once for the check of opaque ascription,
    /// with each parameter bound to a module made from its module type
    /// alone ([`Expander::abstract_module`]): the body may use of its
    /// parameters only what their module types say, as in Futhark. The
    /// declarations go to `out` for the type checker; the result is
    /// dropped. Skipped when a parameter is itself a functor.
    fn check_functor_body(&mut self, f: &Functor, ctx: &Ctx, out: &mut Vec<Dec>) {
        let mut scope = (*f.scope).clone();
        for p in &f.params {
            let Some(sig) = self.eval_sig(&p.sig, &scope) else {
                return;
            };
            let path = format!("{}.{}", ctx.prefix, p.name.name);
            let Some(arg) = self.abstract_module(&sig, &path, &Env::default()) else {
                return;
            };
            self.emit_val_checks(out);
            scope.mods.insert(p.name.name.clone(), arg);
        }
        let span = f
            .ret
            .as_ref()
            .map_or_else(|| f.body.span(), ModTypeExp::span);
        self.expand_functor_body(f, &scope, ctx, span, out);
    }

    /// A module with exactly what the module type `sig` specifies: its
    /// abstract types new types, its other types as defined or refined,
    /// its values declarations of their types ([`Expander::seal_type`],
    /// [`Expander::seal_val`]), named after `path`. `None` for the type of
    /// a functor.
    fn abstract_module(&mut self, sig: &Sig, path: &str, outer: &Env) -> Option<ModVal> {
        let Sig::Struct(s) = sig else { return None };
        let mut kept = Env::default();
        for spec in &s.types {
            let t = self.seal_type(spec, path, &Self::spec_env(outer, &kept));
            kept.types.insert(spec.name.clone(), t);
        }
        for (n, sub, _) in &s.mods {
            let inner = Self::spec_env(outer, &kept);
            let m = self.abstract_module(sub, &format!("{path}.{n}"), &inner)?;
            kept.mods.insert(n.clone(), m);
        }
        for spec in &s.vals {
            let v = self.seal_val(spec, path, &Self::spec_env(outer, &kept));
            kept.vals.insert(spec.name.clone(), v);
        }
        Some(ModVal::Struct(Rc::new(kept)))
    }

    /// Reports that the module at `site` lacks the `kind` (type, value,
    /// module) `name` specified at `spec_span`.
    fn missing(&mut self, site: &Site, kind: &str, name: &str, spec_span: Span) {
        self.diags.push(
            error(
                site.span,
                format!("{} does not define the {kind} `{name}`", site.what),
            )
            .with_label(spec_span, "specified here"),
        );
    }

    /// The scope `spec_scope` of a specification extended by the types and
    /// submodules `kept` so far of the module ascribed to it (for a module
    /// specification inside a module type, `spec_scope` is itself extended
    /// by the enclosing module's: its specifications may name those types).
    fn spec_env(spec_scope: &Env, kept: &Env) -> Env {
        let mut env = spec_scope.clone();
        for (n, t) in &kept.types {
            env.types.insert(n.clone(), t.clone());
        }
        for (n, m) in &kept.mods {
            env.mods.insert(n.clone(), m.clone());
        }
        env
    }

    /// Seals the type specified by `spec` in the module at `path`: an
    /// abstract type becomes a new one-constructor sum type with the type's
    /// parameters as payload (see
    /// [`nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR`]); a type the module
    /// type defines (`type u = t -> t`) is redefined from that definition
    /// over the sealed types, and a refined one from its refinement.
    /// Returns the new type's target; its declaration goes to `self.sealed`.
    fn seal_type(&mut self, spec: &TypeSpec, path: &str, kept: &Env) -> TypeTarget {
        let flat = self.flat_name(path, &spec.name, true);
        let span = spec.span;
        let mut bind = TypeBind {
            name: Ident {
                name: flat.clone(),
                span,
            },
            params: spec.params.clone(),
            liftedness: spec.liftedness,
            def: TypeExp::Tuple(vec![], span),
            span,
        };
        // A refinement (only met by the parameters of a functor whose body
        // is checked) or the module type's own definition, in the scope it
        // was written in.
        let definition = match (&spec.refinement, &spec.def) {
            (Some(r), _) => Some((r.params.clone(), r.def.clone(), (*r.scope).clone())),
            (None, Some(def)) => Some((
                spec.params.clone(),
                def.clone(),
                Self::spec_env(&spec.scope, kept),
            )),
            (None, None) => None,
        };
        match definition {
            None => {
                self.sealed_any = true;
                let payload = spec
                    .params
                    .iter()
                    .map(|p| match p {
                        TypeParam::Type(a, _) => TypeExp::Named(
                            QualName {
                                quals: vec![],
                                name: a.name.clone(),
                                span,
                            },
                            vec![],
                            span,
                        ),
                        TypeParam::Size(n) => TypeExp::Array(
                            SizeExp::Expr(Box::new(Expr {
                                kind: ExprKind::Var {
                                    name: QualName {
                                        quals: vec![],
                                        name: n.name.clone(),
                                        span,
                                    },
                                    res: None,
                                    inst: vec![],
                                },
                                span,
                                ty: None,
                            })),
                            Box::new(TypeExp::Tuple(vec![], span)),
                            span,
                        ),
                    })
                    .collect();
                let constructor = Ident {
                    name: format!("{}{flat}", nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR),
                    span,
                };
                bind.def = TypeExp::Sum(vec![(constructor, payload)], span);
            }
            Some((params, def, env)) => {
                bind.params = params;
                bind.def = def;
                let mut r = Resolver::new(&env);
                r.type_bind(&mut bind);
                self.diags.append(&mut r.diags);
            }
        }
        self.sealed.push(Dec::Type(bind));
        TypeTarget::Flat(flat)
    }

    /// Seals the value specified by `spec` in the module at `path`: a
    /// declaration of the specified type over the sealed types (`def M.f#2
    /// 'a (x: M.t#2) : a = ???`, its parameters one per arrow of the type,
    /// as written) goes to `self.sealed`; returns its target.
    fn seal_val(&mut self, spec: &ValSpec, path: &str, kept: &Env) -> ValTarget {
        let flat = self.flat_name(path, &spec.name, false);
        let span = spec.span;
        let mut params = Vec::new();
        let mut ty = spec.ty.clone();
        while let TypeExp::Arrow(name, param, ret, _) = ty {
            let name = name.unwrap_or_else(|| Ident {
                name: format!("arg#{}", params.len()),
                span,
            });
            let id = Pat {
                kind: PatKind::Id(name),
                span,
                ty: None,
            };
            params.push(Pat {
                kind: PatKind::Ascribe(Box::new(id), *param),
                span,
                ty: None,
            });
            ty = *ret;
        }
        let expr = |kind| Expr {
            kind,
            span,
            ty: None,
        };
        let hole = expr(ExprKind::Var {
            name: QualName {
                quals: vec![],
                name: "???".to_string(),
                span,
            },
            res: None,
            inst: vec![],
        });
        let body = expr(ExprKind::Apply(
            Box::new(hole),
            vec![expr(ExprKind::Tuple(vec![]))],
        ));
        let mut bind = ValBind {
            id: self.fresh_id(),
            entry: false,
            name: Ident {
                name: flat.clone(),
                span,
            },
            type_params: spec.type_params.clone(),
            params,
            ret: Some(ty),
            body,
            attrs: vec![],
            span,
            ty: None,
        };
        let env = Self::spec_env(&spec.scope, kept);
        let mut r = Resolver::new(&env);
        r.val_bind(&mut bind);
        self.diags.append(&mut r.diags);
        // The declaration's types keep the spans they have in the module type.
        let ty_span = spec.ty.span();
        self.generated.push(Span {
            start: span.start.min(ty_span.start),
            end: span.end.max(ty_span.end),
            ..span
        });
        self.sealed.push(Dec::Val(bind));
        ValTarget::flat(&flat)
    }

    /// Evaluates a module type expression.
    fn eval_sig(&mut self, mt: &ModTypeExp, scope: &Env) -> Option<Rc<Sig>> {
        match mt {
            ModTypeExp::Var(q) => {
                let found = if q.quals.is_empty() {
                    scope.sigs.get(&q.name).cloned()
                } else {
                    let head = ModExp::Var(QualName {
                        quals: q.quals[..q.quals.len() - 1].to_vec(),
                        name: q.quals[q.quals.len() - 1].clone(),
                        span: q.span,
                    });
                    let env = self.module_struct(&head, scope, q.span)?;
                    env.sigs.get(&q.name).cloned()
                };
                if found.is_none() {
                    self.diags
                        .push(error(q.span, format!("unknown module type `{q}`")));
                }
                found
            }
            ModTypeExp::Specs(specs, _) => {
                self.diags.extend(checks::duplicate_specifications(specs));
                let mut s = SigStruct::default();
                let spec_scope = Rc::new(scope.clone());
                for spec in specs {
                    match spec {
                        Spec::Val(n, tparams, ty, span) => s.vals.push(ValSpec {
                            name: n.name.clone(),
                            span: *span,
                            type_params: tparams.clone(),
                            ty: ty.clone(),
                            checked_type: (tparams.is_empty() && checkable_type(ty))
                                .then(|| ty.clone()),
                            scope: spec_scope.clone(),
                        }),
                        Spec::Type {
                            name,
                            params,
                            liftedness,
                            def,
                            span,
                        } => s.types.push(TypeSpec {
                            name: name.name.clone(),
                            span: *span,
                            params: params.clone(),
                            liftedness: *liftedness,
                            def: def.clone(),
                            refinement: None,
                            scope: spec_scope.clone(),
                        }),
                        Spec::Module(n, mt, span) => {
                            let sub = self.eval_sig(mt, scope)?;
                            s.mods.push((n.name.clone(), sub, *span));
                        }
                        Spec::Include(mt, span) => match &*self.eval_sig(mt, scope)? {
                            Sig::Struct(inc) => {
                                s.vals.extend(inc.vals.iter().cloned());
                                s.types.extend(inc.types.iter().cloned());
                                s.mods.extend(inc.mods.iter().cloned());
                            }
                            Sig::Functor => {
                                self.diags.push(error(
                                    *span,
                                    "cannot include the module type of a parametric module",
                                ));
                                return None;
                            }
                        },
                    }
                }
                Some(Rc::new(Sig::Struct(s)))
            }
            ModTypeExp::With(base, name, params, def, span) => {
                let s = self.eval_sig(base, scope)?;
                let refinement = Rc::new(Refinement {
                    params: params.clone(),
                    def: def.clone(),
                    scope: Rc::new(scope.clone()),
                });
                match refine(&s, &name.quals, &name.name, &refinement) {
                    Some(refined) => Some(Rc::new(refined)),
                    None => {
                        self.diags.push(error(
                            *span,
                            format!("the module type has no type `{name}` to refine"),
                        ));
                        None
                    }
                }
            }
            ModTypeExp::Arrow(_, p, r, _) => {
                self.eval_sig(p, scope)?;
                self.eval_sig(r, scope)?;
                Some(Rc::new(Sig::Functor))
            }
        }
    }
}

/// The module type `s` with its type `quals.name` (in the submodule spec
/// `quals`) made transparent, as `s with quals.name = …` does; `None` if
/// `s` specifies no such type.
fn refine(s: &Sig, quals: &[Name], name: &str, refinement: &Rc<Refinement>) -> Option<Sig> {
    let Sig::Struct(st) = s else { return None };
    let mut st = st.clone();
    match quals.split_first() {
        None => {
            let spec = st.types.iter_mut().find(|t| t.name == name)?;
            spec.refinement = Some(refinement.clone());
        }
        Some((m, rest)) => {
            let entry = st.mods.iter_mut().find(|(n, _, _)| n == m)?;
            entry.1 = Rc::new(refine(&entry.1, rest, name, refinement)?);
        }
    }
    Some(Sig::Struct(st))
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

/// Whether the module pass checks a `val` specification of this type (by a
/// declaration with this type): not when it names sizes, is unique or
/// existential, where such a declaration could fail for valid programs.
fn checkable_type(t: &TypeExp) -> bool {
    match t {
        TypeExp::Prim(..) => true,
        TypeExp::Named(_, args, _) => args.iter().all(|a| match a {
            TypeArg::Type(t) => checkable_type(t),
            TypeArg::Size(_) => false,
        }),
        TypeExp::Tuple(ts, _) => ts.iter().all(checkable_type),
        TypeExp::Record(fs, _) => fs.iter().all(|(_, t)| checkable_type(t)),
        TypeExp::Array(SizeExp::Any(_), t, _) => checkable_type(t),
        TypeExp::Array(SizeExp::Expr(_), _, _) => false,
        TypeExp::Arrow(None, a, b, _) => checkable_type(a) && checkable_type(b),
        TypeExp::Arrow(Some(_), _, _, _) => false,
        TypeExp::Sum(cs, _) => cs.iter().all(|(_, ts)| ts.iter().all(checkable_type)),
        TypeExp::Unique(..) | TypeExp::Exists(..) => false,
    }
}
