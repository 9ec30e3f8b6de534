//! Matching a module against a module type (Futhark's `matchMTys`): every
//! specified type, module and value must be there; a type as lifted and
//! with the parameters its specification says, and defined as specified
//! where the specification defines it; only the specified names stay
//! visible. Values are matched against their specifications after type
//! checking ([`crate::valspec`]): here each one gets a declaration of its
//! specified type to be checked.
//!
//! Also the sealing of opaque ascription (abstract types become new types,
//! values declarations of their specified types) and the modules made
//! from module types alone, for checking functor bodies.

use crate::env::{
    Env, Functor, FunctorSig, ModVal, Sig, SigStruct, SpecRef, TypeInfo, TypeSpec, TypeTarget,
    ValSpec, ValTarget,
};
use crate::resolve::Resolver;
use crate::types::{param_name, show_type_params, type_keyword, NArg, NSize, Norm, Normaliser};
use crate::valspec::ValueCheck;
use crate::{error, Ctx, Expander};
use nabla_syntax::ast::*;
use nabla_syntax::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// Where a module is matched against a module type, for messages.
pub(crate) struct Site {
    /// The module, as messages name it ("the module `M`").
    pub what: String,
    /// The module type.
    pub sig_span: Span,
    /// Where the errors point.
    pub span: Span,
    /// The path of the specifications matched, inside the module type
    /// (`""`, or `"bar."` inside the module specification `bar`).
    pub path: String,
}

/// The types and submodules of the modules enclosing a module
/// specification (its specifications may name them): as the rest of the
/// program sees them (`kept`, sealed when the ascription is opaque) and as
/// the module defines them (`real`, what specifications are checked
/// against).
#[derive(Default)]
pub(crate) struct Outer {
    pub kept: Env,
    pub real: Env,
}

/// A `val` specification to check against the member that implements it,
/// once the program is type-checked: becomes a declaration of the
/// specified type (`def M.x.<spec> … = ???`).
pub(crate) struct ValCheck {
    pub target: ValTarget,
    pub spec: ValSpec,
    /// The member as messages name it (`bar.x`).
    pub shown: String,
    /// Where the module was ascribed.
    pub span: Span,
    /// The scope the specification's type is resolved in: the module
    /// type's, extended by the module's own types and submodules.
    pub env: Rc<Env>,
    /// The flat names of the module's types that the module type
    /// specifies as abstract and size-lifted.
    pub rigid: Rc<Vec<String>>,
}

impl Expander {
    /// Emits what [`Expander::ascribe`] made since the last call: the
    /// sealed declarations, and one declaration of its specified type per
    /// recorded `val` specification ([`ValueCheck`]).
    pub(crate) fn emit_val_checks(&mut self, out: &mut Vec<Dec>) {
        out.append(&mut self.sealed);
        for check in std::mem::take(&mut self.val_checks) {
            if !check.target.quals.is_empty() {
                continue; // a member of a built-in module
            }
            let flat = self.flat_name(&check.target.name, "<spec>", false);
            let (bind, span) = self.spec_decl(&check.spec, flat.clone(), &check.env);
            let mut spec_ty = check.spec.ty.clone();
            Resolver::new(&check.env).ty_with_params(&check.spec.type_params, &mut spec_ty);
            self.value_checks.push(ValueCheck {
                spec_decl: flat,
                target: check.target.name.clone(),
                spec_text: format!(
                    "val {}{} : {}",
                    check.shown,
                    show_type_params(&check.spec.type_params),
                    crate::types::show_type_exp(&check.spec.ty)
                ),
                shown: check.shown,
                spec_ty,
                rigid: check.rigid.to_vec(),
                spec_span: check.spec.span,
                span: check.span,
                decl_span: span,
            });
            out.push(Dec::Val(bind));
        }
    }

    /// Checks that `v` has everything `sig` specifies (errors at
    /// `site`) and keeps only that visible. With `seal` (for an
    /// ascription rather than a functor argument: the path of the module,
    /// `M.N`), when the pass checks opaque ascription, the kept types and
    /// values are the sealed ones ([`Expander::seal_type`],
    /// [`Expander::seal_val`]), named after that path. `outer`: the
    /// enclosing modules' types and submodules, when `sig` is a module
    /// specification inside another module type.
    pub(crate) fn ascribe(
        &mut self,
        v: ModVal,
        sig: &Sig,
        site: &Site,
        seal: Option<&str>,
        outer: &Outer,
    ) -> Option<ModVal> {
        let (what, sig_span, span) = (&site.what, site.sig_span, site.span);
        match (sig, v) {
            (Sig::Functor(fs), ModVal::Functor(f)) => Some(self.ascribe_functor(f, fs, seal)),
            (Sig::Functor(_), ModVal::Struct(_)) => {
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
                self.ascribe_struct(&env, s, site, seal, outer)
            }
        }
    }

    fn ascribe_struct(
        &mut self,
        env: &Env,
        s: &SigStruct,
        site: &Site,
        seal: Option<&str>,
        outer: &Outer,
    ) -> Option<ModVal> {
        let sealing = seal.filter(|_| self.opaque);
        let mut kept = Env {
            builtin: env.builtin && sealing.is_none(),
            ..Env::default()
        };
        // The module's own types and submodules, as its specifications
        // name them.
        let mut real = Env::default();
        for spec in &s.vals {
            if let Some(t) = env.vals.get(&spec.name) {
                real.vals.insert(spec.name.clone(), t.clone());
            }
        }
        let mut ok = true;
        for item in s.types_and_modules_in_order() {
            ok &= match item {
                SpecRef::Type(i) => {
                    self.ascribe_type(env, &s.types[i], site, sealing, outer, &mut real, &mut kept)
                }
                SpecRef::Module(i) => {
                    let (n, sub, spec_span) = &s.mods[i];
                    self.ascribe_submodule(
                        env,
                        (n, sub, *spec_span),
                        site,
                        seal,
                        outer,
                        &mut real,
                        &mut kept,
                    )
                }
            };
        }
        let real = Rc::new(Self::spec_env(&outer.real, &real));
        // A value of an abstract size-lifted type may have any size.
        let rigid: Rc<Vec<String>> = Rc::new(
            s.types
                .iter()
                .filter(|t| {
                    t.liftedness == Liftedness::SizeLifted
                        && t.def.is_none()
                        && t.refinement.is_none()
                })
                .filter_map(|t| match env.types.get(&t.name) {
                    Some(TypeTarget::Flat(info)) => Some(info.flat.clone()),
                    _ => None,
                })
                .collect(),
        );
        // The abstract size-lifted types whose definitions here have
        // anonymous sizes.
        let existential: Vec<&str> = s
            .types
            .iter()
            .filter(|t| {
                t.liftedness == Liftedness::SizeLifted && t.def.is_none() && t.refinement.is_none()
            })
            .filter(|t| match env.types.get(&t.name) {
                Some(TypeTarget::Flat(info)) => info.def.as_ref().is_some_and(|d| {
                    Normaliser { table: &self.types }
                        .norm(d, &HashMap::new())
                        .has_anonymous_size()
                }),
                _ => false,
            })
            .map(|t| t.name.as_str())
            .collect();
        for spec in &s.vals {
            let Some(t) = env.vals.get(&spec.name) else {
                ok = false;
                self.missing(site, "value", &spec.name, spec.span);
                continue;
            };
            if names_outside_functions(&spec.ty, &existential) {
                // A value of such a type would have a size that nothing
                // determines (Futhark's check for its issue #2120).
                ok = false;
                self.diags.push(
                    error(
                        site.span,
                        format!(
                            "Type substitution in \"{}{}\" results in a top-level size.",
                            site.path, spec.name
                        ),
                    )
                    .with_label(spec.span, "specified here"),
                );
                continue;
            }
            let target = if let Some(path) = sealing {
                self.seal_val(spec, path, &Self::spec_env(&outer.kept, &kept))
            } else {
                t.clone()
            };
            kept.vals.insert(spec.name.clone(), target);
            if !env.builtin {
                self.val_checks.push(ValCheck {
                    target: t.clone(),
                    spec: spec.clone(),
                    shown: format!("{}{}", site.path, spec.name),
                    span: site.span,
                    env: Rc::new(Self::spec_env(&spec.scope, &real)),
                    rigid: rigid.clone(),
                });
            }
        }
        ok.then_some(ModVal::Struct(Rc::new(kept)))
    }

    /// The type `spec` of the module `env` (see [`Expander::ascribe`]):
    /// matched against the specification, then added to `real` (the
    /// module's own) and `kept` (what the ascription keeps visible: the
    /// sealed type when `sealing`). False, with an error, when it is
    /// missing or does not match.
    #[allow(clippy::too_many_arguments)]
    fn ascribe_type(
        &mut self,
        env: &Env,
        spec: &TypeSpec,
        site: &Site,
        sealing: Option<&str>,
        outer: &Outer,
        real: &mut Env,
        kept: &mut Env,
    ) -> bool {
        let Some(t) = env.types.get(&spec.name) else {
            self.missing(site, "type", &spec.name, spec.span);
            return false;
        };
        let spec_scope = Self::spec_env(&spec.scope, &Self::spec_env(&outer.real, real));
        let ok = self.match_type(spec, t, &spec_scope, site);
        real.types.insert(spec.name.clone(), t.clone());
        let t = if let Some(path) = sealing {
            // A definition may name the module's values (`[k]`): the
            // same values whatever types sealing gives them.
            let values = Env {
                vals: real.vals.clone(),
                ..Env::default()
            };
            let scope = Self::spec_env(&Self::spec_env(&outer.kept, &values), kept);
            self.seal_type(spec, path, &scope)
        } else {
            t.clone()
        };
        kept.types.insert(spec.name.clone(), t);
        ok
    }

    /// The submodule `name` of the module `env`, ascribed its module type
    /// `sub` (see [`Expander::ascribe`]) in the scope of the types and
    /// modules matched before it, then added to `real` and `kept`. False,
    /// with an error, when it is missing or does not match.
    #[allow(clippy::too_many_arguments)]
    fn ascribe_submodule(
        &mut self,
        env: &Env,
        (name, sub, spec_span): (&Name, &Rc<Sig>, Span),
        site: &Site,
        seal: Option<&str>,
        outer: &Outer,
        real: &mut Env,
        kept: &mut Env,
    ) -> bool {
        let Some(m) = env.mods.get(name) else {
            self.missing(site, "module", name, spec_span);
            return false;
        };
        let sub_site = Site {
            what: format!("the module `{name}` in {}", site.what),
            sig_span: spec_span,
            span: site.span,
            path: format!("{}{name}.", site.path),
        };
        let sub_outer = Outer {
            kept: Self::spec_env(&outer.kept, kept),
            real: Self::spec_env(&outer.real, real),
        };
        real.mods.insert(name.clone(), m.clone());
        let seal_path = seal.map(|p| format!("{p}.{name}"));
        match self.ascribe(m.clone(), sub, &sub_site, seal_path.as_deref(), &sub_outer) {
            Some(m) => {
                kept.mods.insert(name.clone(), m);
                true
            }
            None => false,
        }
    }

    /// A functor ascribed the module type `(p: P) -> R`: a functor of
    /// parameter `p: P` that applies `f` and gives its result the module
    /// type `R`. When the pass checks opaque ascription, its body is also
    /// checked once with `p` made from `P` alone: that `P` satisfies
    /// `f`'s parameter type, and `f`'s result `R`, as Futhark matches
    /// functor types.
    fn ascribe_functor(&mut self, f: Rc<Functor>, fs: &FunctorSig, seal: Option<&str>) -> ModVal {
        let hidden = format!("<ascribed {}>", f.name);
        let param = fs.param.clone().unwrap_or_else(|| Ident {
            name: "<parameter>".to_string(),
            span: fs.span,
        });
        let mut scope = (*fs.scope).clone();
        scope
            .mods
            .insert(hidden.clone(), ModVal::Functor(f.clone()));
        let var = |name: &str| {
            ModExp::Var(QualName {
                quals: vec![],
                name: name.to_string(),
                span: fs.span,
            })
        };
        let wrapper = Functor {
            name: f.name.clone(),
            params: vec![ModParam {
                name: param.clone(),
                sig: fs.param_sig.clone(),
                span: fs.span,
            }],
            ret: Some(fs.result.clone()),
            body: ModExp::Apply(Box::new(var(&hidden)), Box::new(var(&param.name)), fs.span),
            scope: Rc::new(scope),
        };
        if self.opaque {
            let ctx = Ctx {
                prefix: seal.unwrap_or(&f.name).to_string(),
                file: self.file.clone(),
                fresh_ids: true,
            };
            let mut out = Vec::new();
            self.check_functor_body(&wrapper, &ctx, &mut out);
            self.sealed.append(&mut out);
        }
        ModVal::Functor(Rc::new(wrapper))
    }

    /// Checks the module's type `t` against the specification `spec` (its
    /// definition resolved in `scope`), as Futhark's `resolveAbsTypes` and
    /// `matchTypeAbbr`: an abstract type must be at most as lifted as
    /// specified, take the same parameters, and use each size parameter as
    /// an array size; a specified definition must be the module's.
    fn match_type(&mut self, spec: &TypeSpec, t: &TypeTarget, scope: &Env, site: &Site) -> bool {
        let shown = format!("{}{}", site.path, spec.name);
        let (mod_l, mod_params, mod_def) = match t {
            TypeTarget::Flat(info) => (info.liftedness, info.params.clone(), info.def.clone()),
            TypeTarget::Prim(p) => (
                Liftedness::Unlifted,
                vec![],
                Some(TypeExp::Prim(*p, spec.span)),
            ),
        };
        let flat = match t {
            TypeTarget::Flat(info) => info.flat.clone(),
            TypeTarget::Prim(p) => p.to_string(),
        };
        // The module's definition, its parameters named as the
        // specification's (where they correspond).
        let renaming: HashMap<String, NArg> = mod_params
            .iter()
            .zip(&spec.params)
            .map(|(m, s)| {
                let to = param_name(s).to_string();
                let arg = match m {
                    TypeParam::Size(_) => NArg::Size(NSize::Known(to)),
                    TypeParam::Type(..) => NArg::Type(Norm::Named(to, vec![])),
                };
                (param_name(m).to_string(), arg)
            })
            .collect();
        let normaliser = Normaliser { table: &self.types };
        let mod_norm = match &mod_def {
            Some(def) => normaliser.norm(def, &renaming),
            None => Norm::Named(flat, vec![]),
        };
        let module_text = match &mod_def {
            Some(_) => format!(
                "{} {}{} = {}",
                type_keyword(mod_l),
                shown,
                show_type_params(&mod_params),
                mod_norm.show(0)
            ),
            None => format!(
                "{} {}{}",
                type_keyword(mod_l),
                shown,
                show_type_params(&mod_params)
            ),
        };
        let fail = |this: &mut Expander, message: String| {
            this.diags
                .push(error(site.span, message).with_label(spec.span, "specified here"));
            false
        };
        let params_match = spec.params.len() == mod_params.len()
            && spec
                .params
                .iter()
                .zip(&mod_params)
                .all(|(s, m)| match (s, m) {
                    (TypeParam::Size(_), TypeParam::Size(_)) => true,
                    (TypeParam::Type(_, sl), TypeParam::Type(_, ml)) => sl <= ml,
                    _ => false,
                });
        let spec_head = format!(
            "{} {}{}",
            type_keyword(spec.liftedness),
            shown,
            show_type_params(&spec.params)
        );
        // The specified definition: the module type's own, or a refinement.
        let spec_def = match (&spec.refinement, &spec.def) {
            (Some(r), _) => {
                let mut bind = TypeBind {
                    name: Ident {
                        name: spec.name.clone(),
                        span: spec.span,
                    },
                    params: r.params.clone(),
                    liftedness: spec.liftedness,
                    def: r.def.clone(),
                    span: spec.span,
                };
                let env = crate::sig::overlay_placeholders(&r.scope, scope);
                let mut res = Resolver::new(&env);
                res.type_bind(&mut bind);
                Some((r.params.clone(), bind.def))
            }
            (None, Some(def)) => {
                let mut bind = TypeBind {
                    name: Ident {
                        name: spec.name.clone(),
                        span: spec.span,
                    },
                    params: spec.params.clone(),
                    liftedness: spec.liftedness,
                    def: def.clone(),
                    span: spec.span,
                };
                let mut res = Resolver::new(scope);
                res.type_bind(&mut bind);
                Some((spec.params.clone(), bind.def))
            }
            (None, None) => None,
        };
        let Some((spec_params, spec_def)) = spec_def else {
            // An abstract type.
            if mod_l > spec.liftedness {
                let what = match spec.liftedness {
                    Liftedness::Unlifted => "a non-lifted type",
                    Liftedness::SizeLifted => "a size-lifted type",
                    Liftedness::Lifted => "a lifted type",
                };
                return fail(
                    self,
                    format!("Module defines\n  {module_text}\nbut module type requires {what}."),
                );
            }
            if spec.liftedness == Liftedness::Unlifted && mod_norm.has_anonymous_size() {
                return fail(
                    self,
                    format!(
                        "Module defines\n  {module_text}\nwhich contains anonymous sizes, but module type requires non-lifted type."
                    ),
                );
            }
            if !params_match {
                return fail(
                    self,
                    format!(
                        "Module defines\n  {module_text}\nbut module type requires\n  {spec_head}"
                    ),
                );
            }
            let mut witnessed = Vec::new();
            mod_norm.witnessed(&mut witnessed);
            let unwitnessed = spec.params.iter().find_map(|p| match p {
                TypeParam::Size(n) if !witnessed.contains(&n.name) => Some(n.name.clone()),
                _ => None,
            });
            if let (Some(d), Some(_)) = (unwitnessed, &mod_def) {
                return fail(
                    self,
                    format!(
                        "Type\n  {module_text}\ncannot be made abstract because size parameter\n  {d}\nis not used constructively as an array size in the definition."
                    ),
                );
            }
            return true;
        };
        let spec_subst: HashMap<String, NArg> = spec_params
            .iter()
            .map(|p| {
                let n = param_name(p).to_string();
                let arg = match p {
                    TypeParam::Size(_) => NArg::Size(NSize::Known(n.clone())),
                    TypeParam::Type(..) => NArg::Type(Norm::Named(n.clone(), vec![])),
                };
                (n, arg)
            })
            .collect();
        let normaliser = Normaliser { table: &self.types };
        let spec_norm = normaliser.norm(&spec_def, &spec_subst);
        let same_params = spec_params.len() == mod_params.len()
            && spec_params.iter().zip(&mod_params).all(|(s, m)| {
                matches!(
                    (s, m),
                    (TypeParam::Size(_), TypeParam::Size(_))
                        | (TypeParam::Type(..), TypeParam::Type(..))
                )
            });
        if !same_params || !mod_norm.same(&spec_norm) {
            return fail(
                self,
                format!(
                    "Module defines\n  {module_text}\nbut module type requires\n  {} {}{} = {}",
                    type_keyword(spec.liftedness),
                    shown,
                    show_type_params(&spec_params),
                    spec_norm.show(0)
                ),
            );
        }
        true
    }

    /// Expands the body of `f` once for the check of opaque ascription,
    /// with each parameter bound to a module made from its module type
    /// alone ([`Expander::abstract_module`]): the body may use of its
    /// parameters only what their module types say, as in Futhark. The
    /// declarations go to `out` for the type checker; the result is
    /// dropped. Skipped when a parameter is itself a functor.
    pub(crate) fn check_functor_body(&mut self, f: &Functor, ctx: &Ctx, out: &mut Vec<Dec>) {
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
        self.sealed_any = true;
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
    pub(crate) fn abstract_module(&mut self, sig: &Sig, path: &str, outer: &Env) -> Option<ModVal> {
        let Sig::Struct(s) = sig else { return None };
        let mut kept = Env::default();
        // The values' names first: a type's definition may name them.
        for spec in &s.vals {
            let flat = self.flat_name(path, &spec.name, false);
            kept.vals.insert(spec.name.clone(), ValTarget::flat(&flat));
        }
        for item in s.types_and_modules_in_order() {
            match item {
                SpecRef::Type(i) => {
                    let spec = &s.types[i];
                    let t = self.seal_type(spec, path, &Self::spec_env(outer, &kept));
                    kept.types.insert(spec.name.clone(), t);
                }
                SpecRef::Module(i) => {
                    let (n, sub, _) = &s.mods[i];
                    let inner = Self::spec_env(outer, &kept);
                    let m = self.abstract_module(sub, &format!("{path}.{n}"), &inner)?;
                    kept.mods.insert(n.clone(), m);
                }
            }
        }
        for spec in &s.vals {
            let flat = kept.vals[&spec.name].name.clone();
            let env = Self::spec_env(&spec.scope, &Self::spec_env(outer, &kept));
            let (bind, span) = self.spec_decl(spec, flat, &env);
            self.generated.push(span);
            self.sealed.push(Dec::Val(bind));
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
    pub(crate) fn spec_env(spec_scope: &Env, kept: &Env) -> Env {
        let mut env = spec_scope.clone();
        for (n, t) in &kept.types {
            env.types.insert(n.clone(), t.clone());
        }
        for (n, m) in &kept.mods {
            env.mods.insert(n.clone(), m.clone());
        }
        for (n, v) in &kept.vals {
            env.vals.insert(n.clone(), v.clone());
        }
        env
    }

    /// A new entry of the table of type declarations, and its target.
    pub(crate) fn register_type(
        &mut self,
        flat: &str,
        params: &[TypeParam],
        liftedness: Liftedness,
        def: Option<TypeExp>,
    ) -> TypeTarget {
        let info = Rc::new(TypeInfo {
            flat: flat.to_string(),
            params: params.to_vec(),
            liftedness,
            def,
        });
        self.types.insert(flat.to_string(), info.clone());
        TypeTarget::Flat(info)
    }

    /// Seals the type specified by `spec` in the module at `path`: an
    /// abstract type becomes a new one-constructor sum type with the type's
    /// parameters as payload (see
    /// [`nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR`]); a type the module
    /// type defines (`type u = t -> t`) is redefined from that definition
    /// over the sealed types, and a refined one from its refinement.
    /// Returns the new type's target; its declaration goes to `self.sealed`.
    pub(crate) fn seal_type(&mut self, spec: &TypeSpec, path: &str, kept: &Env) -> TypeTarget {
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
            (Some(r), _) => Some((
                r.params.clone(),
                r.def.clone(),
                crate::sig::overlay_placeholders(&r.scope, kept),
            )),
            (None, Some(def)) => Some((
                spec.params.clone(),
                def.clone(),
                Self::spec_env(&spec.scope, kept),
            )),
            (None, None) => None,
        };
        let abstract_def = match definition {
            None => {
                self.sealed_any = true;
                bind.def = abstract_sum(spec, &flat);
                None
            }
            Some((params, def, env)) => {
                bind.params = params;
                bind.def = def;
                let mut r = Resolver::new(&env);
                r.type_bind(&mut bind);
                self.diags.append(&mut r.diags);
                Some(bind.def.clone())
            }
        };
        let target = self.register_type(&flat, &bind.params, spec.liftedness, abstract_def);
        self.sealed.push(Dec::Type(bind));
        target
    }

    /// Seals the value specified by `spec` in the module at `path`: a
    /// declaration of the specified type over the sealed types (`def M.f#2
    /// 'a (x: M.t#2) : a = ???`, its parameters one per arrow of the type,
    /// as written) goes to `self.sealed`; returns its target.
    pub(crate) fn seal_val(&mut self, spec: &ValSpec, path: &str, kept: &Env) -> ValTarget {
        let flat = self.flat_name(path, &spec.name, false);
        let env = Self::spec_env(&spec.scope, kept);
        let (bind, span) = self.spec_decl(spec, flat.clone(), &env);
        self.generated.push(span);
        self.sealed.push(Dec::Val(bind));
        ValTarget::flat(&flat)
    }

    /// A declaration named `flat` of the type `spec` specifies (resolved
    /// in `env`), with a hole for its body: `def flat 'a (x: T) : R = ???`,
    /// its parameters one per arrow of the type. Also the span it covers
    /// (the specification's, and its type's within the module type).
    fn spec_decl(&mut self, spec: &ValSpec, flat: String, env: &Env) -> (ValBind, Span) {
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
                attrs: Vec::new(),
            };
            params.push(Pat {
                kind: PatKind::Ascribe(Box::new(id), *param),
                span,
                ty: None,
                attrs: Vec::new(),
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
            name: Ident { name: flat, span },
            type_params: spec.type_params.clone(),
            params,
            ret: Some(ty),
            body,
            attrs: vec![],
            span,
            ty: None,
        };
        let mut r = Resolver::new(env);
        r.val_bind(&mut bind);
        self.diags.append(&mut r.diags);
        // The declaration's types keep the spans they have in the module type.
        let ty_span = spec.ty.span();
        let covered = Span {
            start: span.start.min(ty_span.start),
            end: span.end.max(ty_span.end),
            ..span
        };
        (bind, covered)
    }
}

/// Whether `t` names one of the unqualified types `names` outside any
/// function type.
fn names_outside_functions(t: &TypeExp, names: &[&str]) -> bool {
    match t {
        TypeExp::Prim(..) | TypeExp::Arrow(..) => false,
        TypeExp::Named(q, args, _) => {
            (q.quals.is_empty() && names.contains(&q.name.as_str()))
                || args.iter().any(|a| match a {
                    TypeArg::Type(t) => names_outside_functions(t, names),
                    TypeArg::Size(_) => false,
                })
        }
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| names_outside_functions(t, names)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| names_outside_functions(t, names)),
        TypeExp::Array(_, t, _) | TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => {
            names_outside_functions(t, names)
        }
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| names_outside_functions(t, names)),
    }
}

/// The definition of a sealed abstract type: a one-constructor sum whose
/// constructor no program can write, with the type's parameters as payload
/// (a size parameter as an array of units of that size).
fn abstract_sum(spec: &TypeSpec, flat: &str) -> TypeExp {
    let span = spec.span;
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
    TypeExp::Sum(vec![(constructor, payload)], span)
}
