//! The checker proper: environments, declarations, expressions and patterns.
//!
//! Follows the Futhark language reference: top-level definitions are checked
//! in order and generalised; local functions are monomorphic unless they have
//! explicit type parameters; lambdas are monomorphic; overloaded literals and
//! operators are defaulted at the end of each top-level definition.

use crate::consume;
use crate::recursion;
use crate::rules;
use crate::sig::{self, is_operator, mk_array, Class, Scheme};
use crate::unify::{
    collect_size_names, collect_vars, erase_sizes, is_existential, parameter_mentions_size, subst,
    Constraint, Tcx, EXISTENTIAL,
};
use nabla_prim::PrimType;
use nabla_syntax::ast::*;
use nabla_syntax::size_expr::{size_of_expr, strip_parens};
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

type R<T> = Result<T, Diagnostic>;

/// A resolved name: its resolution, its (instantiated) type, and the
/// instantiation of its type parameters.
type Resolved = (Res, Type, Vec<(Name, Type)>);

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, msg)
}

/// Maximum expression nesting the checker accepts.
const MAX_NESTING: usize = 10000;

/// The most parts (type constructors) the type of a function application
/// may have: types that grow exponentially with the nesting of a program
/// are an error instead of exhausting memory.
const MAX_TYPE_PARTS: usize = 1_000_000;

/// The most dimensions an array type may have (every type abbreviation is
/// stored expanded, so chains of abbreviations of ever higher rank would
/// take memory quadratic in their length).
const MAX_RANK: usize = 1000;

#[derive(Clone)]
enum GEntry {
    Def(NodeId, Rc<Scheme>),
    Intr(String, Rc<Scheme>),
}

#[derive(Clone)]
enum LEntry {
    Var(Type),
    Size,
    Poly(Rc<Scheme>),
    Intr(String, Rc<Scheme>),
    /// The top-level function being defined, in scope in its own body (a
    /// recursive use): its type so far, with only its sizes instantiated
    /// at each use.
    SelfRef(NodeId, Rc<Scheme>),
}

/// A type abbreviation: its parameters and its definition (with
/// `Type::Param` / `Size::Var` for the parameters).
struct Abbrev {
    params: Vec<TypeParam>,
    ty: Type,
    /// As declared: `type`, `type~` or `type^`.
    liftedness: Liftedness,
}

enum Found {
    Local(Type),
    LocalPoly(Rc<Scheme>),
    Size,
    Global(NodeId, Rc<Scheme>),
    Intr(String, Rc<Scheme>),
}

pub(crate) struct Checker {
    tcx: Tcx,
    /// The sizes bound by `let [n]` in the definition being checked, with
    /// the flexible size each was matched as (see [`Checker::close_def`]).
    size_binders: Vec<(Name, Size, Span)>,
    /// While a loop parameter's pattern is checked: its anonymous sizes
    /// (`loop (xs: []i32) = …`) are inferred like those of a parameter
    /// without a type (Futhark's rule), not left unknown.
    flexible_anonymous: bool,
    /// While an argument is applied: the span of the whole application,
    /// where the unknown sizes of an existential result are made.
    application_span: Option<Span>,
    /// Warnings found so far (Futhark's: comparing arrays with `==`, a
    /// size expression with a binding, a uniqueness annotation on a
    /// non-array, a `#[unroll]` that cannot unroll).
    pub warnings: Vec<Diagnostic>,
    /// The top-level definitions whose functions' results may alias
    /// top-level arrays (see [`crate::CheckOptions`]).
    pub global_alias_exempt: std::collections::HashSet<String>,
    intrinsics: HashMap<String, Rc<Scheme>>,
    env: HashMap<Name, GEntry>,
    exported: HashMap<Name, GEntry>,
    types: HashMap<Name, Rc<Abbrev>>,
    exported_types: HashMap<Name, Rc<Abbrev>>,
    locals: Vec<(Name, LEntry)>,
    tparams: Vec<Name>,
    /// While checking parameter patterns: size names bound implicitly.
    implicit_sizes: Option<Vec<Name>>,
    /// How many function types the type being resolved is inside: an
    /// anonymous size `[]` of a parameter's type outside any function type
    /// is a size parameter of its own (Futhark's rule).
    in_arrow: u32,
    /// Whether the type being resolved is a declared result type, and how
    /// many of its anonymous sizes were named so far: `[]` there is an
    /// existential size, named `∃k` (see [`is_existential`]).
    in_ret: Option<usize>,

    /// Sizes bound by an enclosing `?[n].` in a type expression.
    exist: Vec<Name>,
    depth: usize,
    /// Uniqueness information on the checked top-level definitions, for the
    /// consumption check (`crate::consume`).
    globals: HashMap<NodeId, consume::GlobalInfo>,
    /// The constants and local functions whose bodies are being checked,
    /// innermost last (a top-level constant, then local `let f … =`): an
    /// unknown name that is one of them is a recursive use, which Futhark
    /// does not allow (only top-level functions may recurse).
    defining: Vec<Name>,
    /// For each local, the depth of the name it shadows (restored when it
    /// goes out of scope).
    local_prev: Vec<Option<u32>>,
    /// The same for `tparams`.
    tparam_prev: Vec<Option<u32>>,
    /// The type expected of the lambda about to be inferred (an argument
    /// whose parameter type is known), see [`Checker::infer_apply`].
    lambda_expect: Option<Type>,
    /// The main file's `def main` that is an entry point because no entry
    /// point is named `main` (as the elaborator chooses it).
    main_entry: Option<NodeId>,
    /// The top-level function being checked and the instantiation its
    /// recursive uses get once its type is generalised (each of its type
    /// parameters for itself: recursion is monomorphic in types).
    self_inst: Option<(NodeId, Vec<(Name, Type)>)>,
}

/// The name a definition is referred to by in its own body: the module pass
/// gives members flat names (`M.N.f`, `f#2` for a redefinition), the body
/// still says `f`.
pub(crate) fn definition_base_name(flat: &str) -> &str {
    let last = flat.rsplit('.').next().unwrap_or(flat);
    last.split('#').next().unwrap_or(last)
}

/// The instantiation of a recursive use of a definition with the type
/// parameters `tps` and the generalised type `ty`: each of its type
/// parameters (declared, or from generalisation) for itself.
fn self_instantiation(tps: &[TypeParam], ty: &Type) -> Vec<(Name, Type)> {
    let mut names: Vec<Name> = tps
        .iter()
        .filter_map(|tp| match tp {
            TypeParam::Type(i, _) => Some(i.name.clone()),
            TypeParam::Size(_) => None,
        })
        .collect();
    for (n, _) in Scheme::from_type(ty.clone(), &[]).tparams {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
        .into_iter()
        .map(|n| (n.clone(), Type::Param(n)))
        .collect()
}

/// The type variables of `expected` (a callee's parameter type) at the
/// places where `actual` (an argument's type) has a part whose type
/// mentions the size `x`: what unifying them would make depend on `x`.
fn captured_vars(expected: &Type, actual: &Type, x: &str, out: &mut Vec<u32>) {
    match (expected, actual) {
        (Type::Var(v), t) if mentions_size(t, x) => out.push(*v),
        (
            Type::Array {
                elem: e1,
                shape: s1,
                ..
            },
            Type::Array {
                elem: e2,
                shape: s2,
                unique,
            },
        ) => {
            if s1.len() < s2.len() {
                let row = mk_array((**e2).clone(), s2[s1.len()..].to_vec(), *unique);
                captured_vars(e1, &row, x, out);
            } else if s1.len() == s2.len() {
                captured_vars(e1, e2, x, out);
            }
        }
        (Type::Record(f1), Type::Record(f2)) => {
            for ((n1, t1), (n2, t2)) in f1.iter().zip(f2) {
                if n1 == n2 {
                    captured_vars(t1, t2, x, out);
                }
            }
        }
        (Type::Sum(c1), Type::Sum(c2)) => {
            for ((n1, t1), (n2, t2)) in c1.iter().zip(c2) {
                if n1 == n2 {
                    for (a, b) in t1.iter().zip(t2) {
                        captured_vars(a, b, x, out);
                    }
                }
            }
        }
        (
            Type::Arrow {
                param: p1, ret: r1, ..
            },
            Type::Arrow {
                param: p2, ret: r2, ..
            },
        ) => {
            captured_vars(p1, p2, x, out);
            captured_vars(r1, r2, x, out);
        }
        _ => {}
    }
}

/// Whether the type variable `v` occurs in `t` as (part of) the element
/// type of an array (`inside`: `t` itself is such a part).
fn var_in_array(t: &Type, v: u32, inside: bool) -> bool {
    match t {
        Type::Var(w) => inside && *w == v,
        Type::Array { elem, .. } => var_in_array(elem, v, true),
        Type::Record(fs) => fs.iter().any(|(_, t)| var_in_array(t, v, inside)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| var_in_array(t, v, inside)),
        Type::Arrow { param, ret, .. } => {
            var_in_array(param, v, inside) || var_in_array(ret, v, inside)
        }
        Type::Acc { arr, .. } => var_in_array(arr, v, true),
        Type::Prim(_) | Type::Param(_) => false,
    }
}

fn mentions_size(t: &Type, n: &str) -> bool {
    match t {
        Type::Array { elem, shape, .. } => {
            shape.iter().any(|s| s.mentions(n)) || mentions_size(elem, n)
        }
        Type::Record(fs) => fs.iter().any(|(_, t)| mentions_size(t, n)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| mentions_size(t, n)),
        Type::Arrow { param, ret, .. } => mentions_size(param, n) || mentions_size(ret, n),
        _ => false,
    }
}

fn pat_name(p: &Pat) -> Option<&str> {
    match &p.kind {
        PatKind::Id(i) => Some(&i.name),
        PatKind::Ascribe(p, _) => pat_name(p),
        _ => None,
    }
}

/// The main file's last top-level `def main`, an entry point when no
/// `entry` is named `main` (the elaborator's choice, see `nabla-elab`).
fn main_def_entry(main: &Program) -> Option<NodeId> {
    let mut found = None;
    for d in &main.decs {
        if let Dec::Val(vb) = d {
            if vb.name.name == "main" {
                if vb.entry {
                    return None;
                }
                found = Some(vb.id);
            }
        }
    }
    found
}

/// The classes of a definition's declared type parameters: a lifted one
/// (`'^a`) may be instantiated with a function type, the others (`'a`,
/// `'~a`) may not (Futhark: "found to be functional").
fn param_classes(tps: &[TypeParam]) -> Vec<(&str, Class)> {
    tps.iter()
        .filter_map(|tp| match tp {
            TypeParam::Type(i, l) => Some((
                i.name.as_str(),
                if *l == Liftedness::Lifted {
                    Class::Any
                } else {
                    Class::Unlifted
                },
            )),
            TypeParam::Size(_) => None,
        })
        .collect()
}

fn i64t() -> Type {
    Type::Prim(PrimType::I64)
}

fn boolt() -> Type {
    Type::Prim(PrimType::Bool)
}

fn arrow(p: Type, r: Type) -> Type {
    Type::Arrow {
        param_name: None,
        param: Box::new(p),
        ret: Box::new(r),
    }
}

fn lit_range_ok(v: i128, p: PrimType) -> bool {
    let bits = p.bits();
    if p.is_signed_int() {
        v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1))
    } else if p.is_int() {
        v >= 0 && v < (1i128 << bits)
    } else {
        float_range_ok(v as f64, p)
    }
}

/// Futhark's error for an integer literal outside its type's range.
fn literal_out_of_bounds(v: i128, p: PrimType, span: Span) -> Diagnostic {
    err(
        span,
        format!("Literal {v} out of bounds for inferred type {p}."),
    )
}

/// Whether a numeric literal of value `v` is finite at the float type `p`
/// (Futhark rejects a literal that would become an infinity).
fn float_range_ok(v: f64, p: PrimType) -> bool {
    match p {
        PrimType::F16 => v.abs() < 65520.0,
        PrimType::F32 => !(v as f32).is_infinite(),
        PrimType::F64 => !v.is_infinite(),
        _ => true,
    }
}

impl Checker {
    pub fn new() -> Checker {
        let mut intrinsics = HashMap::new();
        let mut env = HashMap::new();
        for (n, s) in sig::intrinsic_schemes() {
            let s = Rc::new(s);
            if !n.contains('.') || n.starts_with('.') {
                env.insert(n.clone(), GEntry::Intr(n.clone(), s.clone()));
            }
            intrinsics.insert(n, s);
        }
        // `f64.+` etc. contain a dot after a module name; bare operators like
        // `..` do not exist, so the test above is adequate.
        Checker {
            tcx: Tcx::default(),
            application_span: None,
            size_binders: Vec::new(),
            flexible_anonymous: false,
            intrinsics,
            exported: env.clone(),
            env,
            types: HashMap::new(),
            exported_types: HashMap::new(),
            locals: Vec::new(),
            tparams: Vec::new(),
            implicit_sizes: None,
            in_arrow: 0,
            in_ret: None,
            exist: Vec::new(),
            depth: 0,
            globals: HashMap::new(),
            defining: Vec::new(),
            lambda_expect: None,
            local_prev: Vec::new(),
            tparam_prev: Vec::new(),
            main_entry: None,
            self_inst: None,
            warnings: Vec::new(),
            global_alias_exempt: Default::default(),
        }
    }

    fn warn(&mut self, span: Span, message: impl Into<String>) {
        self.warnings
            .push(Diagnostic::new(DiagnosticKind::Warning, span, message));
    }

    // ---------------------------------------------------------------- program

    pub fn check_files(&mut self, files: &mut [Program]) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        self.main_entry = files.last().and_then(main_def_entry);
        for f in files.iter_mut() {
            self.env = self.exported.clone();
            self.types = self.exported_types.clone();
            for d in f.decs.iter_mut() {
                self.check_dec(d, false, &mut diags);
            }
        }
        diags
    }

    fn insert_val(&mut self, name: &str, e: GEntry, local: bool) {
        self.env.insert(name.to_string(), e.clone());
        if !local {
            self.exported.insert(name.to_string(), e);
        }
    }

    fn check_dec(&mut self, d: &mut Dec, local: bool, diags: &mut Vec<Diagnostic>) {
        match d {
            Dec::Val(vb) => {
                let r = self.check_valbind(vb);
                self.truncate_locals(0);
                self.truncate_tparams(0);
                self.tcx.lifted_params.clear();
                self.implicit_sizes = None;
                self.exist.clear();
                self.depth = 0;
                let scheme = match r {
                    Ok(s) => {
                        // Types are known: check the static rules and the
                        // consumption rules too.
                        let global_aliases = !self.global_alias_exempt.contains(&vb.name.name);
                        let (sig, r) = consume::check_valbind(
                            vb,
                            &self.globals,
                            &self.intrinsics,
                            global_aliases,
                        );
                        let entry = vb.entry || self.main_entry == Some(vb.id);
                        // Consumption before the static rules, as Futhark.
                        if let Err(e) = r
                            .and_then(|()| rules::check_valbind(vb, entry))
                            .and_then(|()| recursion::check_valbind(vb))
                        {
                            diags.push(e);
                        }
                        self.globals.insert(
                            vb.id,
                            consume::GlobalInfo {
                                name: vb.name.name.clone(),
                                constant: vb.params.is_empty() && vb.type_params.is_empty(),
                                sig: Rc::new(sig),
                                ty: vb.ty.clone(),
                            },
                        );
                        s
                    }
                    Err(e) => {
                        diags.push(e);
                        Rc::new(Scheme {
                            tparams: vec![("'err".into(), Class::Any)],
                            sparams: vec![],
                            ty: Type::Param("'err".into()),
                        })
                    }
                };
                self.insert_val(&vb.name.name.clone(), GEntry::Def(vb.id, scheme), local);
            }
            Dec::Type(tb) => match self.check_typebind(tb) {
                Ok(a) => {
                    let a = Rc::new(a);
                    self.types.insert(tb.name.name.clone(), a.clone());
                    if !local {
                        self.exported_types.insert(tb.name.name.clone(), a);
                    }
                }
                Err(e) => diags.push(e),
            },
            Dec::Open(q, span) => {
                let m = q.to_string();
                match sig::module_member_names(&m) {
                    Some(names) => {
                        for n in names {
                            if is_operator(&n) {
                                continue;
                            }
                            let canon = format!("{m}.{n}");
                            if let Some(s) = self.intrinsics.get(&canon).cloned() {
                                self.insert_val(&n, GEntry::Intr(canon, s), local);
                            }
                        }
                    }
                    None => diags.push(err(*span, format!("unknown module `{m}`"))),
                }
            }
            Dec::Import(..) => {}
            Dec::Local(d, _) => self.check_dec(d, true, diags),
            // Module types define no values (the prelude declares some).
            Dec::ModType(_) => {}
            // The module pass (`nabla-modules`) expands these before type checking.
            Dec::OpenModule(_, span)
            | Dec::Include(_, span)
            | Dec::Module(ModBind { span, .. }) => diags.push(err(
                *span,
                "module declarations must be expanded by the module pass before type checking",
            )),
        }
    }

    fn check_typebind(&mut self, tb: &mut TypeBind) -> R<Abbrev> {
        rules::check_typebind(tb)?;
        self.truncate_tparams(0);
        self.tcx.lifted_params.clear();
        self.truncate_locals(0);
        self.bind_type_params(&tb.params);
        // Its existential and anonymous sizes are named (`∃k`), so that a
        // use as a result type shares them where the definition does.
        let saved = self.in_ret.replace(0);
        let r = self.resolve_type(&mut tb.def);
        self.in_ret = saved;
        let ty = r.map(|ty| self.tcx.finalize(&ty));
        let contained = match &ty {
            Ok(ty) => self.tcx.liftedness(ty),
            Err(_) => Liftedness::Unlifted,
        };
        self.truncate_tparams(0);
        self.tcx.lifted_params.clear();
        self.truncate_locals(0);
        let ty = ty?;
        let abstract_constr = match &ty {
            Type::Sum(cs) => match cs.as_slice() {
                [(c, _)] if c.starts_with(nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR) => {
                    Some(c.clone())
                }
                _ => None,
            },
            _ => None,
        };
        match abstract_constr {
            // An abstract type of the module pass's sealed check: its
            // declared liftedness is all that is known of it.
            Some(c) => {
                if tb.liftedness != Liftedness::Unlifted {
                    self.tcx.lifted_abstract.insert(c, tb.liftedness);
                }
            }
            // Futhark: an abbreviation may be no more lifted than declared.
            None => {
                let what = match (tb.liftedness, contained) {
                    (Liftedness::Unlifted, Liftedness::Lifted) => {
                        Some("Non-lifted type abbreviations may not contain functions.")
                    }
                    (Liftedness::Unlifted, Liftedness::SizeLifted) => {
                        Some("Non-lifted type abbreviations may not contain size-lifted types.")
                    }
                    (Liftedness::SizeLifted, Liftedness::Lifted) => {
                        Some("Size-lifted type abbreviations may not contain functions.")
                    }
                    _ => None,
                };
                if let Some(what) = what {
                    return Err(err(
                        tb.def.span(),
                        format!(
                            "{what} The definition of `{}` is `{}`; declare it `type^` if it may contain a function, `type~` if it may contain an array of unknown size",
                            tb.name.name,
                            self.show(&ty)
                        ),
                    ));
                }
            }
        }
        Ok(Abbrev {
            params: tb.params.clone(),
            ty,
            liftedness: tb.liftedness,
        })
    }

    fn check_valbind(&mut self, vb: &mut ValBind) -> R<Rc<Scheme>> {
        let mark = self.tcx.vars.len();
        self.size_binders.clear();
        self.tcx.existential_sizes.clear();
        let unknowns_before = self.tcx.unknown_order.len();
        self.tcx.level = 0;
        self.tcx.constr_sites.clear();
        self.truncate_locals(0);
        self.truncate_tparams(0);
        self.tcx.lifted_params.clear();
        self.bind_type_params(&vb.type_params);
        let (ptys, ret_t) = self.check_params(&mut vb.params, &mut vb.ret)?;
        // A function (a definition with parameters) is in scope in its own
        // body, after its parameters, as in Futhark; a constant is not.
        let self_ret = if vb.params.is_empty() {
            self.defining = vec![vb.name.name.clone()];
            None
        } else {
            Some(self.bind_self(vb, &ptys, &ret_t))
        };
        let bt = self.infer(&mut vb.body);
        self.defining.clear();
        let bt = bt?;
        let result = match (ret_t, self_ret) {
            (None, Some(rt)) => {
                self.unify_at(
                    &rt,
                    &bt,
                    vb.body.span,
                    "the body's type differs from the result type its recursive uses give the function",
                )?;
                bt
            }
            (declared, _) => self.declared_or(
                declared,
                bt,
                vb.body.span,
                "Function body does not have expected type",
            )?,
        };
        let ty = self.arrow_chain(&vb.params, ptys, result);
        let (ty, unlifted) = self.close_def(mark, &ty)?;
        self.self_inst = Some((vb.id, self_instantiation(&vb.type_params, &ty)));
        let r = (|| {
            for p in vb.params.iter_mut() {
                self.fin_pat(p)?;
            }
            self.fin_expr(&mut vb.body)
        })();
        self.self_inst = None;
        r?;
        let made: HashMap<Name, Span> = self.tcx.unknown_order[unknowns_before..]
            .iter()
            .filter_map(|n| Some((n.clone(), self.tcx.unknowns.get(n)?.span)))
            .collect();
        crate::causality::check(&vb.params, &vb.body, &made)?;
        vb.ty = Some(ty.clone());
        let mut classes = param_classes(&vb.type_params);
        classes.extend(unlifted.iter().map(|n| (n.as_str(), Class::Unlifted)));
        Ok(Rc::new(Scheme::from_type(ty, &classes)))
    }

    /// Puts the function `vb` in scope in its own body (after its
    /// parameters) for recursive uses, with the parameter types `ptys` and
    /// the declared result type, else a fresh variable; returns the result
    /// type its uses see. Each use instantiates the function's sizes afresh
    /// (`sum (drop 1 xs)` in `def sum [n] (xs: [n]i32)`), but not its type
    /// parameters, nor the types still being inferred: the recursion is
    /// monomorphic in types.
    fn bind_self(&mut self, vb: &ValBind, ptys: &[Type], ret_t: &Option<Type>) -> Type {
        let rt = match ret_t {
            Some(t) => t.clone(),
            None => self.tcx.fresh(vb.body.span),
        };
        let ty = self.arrow_chain(&vb.params, ptys.to_vec(), rt.clone());
        let mut scheme = Scheme::from_type(ty, &[]);
        scheme.tparams.clear();
        let name = definition_base_name(&vb.name.name).to_string();
        // A parameter of the same name takes precedence (`def f (f: i32) =
        // f + 2`): the function is then not in scope in its body.
        let mut names = Vec::new();
        for p in &vb.params {
            crate::recursion::pat_names(p, &mut names);
        }
        if !names.contains(&name) {
            self.push_local(name, LEntry::SelfRef(vb.id, Rc::new(scheme)));
        }
        rt
    }

    /// Checks parameter patterns (binding implicit sizes and the parameters'
    /// variables in `locals`) and the declared return type.
    fn check_params(
        &mut self,
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
    ) -> R<(Vec<Type>, Option<Type>)> {
        self.implicit_sizes = Some(Vec::new());
        let base = self.tcx.level;
        let mut ptys = Vec::new();
        // A parameter's variables are in scope in the types of the
        // parameters after it, so that sizes may be expressions of earlier
        // value parameters (`(n: i64) (m: i64) (xs: [n*m]t)`), as in
        // Futhark. `Size` entries pushed for implicit sizes come first.
        let mark = self.locals.len();
        // One list for all parameters, so that a name bound twice is found.
        let mut binds = Vec::new();
        // Each parameter is one scope deeper than the one before it, so that
        // an earlier parameter's size cannot be inferred to be a later one
        // (Futhark's scope-violation).
        let mut levels = Vec::new();
        let r = (|| {
            for p in params.iter_mut() {
                // The sizes the parameter's type infers are made outside
                // the parameter's own scope: they cannot be the parameter
                // (`def main xs = zip xs (iota xs[0])`).
                let before = binds.len();
                ptys.push(self.infer_pat(p, &mut binds)?);
                self.tcx.level += 1;
                for (n, t, _) in &binds[before..] {
                    self.push_local(n.clone(), LEntry::Var(t.clone()));
                    levels.push(self.tcx.level);
                }
            }
            Ok::<(), Diagnostic>(())
        })();
        self.truncate_locals(mark);
        let implicit = self.implicit_sizes.take().unwrap_or_default();
        r?;
        // A size named in a parameter's type that the same parameter binds
        // as a value (`(n: f64, a: [n]i32)`) is not that value: the value is
        // not in scope in its own parameter.
        if let Some((n, t, sp)) = binds.iter().find(|(n, _, _)| implicit.contains(n)) {
            return Err(err(
                *sp,
                format!(
                    "\"{n}\" is used as a size in this parameter's type, but it is bound here as a value of type `{}`, which is not in scope in its own parameter; rename one of them",
                    self.show(t)
                ),
            ));
        }
        // Names bound inside a tuple or record parameter (`(x: i64, _:
        // bool)`) are values of the body, not sizes of the result type.
        let whole: Vec<&str> = params.iter().filter_map(pat_name).collect();
        let nested: Vec<(Name, Span)> = binds
            .iter()
            .filter(|(n, _, _)| !whole.contains(&n.as_str()))
            .map(|(n, _, sp)| (n.clone(), *sp))
            .collect();
        let level = self.tcx.level;
        // Sizes named in the parameters without a declaration are size
        // parameters (as deep as the declared ones).
        self.tcx.level = base;
        for n in implicit {
            self.push_local(n, LEntry::Size);
        }
        for ((n, t, _), l) in binds.into_iter().zip(levels) {
            self.tcx.level = l;
            self.push_local(n, LEntry::Var(t));
        }
        self.tcx.level = level;
        let ret_t = match ret {
            Some(te) => {
                let saved = self.in_ret.replace(0);
                let t = self.resolve_type(te);
                self.in_ret = saved;
                let t = t?;
                let z = self.tcx.zonk(&t);
                if let Some((n, sp)) = nested.iter().find(|(n, _)| mentions_size(&z, n)) {
                    return Err(err(
                        te.span(),
                        format!(
                            "The return type uses \"{n}\" as a size, but \"{n}\" is bound inside a tuple or record parameter; only a parameter of its own, such as `({n}: i64)`, can be a size of the result"
                        ),
                    )
                    .with_label(*sp, format!("\"{n}\" is bound here")));
                }
                Some(t)
            }
            None => None,
        };
        Ok((ptys, ret_t))
    }

    fn arrow_chain(&mut self, params: &[Pat], ptys: Vec<Type>, result: Type) -> Type {
        // Whether a parameter's name is a size in the rest of the type is
        // asked of the zonked pieces of that rest (each zonked once), not
        // of the whole rest zonked again for every parameter (quadratic).
        let mut rest: Vec<Type> = vec![self.tcx.zonk(&result)];
        let mut ty = result;
        for (p, pt) in params.iter().zip(ptys).rev() {
            let param_name = pat_name(p)
                .filter(|n| rest.iter().any(|z| mentions_size(z, n)))
                .map(|n| n.to_string());
            rest.push(self.tcx.zonk(&pt));
            ty = Type::Arrow {
                param_name,
                param: Box::new(pt),
                ret: Box::new(ty),
            };
        }
        ty
    }

    /// End of a top-level definition: rejects sum types known only by some
    /// of their constructors (ambiguous, as in Futhark), defaults overloaded
    /// variables, generalises the remaining free variables of `ty`, and binds
    /// every other leftover variable (to `()`). Returns the final type and
    /// the generalised type parameters that may not be functions (their
    /// variables were unlifted).
    fn close_def(&mut self, mark: usize, ty: &Type) -> R<(Type, Vec<Name>)> {
        let n = self.tcx.vars.len();
        // Futhark (error index "ambiguous-type"): a sum type known only by
        // the constructors used is ambiguous, as other constructors could
        // exist; a type annotation must give the whole type.
        for v in mark..n {
            if self.tcx.vars[v].binding.is_none() {
                if let Constraint::Constrs(cs) = &self.tcx.vars[v].constraint {
                    let t = Type::Sum(cs.iter().map(|(c, ts)| (c.clone(), ts.clone())).collect());
                    let shown = self.show(&t);
                    // At the first use of one of its constructors, where
                    // there is one (the variable may stand for a larger
                    // expression, the body of a function).
                    let at = self
                        .tcx
                        .constr_sites
                        .iter()
                        .find(|(c, _)| cs.contains_key(c))
                        .map_or(self.tcx.vars[v].span, |(_, s)| *s);
                    return Err(err(
                        at,
                        format!(
                            "Type is ambiguous: a sum type with the constructors {shown}, but it may have others; add a type annotation that gives the whole sum type (on a parameter, the return type, or a `let`)"
                        ),
                    ));
                }
            }
        }
        // A numeric type left open in the definition's own type is
        // defaulted with a warning (Futhark: only for a top-level
        // definition's type, not for its local values).
        let mut in_type = Vec::new();
        collect_vars(&self.tcx.zonk(ty), &mut in_type);
        for v in mark..n {
            if self.tcx.vars[v].binding.is_none() {
                match &self.tcx.vars[v].constraint {
                    Constraint::Prims { default, .. } => {
                        let default = *default;
                        self.tcx.vars[v].binding = Some(Type::Prim(default));
                        if in_type.contains(&(v as u32)) {
                            let span = self.tcx.vars[v].span;
                            self.warn(span, format!("Defaulting ambiguous type to {default}."));
                        }
                    }
                    Constraint::Eq => {
                        return Err(err(
                            self.tcx.vars[v].span,
                            "Type is ambiguous: this value is compared with == (or !=), but its type is not known here, and a type parameter does not support equality; add a type annotation",
                        ));
                    }
                    Constraint::Fields(fs) => {
                        let f = fs.keys().next().cloned().unwrap_or_default();
                        return Err(err(
                            self.tcx.vars[v].span,
                            format!("the record type whose field `{f}` is used here is ambiguous; add a type annotation"),
                        ));
                    }
                    _ => {}
                }
            }
        }
        let z = self.tcx.zonk(ty);
        let mut fv = Vec::new();
        collect_vars(&z, &mut fv);
        let mut unlifted = Vec::new();
        for (i, v) in fv.into_iter().enumerate() {
            let name = format!("'t{i}");
            if self.tcx.vars[v as usize].unlifted {
                unlifted.push(name.clone());
            }
            self.tcx.vars[v as usize].binding = Some(Type::Param(name));
        }
        self.generalise_sizes(&z);
        // Futhark's "ambiguous-size": a size bound by `let [n]` that the
        // value does not decide.
        for (name, s, span) in std::mem::take(&mut self.size_binders) {
            let r = self.tcx.resolve_size(&s);
            if matches!(&r, Size::Var(v) if v.starts_with('?')) {
                return Err(err(
                    span,
                    format!(
                        "Ambiguous size \"{name}\". The bound value's type does not decide it; give the value a type with this size (an ascription or a coercion with `:>`)"
                    ),
                ));
            }
        }
        for v in mark..n {
            if self.tcx.vars[v].binding.is_none() {
                self.tcx.vars[v].binding = Some(Type::unit());
            }
        }
        Ok((self.final_def_ty(ty), unlifted))
    }

    /// The sizes of a definition's type still to be inferred become size
    /// parameters of their own (as Futhark generalises them): named with a
    /// subscript no program can write, `n₀`, so that each use instantiates
    /// them afresh (`def vecadd = map2 (f64.+)` is `[n₀]f64 -> [n₀]f64 ->
    /// *[n₀]f64`).
    fn generalise_sizes(&mut self, t: &Type) {
        const SUB: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
        let mut names = Vec::new();
        collect_size_names(&self.tcx.zonk(t), &mut names);
        let mut k = 0;
        for n in names {
            let Some(i) = n.strip_prefix('?').and_then(|i| i.parse::<usize>().ok()) else {
                continue;
            };
            let Some(v) = self.tcx.sizes.get(i) else {
                continue;
            };
            if v.binding.is_some() {
                continue;
            }
            let name: String = "n"
                .chars()
                .chain(
                    k.to_string()
                        .chars()
                        .map(|c| SUB[c as usize - '0' as usize]),
                )
                .collect();
            k += 1;
            self.tcx.sizes[i].binding = Some(Size::Var(name));
        }
    }

    /// The final type of an expression or a local binding (unknown sizes
    /// keep their names).
    fn final_ty(&self, t: &Type) -> Type {
        unit_for_vars(self.tcx.finalize_keeping_unknowns(t))
    }

    /// The final type of a definition: its unknown sizes are existential
    /// (`Size::Any`), as no caller can name them.
    fn final_def_ty(&self, t: &Type) -> Type {
        unit_for_vars(self.tcx.finalize(t))
    }

    // ------------------------------------------------------------ finalising

    fn fin_pat(&mut self, p: &mut Pat) -> R<()> {
        if let Some(t) = &p.ty {
            p.ty = Some(self.final_ty(t));
        }
        match &mut p.kind {
            PatKind::Tuple(ps) => ps.iter_mut().try_for_each(|p| self.fin_pat(p)),
            PatKind::Record(fs) => fs.iter_mut().try_for_each(|(_, p)| self.fin_pat(p)),
            PatKind::Ascribe(p, _) => self.fin_pat(p),
            PatKind::Constr(_, ps) => ps.iter_mut().try_for_each(|p| self.fin_pat(p)),
            PatKind::Lit(Literal::Int { value, .. }) => self.check_lit(*value, &p.ty, p.span),
            PatKind::Id(_) | PatKind::Wildcard | PatKind::Lit(_) => Ok(()),
        }
    }

    /// Checks that an integer literal's value `v` (negated, where the
    /// literal is the operand of a negation) is in the range of its
    /// inferred type, as Futhark does ("literal-out-of-bounds").
    fn check_lit(&self, v: i128, t: &Option<Type>, span: Span) -> R<()> {
        match t {
            Some(Type::Prim(p)) if !lit_range_ok(v, *p) => Err(literal_out_of_bounds(v, *p, span)),
            _ => Ok(()),
        }
    }

    /// [`Checker::check_lit`] for a decimal literal: it may not become an
    /// infinity at its float type.
    fn check_float_lit(&self, v: f64, text: &str, t: &Option<Type>, span: Span) -> R<()> {
        match t {
            Some(Type::Prim(p)) if !float_range_ok(v, *p) => Err(err(
                span,
                format!("Literal {text} out of bounds for inferred type {p}."),
            )),
            _ => Ok(()),
        }
    }

    /// Finalises a negation; a negated literal is checked as the negative
    /// literal it denotes (`-128` is an `i8`, `-4` no `u8`).
    fn fin_negate(&mut self, x: &mut Expr, span: Span) -> R<()> {
        match &x.kind {
            ExprKind::Lit(Literal::Int { value, .. }) => {
                let v = -*value;
                if let Some(t) = &x.ty {
                    x.ty = Some(self.final_ty(t));
                }
                self.check_lit(v, &x.ty, span)
            }
            ExprKind::Lit(Literal::Float { value, text, .. }) => {
                let (v, text) = (-*value, format!("-{text}"));
                if let Some(t) = &x.ty {
                    x.ty = Some(self.final_ty(t));
                }
                self.check_float_lit(v, &text, &x.ty, span)
            }
            _ => self.fin_expr(x),
        }
    }

    fn fin_inst(&self, inst: &mut [(Name, Type)]) {
        for (_, t) in inst.iter_mut() {
            *t = self.final_ty(t);
        }
    }

    /// Finalises the instantiation of a name that resolved to `res`: a
    /// recursive use of the function being checked gets its own type
    /// parameters (see [`Checker::bind_self`]).
    fn fin_ref_inst(&self, res: &Option<Res>, inst: &mut Vec<(Name, Type)>) {
        match (&self.self_inst, res) {
            (Some((id, own)), Some(Res::Global(r))) if r == id => *inst = own.clone(),
            _ => self.fin_inst(inst),
        }
    }

    fn fin_dims(&mut self, idx: &mut [DimIndex]) -> R<()> {
        for d in idx {
            match d {
                DimIndex::Fix(e) => self.fin_expr(e)?,
                DimIndex::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.fin_expr(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn fin_expr(&mut self, e: &mut Expr) -> R<()> {
        if let Some(t) = &e.ty {
            e.ty = Some(self.final_ty(t));
        }
        match &mut e.kind {
            ExprKind::Lit(Literal::Int { value, .. }) => self.check_lit(*value, &e.ty, e.span)?,
            ExprKind::Lit(Literal::Float { value, text, .. }) => {
                self.check_float_lit(*value, text, &e.ty, e.span)?
            }
            ExprKind::Negate(x) => self.fin_negate(x, e.span)?,
            ExprKind::Lit(_) | ExprKind::ProjSection(_) => {}
            ExprKind::Var { inst, res, .. }
            | ExprKind::OpSection {
                op_inst: inst,
                op_res: res,
                ..
            } => self.fin_ref_inst(res, inst),
            ExprKind::Attr(a, x) => {
                if a.text.trim() == "unroll" && !unrollable(x) {
                    let span = a.span;
                    self.warn(span, UNROLL_WARNING);
                }
                self.fin_expr(x)?
            }
            ExprKind::Parens(x) | ExprKind::Not(x) => self.fin_expr(x)?,
            ExprKind::LocalOpen(_, x) | ExprKind::Ascribe(x, _) | ExprKind::Coerce(x, _) => {
                self.fin_expr(x)?
            }
            ExprKind::Project(x, _) => self.fin_expr(x)?,
            ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
                xs.iter_mut().try_for_each(|x| self.fin_expr(x))?
            }
            ExprKind::Record(fs) => {
                for f in fs {
                    if let RecordField::Named(_, x) = f {
                        self.fin_expr(x)?;
                    }
                }
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.fin_expr(start)?;
                if let Some(s) = second {
                    self.fin_expr(s)?;
                }
                self.fin_expr(end)?;
            }
            ExprKind::Index(x, idx) => {
                self.fin_expr(x)?;
                self.fin_dims(idx)?;
            }
            ExprKind::Apply(f, args) => {
                self.fin_expr(f)?;
                args.iter_mut().try_for_each(|x| self.fin_expr(x))?;
            }
            ExprKind::BinOp {
                op_inst,
                op_res,
                lhs,
                rhs,
                ..
            } => {
                self.fin_ref_inst(op_res, op_inst);
                self.fin_expr(lhs)?;
                self.fin_expr(rhs)?;
                let eq_op = match op_res {
                    Some(Res::Intrinsic(n)) if n == "==" || n == "!=" => Some(n.clone()),
                    _ => None,
                };
                if let (Some(op), Some(Type::Array { .. })) = (eq_op, &lhs.ty) {
                    self.warn(
                        e.span,
                        format!(
                            "Comparing arrays with \"{op}\" is deprecated; compare the elements, e.g. with `and (map2 (==) xs ys)` after checking the lengths"
                        ),
                    );
                }
            }
            ExprKind::OpSectionLeft {
                op_inst,
                op_res,
                lhs: x,
                ..
            }
            | ExprKind::OpSectionRight {
                op_inst,
                op_res,
                rhs: x,
                ..
            } => {
                self.fin_ref_inst(op_res, op_inst);
                self.fin_expr(x)?;
            }
            ExprKind::Lambda { params, body, .. } => {
                params.iter_mut().try_for_each(|p| self.fin_pat(p))?;
                self.fin_expr(body)?;
            }
            ExprKind::LetPat {
                pat, value, body, ..
            } => {
                self.fin_pat(pat)?;
                self.fin_expr(value)?;
                self.fin_expr(body)?;
            }
            ExprKind::LetFun {
                params,
                value,
                body,
                ..
            } => {
                params.iter_mut().try_for_each(|p| self.fin_pat(p))?;
                self.fin_expr(value)?;
                self.fin_expr(body)?;
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                ..
            } => {
                self.fin_dims(indices)?;
                self.fin_expr(value)?;
                self.fin_expr(body)?;
            }
            ExprKind::If { cond, then_, else_ } => {
                self.fin_expr(cond)?;
                self.fin_expr(then_)?;
                self.fin_expr(else_)?;
            }
            ExprKind::Match { scrutinee, cases } => {
                self.fin_expr(scrutinee)?;
                for c in cases {
                    self.fin_pat(&mut c.pat)?;
                    self.fin_expr(&mut c.body)?;
                }
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
                attrs,
                ..
            } => {
                let bound_is_constant =
                    matches!(form, LoopForm::For(_, b) if int_literal(b).is_some());
                if let Some(a) = attrs.iter().find(|a| a.text.trim() == "unroll") {
                    if !bound_is_constant {
                        let span = a.span;
                        self.warn(span, UNROLL_WARNING);
                    }
                }
                self.fin_pat(pat)?;
                if let Some(i) = init {
                    self.fin_expr(i)?;
                }
                match form {
                    LoopForm::For(_, b) | LoopForm::While(b) => self.fin_expr(b)?,
                    LoopForm::ForIn(p, b) => {
                        self.fin_pat(p)?;
                        self.fin_expr(b)?;
                    }
                }
                self.fin_expr(body)?;
            }
            ExprKind::Update {
                src,
                indices,
                value,
                ..
            } => {
                self.fin_expr(src)?;
                self.fin_dims(indices)?;
                self.fin_expr(value)?;
            }
            ExprKind::RecordUpdate { src, value, .. } => {
                self.fin_expr(src)?;
                self.fin_expr(value)?;
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------- utilities

    /// A type for an error message: unknown types print as `_`, and
    /// overloaded numeric types as their default.
    fn show(&self, t: &Type) -> String {
        self.show_zonked(&self.tcx.zonk(t))
    }

    /// [`Checker::show`] without the uniqueness markers of the value's
    /// arrays: for a mismatch found by unification, which ignores them.
    fn show_plain(&self, t: &Type) -> String {
        self.show_zonked(&crate::unify::without_uniqueness(&self.tcx.zonk(t)))
    }

    fn show_zonked(&self, t: &Type) -> String {
        fn go(c: &Checker, t: &Type) -> Type {
            match t {
                Type::Var(v) => match c.tcx.vars.get(*v as usize).map(|i| &i.constraint) {
                    Some(Constraint::Prims { default, .. }) => Type::Prim(*default),
                    Some(Constraint::None | Constraint::Eq) => Type::Param("_".into()),
                    _ => t.clone(),
                },
                Type::Array {
                    elem,
                    shape,
                    unique,
                } => Type::Array {
                    elem: Box::new(go(c, elem)),
                    shape: shape
                        .iter()
                        .map(|s| match c.tcx.resolve_size(s) {
                            Size::Var(n) if n.starts_with('?') || is_existential(&n) => Size::Any,
                            s @ Size::Expr(_) => c.tcx.hinted_size(&s),
                            s => s,
                        })
                        .collect(),
                    unique: *unique,
                },
                t => t.map_children(|t| go(c, t)),
            }
        }
        go(self, t).to_string()
    }

    /// Brings a definition's `[n]` size parameters into scope as local sizes
    /// and its `'a` type parameters as rigid type parameters.
    fn bind_type_params(&mut self, tps: &[TypeParam]) {
        for tp in tps {
            match tp {
                TypeParam::Size(i) => self.push_local(i.name.clone(), LEntry::Size),
                TypeParam::Type(i, l) => {
                    self.push_tparam(i.name.clone());
                    if *l != Liftedness::Unlifted {
                        self.tcx.lifted_params.push((i.name.clone(), *l));
                    }
                }
            }
        }
    }

    /// The type of a body against an optional declared result type: with a
    /// declaration, `body` must unify with it (mismatch reported at `span`
    /// under `ctx`) and the declared type is the result; without, `body`.
    fn declared_or(
        &mut self,
        declared: Option<Type>,
        body: Type,
        span: Span,
        ctx: &str,
    ) -> R<Type> {
        match declared {
            Some(rt) => {
                self.unify_at(&rt, &body, span, ctx)?;
                Ok(rt)
            }
            None => Ok(body),
        }
    }

    /// Futhark's "found to be functional": a function type `t` (or one
    /// containing a function, or an abstract type declared lifted) where a
    /// first-order type is required (an unlifted type parameter's
    /// instance, an array element); `ctx` says where.
    fn functional_error(&self, span: Span, t: &Type, ctx: &str) -> Diagnostic {
        let shown = self.show(t);
        let why = if crate::unify::contains_arrow(&self.tcx.zonk(t)) {
            "found to be functional"
        } else {
            "is lifted (a type parameter or abstract type declared `'~a`/`'^a` or `type~`/`type^`, which may be a function or an array of varying size)"
        };
        err(
            span,
            format!(
                "Type `{shown}` {why}, but a function cannot be an array element or the instance of a type parameter that is not lifted (`'a`; only `'^a` may be a function) ({ctx})"
            ),
        )
    }

    /// Unifies `expected` with `found`, reporting a mismatch at `span`.
    fn unify_at(&mut self, expected: &Type, found: &Type, span: Span, ctx: &str) -> R<()> {
        let (es, fs) = (self.show_plain(expected), self.show_plain(found));
        let r = self.tcx.unify(expected, found);
        if let (Err(_), Some(f)) = (&r, self.tcx.functional.take()) {
            return Err(self.functional_error(span, &f, ctx));
        }
        // A constructor that the sum type lacks is the offending code: report
        // there, with the context as a label.
        if let (Err(detail), Some((name, var_span))) = (&r, self.tcx.blame.take()) {
            // The use of that constructor within the checked code, else the
            // place the constrained type came from.
            let within =
                |s: &Span| s.file == span.file && s.start >= span.start && s.end <= span.end;
            let at = self
                .tcx
                .constr_sites
                .iter()
                .rev()
                .find(|(n, s)| *n == name && within(s))
                .map_or(var_span, |(_, s)| *s);
            if at != Span::default() && at != span {
                return Err(
                    err(at, format!("{ctx}: {detail}")).with_label(span, "the type is fixed here")
                );
            }
        }
        r.map_err(|detail| {
            // A type still containing inference variables (`?t12`) says
            // little; the detail (e.g. "… has no constructor #c") says more.
            if (es.contains("?t") || fs.contains("?t"))
                && !detail.is_empty()
                && !detail.contains("?t")
            {
                return err(span, format!("{ctx}: {detail}"));
            }
            let d = err(span, format!("{ctx}: expected `{es}`, found `{fs}`"));
            if detail.is_empty() || detail.contains("?t") {
                d
            } else {
                d.with_note(detail)
            }
        })
    }

    fn instantiate(&mut self, s: &Scheme, span: Span) -> (Type, Vec<(Name, Type)>) {
        let inst: Vec<(Name, Type)> = s
            .tparams
            .iter()
            .map(|(n, c)| (n.clone(), self.tcx.fresh_class(*c, span)))
            .collect();
        let sizes: Vec<(Name, Size)> = s
            .sparams
            .iter()
            .map(|n| (n.clone(), self.tcx.fresh_size_named(n)))
            .collect();
        let t = subst(
            &s.ty,
            &|p: &str| inst.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone()),
            &|v: &str| sizes.iter().find(|(n, _)| n == v).map(|(_, s)| s.clone()),
        );
        (t, inst)
    }

    /// The type a recursive use of the function being defined sees: the
    /// sizes of its parameters still being inferred (anonymous `[]t`, or
    /// an unannotated parameter's) are its own size parameters, so each
    /// use may pass another size (`count (tail xs)`): unknown here.
    fn self_use(&self, s: &Scheme) -> Scheme {
        let ty = self.tcx.zonk(&s.ty);
        Scheme {
            tparams: s.tparams.clone(),
            sparams: s.sparams.clone(),
            ty: subst(&ty, &|_| None, &|v: &str| {
                v.starts_with('?').then_some(Size::Any)
            }),
        }
    }

    fn lookup(&self, name: &str) -> Option<Found> {
        for (n, e) in self.locals.iter().rev() {
            if n == name {
                return Some(match e {
                    LEntry::Var(t) => Found::Local(t.clone()),
                    LEntry::Size => Found::Size,
                    LEntry::Poly(s) => Found::LocalPoly(s.clone()),
                    LEntry::Intr(c, s) => Found::Intr(c.clone(), s.clone()),
                    LEntry::SelfRef(id, s) => Found::Global(*id, Rc::new(self.self_use(s))),
                });
            }
        }
        match self.env.get(name)? {
            GEntry::Def(id, s) => Some(Found::Global(*id, s.clone())),
            GEntry::Intr(c, s) => Some(Found::Intr(c.clone(), s.clone())),
        }
    }

    /// Resolves a (non-field-access) name: `x`, `f64.sqrt`, `+`, `i32.+`.
    fn resolve_name(&mut self, q: &QualName) -> R<Resolved> {
        if !q.quals.is_empty() {
            let m = q.quals.join(".");
            if q.quals.len() == 1 && sig::MODULES.contains(&m.as_str()) {
                let canon = format!("{m}.{}", q.name);
                return match self.intrinsics.get(&canon).cloned() {
                    Some(s) => {
                        let (t, _) = self.instantiate(&s, q.span);
                        Ok((Res::Intrinsic(canon), t, vec![]))
                    }
                    None => {
                        let prefix = format!("{m}.");
                        let members = self
                            .intrinsics
                            .keys()
                            .filter_map(|k| k.strip_prefix(prefix.as_str()));
                        let hint = match closest(&q.name, members) {
                            Some(near) => format!(" (did you mean `{m}.{near}`?)"),
                            None => String::new(),
                        };
                        Err(err(
                            q.span,
                            format!("module `{m}` has no member `{}`{hint}", q.name),
                        ))
                    }
                };
            }
            if m == sig::INTRINSICS_MODULE {
                let found = sig::intrinsics_module_member(&q.name)
                    .and_then(|c| Some((self.intrinsics.get(&c).cloned()?, c)));
                return match found {
                    Some((s, canon)) => {
                        let (t, _) = self.instantiate(&s, q.span);
                        Ok((Res::Intrinsic(canon), t, vec![]))
                    }
                    None => Err(err(
                        q.span,
                        format!("module `{m}` has no member `{}`", q.name),
                    )),
                };
            }
            return Err(err(q.span, format!("Unknown name \"{q}\"")));
        }
        match self.lookup(&q.name) {
            Some(Found::Local(t)) => Ok((Res::Local, t, vec![])),
            Some(Found::Size) => Ok((Res::Size, i64t(), vec![])),
            Some(Found::LocalPoly(s)) => {
                let (t, inst) = self.instantiate(&s, q.span);
                Ok((Res::Local, t, inst))
            }
            Some(Found::Global(id, s)) => {
                let (t, inst) = self.instantiate(&s, q.span);
                Ok((Res::Global(id), t, inst))
            }
            Some(Found::Intr(c, s)) => {
                let (t, _) = self.instantiate(&s, q.span);
                Ok((Res::Intrinsic(c), t, vec![]))
            }
            None if self.defining.iter().any(|d| definition_base_name(d) == q.name) => Err(err(
                q.span,
                format!(
                    "`{}` is not in scope in its own definition: only top-level functions may be recursive, not local functions or constants (write the recursion as a `loop`, or define the function at the top level)",
                    q.name
                ),
            )),
            None => {
                let hint = match self.similar_name(&q.name) {
                    Some(near) => format!(" (did you mean `{near}`?)"),
                    None => String::new(),
                };
                Err(err(q.span, format!("Unknown name \"{}\"{hint}", q.name)))
            }
        }
    }

    /// The name in scope (a local, a top-level definition or a prelude
    /// function) that the unknown `name` is likely a typo of ([`closest`]).
    fn similar_name(&self, name: &str) -> Option<String> {
        let locals = self.locals.iter().map(|(n, _)| n.as_str());
        let globals = self.env.keys().map(|n| n.as_str());
        // Flat names of module members (`M.x`) are not written so, and a
        // redefinition's `x#2` is written `x`.
        let candidates = locals
            .chain(globals)
            .map(|c| c.split('#').next().unwrap_or(c))
            .filter(|c| !c.contains('.'));
        closest(name, candidates)
    }

    /// Brings a local name into scope at the current depth.
    fn push_local(&mut self, n: Name, e: LEntry) {
        let prev = self.tcx.rigid_sizes.insert(n.clone(), self.tcx.level);
        self.local_prev.push(prev);
        self.locals.push((n, e));
    }

    /// Ends the scope of the locals from `mark` on.
    fn truncate_locals(&mut self, mark: usize) {
        while self.locals.len() > mark {
            let Some((n, _)) = self.locals.pop() else {
                break;
            };
            match self.local_prev.pop().flatten() {
                Some(l) => self.tcx.rigid_sizes.insert(n, l),
                None => self.tcx.rigid_sizes.remove(&n),
            };
        }
    }

    /// Brings a type parameter into scope at the current depth.
    fn push_tparam(&mut self, n: Name) {
        let prev = self.tcx.rigid_types.insert(n.clone(), self.tcx.level);
        self.tparam_prev.push(prev);
        self.tparams.push(n);
    }

    /// Ends the scope of the type parameters from `mark` on.
    fn truncate_tparams(&mut self, mark: usize) {
        while self.tparams.len() > mark {
            let Some(n) = self.tparams.pop() else { break };
            match self.tparam_prev.pop().flatten() {
                Some(l) => self.tcx.rigid_types.insert(n, l),
                None => self.tcx.rigid_types.remove(&n),
            };
        }
    }

    /// Enters a deeper scope; returns the depth to restore on leaving it.
    fn enter_scope(&mut self) -> u32 {
        self.tcx.level += 1;
        self.tcx.level - 1
    }

    fn push_binds(&mut self, binds: Vec<(Name, Type, Span)>) {
        for (n, t, _) in binds {
            self.push_local(n, LEntry::Var(t));
        }
    }

    // ----------------------------------------------------------------- types

    fn resolve_size(&mut self, se: &mut SizeExp) -> R<Size> {
        match se {
            SizeExp::Any(_) => {
                // In a parameter's type (outside function types), `[]` is
                // a size to infer from the body (Futhark's rule): `zip` of
                // two `[]i32` parameters makes them one size.
                if self.in_arrow == 0 && (self.implicit_sizes.is_some() || self.flexible_anonymous)
                {
                    return Ok(self.tcx.fresh_size_named("n"));
                }
                // In a result type, each `[]` is an existential size of its
                // own (the same one wherever a type abbreviation repeats it).
                if self.in_arrow == 0 {
                    if let Some(k) = &mut self.in_ret {
                        *k += 1;
                        return Ok(Size::Var(format!("{EXISTENTIAL}{k}")));
                    }
                }
                Ok(Size::Any)
            }
            SizeExp::Expr(e) => {
                if let ExprKind::Lit(Literal::Int { value, .. }) = &e.kind {
                    let v = *value;
                    e.ty = Some(i64t());
                    return Ok(i64::try_from(v).map(Size::Const).unwrap_or(Size::Any));
                }
                if let ExprKind::Var { name, res, .. } = &mut e.kind {
                    if name.quals.is_empty() {
                        let n = name.name.clone();
                        if self.exist.contains(&n) {
                            *res = Some(Res::Size);
                            e.ty = Some(i64t());
                            return Ok(Size::Var(format!("{EXISTENTIAL}{n}")));
                        }
                        if self.lookup(&n).is_none() {
                            if let Some(imp) = &mut self.implicit_sizes {
                                if !imp.contains(&n) {
                                    imp.push(n.clone());
                                }
                                *res = Some(Res::Size);
                                e.ty = Some(i64t());
                                return Ok(Size::Var(n));
                            }
                            return Err(err(e.span, format!("unknown size `{n}`")));
                        }
                    }
                }
                // A compound size of an existential size (`[n - k]` in
                // `?[k].([k]t, [n - k]t)`) is existential itself.
                if !self.exist.is_empty() && mentions_any_name(e, &self.exist) {
                    if self.in_arrow == 0 {
                        if let Some(k) = &mut self.in_ret {
                            *k += 1;
                            return Ok(Size::Var(format!("{EXISTENTIAL}{k}")));
                        }
                    }
                    return Ok(Size::Any);
                }
                let t = self.infer(e)?;
                self.unify_at(&i64t(), &t, e.span, "a size must be an i64")?;
                self.fin_expr(e)?;
                Ok(self.expr_as_size(e))
            }
        }
    }

    fn resolve_type(&mut self, te: &mut TypeExp) -> R<Type> {
        self.depth += 1;
        let r = if self.depth > MAX_NESTING {
            Err(err(te.span(), "type nested too deeply"))
        } else {
            self.resolve_type_inner(te)
        };
        self.depth -= 1;
        r
    }

    fn resolve_type_inner(&mut self, te: &mut TypeExp) -> R<Type> {
        match te {
            TypeExp::Prim(p, _) => Ok(Type::Prim(*p)),
            TypeExp::Named(q, args, span) => {
                if !q.quals.is_empty() {
                    let m = q.quals.join(".");
                    if q.quals.len() == 1 && q.name == "t" && args.is_empty() {
                        if let Some(p) = PrimType::from_name(&m) {
                            return Ok(Type::Prim(p));
                        }
                    }
                    if m == sig::INTRINSICS_MODULE && q.name == "acc" {
                        // `intrinsics.acc t`: an accumulator over the array type `t`.
                        return match args.as_mut_slice() {
                            [TypeArg::Type(t)] => Ok(Type::Acc {
                                arr: Box::new(self.resolve_type(t)?),
                                unique: false,
                            }),
                            _ => Err(err(
                                *span,
                                "type `intrinsics.acc` takes one type argument (an array type)",
                            )),
                        };
                    }
                    return Err(err(*span, format!("Unknown type \"{q}\"")));
                }
                if args.is_empty() && self.tparams.contains(&q.name) {
                    return Ok(Type::Param(q.name.clone()));
                }
                if let Some(a) = self.types.get(&q.name).cloned() {
                    if a.params.len() != args.len() {
                        return Err(err(
                            *span,
                            format!(
                                "type `{}` takes {} argument(s), but {} were given",
                                q.name,
                                a.params.len(),
                                args.len()
                            ),
                        ));
                    }
                    let mut tmap: Vec<(Name, Type)> = Vec::new();
                    let mut smap: Vec<(Name, Size)> = Vec::new();
                    for (p, arg) in a.params.iter().zip(args.iter_mut()) {
                        match (p, arg) {
                            (TypeParam::Type(i, _), TypeArg::Type(t)) => {
                                let t = self.resolve_type(t)?;
                                tmap.push((i.name.clone(), t));
                            }
                            (TypeParam::Size(i), TypeArg::Size(s)) => {
                                let s = self.resolve_size(s)?;
                                smap.push((i.name.clone(), s));
                            }
                            // `t [n]` parsed as a type argument `[n]…` is impossible; a bare
                            // name given for a size parameter:
                            (TypeParam::Size(i), TypeArg::Type(TypeExp::Named(n, a2, _)))
                                if a2.is_empty() && n.quals.is_empty() =>
                            {
                                smap.push((i.name.clone(), Size::Var(n.name.clone())));
                            }
                            (p, _) => {
                                let pn = match p {
                                    TypeParam::Type(i, _) | TypeParam::Size(i) => &i.name,
                                };
                                return Err(err(
                                    *span,
                                    format!(
                                        "wrong kind of argument for parameter `{pn}` of type `{}`",
                                        q.name
                                    ),
                                ));
                            }
                        }
                    }
                    // The abbreviation's own existential sizes are named
                    // for this use before the arguments (which may have
                    // existential sizes of their own) go in, so that the
                    // two never share a name.
                    let body = self.place_existentials(&a.ty);
                    let t = subst(
                        &body,
                        &|p: &str| tmap.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone()),
                        &|v: &str| smap.iter().find(|(n, _)| n == v).map(|(_, s)| s.clone()),
                    );
                    return Ok(t);
                }
                if args.is_empty() {
                    if let Some(p) = PrimType::from_name(&q.name) {
                        return Ok(Type::Prim(p));
                    }
                }
                Err(err(*span, format!("Unknown type \"{}\"", q.name)))
            }
            TypeExp::Tuple(ts, _) => {
                let mut out = Vec::new();
                for t in ts.iter_mut() {
                    out.push(self.resolve_type(t)?);
                }
                Ok(Type::tuple(out))
            }
            TypeExp::Record(fs, _) => {
                let mut out: Vec<(Name, Type)> = Vec::new();
                for (i, t) in fs.iter_mut() {
                    if out.iter().any(|(n, _)| n == &i.name) {
                        return Err(duplicate_field(i));
                    }
                    let t = self.resolve_type(t)?;
                    out.push((i.name.clone(), t));
                }
                out.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Ok(Type::Record(out))
            }
            TypeExp::Array(s, t, _) => {
                let s = self.resolve_size(s)?;
                // Futhark: the elements may not be of a type declared (or
                // found) lifted or size-lifted.
                let named = match &**t {
                    TypeExp::Named(q, _, _) if q.quals.is_empty() => Some(q.name.clone()),
                    _ => None,
                };
                let declared = named
                    .as_ref()
                    .and_then(|n| self.types.get(n))
                    .map_or(Liftedness::Unlifted, |a| a.liftedness);
                let t = self.resolve_type(t)?;
                let found = self.tcx.liftedness(&self.tcx.zonk(&t));
                let lifted = [declared, found];
                let shown = named.unwrap_or_else(|| self.show(&t));
                if lifted.contains(&Liftedness::Lifted) {
                    return Err(err(
                        te.span(),
                        format!(
                            "Cannot create array with elements of lifted type \"{shown}\" (might contain function): arrays of functions are not allowed"
                        ),
                    ));
                }
                if lifted.contains(&Liftedness::SizeLifted) {
                    return Err(err(
                        te.span(),
                        format!(
                            "Cannot create array with elements of size-lifted type \"{shown}\" (might cause irregular array)"
                        ),
                    ));
                }
                if let Type::Array { shape, .. } = &t {
                    if shape.len() >= MAX_RANK {
                        return Err(err(
                            te.span(),
                            format!("array types may have at most {MAX_RANK} dimensions"),
                        ));
                    }
                }
                Ok(mk_array(t, vec![s], false))
            }
            TypeExp::Unique(t, span) => {
                let r = self.resolve_type(t)?;
                if let Type::Prim(p) = &r {
                    self.warn(
                        *span,
                        format!("The uniqueness annotation `*` has no effect on the non-array type `{p}`"),
                    );
                }
                Ok(make_unique(r))
            }
            TypeExp::Arrow(name, p, r, _) => self.resolve_arrow(name, p, r),
            TypeExp::Sum(cs, span) => {
                // Futhark keeps a sum value's tag in one byte.
                if cs.len() > 256 {
                    return Err(err(
                        *span,
                        format!(
                            "A sum type may have at most 256 constructors; this one has {}",
                            cs.len()
                        ),
                    ));
                }
                let mut out: Vec<(Name, Vec<Type>)> = Vec::new();
                for (c, ts) in cs.iter_mut() {
                    if out.iter().any(|(n, _)| n == &c.name) {
                        return Err(err(
                            c.span,
                            format!("constructor `#{}` appears twice", c.name),
                        ));
                    }
                    let mut v = Vec::new();
                    for t in ts.iter_mut() {
                        v.push(self.resolve_type(t)?);
                    }
                    out.push((c.name.clone(), v));
                }
                out.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(Type::Sum(out))
            }
            TypeExp::Exists(ns, t, _) => {
                rules::check_existentials_used(ns, t)?;
                let k = self.exist.len();
                self.exist.extend(ns.iter().map(|i| i.name.clone()));
                let r = self.resolve_type(t);
                self.exist.truncate(k);
                Ok(self.place_existentials(&r?))
            }
        }
    }

    /// The existential sizes of `t` (from `?[n].` or a type abbreviation
    /// that has them) where `t` is used: in a declared result type (outside
    /// function types), each gets a name of its own for this use (`∃k`);
    /// elsewhere (a parameter, an annotation) each is any size.
    fn place_existentials(&mut self, t: &Type) -> Type {
        let mut names = Vec::new();
        collect_size_names(t, &mut names);
        names.retain(|n| is_existential(n));
        if names.is_empty() {
            return t.clone();
        }
        let renamed: Vec<(Name, Size)> = names
            .into_iter()
            .map(|n| {
                let to = match (&mut self.in_ret, self.in_arrow) {
                    (Some(k), 0) => {
                        *k += 1;
                        Size::Var(format!("{EXISTENTIAL}{k}"))
                    }
                    _ => Size::Any,
                };
                (n, to)
            })
            .collect();
        subst(t, &|_| None, &|v: &str| {
            renamed.iter().find(|(n, _)| n == v).map(|(_, s)| s.clone())
        })
    }

    /// A function type `p -> r` or `(n: p) -> r`.
    ///
    /// In a parameter's type, the anonymous sizes of the function type's
    /// parameter are sizes to infer like those outside function types
    /// (Futhark makes them implicit size parameters: `f: []i32 -> i32` is
    /// `f: [d]i32 -> i32` for some `d` of the call); those of its result,
    /// and elsewhere all of them, are unknown.
    fn resolve_arrow(&mut self, name: &Option<Ident>, p: &mut TypeExp, r: &mut TypeExp) -> R<Type> {
        let param_inside = u32::from(self.implicit_sizes.is_none());
        self.in_arrow += param_inside;
        let pt = self.resolve_type(p);
        self.in_arrow -= param_inside;
        let pt = pt?;
        // A curried result (`i64 -> []i32 -> i32`) is more parameters.
        let mut result_type = &*r;
        while let TypeExp::Tuple(ts, _) = result_type {
            match ts.as_slice() {
                [t] => result_type = t,
                _ => break,
            }
        }
        let result_inside =
            u32::from(param_inside == 1 || !matches!(result_type, TypeExp::Arrow(..)));
        self.in_arrow += result_inside;
        let result = self.resolve_arrow_result(name, pt, r);
        self.in_arrow -= result_inside;
        result
    }

    /// The rest of [`Checker::resolve_arrow`], with the parameter's type
    /// `pt` resolved.
    fn resolve_arrow_result(&mut self, name: &Option<Ident>, pt: Type, r: &mut TypeExp) -> R<Type> {
        match name {
            Some(n) => {
                self.push_local(n.name.clone(), LEntry::Var(pt.clone()));
                let rt = self.resolve_type(r);
                self.truncate_locals(self.locals.len() - 1);
                let rt = rt?;
                let param_name = if mentions_size(&rt, &n.name) {
                    Some(n.name.clone())
                } else {
                    None
                };
                Ok(Type::Arrow {
                    param_name,
                    param: Box::new(pt),
                    ret: Box::new(rt),
                })
            }
            None => {
                let rt = self.resolve_type(r)?;
                Ok(arrow(pt, rt))
            }
        }
    }

    /// `t` with each size that refers to one of `names`, which go out of
    /// scope at `span`, replaced by a fresh unknown size (the same size by
    /// the same unknown): Futhark's "size going out of scope".
    /// The unknown sizes are made at depth `outer` (the scope the type
    /// goes to).
    ///
    /// A function type's parameter may not have such a size (Futhark's
    /// "unknown size in parameter"): nothing could ever call the function
    /// with an argument of a size nobody can name.
    fn unscope(&mut self, t: &Type, names: &[Name], span: Span, outer: u32) -> R<Type> {
        let zonked = self.tcx.zonk(t);
        if let Some(n) = names
            .iter()
            .find(|n| parameter_mentions_size(&zonked, n, false))
        {
            return Err(err(
                span,
                format!(
                    "Unknown size \"{n}\" in parameter of `{}`: \"{n}\" goes out of scope here, and no caller could give the function an argument of that size",
                    self.show(&zonked)
                ),
            ));
        }
        let mut made: Vec<(Size, Size)> = Vec::new();
        let level = std::mem::replace(&mut self.tcx.level, outer);
        let t = self.unscope_d(t, names, span, &mut made);
        self.tcx.level = level;
        // The unknown sizes of the value leaving the scope (made inside it)
        // belong to the value, not to the scope: they go out with it.
        self.tcx.hoist_unknowns(&t, outer);
        Ok(t)
    }

    fn unscope_d(
        &mut self,
        t: &Type,
        names: &[Name],
        span: Span,
        made: &mut Vec<(Size, Size)>,
    ) -> Type {
        map_dims(&mut self.tcx, t, true, &mut |tcx, s| {
            let Some(n) = names.iter().find(|n| s.mentions(n)) else {
                return s.clone();
            };
            if let Some((_, u)) = made.iter().find(|(o, _)| o == s) {
                return u.clone();
            }
            let what = format!("unknown because \"{n}\" goes out of scope here");
            let u = tcx.new_unknown("d", span, what);
            made.push((s.clone(), u.clone()));
            u
        })
    }

    /// `t` with each size that refers to one of `names` (going out of
    /// scope) replaced by a fresh flexible size.
    fn flexible_sizes_mentioning(&mut self, t: &Type, names: &[Name]) -> Type {
        map_dims(&mut self.tcx, t, true, &mut |tcx, s| {
            if names.iter().any(|n| s.mentions(n)) {
                tcx.fresh_size()
            } else {
                s.clone()
            }
        })
    }

    /// Replaces every size in `t` with a fresh unknown size. Function types
    /// are left as they are.
    fn anon_sizes(&mut self, t: &Type) -> Type {
        map_dims(&mut self.tcx, t, false, &mut |tcx, _| tcx.fresh_size())
    }

    // -------------------------------------------------------------- patterns

    fn lit_type(&mut self, l: &Literal, span: Span) -> Type {
        match l {
            Literal::Int {
                suffix: Some(p), ..
            } => Type::Prim(*p),
            Literal::Int { suffix: None, .. } => self.tcx.fresh_class(Class::Num, span),
            Literal::Float {
                suffix: Some(p), ..
            } => Type::Prim(*p),
            Literal::Float { suffix: None, .. } => self.tcx.float_var(span),
            Literal::Bool(_) => boolt(),
        }
    }

    /// Builds the type of a pattern (fresh variables where unconstrained) and
    /// collects the variables it binds.
    fn infer_pat(&mut self, p: &mut Pat, binds: &mut Vec<(Name, Type, Span)>) -> R<Type> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            return Err(err(p.span, "pattern nested too deeply"));
        }
        let r = self.infer_pat_inner(p, binds);
        self.depth -= 1;
        let t = r?;
        p.ty = Some(t.clone());
        Ok(t)
    }

    fn infer_pat_inner(&mut self, p: &mut Pat, binds: &mut Vec<(Name, Type, Span)>) -> R<Type> {
        let span = p.span;
        match &mut p.kind {
            PatKind::Id(i) => {
                if binds.iter().any(|(n, _, _)| n == &i.name) {
                    return Err(err(
                        i.span,
                        format!(
                            "`{}` is also bound earlier in the same pattern or parameter list; rename one of them",
                            i.name
                        ),
                    ));
                }
                let t = self.tcx.fresh(i.span);
                binds.push((i.name.clone(), t.clone(), i.span));
                Ok(t)
            }
            PatKind::Wildcard => Ok(self.tcx.fresh(span)),
            PatKind::Tuple(ps) => {
                let mut ts = Vec::new();
                for p in ps.iter_mut() {
                    ts.push(self.infer_pat(p, binds)?);
                }
                Ok(Type::tuple(ts))
            }
            PatKind::Record(fs) => {
                let mut out: Vec<(Name, Type)> = Vec::new();
                for (i, p) in fs.iter_mut() {
                    if out.iter().any(|(n, _)| n == &i.name) {
                        return Err(err(
                            i.span,
                            format!(
                                "Duplicate fields in the pattern: field `{}` appears twice",
                                i.name
                            ),
                        ));
                    }
                    let t = self.infer_pat(p, binds)?;
                    out.push((i.name.clone(), t));
                }
                out.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Ok(Type::Record(out))
            }
            PatKind::Ascribe(inner, te) => {
                let t = self.resolve_type(te)?;
                let it = self.infer_pat(inner, binds)?;
                self.unify_at(&t, &it, span, "pattern does not match its type annotation")?;
                Ok(t)
            }
            PatKind::Lit(l) => Ok(self.lit_type(l, span)),
            PatKind::Constr(c, ps) => {
                self.tcx.constr_sites.push((c.name.clone(), span));
                let mut ts = Vec::new();
                for p in ps.iter_mut() {
                    ts.push(self.infer_pat(p, binds)?);
                }
                let mut m = BTreeMap::new();
                m.insert(c.name.clone(), ts);
                Ok(self.tcx.fresh_c(Constraint::Constrs(m), span))
            }
        }
    }

    // ----------------------------------------------------------- expressions

    pub fn infer(&mut self, e: &mut Expr) -> R<Type> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            return Err(err(e.span, "expression nested too deeply"));
        }
        let r = self.infer_inner(e);
        self.depth -= 1;
        let t = r?;
        // Types can grow exponentially (`dup (dup (… x))`), their
        // representation staying small through shared variables: refuse
        // them before anything expands them.
        if matches!(e.kind, ExprKind::Apply(..)) && self.tcx.larger_than(&t, MAX_TYPE_PARTS) {
            return Err(err(
                e.span,
                format!(
                    "the type of this expression is too large (more than {MAX_TYPE_PARTS} parts); it grows exponentially with the nesting of the program"
                ),
            ));
        }
        e.ty = Some(t.clone());
        Ok(t)
    }

    /// A fresh variable for the type of a field of the record variable
    /// `record`: as deep as the record's (Futhark's levels), so that a type
    /// bound in a deeper scope cannot become the field's type
    /// ("scope-violation").
    fn field_var(&mut self, record: usize, span: Span) -> Type {
        let nt = self.tcx.fresh(span);
        if let Type::Var(i) = nt {
            let level = self.tcx.vars[record].level;
            let info = &mut self.tcx.vars[i as usize];
            info.level = info.level.min(level);
        }
        nt
    }

    /// The type of field `f` of a value of type `t`.
    fn project_type(&mut self, t: &Type, f: &Ident) -> R<Type> {
        match self.tcx.head(t) {
            Type::Record(fs) => match fs.iter().find(|(n, _)| n == &f.name) {
                Some((_, t)) => Ok(t.clone()),
                None => Err(err(
                    f.span,
                    format!("type `{}` has no field `{}`", self.show(t), f.name),
                )),
            },
            Type::Var(v) => {
                let v = v as usize;
                match self.tcx.vars[v].constraint.clone() {
                    Constraint::Fields(mut fs) => {
                        if let Some(t) = fs.get(&f.name) {
                            return Ok(t.clone());
                        }
                        let nt = self.field_var(v, f.span);
                        fs.insert(f.name.clone(), nt.clone());
                        self.tcx.vars[v].constraint = Constraint::Fields(fs);
                        Ok(nt)
                    }
                    Constraint::None | Constraint::Eq => {
                        let nt = self.field_var(v, f.span);
                        let mut fs = BTreeMap::new();
                        fs.insert(f.name.clone(), nt.clone());
                        self.tcx.vars[v].constraint = Constraint::Fields(fs);
                        self.tcx.vars[v].span = f.span;
                        Ok(nt)
                    }
                    _ => Err(err(
                        f.span,
                        format!(
                            "a value of a primitive or sum type has no field `{}`",
                            f.name
                        ),
                    )),
                }
            }
            other => Err(err(
                f.span,
                format!(
                    "type `{}` is not a record and has no field `{}`",
                    self.show(&other),
                    f.name
                ),
            )),
        }
    }

    /// The type of `t` indexed by `idx` (checking the indices).
    /// An index (`fixed`: of one element) or a slice bound (the elaborator
    /// converts either to `i64`). An element index is of any signed
    /// integer type, as in Futhark: one whose type is still open is
    /// constrained to those (`i64` by default), so that a lambda parameter
    /// used as an index can be an `i32` (`map (\i -> xs[i]) is32`). A slice
    /// bound is an `i64`, or any integer type already known.
    fn index_int(&mut self, e: &mut Expr, what: &str, fixed: bool) -> R<()> {
        let it = self.infer(e)?;
        match self.tcx.head(&it) {
            Type::Prim(p) if p.is_int() => Ok(()),
            Type::Var(_) if fixed => {
                let signed = self.tcx.signed_int_var(e.span);
                self.unify_at(&signed, &it, e.span, what)
            }
            _ => self.unify_at(&i64t(), &it, e.span, what),
        }
    }

    /// The type of `t[idx]` where an index reads (Futhark's "rigid"
    /// slices, which get sizes from their bounds; see [`Checker::slice_size`]).
    fn index_type(&mut self, t: &Type, idx: &mut [DimIndex], span: Span) -> R<Type> {
        self.index_type_with(t, idx, span, true)
    }

    /// The size of a slice `d[i:j:s]` of a dimension of size `d`, as
    /// Futhark gives it: `j` for `[:j]` and `[0:j]` (stride 1), `j - i` for
    /// `[i:j]`, `d - i` for `[i:]`, `d` for `[::-1]`, `i - j` for
    /// `[i:j:-1]`; any other slice has a size the checker does not know
    /// (`None`). Bounds that bind names (`let`) give no size either.
    fn slice_size(
        &self,
        d: &Size,
        start: Option<&Expr>,
        end: Option<&Expr>,
        stride: Option<&Expr>,
    ) -> Option<Size> {
        let size = |e: &Expr| -> Option<Size> {
            if binds_names(e) {
                return None;
            }
            match self.expr_as_size(e) {
                Size::Any => None,
                s => Some(s),
            }
        };
        let stride_value = stride.map(int_literal);
        let span = Span::default();
        match stride_value {
            None | Some(Some(1)) => {
                let j = match end {
                    Some(e) => size(e)?,
                    None => d.clone(),
                };
                match start {
                    None => Some(j),
                    Some(i) if int_literal(i) == Some(0) => Some(j),
                    Some(i) => nabla_syntax::size_expr::size_binop("-", &j, &size(i)?, span),
                }
            }
            Some(Some(-1)) => match (start, end) {
                (None, None) => Some(d.clone()),
                (Some(i), Some(j)) => {
                    nabla_syntax::size_expr::size_binop("-", &size(i)?, &size(j)?, span)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn index_type_with(
        &mut self,
        t: &Type,
        idx: &mut [DimIndex],
        span: Span,
        refine: bool,
    ) -> R<Type> {
        let n = idx.len();
        let shape: Vec<Size> = (0..n).map(|_| self.tcx.fresh_size()).collect();
        let elem = self.tcx.fresh(span);
        let tmpl = Type::Array {
            elem: Box::new(elem.clone()),
            shape: shape.clone(),
            unique: false,
        };
        if self.tcx.unify(&tmpl, t).is_err() {
            return Err(err(
                span,
                format!(
                    "cannot index a value of type `{}` with {n} index(es)",
                    self.show(t)
                ),
            ));
        }
        let mut dims = Vec::new();
        for (d, s) in idx.iter_mut().zip(shape) {
            match d {
                DimIndex::Fix(e) => self.index_int(e, "array index must be an integer", true)?,
                DimIndex::Slice { start, end, stride } => {
                    let full = start.is_none() && end.is_none() && stride.is_none();
                    for e in [&*start, &*end, &*stride].into_iter().flatten() {
                        if binds_names(e) {
                            self.warn(
                                e.span,
                                "Size expression with binding is replaced by unknown size.",
                            );
                        }
                    }
                    for e in [&mut *start, &mut *end, &mut *stride].into_iter().flatten() {
                        self.index_int(e, "slice bound must be an integer", false)?;
                    }
                    let known = if refine && !full {
                        let d = self.tcx.resolve_size(&s);
                        self.slice_size(&d, start.as_ref(), end.as_ref(), stride.as_ref())
                    } else {
                        None
                    };
                    dims.push(if full { s } else { known.unwrap_or(Size::Any) });
                }
            }
        }
        Ok(mk_array(elem, dims, false))
    }

    /// Applies a function of type `ft` to one argument.
    /// Applies a function of type `ft` to the argument `arg` (number `k`)
    /// of the application `whole` (whose span an existential result's
    /// unknown sizes are made at: the application computes them).
    fn apply_one(
        &mut self,
        ft: Type,
        arg: &mut Expr,
        k: usize,
        fname: &str,
        whole: Span,
    ) -> R<Type> {
        let at = self.infer(arg)?;
        self.application_span = Some(whole);
        let r = self.apply_typed(ft, at, arg, k, fname);
        self.application_span = None;
        r
    }

    /// Applies a function of type `ft` to the argument `arg` (number `k`)
    /// whose type `at` is already inferred.
    fn apply_typed(
        &mut self,
        ft: Type,
        at: Type,
        arg: &mut Expr,
        k: usize,
        fname: &str,
    ) -> R<Type> {
        match self.tcx.head(&ft) {
            Type::Arrow {
                param_name,
                param,
                ret,
            } => {
                self.no_dependent_result(&ft, &param, &at, arg, fname)?;
                self.unify_at(&param, &at, arg.span, &Self::cannot_apply(fname, arg, k))?;
                let ret = match param_name {
                    Some(n) => {
                        if binds_names(arg) && {
                            let mut names = vec![];
                            crate::unify::collect_size_names(&ret, &mut names);
                            names.contains(&n)
                        } {
                            self.warn(
                                arg.span,
                                "Size expression with binding is replaced by unknown size.",
                            );
                        }
                        let s = self.expr_as_size(arg);
                        let mut names = Vec::new();
                        s.names(&mut names);
                        let ret = rename_arrow_params(&ret, &names);
                        subst(&ret, &|_| None, &|v: &str| {
                            if v == n {
                                Some(s.clone())
                            } else {
                                None
                            }
                        })
                    }
                    None => *ret,
                };
                let at = self.application_span.unwrap_or(arg.span);
                Ok(self.existential_result(ret, at, fname))
            }
            Type::Var(_) => {
                let r = self.tcx.fresh(arg.span);
                self.unify_at(
                    &ft,
                    &arrow(at, r.clone()),
                    arg.span,
                    &format!("cannot apply {fname}"),
                )?;
                Ok(r)
            }
            other => {
                if k > 0 {
                    Err(err(
                        arg.span,
                        format!(
                            "{fname} is applied to too many arguments (it takes {k} argument{})",
                            if k == 1 { "" } else { "s" }
                        ),
                    ))
                } else {
                    Err(err(
                        arg.span,
                        format!(
                            "{fname} has type `{}` and is not a function",
                            self.show(&other)
                        ),
                    ))
                }
            }
        }
    }

    /// The type of a function's result once it is applied to all of its
    /// arguments: each anonymous (existential) size `[]` of the result,
    /// outside function types, becomes a fresh unknown size, a size of its
    /// own that equals no other (Futhark's existential sizes: `filter`'s
    /// results at two calls need not have one length). A result that is
    /// still a function keeps its sizes until it is applied.
    fn existential_result(&mut self, t: Type, span: Span, fname: &str) -> Type {
        match self.tcx.head(&t) {
            Type::Arrow { .. } | Type::Var(_) => t,
            // Only the sizes the function's type writes `[]` (not those of
            // the type variables it was instantiated with, nor sizes that
            // unification made `[]`): the type is not zonked.
            _ => self.unknown_for_any(&t, span, fname, &mut Vec::new(), false),
        }
    }

    fn unknown_for_any(
        &mut self,
        t: &Type,
        span: Span,
        fname: &str,
        made: &mut Vec<(Name, Size)>,
        in_arrow: bool,
    ) -> Type {
        match t {
            Type::Array {
                elem,
                shape,
                unique,
            } => {
                let mut shape2 = Vec::new();
                for s in shape {
                    shape2.push(match s {
                        Size::Any if !in_arrow => {
                            let what = format!("the unknown size of the result of {fname}");
                            self.tcx.new_unknown("d", span, what)
                        }
                        Size::Var(n) if is_existential(n) => {
                            if let Some((_, u)) = made.iter().find(|(m, _)| m == n) {
                                u.clone()
                            } else {
                                let what = format!("the unknown size of the result of {fname}");
                                let u = self.tcx.new_unknown("d", span, what);
                                made.push((n.clone(), u.clone()));
                                u
                            }
                        }
                        s => s.clone(),
                    });
                }
                let shape = shape2;
                let e = self.unknown_for_any(elem, span, fname, made, in_arrow);
                mk_array(e, shape, *unique)
            }
            // A function in the result: its `[]` are its own results'
            // (made at its calls), but the existential sizes it shares
            // with the rest of the result are the same unknowns.
            Type::Arrow { .. } => {
                t.map_children(|c| self.unknown_for_any(c, span, fname, made, true))
            }
            t => t.map_children(|c| self.unknown_for_any(c, span, fname, made, in_arrow)),
        }
    }

    /// The size denoted by an `i64` expression (an argument for a named
    /// parameter, a size annotation): the expression itself as a size (with
    /// the types known so far, sizes erased), or `Size::Any` where it may
    /// not be a size.
    fn expr_as_size(&self, e: &Expr) -> Size {
        let mut e = e.clone();
        zonk_expr_types(&self.tcx, &mut e);
        size_of_expr(&e).unwrap_or(Size::Any)
    }

    /// A function whose result size depends on its argument
    /// (`(n: i64) -> [n]i64`) may not be passed where the part of the
    /// result that has that size would be a type variable that the callee
    /// keeps in arrays (`map`'s `b` in `(a -> b) -> [n]a -> *[n]b`): the
    /// elements would have the argument's size, which differs per element
    /// (Futhark: "Cannot apply"). Where the callee only returns such a
    /// value (`apply 'a '^b (f: a -> b) (x: a) : b`), or expects an unknown
    /// size there (`f: a -> []b`), the size becomes existential, as in
    /// Futhark. (Futhark also rejects the former for an unlifted `'b`; this
    /// check does not know liftedness and accepts it.)
    fn no_dependent_result(
        &self,
        callee: &Type,
        param: &Type,
        at: &Type,
        arg: &Expr,
        fname: &str,
    ) -> R<()> {
        let (
            Type::Arrow {
                param_name: Some(x),
                ret: aret,
                ..
            },
            Type::Arrow {
                param_name: None,
                ret: pret,
                ..
            },
        ) = (self.tcx.head(at), self.tcx.head(param))
        else {
            return Ok(());
        };
        let mut captured = Vec::new();
        captured_vars(
            &self.tcx.zonk(&pret),
            &self.tcx.zonk(&aret),
            &x,
            &mut captured,
        );
        let callee = self.tcx.zonk(callee);
        if !captured.iter().any(|&v| var_in_array(&callee, v, false)) {
            return Ok(());
        }
        Err(err(
            arg.span,
            format!(
                "{}the size of its result depends on its argument `{x}` (its type is `{}`), but {fname} makes arrays of such results, whose elements must all have one size: its type parameter would be instantiated with a type containing anonymous sizes",
                cannot_apply_prefix(fname, arg),
                self.show(at),
            ),
        ))
    }

    /// The record type `t` with the field at `path` of type `new` (a record
    /// update may change the sizes of an array field).
    fn with_field_type(&self, t: &Type, path: &[&str], new: Type) -> Type {
        let Some((first, rest)) = path.split_first() else {
            return new;
        };
        match self.tcx.head(t) {
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(n, ft)| {
                        let ft = if n == first {
                            self.with_field_type(ft, rest, new.clone())
                        } else {
                            ft.clone()
                        };
                        (n.clone(), ft)
                    })
                    .collect(),
            ),
            _ => t.clone(),
        }
    }

    /// The context of an argument's type error, in Futhark's words:
    /// `Cannot apply "f" to "x" (invalid type)` (an argument that is not a
    /// name is given by its position; a function without a name is
    /// "function"). `fname` is as [`Checker::fname_of`] gives it.
    fn cannot_apply(fname: &str, arg: &Expr, k: usize) -> String {
        let f = match fname.strip_prefix('`').and_then(|f| f.strip_suffix('`')) {
            Some(name) => format!("\"{name}\""),
            None => "function".to_string(),
        };
        let mut a = arg;
        while let ExprKind::Parens(x) = &a.kind {
            a = x;
        }
        match &a.kind {
            ExprKind::Var { name, .. } => format!("Cannot apply {f} to \"{name}\" (invalid type)"),
            _ => format!("Cannot apply {f} to argument #{} (invalid type)", k + 1),
        }
    }

    fn fname_of(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Var { name, .. } => format!("`{name}`"),
            ExprKind::Parens(x) => Self::fname_of(x),
            _ => "the function".to_string(),
        }
    }

    fn module_scope(&mut self, q: &QualName) -> R<usize> {
        let m = q.to_string();
        let names = sig::module_member_names(&m)
            .ok_or_else(|| err(q.span, format!("unknown module `{m}`")))?;
        let mark = self.locals.len();
        for n in names {
            if is_operator(&n) {
                continue;
            }
            let canon = format!("{m}.{n}");
            if let Some(s) = self.intrinsics.get(&canon).cloned() {
                self.push_local(n, LEntry::Intr(canon, s));
            }
        }
        Ok(mark)
    }

    fn infer_inner(&mut self, e: &mut Expr) -> R<Type> {
        let span = e.span;
        // Field access written as a qualified name: `r.a.b`.
        if let ExprKind::Var { name, .. } = &e.kind {
            if !name.quals.is_empty() {
                let head = &name.quals[0];
                let is_value = matches!(
                    self.lookup(head),
                    Some(Found::Local(_) | Found::Global(..) | Found::LocalPoly(_) | Found::Size)
                );
                let is_module = name.quals.len() == 1 && sig::MODULES.contains(&head.as_str());
                let is_local = matches!(self.lookup(head), Some(Found::Local(_)));
                if is_value && (is_local || !is_module) {
                    let q = name.clone();
                    let mut cur = Expr {
                        kind: ExprKind::Var {
                            name: QualName {
                                quals: vec![],
                                name: q.quals[0].clone(),
                                span: q.span,
                            },
                            res: None,
                            inst: vec![],
                        },
                        span,
                        ty: None,
                    };
                    for f in q.quals[1..].iter().chain(std::iter::once(&q.name)) {
                        cur = Expr {
                            kind: ExprKind::Project(
                                Box::new(cur),
                                Ident {
                                    name: f.clone(),
                                    span: q.span,
                                },
                            ),
                            span,
                            ty: None,
                        };
                    }
                    *e = cur;
                    return self.infer_inner(e);
                }
            }
        }
        match &mut e.kind {
            ExprKind::Lit(l) => Ok(self.lit_type(l, span)),
            ExprKind::Var { name, res, inst } => {
                let (r, t, i) = self.resolve_name(name)?;
                *res = Some(r);
                *inst = i;
                Ok(t)
            }
            ExprKind::Parens(x) | ExprKind::Attr(_, x) => self.infer(x),
            ExprKind::Tuple(xs) => {
                let mut ts = Vec::new();
                for x in xs.iter_mut() {
                    ts.push(self.infer(x)?);
                }
                Ok(Type::tuple(ts))
            }
            ExprKind::Record(fs) => self.infer_record(fs),
            ExprKind::ArrayLit(xs) => {
                // Array elements may not be (or contain) functions.
                let elem = self.tcx.fresh_unlifted(span);
                for x in xs.iter_mut() {
                    let t = self.infer(x)?;
                    if self.tcx.require_unlifted(&t).is_err() {
                        self.tcx.functional = None;
                        return Err(self.functional_error(x.span, &t, "an array element"));
                    }
                    self.unify_at(&elem, &t, x.span, "array elements have different types")?;
                }
                Ok(mk_array(elem, vec![Size::Const(xs.len() as i64)], false))
            }
            ExprKind::Range {
                start,
                second,
                end,
                kind,
            } => self.infer_range(start, second, end, *kind, span),
            ExprKind::Project(x, f) => {
                let t = self.infer(x)?;
                self.project_type(&t, f)
            }
            ExprKind::Index(x, idx) => {
                let t = self.infer(x)?;
                self.index_type(&t, idx, span)
            }
            ExprKind::Apply(f, args) => self.infer_apply(f, args, span),
            ExprKind::Negate(x) => {
                let t = self.infer(x)?;
                let nt = self.tcx.fresh_class(Class::Num, span);
                self.unify_at(&nt, &t, x.span, "cannot negate a non-numeric value")?;
                Ok(t)
            }
            ExprKind::Not(x) => {
                let t = self.infer(x)?;
                let nt = self.tcx.fresh_class(Class::IntBool, span);
                self.unify_at(&nt, &t, x.span, "`!` needs a bool or an integer")?;
                Ok(t)
            }
            ExprKind::BinOp {
                op,
                op_res,
                op_inst,
                lhs,
                rhs,
            } => {
                let (r, ft, inst) = self.resolve_name(op)?;
                *op_res = Some(r);
                *op_inst = inst;
                let fname = format!("`{op}`");
                let ft = self.apply_one(ft, lhs, 0, &fname, span)?;
                self.apply_one(ft, rhs, 1, &fname, span)
            }
            ExprKind::OpSection {
                op,
                op_res,
                op_inst,
            } => {
                let (r, ft, inst) = self.resolve_name(op)?;
                *op_res = Some(r);
                *op_inst = inst;
                Ok(ft)
            }
            ExprKind::OpSectionLeft {
                op,
                op_res,
                op_inst,
                lhs,
            } => {
                let (r, ft, inst) = self.resolve_name(op)?;
                *op_res = Some(r);
                *op_inst = inst;
                let fname = format!("`{op}`");
                self.apply_one(ft, lhs, 0, &fname, span)
            }
            ExprKind::OpSectionRight {
                op,
                op_res,
                op_inst,
                rhs,
            } => self.infer_op_section_right(op, op_res, op_inst, rhs, span),
            ExprKind::ProjSection(fs) => {
                let r = self.tcx.fresh(span);
                let mut t = r.clone();
                for f in fs.iter() {
                    t = self.project_type(&t, f)?;
                }
                Ok(arrow(r, t))
            }
            ExprKind::Lambda { params, ret, body } => {
                self.with_own_existentials(|c| c.infer_lambda(params, ret, body))
            }
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => self.infer_let_pat(sizes, pat, value, body),
            ExprKind::LetFun {
                name,
                type_params,
                params,
                ret,
                value,
                body,
            } => self.with_own_existentials(|c| {
                c.infer_let_fun(name, type_params, params, ret, value, body)
            }),
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => self.infer_let_with(dest, indices, value, body),
            ExprKind::If { cond, then_, else_ } => self.infer_if(cond, then_, else_),
            ExprKind::Match { scrutinee, cases } => self.infer_match(scrutinee, cases, span),
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body,
                ..
            } => self.infer_loop(sizes, pat, init, form, body, span),
            ExprKind::Update {
                src,
                path,
                indices,
                value,
            } => self.infer_update(src, path, indices, value, span),
            ExprKind::RecordUpdate { src, path, value } => {
                self.infer_record_update(src, path, value)
            }
            ExprKind::Ascribe(x, te) => {
                let t = self.resolve_type(te)?;
                let xt = self.infer(x)?;
                self.unify_at(
                    &t,
                    &xt,
                    span,
                    "Expression does not have expected type (the ascribed type)",
                )?;
                Ok(xt)
            }
            ExprKind::Coerce(x, te) => {
                let t = self.resolve_type(te)?;
                let xt = self.infer(x)?;
                let t2 = self.anon_sizes(&t);
                self.unify_at(&t2, &xt, span, "a coercion may only change sizes")?;
                Ok(t)
            }
            ExprKind::Constr(c, xs) => {
                self.tcx.constr_sites.push((c.name.clone(), span));
                let mut ts = Vec::new();
                for x in xs.iter_mut() {
                    ts.push(self.infer(x)?);
                }
                let mut m = BTreeMap::new();
                m.insert(c.name.clone(), ts);
                Ok(self.tcx.fresh_c(Constraint::Constrs(m), span))
            }
            ExprKind::LocalOpen(q, x) => {
                let mark = self.module_scope(q)?;
                let r = self.infer(x);
                self.truncate_locals(mark);
                r
            }
        }
    }

    fn infer_record(&mut self, fs: &mut [RecordField]) -> R<Type> {
        let mut out: Vec<(Name, Type)> = Vec::new();
        for f in fs.iter_mut() {
            if let RecordField::Pun(i) = f {
                let v = Expr {
                    kind: ExprKind::Var {
                        name: QualName {
                            quals: vec![],
                            name: i.name.clone(),
                            span: i.span,
                        },
                        res: None,
                        inst: vec![],
                    },
                    span: i.span,
                    ty: None,
                };
                *f = RecordField::Named(i.clone(), v);
            }
            if let RecordField::Named(i, x) = f {
                if out.iter().any(|(n, _)| n == &i.name) {
                    return Err(duplicate_field(i));
                }
                let t = self.infer(x)?;
                out.push((i.name.clone(), t));
            }
        }
        out.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
        Ok(Type::Record(out))
    }

    fn infer_range(
        &mut self,
        start: &mut Expr,
        second: &mut Option<Box<Expr>>,
        end: &mut Expr,
        kind: RangeKind,
        span: Span,
    ) -> R<Type> {
        let t = self.infer(start)?;
        let it = self.tcx.fresh_class(Class::Int, span);
        self.unify_at(&it, &t, start.span, "range bounds must be integers")?;
        if let Some(s) = second {
            let st = self.infer(s)?;
            self.unify_at(&t, &st, s.span, "range bounds have different types")?;
        }
        let et = self.infer(end)?;
        self.unify_at(&t, &et, end.span, "range bounds have different types")?;
        let size = self.range_size(start, second.as_deref(), end, kind, &t, span);
        Ok(mk_array(t, vec![size], false))
    }

    /// The size of a range, as Futhark gives it for `i64` ranges: `e` for
    /// `0..<e` and `0..1..<e`, `e - s` for `s..<e`, `e - s + 1` for `s...e`,
    /// `e` for `1..2...e`; any other range has an unknown length of its own
    /// (a fresh unknown size, which matches no other size).
    fn range_size(
        &mut self,
        start: &Expr,
        second: Option<&Expr>,
        end: &Expr,
        kind: RangeKind,
        t: &Type,
        span: Span,
    ) -> Size {
        let size = |c: &Self, e: &Expr| -> Option<Size> {
            match c.expr_as_size(e) {
                Size::Any => None,
                s => Some(s),
            }
        };
        let known = if self.tcx.head(t) != i64t() || binds_names(start) || binds_names(end) {
            None
        } else {
            (|| {
                use nabla_syntax::size_expr::size_binop;
                let first = int_literal(start);
                let step = second.map(int_literal);
                let sp = Span::default();
                match (first, step, kind) {
                    (Some(0), None | Some(Some(1)), RangeKind::UpToExclusive) => size(self, end),
                    (_, None, RangeKind::UpToExclusive) => {
                        size_binop("-", &size(self, end)?, &size(self, start)?, sp)
                    }
                    (_, None, RangeKind::ToInclusive) => size_binop(
                        "+",
                        &size_binop("-", &size(self, end)?, &size(self, start)?, sp)?,
                        &Size::Const(1),
                        sp,
                    ),
                    (Some(1), Some(Some(2)), RangeKind::ToInclusive) => size(self, end),
                    _ => None,
                }
            })()
        };
        known.unwrap_or_else(|| {
            self.tcx
                .new_unknown("range", span, "the unknown length of range".into())
        })
    }

    fn infer_apply(&mut self, f: &mut Expr, args: &mut [Expr], span: Span) -> R<Type> {
        let mut ft = self.infer(f)?;
        let fname = Self::fname_of(f);
        // Applying a non-function: point at the applied expression.
        let head = self.tcx.head(&ft);
        if !args.is_empty() && !matches!(head, Type::Arrow { .. } | Type::Var(_)) {
            let what = match &f.kind {
                ExprKind::Var { .. } | ExprKind::Parens(_) => fname.clone(),
                _ => "this expression".to_string(),
            };
            return Err(err(
                f.span,
                format!(
                    "Cannot apply expression as function: {what} has type `{}` and is not a function, but it is applied to {}",
                    self.show(&head),
                    if args.len() == 1 {
                        "an argument".to_string()
                    } else {
                        format!("{} arguments", args.len())
                    }
                ),
            ));
        }
        // A lambda argument is checked after the other arguments, so that
        // its parameters' types are known from them (`map (\x -> …) xs`
        // knows the type of `x` from `xs`, sizes included).
        let mut deferred: Vec<(usize, Type)> = Vec::new();
        for (k, a) in args.iter_mut().enumerate() {
            if matches!(strip_parens(a).kind, ExprKind::Lambda { .. }) {
                if let Type::Arrow {
                    param_name: None,
                    param,
                    ret,
                } = self.tcx.head(&ft)
                {
                    deferred.push((k, *param));
                    ft = *ret;
                    continue;
                }
            }
            ft = self.apply_one(ft, a, k, &fname, span)?;
        }
        for (k, param) in deferred {
            let a = &mut args[k];
            self.lambda_expect = Some(param.clone());
            let at = self.infer(a);
            self.lambda_expect = None;
            let at = at?;
            self.unify_at(&param, &at, a.span, &Self::cannot_apply(&fname, a, k))?;
        }
        Ok(ft)
    }

    fn infer_op_section_right(
        &mut self,
        op: &QualName,
        op_res: &mut Option<Res>,
        op_inst: &mut Vec<(Name, Type)>,
        rhs: &mut Expr,
        span: Span,
    ) -> R<Type> {
        let (r, ft, inst) = self.resolve_name(op)?;
        *op_res = Some(r);
        *op_inst = inst;
        let (a, b, c) = (
            self.tcx.fresh(span),
            self.tcx.fresh(span),
            self.tcx.fresh(span),
        );
        let fname = op.to_string();
        self.unify_at(
            &arrow(a.clone(), arrow(b.clone(), c.clone())),
            &ft,
            op.span,
            &format!("`{fname}` is not a binary operator"),
        )?;
        let rt = self.infer(rhs)?;
        self.unify_at(
            &b,
            &rt,
            rhs.span,
            &format!("mismatched types in argument 2 of `{fname}`"),
        )?;
        Ok(arrow(a, c))
    }

    /// Runs `f` with no existential sizes of a declared result known: a
    /// local function's or lambda's declared result has its own.
    fn with_own_existentials<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::take(&mut self.tcx.existential_sizes);
        let r = f(self);
        self.tcx.existential_sizes = saved;
        r
    }

    fn infer_lambda(
        &mut self,
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        body: &mut Expr,
    ) -> R<Type> {
        let expected = self.lambda_expect.take();
        let mark = self.locals.len();
        let level = self.tcx.level;
        let r = (|| {
            let mut binds = Vec::new();
            let mut ptys = Vec::new();
            // As for a function's parameters: each one scope deeper, and in
            // scope in the types of those after it (`\(n: i64) (xs: [n]t)`).
            for p in params.iter_mut() {
                self.tcx.level += 1;
                let before = binds.len();
                ptys.push(self.infer_pat(p, &mut binds)?);
                for (n, t, _) in &binds[before..] {
                    self.push_local(n.clone(), LEntry::Var(t.clone()));
                }
            }
            // The parameters' types known from the context (a function
            // type the lambda is passed for) are used in the body; a
            // mismatch is reported when the lambda's type is unified with
            // that type.
            if let Some(mut ft) = expected {
                for pt in &ptys {
                    match self.tcx.head(&ft) {
                        Type::Arrow { param, ret, .. } => {
                            let _ = self.tcx.unify(&param, pt);
                            ft = *ret;
                        }
                        _ => break,
                    }
                }
            }
            // The anonymous sizes of a lambda's declared result type are
            // inferred from its body (Futhark checks that type non-rigidly):
            // `\n : []i64 -> iota (n + 1)` has type `(n: i64) -> [n + 1]i64`.
            let rt = match ret {
                Some(te) => {
                    self.flexible_anonymous = true;
                    let rt = self.resolve_type(te);
                    self.flexible_anonymous = false;
                    Some(rt?)
                }
                None => None,
            };
            let bt = self.infer(body)?;
            // Unknown sizes made in the body leave with its value.
            self.tcx.hoist_unknowns(&bt, level);
            let res = self.declared_or(
                rt,
                bt,
                body.span,
                "the lambda's body does not have its declared type",
            )?;
            Ok(self.arrow_chain(params, ptys, res))
        })();
        self.truncate_locals(mark);
        self.tcx.level = level;
        r
    }

    fn infer_let_pat(
        &mut self,
        sizes: &[Ident],
        pat: &mut Pat,
        value: &mut Expr,
        body: &mut Expr,
    ) -> R<Type> {
        let vt = self.infer(value)?;
        // `let [n] p = e`: while `p` is matched with `e`'s type, each `n` is
        // a size to infer (outside the `let`); in the body it is a size of
        // its own.
        let flex: Vec<(Name, Size)> = sizes
            .iter()
            .map(|s| (s.name.clone(), self.tcx.fresh_size_named(&s.name)))
            .collect();
        let mark = self.locals.len();
        let level = self.enter_scope();
        let r = (|| {
            for s in sizes.iter() {
                self.push_local(s.name.clone(), LEntry::Size);
            }
            let mut binds = Vec::new();
            let pt = self.infer_pat(pat, &mut binds)?;
            self.check_size_binders_concrete(sizes, &pt)?;
            let pt_flex = if flex.is_empty() {
                pt.clone()
            } else {
                subst(&self.tcx.zonk(&pt), &|_| None, &|n: &str| {
                    flex.iter().find(|(m, _)| m == n).map(|(_, s)| s.clone())
                })
            };
            self.unify_at(
                &pt_flex,
                &vt,
                pat.span,
                "the pattern cannot match the bound value",
            )?;
            // Each size the `let` binds must be decided by the value (by the
            // end of the definition): `let [m] (xs: [0][m]t) = []` is not.
            // (A size the pattern's type does not use is reported as unused.)
            let mut used = Vec::new();
            collect_size_names(&self.tcx.zonk(&pt), &mut used);
            for (s, (_, flex_size)) in sizes.iter().zip(&flex) {
                if used.contains(&s.name) {
                    self.size_binders
                        .push((s.name.clone(), flex_size.clone(), s.span));
                }
            }
            let mut bound: Vec<Name> = sizes.iter().map(|s| s.name.clone()).collect();
            bound.extend(binds.iter().map(|(n, _, _)| n.clone()));
            self.push_binds(binds);
            let bt = self.infer(body)?;
            // `let v = e in body` with `v: i64`: the body's type with `v`
            // replaced by `e` where `e` may be a size (Futhark's rule), so
            // that `let m = n + 1 in iota m` has type `[n + 1]i64`.
            match pat_name(pat) {
                Some(v) if sizes.is_empty() && self.tcx.head(&pt) == i64t() => {
                    let s = self.expr_as_size(value);
                    if s == Size::Any {
                        return self.unscope(&bt, &bound, body.span, level);
                    }
                    let bt = self.tcx.zonk(&bt);
                    let bt = subst(&bt, &|_| None, &|n: &str| (n == v).then(|| s.clone()));
                    self.unscope(&bt, &bound, body.span, level)
                }
                _ => self.unscope(&bt, &bound, body.span, level),
            }
        })();
        self.truncate_locals(mark);
        self.tcx.level = level;
        r
    }

    /// Futhark's rule for `let [n] p = e`: each size it binds must be the
    /// size of an array in `p`'s type outside function types, as only such
    /// an array can tell its value (`let [n] (f: [n]t -> [n]t) = …` cannot).
    fn check_size_binders_concrete(&mut self, sizes: &[Ident], pt: &Type) -> R<()> {
        fn walk(t: &Type, in_function: bool, concrete: &mut Vec<Name>, all: &mut Vec<Name>) {
            if let Type::Array { shape, .. } = t {
                for s in shape {
                    s.names(all);
                    if !in_function {
                        s.names(concrete);
                    }
                }
            }
            let inner = in_function || matches!(t, Type::Arrow { .. });
            t.for_each_child(|c| walk(c, inner, concrete, all));
        }
        let (mut concrete, mut all) = (Vec::new(), Vec::new());
        walk(&self.tcx.zonk(pt), false, &mut concrete, &mut all);
        for s in sizes {
            if all.contains(&s.name) && !concrete.contains(&s.name) {
                return Err(err(
                    s.span,
                    format!(
                        "Cannot bind [{}] as it is never used as the size of a concrete (non-function) value.",
                        s.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn infer_let_fun(
        &mut self,
        name: &Ident,
        type_params: &[TypeParam],
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        value: &mut Expr,
        body: &mut Expr,
    ) -> R<Type> {
        let mark = self.locals.len();
        let tmark = self.tparams.len();
        let lmark = self.tcx.lifted_params.len();
        let saved_imp = self.implicit_sizes.take();
        let level = self.enter_scope();
        let r = (|| {
            self.bind_type_params(type_params);
            let (ptys, rt) = self.check_params(params, ret)?;
            self.defining.push(name.name.clone());
            let bt = self.infer(value);
            self.defining.pop();
            let bt = bt?;
            let res = self.declared_or(
                rt,
                bt,
                value.span,
                "the function's body does not have its declared type",
            )?;
            Ok(self.arrow_chain(params, ptys, res))
        })();
        self.truncate_locals(mark);
        self.truncate_tparams(tmark);
        self.tcx.lifted_params.truncate(lmark);
        self.implicit_sizes = saved_imp;
        self.tcx.level = level;
        let ft = r?;
        let entry = if !type_params.is_empty() {
            let z = self.tcx.zonk(&ft);
            let mut s = Scheme::from_type(z, &param_classes(type_params));
            // Only the declared type parameters are generalised.
            s.tparams.retain(|(n, _)| {
                type_params
                    .iter()
                    .any(|p| matches!(p, TypeParam::Type(i, _) if &i.name == n))
            });
            s.sparams.retain(|n| {
                type_params
                    .iter()
                    .any(|p| matches!(p, TypeParam::Size(i) if &i.name == n))
            });
            LEntry::Poly(Rc::new(s))
        } else {
            LEntry::Var(ft)
        };
        self.push_local(name.name.clone(), entry);
        let r = self.infer(body);
        self.truncate_locals(mark);
        r
    }

    fn infer_let_with(
        &mut self,
        dest: &Ident,
        indices: &mut [DimIndex],
        value: &mut Expr,
        body: &mut Expr,
    ) -> R<Type> {
        let t = match self.lookup(&dest.name) {
            Some(Found::Local(t)) => t,
            _ => {
                return Err(err(
                    dest.span,
                    format!("`{}` is not a local array variable", dest.name),
                ))
            }
        };
        let et = self.index_type_with(&t, indices, dest.span, false)?;
        let vt = self.infer(value)?;
        self.unify_at(
            &et,
            &vt,
            value.span,
            "the new value's type does not match the array's elements",
        )?;
        let mark = self.locals.len();
        self.push_local(dest.name.clone(), LEntry::Var(t));
        let r = self.infer(body);
        self.truncate_locals(mark);
        r
    }

    fn infer_if(&mut self, cond: &mut Expr, then_: &mut Expr, else_: &mut Expr) -> R<Type> {
        let ct = self.infer(cond)?;
        self.unify_at(
            &boolt(),
            &ct,
            cond.span,
            "the condition of `if` must be bool",
        )?;
        let tt = self.infer(then_)?;
        let et = self.infer(else_)?;
        // Branches of different sizes are allowed (the result's
        // size is existential in Futhark).
        let lenient = std::mem::replace(&mut self.tcx.lenient_sizes, true);
        let r = self.unify_at(
            &tt,
            &et,
            else_.span,
            "the branches of `if` have different types",
        );
        self.tcx.lenient_sizes = lenient;
        r?;
        Ok(self.join_branch_sizes(&tt, &et, else_.span))
    }

    /// The type of an `if` whose branches have types `a` and `b` (already
    /// unified up to sizes): where their sizes differ, the result has a
    /// fresh unknown size (Futhark's existential size of a branch).
    fn join_branch_sizes(&mut self, a: &Type, b: &Type, span: Span) -> Type {
        let (az, bz) = (self.tcx.zonk(a), self.tcx.zonk(b));
        let mut pairs = vec![];
        dim_pairs(&az, &bz, &mut pairs, 0);
        // Per position, the pair of sizes if they differ; one unknown size
        // per distinct pair (the same pair twice is the same size).
        let differ: Vec<Option<(Size, Size)>> = pairs
            .iter()
            .map(|(x, y)| {
                let (x, y) = (self.tcx.resolve_size(x), self.tcx.resolve_size(y));
                (x != y && x != Size::Any && y != Size::Any).then_some((x, y))
            })
            .collect();
        if differ.iter().all(Option::is_none) {
            return az;
        }
        let mut made: Vec<((Size, Size), Size)> = vec![];
        let mut k = 0;
        map_dims(&mut self.tcx, &az, false, &mut |tcx, s| {
            let d = differ.get(k).cloned().flatten();
            k += 1;
            match d {
                Some(pair) => {
                    if let Some((_, u)) = made.iter().find(|(p, _)| *p == pair) {
                        return u.clone();
                    }
                    let what = format!(
                        "the size of the branches of `if`, which differ: {} and {}",
                        pair.0, pair.1
                    );
                    let u = tcx.new_unknown("d", span, what);
                    made.push((pair, u.clone()));
                    u
                }
                None => s.clone(),
            }
        })
    }

    fn infer_match(&mut self, scrutinee: &mut Expr, cases: &mut [Case], span: Span) -> R<Type> {
        let st = self.infer(scrutinee)?;
        let rt = self.tcx.fresh(span);
        for c in cases.iter_mut() {
            let mark = self.locals.len();
            let level = self.enter_scope();
            let r = (|| {
                let mut binds = Vec::new();
                let pt = self.infer_pat(&mut c.pat, &mut binds)?;
                self.unify_at(
                    &st,
                    &pt,
                    c.pat.span,
                    "the pattern does not match the type of the matched value",
                )?;
                let bound: Vec<Name> = binds.iter().map(|(n, _, _)| n.clone()).collect();
                self.push_binds(binds);
                let bt = self.infer(&mut c.body)?;
                let bt = self.unscope(&bt, &bound, c.body.span, level)?;
                // Cases of different sizes are allowed, as for `if`.
                let lenient = std::mem::replace(&mut self.tcx.lenient_sizes, true);
                let r = self.unify_at(
                    &rt,
                    &bt,
                    c.body.span,
                    "the cases of `match` have different types",
                );
                self.tcx.lenient_sizes = lenient;
                r
            })();
            self.truncate_locals(mark);
            self.tcx.level = level;
            r?;
        }
        Ok(rt)
    }

    fn infer_loop(
        &mut self,
        sizes: &[Ident],
        pat: &mut Pat,
        init: &mut Option<Box<Expr>>,
        form: &mut LoopForm,
        body: &mut Expr,
        loop_span: Span,
    ) -> R<Type> {
        let mark = self.locals.len();
        let level = self.tcx.level;
        let r = (|| {
            let it = match init {
                Some(i) => Some(self.infer(i)?),
                None => None,
            };
            let it_shown = it.as_ref().map(|t| self.show(t));
            self.enter_scope();
            for s in sizes.iter() {
                self.push_local(s.name.clone(), LEntry::Size);
            }
            let size_vars_before = self.tcx.sizes.len();
            let mut binds = Vec::new();
            self.flexible_anonymous = true;
            let pt = self.infer_pat(pat, &mut binds);
            self.flexible_anonymous = false;
            let pt = pt?;
            // The sizes of the loop parameters against the initial values',
            // position by position (see `loop_param_sizes`).
            let mut init_pairs: Vec<(Size, Size)> = vec![];
            match it {
                Some(it) => {
                    let it2 = self.anon_sizes(&it);
                    self.unify_at(
                        &pt,
                        &it2,
                        pat.span,
                        "Initial loop values do not have expected type",
                    )?;
                    let (pz, iz) = (self.tcx.zonk(&pt), self.tcx.zonk(&it));
                    dim_pairs(&pz, &iz, &mut init_pairs, 0);
                }
                None => {
                    for (n, t, sp) in binds.iter() {
                        match self.lookup(n) {
                            Some(Found::Local(vt)) => {
                                let vt2 = self.anon_sizes(&vt);
                                self.unify_at(
                                    t,
                                    &vt2,
                                    *sp,
                                    "the loop parameter does not match the variable's type",
                                )?;
                                let (pz, vz) = (self.tcx.zonk(t), self.tcx.zonk(&vt));
                                dim_pairs(&pz, &vz, &mut init_pairs, 0);
                            }
                            _ => {
                                return Err(err(
                                    *sp,
                                    format!("Unknown name \"{n}\" (loop without initial value)"),
                                ))
                            }
                        }
                    }
                }
            }
            let loop_sizes: Vec<Name> = sizes.iter().map(|s| s.name.clone()).collect();
            self.check_declared_loop_sizes(
                &pt,
                it_shown.as_deref(),
                &init_pairs,
                size_vars_before,
                &loop_sizes,
                pat.span,
            )?;
            self.push_binds(binds);
            match form {
                LoopForm::For(i, bound) => {
                    let bt = self.infer(bound)?;
                    let ct = self.tcx.fresh_class(Class::Int, bound.span);
                    self.unify_at(&ct, &bt, bound.span, "the loop bound must be an integer")?;
                    self.push_local(i.name.clone(), LEntry::Var(bt));
                }
                LoopForm::ForIn(p, xs) => {
                    let xt = self.infer(xs)?;
                    let elem = self.tcx.fresh(xs.span);
                    let s = self.tcx.fresh_size();
                    let at = mk_array(elem.clone(), vec![s], false);
                    self.unify_at(&at, &xt, xs.span, "`for … in` needs an array")?;
                    let mut b2 = Vec::new();
                    let ptt = self.infer_pat(p, &mut b2)?;
                    self.unify_at(
                        &ptt,
                        &elem,
                        p.span,
                        "the pattern does not match the array's elements",
                    )?;
                    self.push_binds(b2);
                }
                LoopForm::While(c) => {
                    let ct = self.infer(c)?;
                    self.unify_at(&boolt(), &ct, c.span, "the loop condition must be bool")?;
                }
            }
            let unknowns_before = self.tcx.unknown_order.len();
            // The body is one scope deeper than the loop parameters: their
            // sizes cannot be sizes computed in one iteration.
            self.tcx.level += 1;
            self.tcx.loop_body_levels.push(self.tcx.level);
            let bt = self.infer(body);
            self.tcx.loop_body_levels.pop();
            self.tcx.level -= 1;
            let bt = bt?;
            // A size of the body's result that refers to a loop parameter,
            // or is unknown and made in the body, changes from one
            // iteration to the next.
            let mut bound: Vec<Name> = self.locals[mark..].iter().map(|(n, _)| n.clone()).collect();
            bound.extend(self.tcx.unknown_order[unknowns_before..].iter().cloned());
            // So are the sizes of the loop parameters still to be inferred
            // (`loop xs = xs for … do xs ++ xs`).
            bound.extend(
                (size_vars_before..self.tcx.sizes.len())
                    .filter(|&i| self.tcx.sizes[i].binding.is_none())
                    .map(|i| format!("?{i}")),
            );
            let unknowns_before = self.tcx.unknown_order.len();
            let variant =
                self.loop_param_sizes(&pt, &bt, &init_pairs, size_vars_before, level, body.span)?;
            // The loop computes its varying sizes (for the causality check).
            for n in &self.tcx.unknown_order[unknowns_before..] {
                if let Some(u) = self.tcx.unknowns.get_mut(n) {
                    u.span = loop_span;
                }
            }
            // The body may give an existential size any value.
            let pt_body = self.flexible_sizes_mentioning(&pt, &variant);
            let bt = self.flexible_sizes_mentioning(&bt, &bound);
            self.unify_at(
                &pt_body,
                &bt,
                body.span,
                "Loop body does not have expected type",
            )?;
            Ok(self.flexible_sizes_mentioning(&pt, &bound))
        })();
        self.truncate_locals(mark);
        self.tcx.level = level;
        r
    }

    /// The sizes a loop parameter's type states (`loop (ys: [n]i32) = xs`)
    /// must be the initial value's: "Initial loop values do not have
    /// expected type". Sizes still to be inferred (`init_pairs` entries
    /// whose parameter size is a flexible variable made for this loop, from
    /// index `first_var`) and the loop's own size parameters are decided
    /// after the body (see [`Checker::loop_param_sizes`]).
    fn check_declared_loop_sizes(
        &mut self,
        pt: &Type,
        init_shown: Option<&str>,
        init_pairs: &[(Size, Size)],
        first_var: usize,
        loop_sizes: &[Name],
        span: Span,
    ) -> R<()> {
        for (p, i) in init_pairs {
            let p = self.tcx.resolve_size(p);
            if self.is_loop_variable(&p, first_var) || loop_sizes.iter().any(|n| p.mentions(n)) {
                continue;
            }
            if let Err(detail) = self.tcx.unify_size(&p, i) {
                let expected = self.show(pt);
                let found = init_shown.map_or_else(String::new, |f| format!(", found `{f}`"));
                return Err(err(
                    span,
                    format!("Initial loop values do not have expected type: expected `{expected}`{found}"),
                )
                .with_note(detail));
            }
        }
        Ok(())
    }

    /// Whether `s` (resolved) is a flexible size variable made for the
    /// loop being checked (index `first_var` or later) and still unbound.
    fn is_loop_variable(&self, s: &Size, first_var: usize) -> bool {
        match s {
            Size::Var(v) if v.starts_with('?') => v[1..]
                .parse::<usize>()
                .is_ok_and(|k| k >= first_var && self.tcx.sizes[k].binding.is_none()),
            _ => false,
        }
    }

    /// Decides the sizes of a loop's parameters that no annotation gave,
    /// as Futhark does: a size is *invariant*, and is the initial value's
    /// size, when the body's result has, at every position of the
    /// parameter size, either the parameter's own size or the initial
    /// size; otherwise it changes across iterations and is an existential
    /// size of the loop (a fresh unknown size, `loop₀`, which matches no
    /// other size). The body's results at the positions of one parameter
    /// size must agree: "Loop body does not have expected type". Returns
    /// the names of the loop's existential sizes.
    fn loop_param_sizes(
        &mut self,
        pt: &Type,
        bt: &Type,
        init_pairs: &[(Size, Size)],
        first_var: usize,
        outer_level: u32,
        span: Span,
    ) -> R<Vec<Name>> {
        let mut variant = vec![];
        let (pz, bz) = (self.tcx.zonk(pt), self.tcx.zonk(bt));
        let mut body_pairs = vec![];
        dim_pairs(&pz, &bz, &mut body_pairs, 0);
        let mut candidates: Vec<Size> = vec![];
        for (p, _) in &body_pairs {
            let p = self.tcx.resolve_size(p);
            if self.is_loop_variable(&p, first_var) && !candidates.contains(&p) {
                candidates.push(p);
            }
        }
        for k in candidates {
            let inits: Vec<Size> = init_pairs
                .iter()
                .filter(|(p, _)| self.tcx.resolve_size(p) == k)
                .map(|(_, i)| self.tcx.resolve_size(i))
                .collect();
            let bodies: Vec<Size> = body_pairs
                .iter()
                .filter(|(p, _)| self.tcx.resolve_size(p) == k)
                .map(|(_, b)| self.tcx.resolve_size(b))
                .collect();
            let Some(first) = bodies.first().cloned() else {
                continue;
            };
            // A size the checker does not know (a slice's) decides nothing.
            if inits.iter().chain(&bodies).any(|s| *s == Size::Any) {
                continue;
            }
            for b in &bodies[1..] {
                let b = self.tcx.resolve_size(b);
                let first = self.tcx.resolve_size(&first);
                if b == first {
                    continue;
                }
                let flexible =
                    |s: &Size| matches!(s, Size::Var(v) if v.starts_with('?')) && *s != k;
                if (flexible(&b) || flexible(&first)) && self.tcx.unify_size(&first, &b).is_ok() {
                    continue;
                }
                return Err(err(
                    span,
                    format!(
                        "Loop body does not have expected type: the loop parameter's size \"{}\" would be both \"{}\" and \"{}\" after an iteration",
                        self.tcx.show_size(&k),
                        self.tcx.show_size(&first),
                        self.tcx.show_size(&b)
                    ),
                ));
            }
            let first = self.tcx.resolve_size(&first);
            let init = inits.first().cloned();
            // Initial sizes still to be inferred (those of an enclosing
            // loop's parameters) are the same size as the others here.
            let same_inits = inits.iter().all(|i| {
                let i = self.tcx.resolve_size(i);
                let init = init.as_ref().map(|s| self.tcx.resolve_size(s));
                Some(&i) == init.as_ref()
                    || init.is_some_and(|s| {
                        let flexible = |x: &Size| matches!(x, Size::Var(v) if v.starts_with('?'));
                        (flexible(&i) || flexible(&s)) && self.tcx.unify_size(&s, &i).is_ok()
                    })
            });
            let init = init.map(|s| self.tcx.resolve_size(&s));
            // One size of the parameter's type at positions where the
            // initial value has two different sizes: the initial value does
            // not have the parameter's type (whether or not the size varies).
            if !same_inits {
                let shown: Vec<String> = inits
                    .iter()
                    .map(|i| format!("\"{}\"", self.tcx.show_size(i)))
                    .collect();
                return Err(err(
                    span,
                    format!(
                        "Initial loop values do not have expected type: the body needs one size \"{}\" where the initial value has the sizes {}",
                        self.tcx.show_size(&k),
                        shown.join(" and ")
                    ),
                ));
            }
            let size = match init {
                Some(i) if same_inits && (first == k || first == i) => i,
                _ => {
                    let level = self.tcx.level;
                    self.tcx.level = outer_level;
                    let u = self.tcx.new_unknown(
                        "loop",
                        span,
                        "the size of a loop parameter that changes across iterations".into(),
                    );
                    self.tcx.level = level;
                    if let Size::Var(n) = &u {
                        variant.push(n.clone());
                    }
                    u
                }
            };
            if self.tcx.resolve_size(&k) == k {
                self.tcx.unify_size(&k, &size).map_err(|m| {
                    err(span, format!("Loop body does not have expected type: {m}"))
                })?;
            }
        }
        Ok(variant)
    }

    fn infer_update(
        &mut self,
        src: &mut Expr,
        path: &[Ident],
        indices: &mut [DimIndex],
        value: &mut Expr,
        span: Span,
    ) -> R<Type> {
        let t = self.infer(src)?;
        // `r with a.b[i] = v`: the array in field `a.b`.
        let mut at = t.clone();
        for f in path.iter() {
            at = self.project_type(&at, f)?;
        }
        let et = self.index_type_with(&at, indices, span, false)?;
        let vt = self.infer(value)?;
        self.unify_at(
            &et,
            &vt,
            value.span,
            "the new value's type does not match the array's elements",
        )?;
        Ok(t)
    }

    fn infer_record_update(&mut self, src: &mut Expr, path: &[Ident], value: &mut Expr) -> R<Type> {
        let t = self.infer(src)?;
        let mut ft = t.clone();
        for f in path.iter() {
            ft = self.project_type(&ft, f)?;
        }
        let vt = self.infer(value)?;
        // The new value may have other sizes than the old one.
        let lenient = std::mem::replace(&mut self.tcx.lenient_sizes, true);
        let fields: Vec<&str> = path.iter().map(|f| f.name.as_str()).collect();
        let what = format!(
            "Type mismatch when updating record field \"{}\"",
            fields.join(".")
        );
        let r = self.unify_at(&ft, &vt, value.span, &what);
        self.tcx.lenient_sizes = lenient;
        r?;
        // The field has the new value's type (sizes included).
        Ok(self.with_field_type(&t, &fields, vt))
    }
}

/// `t` (zonked as it is walked) with each array dimension `s` replaced by
/// `f(tcx, s)`, inside records and sums, and inside function types where
/// `into_functions`.
/// Whether an expression (a size argument or slice bound) binds names at
/// its top (`let m = n + 2 in m * m`): Futhark cannot use it as a size.
fn binds_names(e: &Expr) -> bool {
    matches!(
        strip_parens(e).kind,
        ExprKind::LetPat { .. }
            | ExprKind::LetFun { .. }
            | ExprKind::Loop { .. }
            | ExprKind::Match { .. }
    )
}

/// The value of an integer literal, possibly negated and in parentheses
/// (`1`, `(-1)`); `None` for any other expression.
fn int_literal(e: &Expr) -> Option<i128> {
    match &strip_parens(e).kind {
        ExprKind::Lit(Literal::Int { value, .. }) => Some(*value),
        ExprKind::Negate(x) => int_literal(x).map(|v| -v),
        _ => None,
    }
}

/// "Duplicate field `x`" in a record expression or record type.
fn duplicate_field(i: &Ident) -> Diagnostic {
    err(
        i.span,
        format!(
            "Duplicate field `{}`: it is previously defined in this record",
            i.name
        ),
    )
}

const UNROLL_WARNING: &str =
    "#[unroll] has no effect here: only a `for` loop whose bound is a constant can be unrolled";

/// Whether `#[unroll]` can apply to `e`: a `for i < k` loop with a constant
/// integer bound.
fn unrollable(e: &Expr) -> bool {
    match &strip_parens(e).kind {
        ExprKind::Loop {
            form: LoopForm::For(_, bound),
            ..
        } => int_literal(bound).is_some(),
        _ => false,
    }
}

/// The sizes of `a` and `b` (zonked types of the same form) position by
/// position: array dimensions, then the components of records, tuples and
/// sums (function types are not entered).
fn dim_pairs(a: &Type, b: &Type, out: &mut Vec<(Size, Size)>, depth: usize) {
    if depth > 200 {
        return;
    }
    match (a, b) {
        (
            Type::Array {
                elem: ea,
                shape: sa,
                ..
            },
            Type::Array {
                elem: eb,
                shape: sb,
                ..
            },
        ) => {
            out.extend(sa.iter().cloned().zip(sb.iter().cloned()));
            if sa.len() == sb.len() {
                dim_pairs(ea, eb, out, depth + 1);
            }
        }
        (Type::Record(fa), Type::Record(fb)) => {
            for ((na, ta), (nb, tb)) in fa.iter().zip(fb) {
                if na == nb {
                    dim_pairs(ta, tb, out, depth + 1);
                }
            }
        }
        (Type::Sum(ca), Type::Sum(cb)) => {
            for (na, ta) in ca {
                if let Some((_, tb)) = cb.iter().find(|(nb, _)| nb == na) {
                    for (x, y) in ta.iter().zip(tb) {
                        dim_pairs(x, y, out, depth + 1);
                    }
                }
            }
        }
        _ => {}
    }
}

fn map_dims(
    tcx: &mut Tcx,
    t: &Type,
    into_functions: bool,
    f: &mut dyn FnMut(&mut Tcx, &Size) -> Size,
) -> Type {
    match tcx.zonk(t) {
        Type::Array {
            elem,
            shape,
            unique,
        } => {
            let shape = shape.iter().map(|s| f(tcx, s)).collect();
            let e = map_dims(tcx, &elem, into_functions, f);
            mk_array(e, shape, unique)
        }
        t @ Type::Arrow { .. } if !into_functions => t,
        t => t.map_children(|c| map_dims(tcx, c, into_functions, f)),
    }
}

/// The type `*t`: uniqueness applies to every array in `t`, also inside
/// tuples and records (`*([]i64, []i64)` consumes both arrays).
fn make_unique(t: Type) -> Type {
    match t {
        Type::Array { elem, shape, .. } => Type::Array {
            elem,
            shape,
            unique: true,
        },
        Type::Acc { arr, .. } => Type::Acc { arr, unique: true },
        Type::Record(fs) => {
            Type::Record(fs.into_iter().map(|(n, t)| (n, make_unique(t))).collect())
        }
        t => t,
    }
}

/// Replaces any leftover unification variables by `()` (only reachable for
/// variables created outside the current definition; never observed).
fn subst_vars_unit(t: &Type) -> Type {
    match t {
        Type::Var(_) => Type::unit(),
        Type::Array {
            elem,
            shape,
            unique,
        } => mk_array(subst_vars_unit(elem), shape.clone(), *unique),
        t => t.map_children(subst_vars_unit),
    }
}

/// Replaces the types annotating `e`'s nodes (and its sub-expressions') by
/// their current substitution, for a copy of an expression that becomes a
/// size.
fn zonk_expr_types(tcx: &Tcx, e: &mut Expr) {
    let s = Size::Expr(match nabla_syntax::types::SizeExpr::new(e.clone()) {
        Some(x) => x,
        None => return,
    });
    if let Size::Expr(x) = s.map_expr_types(&mut |t| erase_sizes(&tcx.zonk(t), false)) {
        *e = x.expr().clone();
    }
}

/// `t` with each named parameter of its function types (`(m: i64) -> [m]t`)
/// that is one of `names` renamed (to `m'`, `m''`, …), so that a size
/// substituted into `t` that mentions `names` is not captured by it.
fn rename_arrow_params(t: &Type, names: &[Name]) -> Type {
    match t {
        Type::Arrow {
            param_name: Some(p),
            param,
            ret,
        } if names.contains(p) => {
            let mut fresh = format!("{p}'");
            while names.contains(&fresh) || mentions_size(ret, &fresh) {
                fresh.push('\'');
            }
            let ret = subst(ret, &|_| None, &|v: &str| {
                (v == p).then(|| Size::Var(fresh.clone()))
            });
            Type::Arrow {
                param_name: Some(fresh),
                param: Box::new(rename_arrow_params(param, names)),
                ret: Box::new(rename_arrow_params(&ret, names)),
            }
        }
        Type::Array { .. } | Type::Prim(_) | Type::Var(_) | Type::Param(_) => t.clone(),
        t => t.map_children(|c| rename_arrow_params(c, names)),
    }
}

/// Futhark's words for an application that does not type-check, naming
/// the function and the argument where they are names: `Cannot apply "f"
/// to "x" (invalid type): ` (empty where the function is no name).
fn cannot_apply_prefix(fname: &str, arg: &Expr) -> String {
    let Some(f) = fname.strip_prefix('`').and_then(|f| f.strip_suffix('`')) else {
        return String::new();
    };
    match &strip_parens(arg).kind {
        ExprKind::Var { name, .. } => {
            format!("Cannot apply \"{f}\" to \"{name}\" (invalid type): ")
        }
        _ => format!("Cannot apply \"{f}\" (invalid type): "),
    }
}

/// The candidate closest to `name` by edit distance (a swap of two
/// neighbouring letters counts as one edit), when it is a plausible typo:
/// at most two edits, and fewer edits than `name` has characters. Ties go
/// to the alphabetically first; `name` itself is no candidate.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = 2.min(name.chars().count().saturating_sub(1));
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == name || candidate.is_empty() {
            continue;
        }
        let d = strsim::osa_distance(name, candidate);
        if d <= limit && best.is_none_or(|(bd, bn)| (d, candidate) < (bd, bn)) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, n)| n.to_string())
}

/// Whether the expression `e` refers to one of the unqualified `names`.
fn mentions_any_name(e: &Expr, names: &[Name]) -> bool {
    if let ExprKind::Var { name, .. } = &e.kind {
        return name.quals.is_empty() && names.contains(&name.name);
    }
    let mut found = false;
    crate::recursion::for_each_child(e, &mut |c| found = found || mentions_any_name(c, names));
    found
}

/// `t` with any type variable left in it replaced by `()`.
fn unit_for_vars(t: Type) -> Type {
    let mut fv = Vec::new();
    collect_vars(&t, &mut fv);
    if fv.is_empty() {
        t
    } else {
        subst_vars_unit(&t)
    }
}
