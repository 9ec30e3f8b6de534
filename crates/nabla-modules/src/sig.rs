//! Module type expressions: evaluated to [`Sig`]s, and checked as Futhark
//! checks them (`checkSpecs`, `refineEnv`): specifications in order, each
//! seeing the earlier ones; no name specified twice; type specifications
//! under the rules of type abbreviations; `val` types without anonymous
//! sizes in their parameters; `with` only on an abstract type, with the
//! same parameters.

use crate::env::{
    Env, FunctorSig, ModVal, Refinement, Sig, SigStruct, SpecRef, TypeInfo, TypeSpec, TypeTarget,
    ValSpec, ValTarget,
};
use crate::resolve::{duplicate_type_params, Resolver};
use crate::types::{anonymous_size_outside_results, show_type_param};
use crate::{checks, error, Expander};
use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::rc::Rc;

impl Expander {
    /// Evaluates a module type expression (errors are reported; `None`
    /// when it cannot be evaluated).
    pub(crate) fn eval_sig(&mut self, mt: &ModTypeExp, scope: &Env) -> Option<Rc<Sig>> {
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
            ModTypeExp::Specs(specs, _) => self.eval_specs(specs, scope),
            ModTypeExp::With(base, name, params, def, span) => {
                let s = self.eval_sig(base, scope)?;
                self.check_refinement(params, def, scope);
                let refinement = Rc::new(Refinement {
                    params: params.clone(),
                    def: def.clone(),
                    scope: Rc::new(scope.clone()),
                });
                match refine(&s, &name.quals, &name.name, &refinement) {
                    Ok(refined) => Some(Rc::new(refined)),
                    Err(message) => {
                        self.diags.push(error(*span, message));
                        None
                    }
                }
            }
            ModTypeExp::Arrow(pname, p, r, span) => {
                let psig = self.eval_sig(p, scope)?;
                // The result may name the parameter: check it with the
                // parameter standing for a module of its module type.
                let mut inner = scope.clone();
                if let Some(n) = pname {
                    if let Some(m) = placeholder_module(&psig) {
                        inner.mods.insert(n.name.clone(), m);
                    }
                }
                self.eval_sig(r, &inner)?;
                Some(Rc::new(Sig::Functor(Rc::new(FunctorSig {
                    param: pname.clone(),
                    param_sig: (**p).clone(),
                    result: (**r).clone(),
                    scope: Rc::new(scope.clone()),
                    span: *span,
                }))))
            }
        }
    }

    /// The module type `{ specs }`. Each specification is checked in the
    /// scope of the earlier ones (`local`: their types and modules stand
    /// for specifications, never output); the [`Sig`] keeps the scope the
    /// module type is written in, where its types are resolved once a
    /// module gives them (see [`Expander::ascribe`]).
    fn eval_specs(&mut self, specs: &[Spec], scope: &Env) -> Option<Rc<Sig>> {
        self.diags.extend(checks::duplicate_specifications(specs));
        let mut s = SigStruct::default();
        let spec_scope = Rc::new(scope.clone());
        let mut local = scope.clone();
        for spec in specs {
            match spec {
                Spec::Val(n, tparams, ty, span) => {
                    self.check_val_spec(n, tparams, ty, &local);
                    s.vals.push(ValSpec {
                        name: n.name.clone(),
                        span: *span,
                        type_params: tparams.clone(),
                        ty: ty.clone(),
                        scope: spec_scope.clone(),
                    });
                }
                Spec::Type {
                    name,
                    params,
                    liftedness,
                    def,
                    span,
                } => {
                    self.check_type_spec(name, params, *liftedness, def.as_ref(), *span, &local);
                    local.types.insert(
                        name.name.clone(),
                        placeholder_type(&name.name, params, *liftedness),
                    );
                    s.order.push(SpecRef::Type(s.types.len()));
                    s.types.push(TypeSpec {
                        name: name.name.clone(),
                        span: *span,
                        params: params.clone(),
                        liftedness: *liftedness,
                        def: def.clone(),
                        refinement: None,
                        scope: spec_scope.clone(),
                    });
                }
                Spec::Module(n, mt, span) => {
                    let sub = self.eval_sig(mt, &local)?;
                    if let Some(m) = placeholder_module(&sub) {
                        local.mods.insert(n.name.clone(), m);
                    }
                    s.order.push(SpecRef::Module(s.mods.len()));
                    s.mods.push((n.name.clone(), sub, *span));
                }
                Spec::Include(mt, span) => match &*self.eval_sig(mt, &local)? {
                    Sig::Struct(inc) => {
                        for t in &inc.types {
                            let is_abstract = t.def.is_none() && t.refinement.is_none();
                            if is_abstract && local.types.contains_key(&t.name) {
                                self.warnings.push(Diagnostic::new(
                                    DiagnosticKind::Warning,
                                    *span,
                                    format!("Inclusion shadows type \"{}\".", t.name),
                                ));
                            }
                            local.types.insert(
                                t.name.clone(),
                                placeholder_type(&t.name, &t.params, t.liftedness),
                            );
                        }
                        for (n, sub, _) in &inc.mods {
                            if let Some(m) = placeholder_module(sub) {
                                local.mods.insert(n.clone(), m);
                            }
                        }
                        let (types_before, mods_before) = (s.types.len(), s.mods.len());
                        s.order
                            .extend(inc.types_and_modules_in_order().into_iter().map(
                                |r| match r {
                                    SpecRef::Type(i) => SpecRef::Type(types_before + i),
                                    SpecRef::Module(i) => SpecRef::Module(mods_before + i),
                                },
                            ));
                        s.vals.extend(inc.vals.iter().cloned());
                        s.types.extend(inc.types.iter().cloned());
                        s.mods.extend(inc.mods.iter().cloned());
                    }
                    Sig::Functor(_) => {
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

    /// Checks `val name tparams: ty` in the scope `local` of the earlier
    /// specifications: known types, no array of lifted types, no parameter
    /// bound twice, no anonymous size but in the result of a function.
    fn check_val_spec(&mut self, name: &Ident, tparams: &[TypeParam], ty: &TypeExp, local: &Env) {
        self.diags.extend(duplicate_type_params(tparams));
        let mut ty = ty.clone();
        let mut r = Resolver::new(local);
        r.unknown_types_are_errors = true;
        r.ty_with_params(tparams, &mut ty);
        self.diags.append(&mut r.diags);
        if anonymous_size_outside_results(&ty) {
            self.diags.push(error(
                ty.span(),
                format!(
                    "All function parameters must have non-anonymous sizes.\nHint: add size parameters to \"{}\".",
                    name.name
                ),
            ));
        }
        let mut names: Vec<&Ident> = Vec::new();
        let mut t = &ty;
        while let TypeExp::Arrow(n, _, ret, _) = t {
            if let Some(n) = n {
                if let Some(first) = names.iter().find(|m| m.name == n.name) {
                    self.diags.push(
                        error(
                            n.span,
                            format!(
                                "The parameter \"{}\" is named twice in the type of \"{}\".",
                                n.name, name.name
                            ),
                        )
                        .with_label(first.span, "first named here"),
                    );
                }
                names.push(n);
            }
            t = ret;
        }
    }

    /// Checks `type name params = def` (or an abstract `type name params`)
    /// in the scope `local` of the earlier specifications, under the rules
    /// of type abbreviations.
    fn check_type_spec(
        &mut self,
        name: &Ident,
        params: &[TypeParam],
        liftedness: Liftedness,
        def: Option<&TypeExp>,
        span: Span,
        local: &Env,
    ) {
        let Some(def) = def else {
            self.diags.extend(duplicate_type_params(params));
            return;
        };
        let mut bind = TypeBind {
            name: name.clone(),
            params: params.to_vec(),
            liftedness,
            def: def.clone(),
            span,
        };
        let mut r = Resolver::new(local);
        r.unknown_types_are_errors = true;
        r.check_type_bind(&mut bind);
        self.diags.append(&mut r.diags);
    }

    /// Checks the definition of a refinement `with t params = def`: known
    /// types, and no anonymous sizes.
    fn check_refinement(&mut self, params: &[TypeParam], def: &TypeExp, scope: &Env) {
        self.diags.extend(duplicate_type_params(params));
        let mut def = def.clone();
        let mut r = Resolver::new(scope);
        r.unknown_types_are_errors = true;
        r.ty_with_params(params, &mut def);
        self.diags.append(&mut r.diags);
        if anonymous_size_outside_results(&def) {
            self.diags.push(error(
                def.span(),
                "Anonymous dimensions are not allowed here.",
            ));
        }
    }
}

/// The prefix of the flat names of [`placeholder_type`]s.
const PLACEHOLDER: &str = "<specified ";

/// Whether `t` stands for a specification (see [`placeholder_type`]).
pub(crate) fn is_placeholder(t: &TypeTarget) -> bool {
    matches!(t, TypeTarget::Flat(info) if info.flat.starts_with(PLACEHOLDER))
}

/// `scope` (where a refinement `with t = def` was written) with each type
/// and module that stands for a specification of an enclosing module type
/// replaced by what `real` (the module matched against it) gives that
/// name: inside a module type, a refinement's names of earlier
/// specifications mean the module's types.
pub(crate) fn overlay_placeholders(scope: &Env, real: &Env) -> Env {
    let mut env = scope.clone();
    for (n, t) in &real.types {
        if env.types.get(n).is_some_and(is_placeholder) {
            env.types.insert(n.clone(), t.clone());
        }
    }
    for (n, m) in &real.mods {
        if matches!(env.mods.get(n), Some(ModVal::Struct(e)) if e.placeholder) {
            env.mods.insert(n.clone(), m.clone());
        }
    }
    env
}

/// A type standing for a specification while a module type is checked
/// (its flat name no program can write: it never leaves the check).
fn placeholder_type(name: &str, params: &[TypeParam], liftedness: Liftedness) -> TypeTarget {
    TypeTarget::Flat(Rc::new(TypeInfo {
        flat: format!("{PLACEHOLDER}{name}>"),
        params: params.to_vec(),
        liftedness,
        def: None,
    }))
}

/// A module standing for a module specification while a module type is
/// checked; `None` for a functor's.
pub(crate) fn placeholder_module(sig: &Sig) -> Option<ModVal> {
    let Sig::Struct(s) = sig else { return None };
    let mut env = Env {
        placeholder: true,
        ..Env::default()
    };
    for t in &s.types {
        env.types.insert(
            t.name.clone(),
            placeholder_type(&t.name, &t.params, t.liftedness),
        );
    }
    for (n, sub, _) in &s.mods {
        if let Some(m) = placeholder_module(sub) {
            env.mods.insert(n.clone(), m);
        }
    }
    for v in &s.vals {
        env.vals.insert(
            v.name.clone(),
            ValTarget::flat(&format!("{PLACEHOLDER}{}>", v.name)),
        );
    }
    Some(ModVal::Struct(Rc::new(env)))
}

/// The module type `s` with its abstract type `quals.name` (in the module
/// specification `quals`) made transparent, as `s with quals.name = …`
/// does; the error message if `s` has no such abstract type or its
/// parameters differ from the refinement's.
fn refine(s: &Sig, quals: &[Name], name: &str, refinement: &Rc<Refinement>) -> Result<Sig, String> {
    let full = || {
        let mut q = quals.join(".");
        if !q.is_empty() {
            q.push('.');
        }
        q.push_str(name);
        q
    };
    let not_abstract = || format!("\"{}\" is not an abstract type in the module type.", full());
    let Sig::Struct(st) = s else {
        return Err(not_abstract());
    };
    let mut st = st.clone();
    match quals.split_first() {
        None => {
            // The type the name means: the last specification of it (a
            // later `include` shadows an earlier one); if that only
            // abbreviates an abstract type of the module type, that type.
            let last = st
                .types
                .iter()
                .rposition(|t| t.name == name)
                .ok_or_else(not_abstract)?;
            let alias_of = |t: &TypeSpec| match (&t.refinement, &t.def) {
                (Some(r), _) => bare_name(&r.def),
                (None, Some(d)) => bare_name(d),
                (None, None) => None,
            };
            let is_abstract = |t: &TypeSpec| t.def.is_none() && t.refinement.is_none();
            let index = if is_abstract(&st.types[last]) {
                last
            } else {
                let target = alias_of(&st.types[last]).ok_or_else(not_abstract)?;
                st.types[..last]
                    .iter()
                    .rposition(|t| t.name == target && is_abstract(t))
                    .ok_or_else(not_abstract)?
            };
            let spec = &mut st.types[index];
            if !params_refine(&spec.params, &refinement.params) {
                return Err(format!(
                    "Cannot refine a type having {} with a type having {}.",
                    params_text(&refinement.params),
                    params_text(&spec.params)
                ));
            }
            spec.refinement = Some(refinement.clone());
        }
        Some((m, rest)) => {
            let entry = st
                .mods
                .iter_mut()
                .find(|(n, _, _)| n == m)
                .ok_or_else(not_abstract)?;
            entry.1 = Rc::new(refine(&entry.1, rest, name, refinement).map_err(|e| {
                if e.ends_with("is not an abstract type in the module type.") {
                    not_abstract()
                } else {
                    e
                }
            })?);
        }
    }
    Ok(Sig::Struct(st))
}

/// The name `t` is, if it is an unqualified type name without arguments.
fn bare_name(t: &TypeExp) -> Option<String> {
    match t {
        TypeExp::Named(q, args, _) if q.quals.is_empty() && args.is_empty() => Some(q.name.clone()),
        _ => None,
    }
}

/// Whether a refinement with parameters `new` may refine an abstract type
/// with parameters `old`: as many, of the same kinds, each type parameter
/// at least as lifted as the specification's.
fn params_refine(old: &[TypeParam], new: &[TypeParam]) -> bool {
    old.len() == new.len()
        && old.iter().zip(new).all(|(o, n)| match (o, n) {
            (TypeParam::Size(_), TypeParam::Size(_)) => true,
            (TypeParam::Type(_, lo), TypeParam::Type(_, ln)) => lo <= ln,
            _ => false,
        })
}

fn params_text(ps: &[TypeParam]) -> String {
    if ps.is_empty() {
        "no type parameters".to_string()
    } else {
        format!(
            "type parameters {}",
            ps.iter().map(show_type_param).collect::<Vec<_>>().join(" ")
        )
    }
}
