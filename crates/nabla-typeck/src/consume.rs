//! Consumption (uniqueness) checking, run on each top-level definition once
//! its types are known.
//!
//! Follows the Futhark language reference, section "In-place updates" (and
//! the compiler's error index, "use-after-consume" / "not-consumable"):
//!
//! - A value is *consumed* by an in-place update (`a with [i] = v`,
//!   `let a[i] = v`), by being passed for a unique (`*`) parameter of a
//!   function (user-defined or intrinsic, e.g. `scatter`'s destination), and
//!   by being the initial value of a loop parameter that the loop body
//!   consumes (or that is declared unique).
//! - Consuming a value consumes everything it may *alias*. Aliases: `let b =
//!   a` (and pattern bindings, record/tuple projections, tracked per field),
//!   indexing and slicing (`a[i]` of a multi-dimensional array, `a[i:j]`),
//!   `if`/`match` (the union of the branches), loops (the initial values of
//!   parameters that are not consumed, and what the body returns), function
//!   results (the arguments passed for non-unique parameters, unless the
//!   declared return type is unique). `copy`, `map`, `iota`, literals, and
//!   `with`-updates give fresh values. Values of primitive type alias nothing.
//! - A consumed variable (or anything aliasing it) may not be used again.
//! - Only consumable variables may be consumed: `let`-bound variables, loop
//!   parameters and parameters of unique type. Not: non-unique parameters,
//!   `for … in` elements, top-level constants, and (inside a lambda, local
//!   function or loop body) anything bound outside that body.
//! - A function whose declared return type is unique may not return an alias
//!   of a non-unique parameter, and two unique components of a result may
//!   not alias each other; an argument passed for a unique parameter may
//!   not alias an argument evaluated before it (arguments are checked right
//!   to left, as Futhark evaluates them), and the consumed components of a
//!   tuple argument may not alias each other ("self-aliasing-arg").
//! - The result of a top-level function may not alias a top-level constant
//!   ("alias-free-variable").
//! - In `a with [i] = v` (and `let a[i] = v`) the value `v` may not alias
//!   `a`.
//! - A loop whose parameter consumes its initial value: the loop body may
//!   not use anything that initial value consumes (Futhark: "Loop body uses
//!   x (or an alias), but this is consumed by the initial loop argument").
//!   Uses in a `while` condition are not checked (Futhark's checker looks at
//!   the body only). The body's new value for such a (unique) parameter may
//!   not alias anything bound outside the loop.
//! - Higher-order functions (language reference, "Higher-order
//!   functions"): a call through a function value (a parameter of declared
//!   function type, a local function, a `let`-bound lambda or alias of a
//!   function) consumes the arguments of its declared unique parameters,
//!   and its non-unique array result aliases its other arguments (a value
//!   known only by an inferred type is taken to consume nothing, as
//!   inferred types carry uniqueness from unification); a function that consumes an argument may not be passed for
//!   a parameter whose function type does not consume, nor be given such a
//!   type by an ascription ("consuming-argument", "unify-consuming-param");
//!   `let p = e` may not bind a function when `e` performs an in-place
//!   update.
//! - Sum-type payloads bound by a pattern alias the matched value, and the
//!   elements of `for x in xs` alias `xs`.
//! - A call's result aliases what the callee's type says: for a top-level
//!   function with a declared return type, a non-unique array result
//!   aliases every argument it does not consume; without a declared return
//!   type the aliasing found in its body is used (Futhark infers the return
//!   type, and its uniqueness, from the body). Local functions and lambdas
//!   bound by `let` are never inferred to return unique arrays (as in
//!   Futhark): without a declared `*` result, their array results alias all
//!   their arguments, plus the free variables their bodies return.
//!
//! Every rule above only sees the aliasing this module tracks, which never
//! exceeds Futhark's, so they reject no program that Futhark accepts.
//!
//! Where it cannot tell what Futhark would decide, the analysis assumes
//! less aliasing and more consumability, so that every program Futhark
//! accepts is accepted (unannotated parameters are consumable; closures
//! reached through function parameters or data structures alias only their
//! arguments).

use crate::sig::Scheme;
use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

type R<T> = Result<T, Diagnostic>;

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, msg)
}

/// How a function treats one argument: observed, consumed, or (for a
/// record/tuple parameter) field by field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Diet {
    Observe,
    Consume,
    Rec(Vec<(Name, Diet)>),
}

impl Diet {
    fn consumes(&self) -> bool {
        match self {
            Diet::Observe => false,
            Diet::Consume => true,
            Diet::Rec(fs) => fs.iter().any(|(_, d)| d.consumes()),
        }
    }
}

/// What a function's result aliases: nothing (a unique or non-array
/// result), all its observed arguments (intrinsics with a non-unique array
/// result), the arguments of the given parameters (plus free variables of a
/// local function) as found from the function's body, or field by field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RetAls {
    Fresh,
    Args,
    Params(BTreeSet<usize>, BTreeSet<u32>),
    Rec(Vec<(Name, RetAls)>),
}

/// The uniqueness signature of a function: one diet per parameter and the
/// aliasing of its result once all parameters are given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FnSig {
    pub params: Vec<Diet>,
    pub ret: RetAls,
}

/// Everything the consumption checker knows about a top-level definition.
#[derive(Clone, Debug)]
pub(crate) struct GlobalInfo {
    pub name: Name,
    /// A monomorphic constant (no parameters): its value may be observed but
    /// never consumed.
    pub constant: bool,
    pub sig: Rc<FnSig>,
    /// The definition's declared type (with its unique parameters).
    pub ty: Option<Type>,
}

fn type_diet(t: Option<&Type>) -> Diet {
    match t {
        Some(Type::Array { unique: true, .. }) => Diet::Consume,
        Some(Type::Record(fs)) => {
            let ds: Vec<(Name, Diet)> = fs
                .iter()
                .map(|(n, t)| (n.clone(), type_diet(Some(t))))
                .collect();
            if ds.iter().any(|(_, d)| d.consumes()) {
                Diet::Rec(ds)
            } else {
                Diet::Observe
            }
        }
        _ => Diet::Observe,
    }
}

fn field_type<'a>(t: Option<&'a Type>, f: &str) -> Option<&'a Type> {
    match t {
        Some(Type::Record(fs)) => fs.iter().find(|(n, _)| n == f).map(|(_, t)| t),
        _ => None,
    }
}

/// The diet of a parameter pattern, from its type annotations (the innermost
/// annotation around each part decides).
pub(crate) fn pat_diet(p: &Pat, declared: Option<&Type>) -> Diet {
    match &p.kind {
        PatKind::Ascribe(inner, _) => pat_diet(inner, p.ty.as_ref()),
        PatKind::Tuple(ps) if ps.len() == 1 => pat_diet(&ps[0], declared),
        PatKind::Tuple(ps) => {
            let ds: Vec<(Name, Diet)> = ps
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    let n = i.to_string();
                    let d = pat_diet(q, field_type(declared, &n));
                    (n, d)
                })
                .collect();
            if ds.iter().any(|(_, d)| d.consumes()) {
                Diet::Rec(ds)
            } else {
                Diet::Observe
            }
        }
        PatKind::Record(fs) => {
            let ds: Vec<(Name, Diet)> = fs
                .iter()
                .map(|(i, q)| (i.name.clone(), pat_diet(q, field_type(declared, &i.name))))
                .collect();
            if ds.iter().any(|(_, d)| d.consumes()) {
                Diet::Rec(ds)
            } else {
                Diet::Observe
            }
        }
        _ => type_diet(declared),
    }
}

/// The result aliasing of a declared return type (a type parameter may be
/// instantiated with an array, so it aliases the arguments too).
pub(crate) fn ret_als(t: &Type) -> RetAls {
    match t {
        Type::Array { unique: false, .. } | Type::Param(_) => RetAls::Args,
        Type::Record(fs) => {
            let rs: Vec<(Name, RetAls)> = fs.iter().map(|(n, t)| (n.clone(), ret_als(t))).collect();
            if rs.iter().all(|(_, r)| *r == RetAls::Fresh) {
                RetAls::Fresh
            } else {
                RetAls::Rec(rs)
            }
        }
        _ => RetAls::Fresh,
    }
}

/// The signature of a call of `n` arguments to a function known only by the
/// type inferred for it (a record field, a partial application of an
/// unknown function): its parameters are taken to observe (an inferred type
/// may carry uniqueness from the arguments it was unified with, so it does
/// not show what the function consumes), and a non-unique array result
/// aliases every argument (Futhark's rule for the result of an
/// application). `None` if `t` is not a function of `n` parameters.
fn observing_sig(t: &Type, n: usize) -> Option<Rc<FnSig>> {
    let mut t = t;
    for _ in 0..n {
        let Type::Arrow { ret, .. } = t else {
            return None;
        };
        t = ret;
    }
    Some(Rc::new(FnSig {
        params: vec![Diet::Observe; n],
        ret: ret_als(t),
    }))
}

/// The signature of a function from its *declared* type (a parameter
/// annotated with a function type): its unique parameters consume.
fn declared_sig(t: &Type) -> FnSig {
    let mut params = Vec::new();
    let mut t = t;
    while let Type::Arrow { param, ret, .. } = t {
        params.push(type_diet(Some(param)));
        t = ret;
    }
    FnSig {
        params,
        ret: ret_als(t),
    }
}

/// An application `f a b` with nested partial applications `(f a) b`
/// flattened: the function applied and all its arguments, in order.
fn flatten_apply<'e>(f: &'e Expr, args: &'e [Expr]) -> (&'e Expr, Vec<&'e Expr>) {
    let mut f = f;
    let mut all: Vec<&Expr> = args.iter().collect();
    loop {
        match &f.kind {
            ExprKind::Parens(x) => f = x,
            ExprKind::Apply(g, xs) => {
                let mut v: Vec<&Expr> = xs.iter().collect();
                v.extend(all);
                all = v;
                f = g;
            }
            _ => return (f, all),
        }
    }
}

/// Whether a written function type (`[]f32 -> f32`) has no unique
/// parameter, so that giving it to a consuming function would hide the
/// consumption. Named types (abbreviations) are not looked into.
fn typeexp_hides_consumption(te: &TypeExp) -> bool {
    fn unique(te: &TypeExp) -> bool {
        match te {
            TypeExp::Unique(..) => true,
            TypeExp::Tuple(ts, _) => ts.iter().any(unique),
            TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| unique(t)),
            _ => false,
        }
    }
    fn arrows_observe(te: &TypeExp) -> bool {
        match te {
            TypeExp::Arrow(_, p, r, _) => !unique(p) && arrows_observe(r),
            TypeExp::Named(..) => false,
            _ => true,
        }
    }
    matches!(te, TypeExp::Arrow(..)) && arrows_observe(te)
}

/// `e` without parentheses and attributes around it.
fn peel(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Parens(x) | ExprKind::Attr(_, x) => peel(x),
        _ => e,
    }
}

/// Whether `e` is a lambda (possibly in parentheses or under attributes).
fn is_lambda(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lambda { .. } => true,
        ExprKind::Parens(x) | ExprKind::Attr(_, x) | ExprKind::Ascribe(x, _) => is_lambda(x),
        _ => false,
    }
}

/// The variable a pattern binds as a whole (`f`, `(f)`, `f: t`), if any.
fn pat_var_name(p: &Pat) -> Option<&str> {
    match &p.kind {
        PatKind::Id(i) => Some(&i.name),
        PatKind::Ascribe(q, _) => pat_var_name(q),
        PatKind::Tuple(ps) if ps.len() == 1 => pat_var_name(&ps[0]),
        _ => None,
    }
}

/// Whether values of type `t` are or contain functions.
fn contains_function(t: &Type) -> bool {
    match t {
        Type::Arrow { .. } => true,
        Type::Array { elem, .. } => contains_function(elem),
        Type::Record(fs) => fs.iter().any(|(_, t)| contains_function(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(contains_function),
        _ => false,
    }
}

/// Whether a function of type `t` consumes (some part of) one of its
/// arguments, in any of its curried parameters.
fn consumes_argument(t: &Type) -> bool {
    match t {
        Type::Arrow { param, ret, .. } => {
            type_diet(Some(param)).consumes() || consumes_argument(ret)
        }
        _ => false,
    }
}

/// The parameter diets of a function (after type checking: the patterns'
/// `ty` slots are filled).
fn param_diets(params: &[Pat]) -> Vec<Diet> {
    params.iter().map(|p| pat_diet(p, None)).collect()
}

/// The signature of an intrinsic, from its type scheme (`copy`'s `*a`
/// result is fresh).
pub(crate) fn intrinsic_sig(name: &str, s: &Scheme) -> FnSig {
    let mut params = Vec::new();
    let mut t = &s.ty;
    while let Type::Arrow { param, ret, .. } = t {
        params.push(type_diet(Some(param)));
        t = ret;
    }
    let ret = if name == "copy" {
        RetAls::Fresh
    } else {
        ret_als(t)
    };
    FnSig { params, ret }
}

/// Which parts of a declared return type are explicitly unique (`*`): only
/// those must not alias non-unique parameters.
#[derive(Clone, Debug, PartialEq)]
enum RetU {
    Unique,
    Other,
    Rec(Vec<(Name, RetU)>),
}

fn type_retu(t: &Type) -> RetU {
    match t {
        Type::Array { unique: true, .. } => RetU::Unique,
        Type::Record(fs) => RetU::Rec(fs.iter().map(|(n, t)| (n.clone(), type_retu(t))).collect()),
        _ => RetU::Other,
    }
}

fn te_retu(te: &TypeExp) -> RetU {
    match te {
        TypeExp::Unique(t, _) => te_retu_unique(t),
        TypeExp::Tuple(ts, _) if ts.len() == 1 => te_retu(&ts[0]),
        TypeExp::Tuple(ts, _) => RetU::Rec(
            ts.iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), te_retu(t)))
                .collect(),
        ),
        TypeExp::Record(fs, _) => RetU::Rec(
            fs.iter()
                .map(|(i, t)| (i.name.clone(), te_retu(t)))
                .collect(),
        ),
        _ => RetU::Other,
    }
}

/// The uniqueness of `*t`: every array in `t`, also inside tuples and
/// records, is unique.
fn te_retu_unique(te: &TypeExp) -> RetU {
    match te {
        TypeExp::Array(..) => RetU::Unique,
        TypeExp::Unique(t, _) => te_retu_unique(t),
        TypeExp::Tuple(ts, _) if ts.len() == 1 => te_retu_unique(&ts[0]),
        TypeExp::Tuple(ts, _) => RetU::Rec(
            ts.iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), te_retu_unique(t)))
                .collect(),
        ),
        TypeExp::Record(fs, _) => RetU::Rec(
            fs.iter()
                .map(|(i, t)| (i.name.clone(), te_retu_unique(t)))
                .collect(),
        ),
        _ => RetU::Other,
    }
}

/// The declared return type of a top-level definition (after its parameters).
fn vb_ret_type(vb: &ValBind) -> Option<&Type> {
    vb.ret.as_ref()?;
    let mut t = vb.ty.as_ref()?;
    for _ in 0..vb.params.len() {
        match t {
            Type::Arrow { ret, .. } => t = ret,
            _ => return None,
        }
    }
    Some(t)
}

// ------------------------------------------------------------------ aliases

/// The aliases of a value: a set of variable ids, or per field for records
/// and tuples.
#[derive(Clone, Debug)]
enum Als {
    Set(BTreeSet<u32>),
    Rec(Vec<(Name, Als)>),
}

impl Als {
    fn none() -> Als {
        Als::Set(BTreeSet::new())
    }

    fn flat(&self) -> BTreeSet<u32> {
        let mut out = BTreeSet::new();
        self.flat_into(&mut out);
        out
    }

    fn flat_into(&self, out: &mut BTreeSet<u32>) {
        match self {
            Als::Set(s) => out.extend(s.iter().copied()),
            Als::Rec(fs) => fs.iter().for_each(|(_, a)| a.flat_into(out)),
        }
    }

    fn field(&self, f: &str) -> Als {
        match self {
            Als::Rec(fs) => fs
                .iter()
                .find(|(n, _)| n == f)
                .map(|(_, a)| a.clone())
                .unwrap_or_else(Als::none),
            Als::Set(_) => self.clone(),
        }
    }

    fn union(&self, other: &Als) -> Als {
        match (self, other) {
            (Als::Rec(a), Als::Rec(b))
                if a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0) =>
            {
                Als::Rec(
                    a.iter()
                        .zip(b)
                        .map(|((n, x), (_, y))| (n.clone(), x.union(y)))
                        .collect(),
                )
            }
            _ => {
                let mut s = self.flat();
                other.flat_into(&mut s);
                Als::Set(s)
            }
        }
    }

    /// Shapes the aliases after type `t`: primitive parts alias nothing,
    /// records are tracked per field; functions (closures) are not tracked.
    fn mask(&self, t: Option<&Type>) -> Als {
        match t {
            Some(Type::Prim(_)) | Some(Type::Arrow { .. }) => Als::none(),
            Some(t @ Type::Sum(_)) if !has_array(t) => Als::none(),
            Some(Type::Record(fs)) => Als::Rec(
                fs.iter()
                    .map(|(n, ft)| (n.clone(), self.field(n).mask(Some(ft))))
                    .collect(),
            ),
            _ => Als::Set(self.flat()),
        }
    }

    fn retain(&self, keep: &dyn Fn(u32) -> bool) -> Als {
        match self {
            Als::Set(s) => Als::Set(s.iter().copied().filter(|&i| keep(i)).collect()),
            Als::Rec(fs) => Als::Rec(
                fs.iter()
                    .map(|(n, a)| (n.clone(), a.retain(keep)))
                    .collect(),
            ),
        }
    }

    /// Replaces the aliases of the field at `path` (a record update).
    fn set_field(&self, path: &[Ident], v: Als) -> Als {
        match path.split_first() {
            None => v,
            Some((f, rest)) => match self {
                Als::Rec(fs) => Als::Rec(
                    fs.iter()
                        .map(|(n, a)| {
                            if n == &f.name {
                                (n.clone(), a.set_field(rest, v.clone()))
                            } else {
                                (n.clone(), a.clone())
                            }
                        })
                        .collect(),
                ),
                Als::Set(_) => self.union(&v),
            },
        }
    }
}

// ------------------------------------------------------------------ checker

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A parameter of a function or lambda (consumable only if unique).
    Param,
    /// A `let`/`match`-bound variable or loop parameter.
    Let,
    /// The element variable of `for p in xs` (never consumable).
    ForIn,
    /// A top-level constant (never consumable).
    Global,
}

struct IdInfo {
    name: Name,
    consumable: bool,
    kind: Kind,
    span: Span,
    live: bool,
}

struct Var {
    name: Name,
    als: Als,
    sig: Option<Rc<FnSig>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BindMode {
    Let,
    Param,
    ForIn,
}

/// Maximum nesting the checker follows (the type checker already bounds it).
const MAX_DEPTH: usize = 20000;

struct Cx<'a> {
    globals: &'a HashMap<NodeId, GlobalInfo>,
    intrinsics: &'a HashMap<String, Rc<Scheme>>,
    intr_sigs: HashMap<String, Rc<FnSig>>,
    global_ids: HashMap<NodeId, u32>,
    ids: Vec<IdInfo>,
    vars: Vec<Var>,
    consumed: HashMap<u32, Span>,
    /// Ids below the innermost barrier are bound outside the current
    /// lambda/local function/loop body, and may not be consumed there.
    barriers: Vec<(u32, &'static str)>,
    /// While inside a loop body (`loop_depth > 0`): every use of a variable,
    /// as (alias id, span of the use, name used), for the rule that a loop
    /// body may not use what the loop's initial value consumes.
    uses: Vec<(u32, Span, Rc<str>)>,
    loop_depth: usize,
    depth: usize,
    /// How many in-place updates have been checked outside lambda and local
    /// function bodies (for the rule on `let`-bound functions).
    updates: usize,
    /// The signature of the lambda checked last (its result aliases its
    /// arguments and the free variables its body returns), for `let f =
    /// \x -> …`.
    last_lambda: Option<Rc<FnSig>>,
}

/// Checks the consumption rules in one type-checked top-level definition,
/// and gives its uniqueness signature (for the checks of later definitions).
/// Errors: the first violation, as a `Type` diagnostic at the offending use
/// or consumption, labelled with the earlier consumption or the binding.
pub(crate) fn check_valbind(
    vb: &ValBind,
    globals: &HashMap<NodeId, GlobalInfo>,
    intrinsics: &HashMap<String, Rc<Scheme>>,
) -> (FnSig, R<()>) {
    let mut cx = Cx {
        globals,
        intrinsics,
        intr_sigs: HashMap::new(),
        global_ids: HashMap::new(),
        ids: Vec::new(),
        vars: Vec::new(),
        consumed: HashMap::new(),
        barriers: Vec::new(),
        uses: Vec::new(),
        loop_depth: 0,
        depth: 0,
        updates: 0,
        last_lambda: None,
    };
    let params = param_diets(&vb.params);
    if let (true, Some(te)) = (vb.params.is_empty(), vb.ret.as_ref()) {
        if let Err(e) = cx.check_no_hidden_consumption(&vb.body, te, vb.name.span) {
            return (
                FnSig {
                    params,
                    ret: RetAls::Fresh,
                },
                Err(e),
            );
        }
    }
    match cx.function(
        &vb.params,
        vb_ret_type(vb).map(type_retu),
        &vb.body,
        "function",
    ) {
        Ok(ret) => {
            // Futhark: a call's result aliases what the callee's *type*
            // says: with a declared return type, a non-unique array result
            // aliases every argument not consumed.
            let ret = match vb_ret_type(vb) {
                Some(t) => ret_als(t),
                None => ret,
            };
            (FnSig { params, ret }, Ok(()))
        }
        Err(e) => (
            FnSig {
                params,
                ret: RetAls::Fresh,
            },
            Err(e),
        ),
    }
}

/// The innermost result expression of a body (through `let`s), for spans.
fn result_expr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::LetPat { body, .. }
        | ExprKind::LetFun { body, .. }
        | ExprKind::LetWith { body, .. } => result_expr(body),
        ExprKind::Parens(x) | ExprKind::Attr(_, x) => result_expr(x),
        _ => e,
    }
}

fn has_array(t: &Type) -> bool {
    match t {
        Type::Array { .. } => true,
        Type::Record(fs) => fs.iter().any(|(_, t)| has_array(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(has_array),
        _ => false,
    }
}

fn has_unique_or_param(t: &Type) -> bool {
    match t {
        Type::Array { unique, elem, .. } => *unique || has_unique_or_param(elem),
        Type::Record(fs) => fs.iter().any(|(_, t)| has_unique_or_param(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(has_unique_or_param),
        Type::Param(_) | Type::Var(_) => true,
        _ => false,
    }
}

/// Whether a parameter whose (innermost) declared type is `declared` may be
/// consumed in the body: unless it is declared as a non-unique array type.
/// Unannotated parameters are allowed (conservative).
fn param_consumable(declared: Option<&Type>) -> bool {
    match declared {
        None => true,
        Some(t) => !has_array(t) || has_unique_or_param(t),
    }
}

impl<'a> Cx<'a> {
    // ------------------------------------------------------------ bindings

    fn new_id(&mut self, name: &str, consumable: bool, kind: Kind, span: Span) -> u32 {
        let id = self.ids.len() as u32;
        self.ids.push(IdInfo {
            name: name.to_string(),
            consumable,
            kind,
            span,
            live: true,
        });
        id
    }

    /// Gives every leaf of `als` (shaped after `t`) a fresh id of its own,
    /// so that consuming one field of a record variable leaves the others.
    fn fresh_leaves(
        &mut self,
        als: &Als,
        t: Option<&Type>,
        name: &str,
        consumable: bool,
        kind: Kind,
        span: Span,
    ) -> Als {
        match t {
            Some(Type::Record(fs)) => Als::Rec(
                fs.iter()
                    .map(|(n, ft)| {
                        let a = self.fresh_leaves(
                            &als.field(n),
                            Some(ft),
                            name,
                            consumable,
                            kind,
                            span,
                        );
                        (n.clone(), a)
                    })
                    .collect(),
            ),
            _ => {
                let mut s = als.flat();
                s.insert(self.new_id(name, consumable, kind, span));
                Als::Set(s)
            }
        }
    }

    fn bind_var(
        &mut self,
        name: &str,
        ty: Option<&Type>,
        als: &Als,
        consumable: bool,
        kind: Kind,
        span: Span,
    ) {
        let als = als.mask(ty);
        let als = self.fresh_leaves(&als, ty, name, consumable, kind, span);
        self.vars.push(Var {
            name: name.to_string(),
            als,
            sig: None,
        });
    }

    /// Binds the variables of `p` to (the matching parts of) `als`.
    fn bind_pat(&mut self, p: &Pat, als: &Als, mode: BindMode, declared: Option<&Type>) {
        match &p.kind {
            PatKind::Id(i) => {
                let (consumable, kind) = match mode {
                    BindMode::Let => (true, Kind::Let),
                    BindMode::Param => (param_consumable(declared), Kind::Param),
                    BindMode::ForIn => (false, Kind::ForIn),
                };
                self.bind_var(&i.name, p.ty.as_ref(), als, consumable, kind, i.span);
                // A parameter of declared function type: calls of it consume
                // what its type's unique parameters say.
                if let (BindMode::Param, Some(t @ Type::Arrow { .. })) = (mode, declared) {
                    if let Some(v) = self.vars.last_mut() {
                        v.sig = Some(Rc::new(declared_sig(t)));
                    }
                }
            }
            PatKind::Ascribe(inner, _) => self.bind_pat(inner, als, mode, p.ty.as_ref()),
            PatKind::Tuple(ps) if ps.len() == 1 => self.bind_pat(&ps[0], als, mode, declared),
            PatKind::Tuple(ps) => {
                for (i, q) in ps.iter().enumerate() {
                    let n = i.to_string();
                    self.bind_pat(q, &als.field(&n), mode, field_type(declared, &n));
                }
            }
            PatKind::Record(fs) => {
                for (f, q) in fs.iter() {
                    self.bind_pat(q, &als.field(&f.name), mode, field_type(declared, &f.name));
                }
            }
            // A constructor's payload aliases the matched value as a whole
            // (payloads are not tracked one by one).
            PatKind::Constr(_, ps) => {
                let whole = Als::Set(als.flat());
                for q in ps {
                    self.bind_pat(q, &whole, mode, None);
                }
            }
            PatKind::Wildcard | PatKind::Lit(_) => {}
        }
    }

    /// Leaves a scope: drops the variables bound since `vmark` and marks
    /// the ids allocated since `imark` as out of scope.
    fn unbind(&mut self, vmark: usize, imark: usize) {
        self.vars.truncate(vmark);
        for i in self.ids.iter_mut().skip(imark) {
            if i.kind != Kind::Global {
                i.live = false;
            }
        }
    }

    /// Drops from `a` the ids bound since `imark` (gone out of scope), but
    /// keeps top-level constants.
    fn outer(&self, a: Als, imark: usize) -> Als {
        let ids = &self.ids;
        a.retain(&|i| {
            (i as usize) < imark || ids.get(i as usize).is_some_and(|x| x.kind == Kind::Global)
        })
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    fn global_id(&mut self, id: NodeId, span: Span) -> Option<u32> {
        if let Some(&i) = self.global_ids.get(&id) {
            return Some(i);
        }
        let g = self.globals.get(&id)?;
        if !g.constant {
            return None;
        }
        let name = g.name.clone();
        let i = self.new_id(&name, false, Kind::Global, span);
        self.global_ids.insert(id, i);
        Some(i)
    }

    fn callee_sig(&mut self, f: &Expr) -> Option<Rc<FnSig>> {
        match &f.kind {
            ExprKind::Parens(x) | ExprKind::Attr(_, x) | ExprKind::Ascribe(x, _) => {
                self.callee_sig(x)
            }
            ExprKind::Var { name, res, .. } => self.res_sig(&name.name, res.as_ref()),
            _ => None,
        }
    }

    fn res_sig(&mut self, name: &str, res: Option<&Res>) -> Option<Rc<FnSig>> {
        match res? {
            Res::Global(id) => self.globals.get(id).map(|g| g.sig.clone()),
            Res::Intrinsic(n) => {
                if let Some(s) = self.intr_sigs.get(n) {
                    return Some(s.clone());
                }
                let s = Rc::new(intrinsic_sig(n, self.intrinsics.get(n)?));
                self.intr_sigs.insert(n.clone(), s.clone());
                Some(s)
            }
            Res::Local => self.lookup(name).and_then(|v| v.sig.clone()),
            Res::Size => None,
        }
    }

    // ---------------------------------------------------------- consumption

    fn describe(&self, id: u32) -> String {
        match self.ids.get(id as usize) {
            Some(i) => format!("`{}`", i.name),
            None => "a value".to_string(),
        }
    }

    /// Reports a use of (an alias of) a consumed value (and, inside a loop
    /// body, records the use for [`Cx::loop_`]).
    fn check_not_consumed(&mut self, ids: &BTreeSet<u32>, span: Span, what: &str) -> R<()> {
        if self.loop_depth > 0 && !ids.is_empty() {
            let name: Rc<str> = Rc::from(what);
            self.uses
                .extend(ids.iter().map(|&i| (i, span, name.clone())));
        }
        for i in ids {
            if let Some(&at) = self.consumed.get(i) {
                let via = self.describe(*i);
                let alias = if format!("`{what}`") == via {
                    String::new()
                } else {
                    format!(" (it may alias {via})")
                };
                return Err(err(
                    span,
                    format!(
                        "`{what}` is used after being consumed{alias}; a consumed array may not be used again (use `copy` to keep a separate copy)"
                    ),
                )
                .with_label(at, format!("{via} consumed here")));
            }
        }
        Ok(())
    }

    /// Consumes the values with ids `ids` at `span`.
    fn consume(&mut self, ids: &BTreeSet<u32>, span: Span) -> R<()> {
        let barrier = self.barriers.last().copied();
        // The innermost binding explains best why something is not
        // consumable: a `for … in` element before the array it comes from.
        let mut order: Vec<u32> = ids.iter().copied().collect();
        order.sort_by_key(|&i| {
            let for_in = self
                .ids
                .get(i as usize)
                .is_some_and(|x| x.kind == Kind::ForIn);
            (!for_in, i)
        });
        for &i in &order {
            let Some(info) = self.ids.get(i as usize) else {
                continue;
            };
            if !info.live {
                continue;
            }
            let why = if !info.consumable {
                match info.kind {
                    Kind::Param => Some(
                        "it is a parameter without a unique type (declare it as `*[]t` to allow consuming it)".to_string(),
                    ),
                    Kind::ForIn => Some("it is bound by `for … in`".to_string()),
                    Kind::Global => Some("it is a top-level definition".to_string()),
                    Kind::Let => Some("it is not consumable".to_string()),
                }
            } else {
                match barrier {
                    Some((b, what)) if i < b => Some(format!(
                        "it is bound outside the enclosing {what}, which may not consume free variables"
                    )),
                    _ => None,
                }
            };
            if let Some(why) = why {
                let d = err(span, format!("cannot consume {}: {why}", self.describe(i)));
                return Err(if info.span != Span::default() {
                    d.with_label(info.span, format!("{} is bound here", self.describe(i)))
                } else {
                    d
                });
            }
        }
        for &i in ids {
            if let Some(&at) = self.consumed.get(&i) {
                return Err(err(
                    span,
                    format!(
                        "{} is consumed here, but it was already consumed",
                        self.describe(i)
                    ),
                )
                .with_label(at, "first consumed here"));
            }
        }
        for &i in ids {
            self.consumed.insert(i, span);
        }
        Ok(())
    }

    /// In-place updates (`a with [i] = v`, `let a[i] = v`): the value `v`
    /// must not alias the updated array `a` (Futhark language reference,
    /// "In-place updates"). Reported at `v`, labelled at `a`.
    fn check_update_value(&self, src: &Als, value: &Als, vspan: Span, sspan: Span) -> R<()> {
        let s = src.flat();
        match value.flat().intersection(&s).next() {
            None => Ok(()),
            Some(&i) => Err(err(
                vspan,
                format!(
                    "the value written by this in-place update may alias {}, which is the array being updated (use `copy` to write a separate copy)",
                    self.describe(i)
                ),
            )
            .with_label(sspan, "the array updated in place")),
        }
    }

    fn consume_diet(&mut self, diet: &Diet, als: &Als, span: Span) -> R<()> {
        match diet {
            Diet::Observe => Ok(()),
            Diet::Consume => self.consume(&als.flat(), span),
            Diet::Rec(ds) => {
                for (n, d) in ds {
                    self.consume_diet(d, &als.field(n), span)?;
                }
                Ok(())
            }
        }
    }

    /// Error index "self-aliasing-arg": the consumed components of a
    /// record or tuple argument must not alias each other (`g (x, x)` for
    /// `g (t: *([]i64, []i64))`), as the callee may update each separately.
    fn check_not_self_aliased(&self, diet: &Diet, als: &Als, span: Span) -> R<()> {
        let Diet::Rec(ds) = diet else {
            return Ok(());
        };
        let mut parts: Vec<(BTreeSet<u32>, bool)> = Vec::new();
        for (n, d) in ds {
            let field = als.field(n);
            self.check_not_self_aliased(d, &field, span)?;
            let mut ids = BTreeSet::new();
            field.flat_into(&mut ids);
            parts.push((self.live_ids(&ids), d.consumes()));
        }
        for (k, (a, ca)) in parts.iter().enumerate() {
            for (b, cb) in &parts[k + 1..] {
                if !(*ca || *cb) {
                    continue;
                }
                if let Some(&i) = a.intersection(b).next() {
                    return Err(err(
                        span,
                        format!(
                            "this argument is passed for a consuming (`*`) parameter, but its components may alias each other (both may be {}); pass separate arrays, e.g. with `copy`",
                            self.describe(i)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The ids of the parts of `als` that `diet` consumes.
    fn consumed_part(diet: &Diet, als: &Als, out: &mut BTreeSet<u32>) {
        match diet {
            Diet::Observe => {}
            Diet::Consume => als.flat_into(out),
            Diet::Rec(ds) => {
                for (n, d) in ds {
                    Self::consumed_part(d, &als.field(n), out);
                }
            }
        }
    }

    fn live_ids(&self, s: &BTreeSet<u32>) -> BTreeSet<u32> {
        s.iter()
            .copied()
            .filter(|&i| self.ids.get(i as usize).is_some_and(|x| x.live))
            .collect()
    }

    // ----------------------------------------------------------- functions

    /// A function (top-level or local): binds the parameters, checks the
    /// body, and (with a declared return type) the unique-return rule.
    /// Consumption inside the body does not escape. Returns what the result
    /// aliases, in terms of the parameters and free variables.
    fn function(
        &mut self,
        params: &[Pat],
        ret: Option<RetU>,
        body: &Expr,
        what: &'static str,
    ) -> R<RetAls> {
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        let saved = self.consumed.clone();
        self.barriers.push((imark as u32, what));
        let r = (|| {
            let mut ranges = Vec::new();
            for p in params {
                let a = self.ids.len() as u32;
                self.bind_pat(p, &Als::none(), BindMode::Param, None);
                ranges.push(a..self.ids.len() as u32);
            }
            let als = self.expr(body)?;
            if let Some(ret) = &ret {
                self.check_unique_return(ret, &als, imark as u32, body)?;
                self.check_unique_components(ret, &als, body)?;
            }
            if self.barriers.len() == 1 && !params.is_empty() {
                self.check_result_not_global(&als, body)?;
            }
            let ids = &self.ids;
            let free = |i: u32| {
                (i as usize) < imark || ids.get(i as usize).is_some_and(|x| x.kind == Kind::Global)
            };
            Ok(infer_ret(&als, &ranges, &free, ret.as_ref()))
        })();
        self.barriers.pop();
        self.consumed = saved;
        self.unbind(vmark, imark);
        r
    }

    /// Error index "alias-free-variable": the result of a top-level
    /// function may alias its parameters, but not a top-level constant.
    fn check_result_not_global(&self, als: &Als, body: &Expr) -> R<()> {
        let global = als.mask(body.ty.as_ref()).flat().into_iter().find(|&i| {
            self.ids
                .get(i as usize)
                .is_some_and(|x| x.kind == Kind::Global)
        });
        match global {
            None => Ok(()),
            Some(i) => Err(err(
                result_expr(body).span,
                format!(
                    "the function's result may alias the top-level definition {0}; a function's result may only alias its parameters (return `copy {1}` instead)",
                    self.describe(i),
                    self.ids.get(i as usize).map_or("it", |x| x.name.as_str())
                ),
            )),
        }
    }

    /// Error index "unique-return-aliased": two unique components of a
    /// result may not alias each other (`(xs, xs)` as `(*[]i32, *[]i32)`).
    fn check_unique_components(&self, ret: &RetU, als: &Als, body: &Expr) -> R<()> {
        fn unique_parts(ret: &RetU, als: &Als, out: &mut Vec<BTreeSet<u32>>) {
            match ret {
                RetU::Other => {}
                RetU::Unique => out.push(als.flat()),
                RetU::Rec(fs) => {
                    for (n, r) in fs {
                        unique_parts(r, &als.field(n), out);
                    }
                }
            }
        }
        let mut parts = Vec::new();
        unique_parts(ret, als, &mut parts);
        for (k, a) in parts.iter().enumerate() {
            for b in &parts[k + 1..] {
                if let Some(&i) = a.intersection(b).next() {
                    return Err(err(
                        result_expr(body).span,
                        format!(
                            "two unique (`*`) components of the result may alias each other (both may be {}); a unique result must not share memory with anything, so `copy` one of them",
                            self.describe(i)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_unique_return(&self, ret: &RetU, als: &Als, first: u32, body: &Expr) -> R<()> {
        match ret {
            RetU::Other => Ok(()),
            RetU::Rec(fs) => {
                for (n, r) in fs {
                    self.check_unique_return(r, &als.field(n), first, body)?;
                }
                Ok(())
            }
            RetU::Unique => {
                for &i in als.flat().iter() {
                    if i < first {
                        continue;
                    }
                    let Some(info) = self.ids.get(i as usize) else {
                        continue;
                    };
                    if info.kind == Kind::Param && !info.consumable {
                        let e = result_expr(body);
                        return Err(err(
                            e.span,
                            format!(
                                "the result is declared unique (`*`), but it may alias the parameter `{}`, which is not unique (use `copy`)",
                                info.name
                            ),
                        )
                        .with_label(info.span, "parameter declared here"));
                    }
                }
                Ok(())
            }
        }
    }

    // ---------------------------------------------------------- expressions

    fn dims(&mut self, idx: &[DimIndex]) -> R<()> {
        for d in idx {
            match d {
                DimIndex::Fix(e) => {
                    self.expr(e)?;
                }
                DimIndex::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.expr(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> R<Als> {
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            Err(err(e.span, "expression nested too deeply"))
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        Ok(r?.mask(e.ty.as_ref()))
    }

    fn observe_var(&mut self, name: &QualName, res: Option<&Res>, span: Span) -> R<Als> {
        match res {
            Some(Res::Local) => {
                let Some(v) = self.lookup(&name.name) else {
                    return Ok(Als::none());
                };
                let als = v.als.clone();
                let ids = als.flat();
                self.check_not_consumed(&ids, span, &name.name)?;
                Ok(als)
            }
            Some(Res::Global(id)) => match self.global_id(*id, span) {
                Some(i) => Ok(Als::Set(BTreeSet::from([i]))),
                None => Ok(Als::none()),
            },
            _ => Ok(Als::none()),
        }
    }

    fn apply(&mut self, f: &Expr, args: &[&Expr]) -> R<Als> {
        let sig = self
            .callee_sig(f)
            .or_else(|| f.ty.as_ref().and_then(|t| observing_sig(t, args.len())));
        self.check_function_args(f, args)?;
        let mut arg_als: Vec<Als> = vec![Als::none(); args.len()];
        // Futhark evaluates (and checks) arguments right to left.
        for k in (0..args.len()).rev() {
            let a = self.expr(args[k])?;
            if let Some(d) = sig.as_ref().and_then(|s| s.params.get(k)) {
                if d.consumes() {
                    self.check_not_self_aliased(d, &a, args[k].span)?;
                    let mut mine = BTreeSet::new();
                    Self::consumed_part(d, &a, &mut mine);
                    let mine = self.live_ids(&mine);
                    for (j, other) in arg_als.iter().enumerate().skip(k + 1) {
                        if let Some(&v) = other.flat().intersection(&mine).next() {
                            return Err(err(
                                args[k].span,
                                format!(
                                    "this argument is consumed, but it may alias {}, which another argument also uses",
                                    self.describe(v)
                                ),
                            )
                            .with_label(args[j].span, "the other argument"));
                        }
                    }
                    self.consume_diet(d, &a, args[k].span)?;
                }
            }
            arg_als[k] = a;
        }
        self.expr(f)?;
        let Some(sig) = sig else {
            return Ok(Als::none());
        };
        if sig.params.len() != args.len() {
            return Ok(Als::none());
        }
        Ok(build_ret(&sig.ret, &sig.params, &arg_als))
    }

    /// Futhark's second rule on uniqueness and higher-order functions: a
    /// function that consumes one of its arguments may not be passed as an
    /// argument to another function (which cannot promise how often, or to
    /// what, it will apply it) — unless that function's parameter is itself
    /// declared to consume (`f: *a -> b`).
    fn check_function_args(&mut self, f: &Expr, args: &[&Expr]) -> R<()> {
        let callee = self.declared_type(f).cloned();
        self.check_function_args_of(callee.as_ref(), args)
    }

    /// [`Cx::check_function_args`] for a callee of declared type `callee`.
    fn check_function_args_of(&mut self, callee: Option<&Type>, args: &[&Expr]) -> R<()> {
        let mut callee = callee;
        for a in args {
            let declared = match callee {
                Some(Type::Arrow { param, ret, .. }) => {
                    callee = Some(ret);
                    Some(&**param)
                }
                _ => {
                    callee = None;
                    None
                }
            };
            if declared.is_some_and(consumes_argument) || !self.function_value_consumes(a) {
                continue;
            }
            return Err(err(
                a.span,
                "this function consumes its argument (it has a unique `*` parameter), so it may not be passed to another function, which could apply it more than once; pass a function that works on a `copy` instead",
            ));
        }
        Ok(())
    }

    /// Whether the function value `e` consumes one of its arguments, as its
    /// declaration says: a top-level function, intrinsic, local function,
    /// parameter of annotated function type or `let`-bound lambda (also
    /// partially applied), or a lambda with a unique parameter. Values whose
    /// functions are not known this way are taken not to consume.
    fn function_value_consumes(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Parens(x) | ExprKind::Attr(_, x) | ExprKind::Ascribe(x, _) => {
                self.function_value_consumes(x)
            }
            ExprKind::Var { .. } => self
                .callee_sig(e)
                .is_some_and(|s| s.params.iter().any(Diet::consumes)),
            ExprKind::Apply(f, args) => {
                let (g, all) = flatten_apply(f, args);
                self.callee_sig(g)
                    .is_some_and(|s| s.params.iter().skip(all.len()).any(Diet::consumes))
            }
            ExprKind::Lambda { params, .. } => params.iter().any(|p| pat_diet(p, None).consumes()),
            _ => false,
        }
    }

    /// Error index "unify-consuming-param": a function that consumes its
    /// argument may not be given a type (by an ascription or a declared
    /// type) whose parameter does not consume, which would hide the
    /// consumption from its callers.
    fn check_no_hidden_consumption(&mut self, value: &Expr, target: &TypeExp, span: Span) -> R<()> {
        if !typeexp_hides_consumption(target) {
            return Ok(());
        }
        if self.function_value_consumes(value) {
            return Err(err(
                span,
                "this function consumes its argument (it has a unique `*` parameter), but the declared type does not consume; declare the parameter unique (`*`) in the type too, or make the function work on a `copy`",
            ));
        }
        Ok(())
    }

    /// The declared type of a name that resolved to `res`: a top-level
    /// definition's or an intrinsic's.
    fn declared_type_of_res(&self, res: Option<&Res>) -> Option<&Type> {
        match res? {
            Res::Global(id) => self.globals.get(id).and_then(|g| g.ty.as_ref()),
            Res::Intrinsic(n) => self.intrinsics.get(n).map(|s| &s.ty),
            Res::Local | Res::Size => None,
        }
    }

    /// The declared type of a callee, where it is known: the signature of a
    /// top-level definition (whose unique parameters the use site's
    /// instantiated type may not show), else the callee's own type.
    fn declared_type<'e>(&'e self, f: &'e Expr) -> Option<&'e Type> {
        match &f.kind {
            ExprKind::Parens(x) | ExprKind::Attr(_, x) => self.declared_type(x),
            ExprKind::Var {
                res: Some(Res::Global(id)),
                ..
            } => self
                .globals
                .get(id)
                .and_then(|g| g.ty.as_ref())
                .or(f.ty.as_ref()),
            ExprKind::Var {
                res: Some(Res::Intrinsic(n)),
                ..
            } => self.intrinsics.get(n).map(|s| &s.ty).or(f.ty.as_ref()),
            _ => f.ty.as_ref(),
        }
    }

    /// Checks branches (of `if`/`match`) separately from the same state;
    /// afterwards everything consumed in any branch is consumed.
    fn branches(&mut self, n: usize, mut f: impl FnMut(&mut Self, usize) -> R<Als>) -> R<Als> {
        let before = self.consumed.clone();
        let mut all = self.consumed.clone();
        let mut res: Option<Als> = None;
        for k in 0..n {
            self.consumed = before.clone();
            let a = f(self, k)?;
            for (i, s) in self.consumed.iter() {
                all.entry(*i).or_insert(*s);
            }
            res = Some(match res {
                None => a,
                Some(r) => r.union(&a),
            });
        }
        self.consumed = all;
        let cons = &self.consumed;
        Ok(res
            .unwrap_or_else(Als::none)
            .retain(&|i| !cons.contains_key(&i)))
    }

    fn expr_inner(&mut self, e: &Expr) -> R<Als> {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::ProjSection(_) | ExprKind::OpSection { .. } => {
                Ok(Als::none())
            }
            ExprKind::Var { name, res, .. } => self.observe_var(name, res.as_ref(), e.span),
            ExprKind::Ascribe(x, te) => {
                self.check_no_hidden_consumption(x, te, e.span)?;
                self.expr(x)
            }
            ExprKind::Parens(x)
            | ExprKind::Attr(_, x)
            | ExprKind::Coerce(x, _)
            | ExprKind::LocalOpen(_, x) => self.expr(x),
            ExprKind::Negate(x) | ExprKind::Not(x) => {
                self.expr(x)?;
                Ok(Als::none())
            }
            ExprKind::Tuple(xs) => {
                if xs.len() == 1 {
                    return self.expr(&xs[0]);
                }
                let mut out = Vec::new();
                for (i, x) in xs.iter().enumerate() {
                    out.push((i.to_string(), self.expr(x)?));
                }
                Ok(Als::Rec(out))
            }
            ExprKind::Record(fs) => {
                let mut out: Vec<(Name, Als)> = Vec::new();
                for f in fs {
                    match f {
                        RecordField::Named(i, x) => out.push((i.name.clone(), self.expr(x)?)),
                        RecordField::Pun(i) => {
                            let q = QualName {
                                quals: vec![],
                                name: i.name.clone(),
                                span: i.span,
                            };
                            let a = self.observe_var(&q, Some(&Res::Local), i.span)?;
                            out.push((i.name.clone(), a));
                        }
                    }
                }
                out.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(Als::Rec(out))
            }
            ExprKind::ArrayLit(xs) => {
                for x in xs {
                    self.expr(x)?;
                }
                Ok(Als::none())
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start)?;
                if let Some(s) = second {
                    self.expr(s)?;
                }
                self.expr(end)?;
                Ok(Als::none())
            }
            ExprKind::Project(x, f) => self.project(x, f),
            ExprKind::Index(x, idx) => {
                let a = self.expr(x)?;
                self.dims(idx)?;
                Ok(Als::Set(a.flat()))
            }
            ExprKind::Apply(f, args) => {
                let (f, args) = flatten_apply(f, args);
                self.apply(f, &args)
            }
            ExprKind::BinOp {
                op,
                op_res,
                lhs,
                rhs,
                ..
            } => self.binop(op, op_res.as_ref(), lhs, rhs),
            ExprKind::OpSectionLeft { lhs: x, .. } | ExprKind::OpSectionRight { rhs: x, .. } => {
                self.expr(x)?;
                Ok(Als::none())
            }
            ExprKind::Lambda { params, ret, body } => self.lambda(params, ret.as_ref(), body),
            ExprKind::LetPat {
                pat, value, body, ..
            } => self.let_pat(pat, value, body),
            ExprKind::LetFun {
                name,
                params,
                ret,
                value,
                body,
                ..
            } => self.let_fun(name, params, ret.as_ref(), value, body),
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => {
                let q = QualName {
                    quals: vec![],
                    name: dest.name.clone(),
                    span: dest.span,
                };
                let src = self.observe_var(&q, Some(&Res::Local), dest.span)?;
                self.dims(indices)?;
                let va = self.expr(value)?;
                self.check_update_value(&src, &va, value.span, dest.span)?;
                self.consume(&src.flat(), dest.span)?;
                self.updates += 1;
                let (vmark, imark) = (self.vars.len(), self.ids.len());
                self.bind_var(&dest.name, None, &Als::none(), true, Kind::Let, dest.span);
                let r = self.expr(body);
                self.unbind(vmark, imark);
                Ok(self.outer(r?, imark))
            }
            ExprKind::Update {
                src,
                indices,
                value,
            } => {
                self.dims(indices)?;
                let va = self.expr(value)?;
                let sa = self.expr(src)?;
                self.check_update_value(&sa, &va, value.span, src.span)?;
                self.consume(&sa.flat(), e.span)?;
                self.updates += 1;
                Ok(Als::none())
            }
            ExprKind::RecordUpdate { src, path, value } => {
                let sa = self.expr(src)?;
                let va = self.expr(value)?;
                Ok(sa.set_field(path, va))
            }
            ExprKind::If { cond, then_, else_ } => {
                self.expr(cond)?;
                self.branches(2, |cx, k| cx.expr(if k == 0 { then_ } else { else_ }))
            }
            ExprKind::Match { scrutinee, cases } => {
                let sa = self.expr(scrutinee)?;
                self.branches(cases.len(), |cx, k| {
                    let c = &cases[k];
                    let (vmark, imark) = (cx.vars.len(), cx.ids.len());
                    cx.bind_pat(&c.pat, &sa, BindMode::Let, None);
                    let r = cx.expr(&c.body);
                    cx.unbind(vmark, imark);
                    Ok(cx.outer(r?, imark))
                })
            }
            ExprKind::Constr(_, xs) => {
                let mut s = BTreeSet::new();
                for x in xs {
                    self.expr(x)?.mask(x.ty.as_ref()).flat_into(&mut s);
                }
                Ok(Als::Set(s))
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
                ..
            } => self.loop_(pat, init.as_deref(), form, body),
        }
    }

    /// `x.f`: the field of a record (of a local variable: only that field).
    fn project(&mut self, x: &Expr, f: &Ident) -> R<Als> {
        // `r.a.b` of a local variable observes only that field.
        let mut path = vec![f.name.as_str()];
        let mut cur: &Expr = x;
        loop {
            match &cur.kind {
                ExprKind::Project(y, g) => {
                    path.push(g.name.as_str());
                    cur = y;
                }
                ExprKind::Parens(y) => cur = y,
                _ => break,
            }
        }
        if let ExprKind::Var {
            name,
            res: Some(Res::Local),
            ..
        } = &cur.kind
        {
            if let Some(v) = self.lookup(&name.name) {
                let mut a = v.als.clone();
                for f in path.iter().rev() {
                    a = a.field(f);
                }
                self.check_not_consumed(&a.flat(), cur.span, &name.name)?;
                return Ok(a);
            }
        }
        Ok(self.expr(x)?.field(&f.name))
    }

    /// A binary operator application: a function applied to two arguments.
    fn binop(&mut self, op: &QualName, op_res: Option<&Res>, lhs: &Expr, rhs: &Expr) -> R<Als> {
        // An operator is a function applied to two arguments.
        let op_type = self.declared_type_of_res(op_res).cloned();
        self.check_function_args_of(op_type.as_ref(), &[lhs, rhs])?;
        let sig = self.res_sig(&op.name, op_res);
        let diet = |k: usize| {
            sig.as_ref()
                .and_then(|s| s.params.get(k).cloned())
                .unwrap_or(Diet::Observe)
        };
        let (d0, d1) = (diet(0), diet(1));
        // Operators: left to right.
        let la = self.expr(lhs)?;
        self.consume_diet(&d0, &la, lhs.span)?;
        let ra = self.expr(rhs)?;
        if d1.consumes() {
            let mut mine = BTreeSet::new();
            Self::consumed_part(&d1, &ra, &mut mine);
            let mine = self.live_ids(&mine);
            if let Some(&v) = la.flat().intersection(&mine).next() {
                return Err(err(
                    rhs.span,
                    format!(
                        "this operand is consumed, but it may alias {}, which the other operand also uses",
                        self.describe(v)
                    ),
                )
                .with_label(lhs.span, "the other operand"));
            }
        }
        self.consume_diet(&d1, &ra, rhs.span)?;
        self.observe_var(op, op_res, op.span)?;
        match sig {
            Some(s) if s.params.len() == 2 => Ok(build_ret(&s.ret, &s.params, &[la, ra])),
            _ => Ok(Als::none()),
        }
    }

    /// A lambda: checked as a function; remembered for a `let` binding it.
    fn lambda(&mut self, params: &[Pat], ret: Option<&TypeExp>, body: &Expr) -> R<Als> {
        let updates = self.updates;
        let declared = ret.map(te_retu);
        let r = self.function(params, declared.clone(), body, "lambda");
        self.updates = updates;
        let r = r?;
        // Remembered for a `let` that binds this lambda to a name.
        self.last_lambda = Some(Rc::new(FnSig {
            params: param_diets(params),
            ret: widen_to_declared(
                &r,
                &declared.unwrap_or(RetU::Other),
                body.ty.as_ref(),
                params.len(),
            ),
        }));
        Ok(Als::none())
    }

    /// `let pat = value in body`.
    fn let_pat(&mut self, pat: &Pat, value: &Expr, body: &Expr) -> R<Als> {
        if let PatKind::Ascribe(_, te) = &pat.kind {
            self.check_no_hidden_consumption(value, te, pat.span)?;
        }
        let updates_before = self.updates;
        let a = self.expr(value)?;
        if self.updates > updates_before && pat.ty.as_ref().is_some_and(contains_function) {
            return Err(err(
                pat.span,
                "this binds a function, but the bound expression performs an in-place update; Futhark forbids this, as the function could observe the update; do the update in a separate `let` first",
            ));
        }
        let lambda = self.last_lambda.take().filter(|_| is_lambda(value));
        // `let g = f`: `g` is called like `f`.
        let lambda = match lambda {
            Some(s) => Some(s),
            None => match &peel(value).kind {
                ExprKind::Var { .. } => self.callee_sig(peel(value)),
                _ => None,
            },
        };
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        self.bind_pat(pat, &a, BindMode::Let, None);
        if let (Some(sig), Some(name)) = (lambda, pat_var_name(pat)) {
            if let Some(v) = self.vars[vmark..].iter_mut().find(|v| v.name == name) {
                v.sig = Some(sig);
            }
        }
        let r = self.expr(body);
        self.unbind(vmark, imark);
        Ok(self.outer(r?, imark))
    }

    /// `let name params = value in body` (a local function).
    fn let_fun(
        &mut self,
        name: &Ident,
        params: &[Pat],
        ret: Option<&TypeExp>,
        value: &Expr,
        body: &Expr,
    ) -> R<Als> {
        let updates = self.updates;
        let declared = ret.map(te_retu);
        let r = self.function(params, declared.clone(), value, "function")?;
        self.updates = updates;
        // As for top-level functions, a declared non-unique array
        // result aliases every argument (and what the body's result
        // aliases among the free variables).
        // Without a declared return type the result is not unique
        // either (Futhark infers uniqueness only for top-level
        // functions).
        let r = widen_to_declared(
            &r,
            declared.as_ref().unwrap_or(&RetU::Other),
            value.ty.as_ref(),
            params.len(),
        );
        let sig = Rc::new(FnSig {
            params: param_diets(params),
            ret: r,
        });
        let vmark = self.vars.len();
        self.vars.push(Var {
            name: name.name.clone(),
            als: Als::none(),
            sig: Some(sig),
        });
        let r = self.expr(body);
        self.vars.truncate(vmark);
        r
    }

    fn loop_(&mut self, pat: &Pat, init: Option<&Expr>, form: &LoopForm, body: &Expr) -> R<Als> {
        // The initial value's aliases (checked after the body, as Futhark
        // does, but computed first for `loop x for …` without initialiser).
        // The bound or the array of `for … in` is evaluated outside the loop.
        let mut elements = Als::none();
        match form {
            LoopForm::For(_, b) => {
                self.expr(b)?;
            }
            LoopForm::ForIn(_, b) => {
                // The elements of `for x in xs` (rows, for a multi-dimensional
                // `xs`) alias `xs`.
                elements = Als::Set(self.expr(b)?.flat());
            }
            LoopForm::While(_) => {}
        }
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        let saved_after_form = self.consumed.clone();
        let uses_mark = self.uses.len();
        let mut body_uses = uses_mark..uses_mark;
        self.barriers.push((imark as u32, "loop body"));
        let r = (|| {
            self.bind_pat(pat, &Als::none(), BindMode::Let, None);
            let param_ids: Vec<(Name, BTreeSet<u32>)> = self.vars[vmark..]
                .iter()
                .map(|v| (v.name.clone(), v.als.flat()))
                .collect();
            match form {
                LoopForm::For(i, _) => {
                    self.bind_var(&i.name, None, &Als::none(), false, Kind::ForIn, i.span)
                }
                LoopForm::ForIn(p, _) => self.bind_pat(p, &elements, BindMode::ForIn, None),
                LoopForm::While(c) => {
                    self.expr(c)?;
                }
            }
            let first_use = self.uses.len();
            self.loop_depth += 1;
            let ba = self.expr(body);
            self.loop_depth -= 1;
            body_uses = first_use..self.uses.len();
            let ba = ba?;
            // Loop parameters consumed by the body.
            let consumed_params: BTreeSet<Name> = param_ids
                .iter()
                .filter(|(_, ids)| ids.iter().any(|i| self.consumed.contains_key(i)))
                .map(|(n, _)| n.clone())
                .collect();
            Ok((ba, consumed_params))
        })();
        self.barriers.pop();
        self.consumed = saved_after_form;
        self.unbind(vmark, imark);
        let result_span = result_expr(body).span;
        let r = r.and_then(|x| self.finish_loop(x, pat, init, &body_uses, imark, result_span));
        if self.loop_depth == 0 {
            self.uses.truncate(uses_mark);
        }
        r
    }

    /// The part of [`Cx::loop_`] after the body: the initial value, its
    /// consumption, and the loop's result aliases.
    fn finish_loop(
        &mut self,
        (body_als, consumed_params): (Als, BTreeSet<Name>),
        pat: &Pat,
        init: Option<&Expr>,
        body_uses: &std::ops::Range<usize>,
        imark: usize,
        result_span: Span,
    ) -> R<Als> {
        // The initial value, and what the body's consumption of the loop
        // parameters consumes in it.
        let init_als = match init {
            Some(i) => self.expr(i)?,
            None => {
                // `loop x for …`: the initial values are the variables of the
                // same names in the enclosing scope.
                self.implicit_init(pat)?
            }
        };
        let diet = loop_diet(pat, &consumed_params);
        // Futhark: the new value of a unique (consumed or `*`) loop parameter
        // may not alias anything bound outside the loop, which the next
        // iteration would otherwise update in place.
        let mut returned = BTreeSet::new();
        Self::consumed_part(&diet, &body_als.mask(pat.ty.as_ref()), &mut returned);
        if let Some(&i) = returned.iter().find(|&&i| {
            (i as usize) < imark
                || self
                    .ids
                    .get(i as usize)
                    .is_some_and(|x| x.kind == Kind::Global)
        }) {
            return Err(err(
                result_span,
                format!(
                    "the loop body returns, for a loop parameter that is unique (updated in place or declared `*`), a value that may alias {}, which is bound outside the loop; return a `copy` of it",
                    self.describe(i)
                ),
            ));
        }
        let span = init.map(|i| i.span).unwrap_or(pat.span);
        self.consume_diet(&diet, &init_als, span)?;
        // The loop body may not use anything the initial value consumes
        // (or an alias of it): Futhark's "Loop body uses x (or an alias),
        // but this is consumed by the initial loop argument".
        let mut gone = BTreeSet::new();
        Self::consumed_part(&diet, &init_als, &mut gone);
        if !gone.is_empty() {
            if let Some((i, at, name)) = self.uses[body_uses.clone()]
                .iter()
                .find(|(i, _, _)| gone.contains(i))
            {
                let via = self.describe(*i);
                let alias = if format!("`{name}`") == via {
                    String::new()
                } else {
                    format!(" (it may alias {via})")
                };
                return Err(err(
                    *at,
                    format!(
                        "the loop body uses `{name}`{alias}, but it is consumed by the loop's initial value (the loop parameter is updated in place; pass a `copy` as the initial value)"
                    ),
                )
                .with_label(span, format!("{via} consumed here by the loop's initial value")));
            }
        }
        let body_outer = self.outer(body_als, imark);
        let result = loop_result(&diet, &init_als)
            .mask(pat.ty.as_ref())
            .union(&body_outer.mask(pat.ty.as_ref()));
        let cons = &self.consumed;
        Ok(result.retain(&|i| !cons.contains_key(&i)))
    }

    fn implicit_init(&mut self, pat: &Pat) -> R<Als> {
        Ok(match &pat.kind {
            PatKind::Id(i) => {
                let q = QualName {
                    quals: vec![],
                    name: i.name.clone(),
                    span: i.span,
                };
                self.observe_var(&q, Some(&Res::Local), i.span)?
            }
            PatKind::Ascribe(p, _) => self.implicit_init(p)?,
            PatKind::Tuple(ps) if ps.len() == 1 => self.implicit_init(&ps[0])?,
            PatKind::Tuple(ps) => {
                let mut out = Vec::new();
                for (k, p) in ps.iter().enumerate() {
                    out.push((k.to_string(), self.implicit_init(p)?));
                }
                Als::Rec(out)
            }
            PatKind::Record(fs) => {
                let mut out = Vec::new();
                for (f, p) in fs {
                    out.push((f.name.clone(), self.implicit_init(p)?));
                }
                out.sort_by(|a, b| a.0.cmp(&b.0));
                Als::Rec(out)
            }
            _ => Als::none(),
        })
    }
}

/// The diet of a loop's parameter pattern: an unannotated parameter is
/// consumed if the body consumes it; an annotated one if it is declared
/// unique.
fn loop_diet(p: &Pat, consumed: &BTreeSet<Name>) -> Diet {
    match &p.kind {
        PatKind::Id(i) => {
            if consumed.contains(&i.name) {
                Diet::Consume
            } else {
                Diet::Observe
            }
        }
        // An annotated part keeps the annotation's uniqueness (as Futhark's
        // loop-parameter inference leaves annotated parts alone).
        PatKind::Ascribe(..) => pat_diet(p, None),
        PatKind::Tuple(ps) if ps.len() == 1 => loop_diet(&ps[0], consumed),
        PatKind::Tuple(ps) => Diet::Rec(
            ps.iter()
                .enumerate()
                .map(|(i, q)| (i.to_string(), loop_diet(q, consumed)))
                .collect(),
        ),
        PatKind::Record(fs) => Diet::Rec(
            fs.iter()
                .map(|(f, q)| (f.name.clone(), loop_diet(q, consumed)))
                .collect(),
        ),
        _ => Diet::Observe,
    }
}

/// A loop's result aliases the initial values of the parameters that are
/// not consumed.
fn loop_result(d: &Diet, init: &Als) -> Als {
    match d {
        Diet::Observe => init.clone(),
        Diet::Consume => Als::none(),
        Diet::Rec(ds) => Als::Rec(
            ds.iter()
                .map(|(n, d)| (n.clone(), loop_result(d, &init.field(n))))
                .collect(),
        ),
    }
}

/// What a function's result aliases, from its body's aliases `als`: the
/// parameters whose ids (`ranges`) occur, and the free ids; nothing for the
/// parts declared unique.
fn infer_ret(
    als: &Als,
    ranges: &[std::ops::Range<u32>],
    free: &dyn Fn(u32) -> bool,
    declared: Option<&RetU>,
) -> RetAls {
    if declared == Some(&RetU::Unique) {
        return RetAls::Fresh;
    }
    match als {
        Als::Rec(fs) => {
            let rs: Vec<(Name, RetAls)> = fs
                .iter()
                .map(|(n, a)| {
                    let d = match declared {
                        Some(RetU::Rec(ds)) => ds.iter().find(|(m, _)| m == n).map(|(_, d)| d),
                        _ => None,
                    };
                    (n.clone(), infer_ret(a, ranges, free, d))
                })
                .collect();
            if rs.iter().all(|(_, r)| *r == RetAls::Fresh) {
                RetAls::Fresh
            } else {
                RetAls::Rec(rs)
            }
        }
        Als::Set(s) => {
            let ps: BTreeSet<usize> = ranges
                .iter()
                .enumerate()
                .filter(|(_, r)| s.iter().any(|i| r.contains(i)))
                .map(|(k, _)| k)
                .collect();
            let fr: BTreeSet<u32> = s.iter().copied().filter(|&i| free(i)).collect();
            if ps.is_empty() && fr.is_empty() {
                RetAls::Fresh
            } else {
                RetAls::Params(ps, fr)
            }
        }
    }
}

/// The result aliasing of a function with a declared return type: `r` (from
/// its body) widened so that every non-unique array part of the result
/// aliases all `n` parameters; unique parts are fresh.
fn widen_to_declared(r: &RetAls, declared: &RetU, t: Option<&Type>, n: usize) -> RetAls {
    let field_of = |r: &RetAls, f: &str| match r {
        RetAls::Rec(fs) => fs
            .iter()
            .find(|(m, _)| m == f)
            .map_or(RetAls::Fresh, |(_, x)| x.clone()),
        other => other.clone(),
    };
    let collapse = |fs: Vec<(Name, RetAls)>| {
        if fs.iter().all(|(_, x)| *x == RetAls::Fresh) {
            RetAls::Fresh
        } else {
            RetAls::Rec(fs)
        }
    };
    match (declared, t) {
        (RetU::Unique, _) => RetAls::Fresh,
        (RetU::Rec(ds), _) => collapse(
            ds.iter()
                .map(|(f, d)| {
                    let ft = field_type(t, f);
                    (f.clone(), widen_to_declared(&field_of(r, f), d, ft, n))
                })
                .collect(),
        ),
        (RetU::Other, Some(Type::Record(fs))) => collapse(
            fs.iter()
                .map(|(f, ft)| {
                    (
                        f.clone(),
                        widen_to_declared(&field_of(r, f), &RetU::Other, Some(ft), n),
                    )
                })
                .collect(),
        ),
        (RetU::Other, Some(Type::Array { .. })) => {
            let free = match r {
                RetAls::Params(_, free) => free.clone(),
                _ => BTreeSet::new(),
            };
            RetAls::Params((0..n).collect(), free)
        }
        (RetU::Other, _) => r.clone(),
    }
}

/// The aliases of a call's result: see [`RetAls`]. Arguments passed for
/// consumed parameters are not aliased (they are gone).
fn build_ret(r: &RetAls, diets: &[Diet], args: &[Als]) -> Als {
    match r {
        RetAls::Fresh => Als::none(),
        RetAls::Args => {
            let mut s = BTreeSet::new();
            for (d, a) in diets.iter().zip(args) {
                if !d.consumes() {
                    a.flat_into(&mut s);
                }
            }
            Als::Set(s)
        }
        RetAls::Params(ps, free) => {
            let mut s = free.clone();
            for &k in ps {
                if let (Some(d), Some(a)) = (diets.get(k), args.get(k)) {
                    if !d.consumes() {
                        a.flat_into(&mut s);
                    }
                }
            }
            Als::Set(s)
        }
        RetAls::Rec(fs) => Als::Rec(
            fs.iter()
                .map(|(n, r)| (n.clone(), build_ret(r, diets, args)))
                .collect(),
        ),
    }
}
