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
//! those names stay visible. Abstract types stay transparent (`M.t` is its
//! definition). A monomorphic `val x: T` without named sizes is checked by
//! emitting `def M.x.<spec> : T = M.x` (with `T`'s abstract types read as
//! the module's) for the type checker; other `val` types are checked where
//! the values are used.

mod env;
mod resolve;
#[cfg(test)]
mod tests;

use env::{Env, Functor, ModVal, Sig, SigStruct, TypeTarget, ValSpec, ValTarget};
use nabla_syntax::ast::*;
use nabla_syntax::load::resolve_import;
use nabla_syntax::{Diagnostic, DiagnosticKind, SourceMap, Span};
use resolve::Resolver;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

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
                };
                let out = ex.files(files, &paths);
                (out, ex.diags, ex.next_id)
            });
        match h {
            Ok(h) => h.join().ok(),
            Err(_) => None,
        }
    });
    match result {
        Some((out, diags, id)) => {
            *next_id = id;
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
            Dec::Open(q, span) => {
                if let Some(env) = self.module_struct(&ModExp::Var(q), scope, span) {
                    scope.open(&env);
                }
            }
            Dec::OpenModule(m, span) => {
                let anon = ctx.child(&describe(&m));
                if let Some(v) = self.eval(m, &anon, scope, out) {
                    if let Some(env) = self.expect_struct(v, span) {
                        scope.open(&env);
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
                                self.ascribe(v, &s, sig.span(), &what, mb.name.span)
                            });
                            self.emit_val_checks(out);
                            v
                        }
                        (v, _) => v,
                    }
                } else {
                    Some(ModVal::Functor(Rc::new(Functor {
                        name: name.clone(),
                        params: mb.params,
                        ret: mb.sig,
                        body: mb.body,
                        scope: Rc::new(scope.clone()),
                    })))
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
                let v = self.eval(*m, ctx, scope, out)?;
                let s = self.eval_sig(&sig, scope)?;
                let v = self.ascribe(v, &s, sig.span(), &what, span);
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
        let arg = self.ascribe(
            arg,
            &sig,
            span,
            &format!("the argument for `{}`", param.name.name),
            span,
        );
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
        let body_ctx = Ctx {
            fresh_ids: true,
            ..ctx.clone()
        };
        self.depth += 1;
        let v = self.eval(f.body.clone(), &body_ctx, &scope, out);
        self.depth -= 1;
        let v = v?;
        match &f.ret {
            Some(ret) => {
                let s = self.eval_sig(ret, &scope)?;
                let v = self.ascribe(
                    v,
                    &s,
                    ret.span(),
                    &format!("the result of `{}`", f.name),
                    span,
                );
                self.emit_val_checks(out);
                v
            }
            None => Some(v),
        }
    }

    /// Emits the declarations that make the type checker check the `val`
    /// specifications recorded by [`Expander::ascribe`]; their type names
    /// are resolved in the module type's scope extended by the ascribed
    /// module's types.
    fn emit_val_checks(&mut self, out: &mut Vec<Dec>) {
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

    /// Checks that `v` has everything `sig` specifies (errors at `span`,
    /// naming `what`) and keeps only that visible.
    fn ascribe(
        &mut self,
        v: ModVal,
        sig: &Sig,
        sig_span: Span,
        what: &str,
        span: Span,
    ) -> Option<ModVal> {
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
                let mut kept = Env {
                    builtin: env.builtin,
                    ..Env::default()
                };
                let mut ok = true;
                let checks_from = self.val_checks.len();
                for (n, spec_span) in &s.types {
                    match env.types.get(n) {
                        Some(t) => {
                            kept.types.insert(n.clone(), t.clone());
                        }
                        None => {
                            ok = false;
                            self.diags.push(
                                error(span, format!("{what} does not define the type `{n}`"))
                                    .with_label(*spec_span, "specified here"),
                            );
                        }
                    }
                }
                for ValSpec {
                    name: n,
                    span: spec_span,
                    checked_type,
                    scope,
                } in &s.vals
                {
                    match env.vals.get(n) {
                        Some(t) => {
                            kept.vals.insert(n.clone(), t.clone());
                            if let (Some(ty), false) = (checked_type, env.builtin) {
                                self.val_checks.push(ValCheck {
                                    target: t.clone(),
                                    ty: ty.clone(),
                                    span,
                                    scope: scope.clone(),
                                    types: None,
                                });
                            }
                        }
                        None => {
                            ok = false;
                            self.diags.push(
                                error(span, format!("{what} does not define the value `{n}`"))
                                    .with_label(*spec_span, "specified here"),
                            );
                        }
                    }
                }
                for (n, sub, spec_span) in &s.mods {
                    match env.mods.get(n) {
                        Some(m) => {
                            let m = self.ascribe(
                                m.clone(),
                                sub,
                                *spec_span,
                                &format!("the module `{n}` in {what}"),
                                span,
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
                            self.diags.push(
                                error(span, format!("{what} does not define the module `{n}`"))
                                    .with_label(*spec_span, "specified here"),
                            );
                        }
                    }
                }
                let kept = Rc::new(kept);
                for c in self.val_checks[checks_from..].iter_mut() {
                    c.types.get_or_insert_with(|| kept.clone());
                }
                ok.then_some(ModVal::Struct(kept))
            }
        }
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
                let mut s = SigStruct::default();
                let spec_scope = Rc::new(scope.clone());
                for spec in specs {
                    match spec {
                        Spec::Val(n, tparams, ty, span) => s.vals.push(ValSpec {
                            name: n.name.clone(),
                            span: *span,
                            checked_type: (tparams.is_empty() && checkable_type(ty))
                                .then(|| ty.clone()),
                            scope: spec_scope.clone(),
                        }),
                        Spec::Type { name, span, .. } => s.types.push((name.name.clone(), *span)),
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
            ModTypeExp::With(base, name, _, _, span) => {
                let s = self.eval_sig(base, scope)?;
                if !sig_has_type(&s, name) {
                    self.diags.push(error(
                        *span,
                        format!("the module type has no type `{name}` to refine"),
                    ));
                    return None;
                }
                Some(s)
            }
            ModTypeExp::Arrow(_, p, r, _) => {
                self.eval_sig(p, scope)?;
                self.eval_sig(r, scope)?;
                Some(Rc::new(Sig::Functor))
            }
        }
    }
}

/// Whether the module type `s` specifies the (possibly qualified) type `q`.
fn sig_has_type(s: &Sig, q: &QualName) -> bool {
    let mut cur = s;
    for m in &q.quals {
        let Sig::Struct(st) = cur else { return false };
        match st.mods.iter().find(|(n, _, _)| n == m) {
            Some((_, sub, _)) => cur = sub,
            None => return false,
        }
    }
    match cur {
        Sig::Struct(st) => st.types.iter().any(|(n, _)| *n == q.name),
        Sig::Functor => false,
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
