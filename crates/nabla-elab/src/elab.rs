//! The core of elaboration: static values, environments, expressions,
//! patterns, function instantiation and inlining.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use nabla_ir::{self as ir, Atom, Dim, Exp, Param, PrimType, PrimValue, Var};
use nabla_syntax::ast::{
    self, Expr, ExprKind, Ident, Literal, NodeId, Pat, PatKind, Res, SizeExp, TypeExp, TypeParam,
    ValBind,
};
use nabla_syntax::types::{Name, Size, Type as STy};
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};

use crate::fb::{self, atom_dim, boolc, i64c, join_ty, sanitize, FunBuilder};

mod specialise;
use specialise::Statics;

pub(crate) type R<T> = Result<T, Diagnostic>;

pub(crate) fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Elaboration, span, msg)
}

/// Type substitution for the type parameters of the definition being elaborated.
pub(crate) type Subst = Rc<HashMap<Name, STy>>;

/// Maximum nesting of inlined function bodies (guards against recursion).
const MAX_INLINE: usize = 256;
/// Maximum expression nesting depth.
const MAX_DEPTH: usize = 6000;

/// The most expressions elaboration visits in a whole program (function
/// values are inlined at their applications, so a program can grow
/// exponentially here): past it, elaboration stops with an error instead of
/// exhausting memory.
const MAX_ELAB_STEPS: usize = 5_000_000;

/// A value during elaboration: a first-order value flattened into atoms
/// (with its semantic type, used for its structure), a record holding at
/// least one static (function) component, a static function, or a value of
/// a sum type with a function in some payload.
#[derive(Clone)]
pub(crate) enum SV<'a> {
    Dyn(Vec<Atom>, STy),
    Rec(Vec<(Name, SV<'a>)>),
    Fun(Rc<Clo<'a>>),
    /// A value of a sum type that is not first-order (`#bar (+ 5)` of
    /// `#foo i32 | #bar (i32 -> i32)`): its constructor and payloads. Its
    /// constructor is known statically, since Futhark lets
    /// no such value come out of a branch or a loop, the only places where
    /// it could vary; a `match` on it picks its case at compile time.
    Constr(Name, Vec<SV<'a>>),
}

/// A static function value (defunctionalisation by static values).
pub(crate) enum Clo<'a> {
    /// A lambda or a local function: its parameters, body, captured environment.
    Lambda {
        params: &'a [Pat],
        body: &'a Expr,
        env: Env<'a>,
        subst: Subst,
        type_params: &'a [TypeParam],
    },
    /// A top-level function instantiated at `subst`; `ty` is its type at the
    /// reference (instantiated by the type checker) and `env` the environment
    /// there, used to bind size parameters that the arguments do not
    /// determine (`split`'s `[n]` from the result type at the call).
    Global {
        id: NodeId,
        subst: Subst,
        ty: Option<STy>,
        env: Env<'a>,
        /// Size parameters given by size expressions in coerced arguments
        /// (see [`Elab::size_hints`]).
        hints: Vec<(Name, Atom)>,
    },
    /// A built-in; `ty` is its (instantiated) type at the reference, `env` the
    /// environment there (for sizes named in `ty`).
    /// `hints`: sizes given by a coerced argument (`unflatten (xs :> [n*m]t)`).
    Intrinsic {
        name: String,
        ty: STy,
        env: Env<'a>,
        hints: Vec<Atom>,
    },
    /// A partial application.
    Partial { f: Rc<Clo<'a>>, args: Vec<SV<'a>> },
    /// `(op rhs)`: `\x -> op x rhs`.
    RightSection { op: SV<'a>, rhs: SV<'a> },
    /// `(.a.b)`.
    ProjSection(&'a [Ident]),
}

/// A persistent environment (linked list; cheap to capture in closures).
#[derive(Clone, Default)]
pub(crate) struct Env<'a>(Option<Rc<EnvNode<'a>>>);

pub(crate) struct EnvNode<'a> {
    name: Name,
    val: SV<'a>,
    next: Env<'a>,
}

impl<'a> Env<'a> {
    pub fn bind(&self, name: &str, val: SV<'a>) -> Env<'a> {
        Env(Some(Rc::new(EnvNode {
            name: name.to_string(),
            val,
            next: self.clone(),
        })))
    }
    pub fn get(&self, name: &str) -> Option<&SV<'a>> {
        let mut cur = &self.0;
        while let Some(n) = cur {
            if n.name == name {
                return Some(&n.val);
            }
            cur = &n.next.0;
        }
        None
    }
}

/// Marks a `#[break]` expression (at `span`) for a debugger: a statement
/// copying the scalar and array variables in scope that the program named
/// (the innermost binding
/// of each name) into variables of the same names, in the order they were
/// bound. The interpreter offers every such copy to its debug hook
/// (`nabla_interp::DebugHook`), which stops there and shows them; the
/// optimiser removes it as dead code.
fn break_mark(fb: &mut FunBuilder, env: &Env<'_>, span: Span) {
    let mut seen = HashSet::new();
    let mut visible = Vec::new();
    let mut cur = &env.0;
    while let Some(node) = cur {
        // Sizes the type checker named (`n₀`) are not the program's names.
        let named = node
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_'".contains(c));
        if seen.insert(node.name.as_str()) && named {
            if let SV::Dyn(atoms, _) = &node.val {
                if let [atom] = atoms.as_slice() {
                    let ty = fb.atom_ty(*atom);
                    if !matches!(ty, ir::Type::Acc(..)) {
                        visible.push((node.name.as_str(), *atom, ty));
                    }
                }
            }
        }
        cur = &node.next.0;
    }
    visible.reverse();
    let mut pat = Vec::with_capacity(visible.len());
    let mut atoms = Vec::with_capacity(visible.len());
    for (name, atom, ty) in visible {
        pat.push(ir::Param::new(fb.var(name, ty.clone()), ty));
        atoms.push(atom);
    }
    fb.push(pat, ir::Exp::Atoms(atoms), span);
}

/// The elaboration context of an expression.
#[derive(Clone, Default)]
pub(crate) struct Ctx<'a> {
    pub env: Env<'a>,
    pub subst: Subst,
}

/// Whole-program elaboration state.
pub(crate) struct Elab<'a> {
    pub defs: HashMap<NodeId, &'a ValBind>,
    pub funs: Vec<Option<ir::Function>>,
    cache: HashMap<String, ir::FunId>,
    /// The definitions whose bodies use themselves (recursive functions).
    recursive: HashSet<NodeId>,
    /// The result types of the IR functions being built, as their
    /// recursive calls see them (every dimension existential).
    provisional: HashMap<ir::FunId, Vec<ir::Type>>,
    /// The names the code of each lambda may look up (see
    /// `specialise`), by body.
    lambda_names: HashMap<*const Expr, Rc<Vec<Name>>>,
    inline_depth: usize,
    depth: usize,
    /// Expressions elaborated so far, in all functions (see [`MAX_ELAB_STEPS`]).
    steps: usize,
    /// The source text, when the caller has it (for messages that quote it).
    pub sources: Option<&'a nabla_syntax::SourceMap>,
    /// Copies of the compound size expressions the elaborator evaluates
    /// (a type's `[n * m]`), kept for as long as the program's own
    /// expressions, which elaboration borrows.
    size_exprs: &'a typed_arena::Arena<Expr>,
    /// The streams being elaborated as sequential loops, innermost last
    /// (see `accs.rs`): while there is one, an accumulator is the array
    /// itself, and a write combines into it with the innermost stream's
    /// operator (`None`: a scatter's overwrite).
    pub(crate) seq_streams: Vec<Option<SV<'a>>>,
}

// ---------------------------------------------------------------------------
// Semantic type helpers
// ---------------------------------------------------------------------------

/// Applies a substitution of type parameters.
pub(crate) fn subst_ty(t: &STy, s: &HashMap<Name, STy>) -> STy {
    if s.is_empty() {
        return t.clone();
    }
    match t {
        STy::Param(n) => match s.get(n) {
            Some(r) => r.clone(),
            None => t.clone(),
        },
        // A parameter may become an array type: re-normalise the nesting.
        STy::Array {
            elem,
            shape,
            unique,
        } => array_of_shape(subst_ty(elem, s), shape.clone(), *unique),
        _ => t.map_children(|c| subst_ty(c, s)),
    }
}

/// `shape elem`, merging when `elem` is itself an array.
pub(crate) fn array_of_shape(elem: STy, mut shape: Vec<Size>, unique: bool) -> STy {
    if shape.is_empty() {
        return elem;
    }
    match elem {
        STy::Array {
            elem, shape: inner, ..
        } => {
            shape.extend(inner);
            STy::Array {
                elem,
                shape,
                unique,
            }
        }
        e => STy::Array {
            elem: Box::new(e),
            shape,
            unique,
        },
    }
}

/// `[size]t`.
pub(crate) fn sty_array_of(t: &STy, size: Size) -> STy {
    array_of_shape(t.clone(), vec![size], false)
}

/// The row type of an array type.
pub(crate) fn sty_row(t: &STy) -> STy {
    match t {
        STy::Array {
            elem,
            shape,
            unique,
        } => {
            if shape.len() > 1 {
                STy::Array {
                    elem: elem.clone(),
                    shape: shape[1..].to_vec(),
                    unique: *unique,
                }
            } else {
                (**elem).clone()
            }
        }
        t => t.clone(),
    }
}

/// The flattened components of a type: (element type, shape) per IR value.
pub(crate) fn flat(t: &STy) -> Result<Vec<(PrimType, Vec<Size>)>, String> {
    let mut out = vec![];
    flat_into(t, &[], &mut out, 0)?;
    Ok(out)
}

fn flat_into(
    t: &STy,
    outer: &[Size],
    out: &mut Vec<(PrimType, Vec<Size>)>,
    depth: usize,
) -> Result<(), String> {
    if depth > 200 {
        return Err("type nested too deeply".into());
    }
    match t {
        STy::Prim(p) => out.push((*p, outer.to_vec())),
        STy::Array { elem, shape, .. } => {
            let mut o = outer.to_vec();
            o.extend(shape.iter().cloned());
            flat_into(elem, &o, out, depth + 1)?;
        }
        STy::Record(fs) => {
            for (_, f) in fs {
                flat_into(f, outer, out, depth + 1)?;
            }
        }
        STy::Sum(cs) => {
            out.push((PrimType::I8, outer.to_vec()));
            for (_, ts) in cs {
                for t in ts {
                    flat_into(t, outer, out, depth + 1)?;
                }
            }
        }
        // An accumulator is one IR accumulator per component of its array.
        STy::Acc { arr, .. } => flat_into(arr, outer, out, depth + 1)?,
        STy::Arrow { .. } => {
            return Err(format!(
                "a function type ({t}) cannot be used as a value here"
            ))
        }
        STy::Param(n) => return Err(format!("type parameter {n} was not instantiated")),
        STy::Var(_) => return Err("an unresolved type variable remains (type checker bug)".into()),
    }
    Ok(())
}

/// The uniqueness (`*`) of each flattened component of a type, in the order
/// of [`flat`]: a component is unique when an array type around it is.
pub(crate) fn flat_unique(t: &STy) -> Vec<bool> {
    fn go(t: &STy, unique: bool, out: &mut Vec<bool>, depth: usize) {
        if depth > 200 {
            return;
        }
        match t {
            STy::Prim(_) => out.push(unique),
            STy::Array {
                elem, unique: u, ..
            } => go(elem, unique || *u, out, depth + 1),
            STy::Record(fs) => fs.iter().for_each(|(_, f)| go(f, unique, out, depth + 1)),
            STy::Sum(cs) => {
                out.push(false);
                for (_, ts) in cs {
                    ts.iter().for_each(|t| go(t, unique, out, depth + 1));
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    go(t, false, &mut out, 0);
    out
}

/// For each flattened component of a type (in the order of [`flat`]),
/// whether it is an accumulator (a component of an `acc` type's array).
pub(crate) fn flat_acc(t: &STy) -> Vec<bool> {
    fn go(t: &STy, acc: bool, out: &mut Vec<bool>, depth: usize) {
        if depth > 200 {
            return;
        }
        match t {
            STy::Prim(_) => out.push(acc),
            STy::Array { elem, .. } => go(elem, acc, out, depth + 1),
            STy::Record(fs) => fs.iter().for_each(|(_, f)| go(f, acc, out, depth + 1)),
            STy::Sum(cs) => {
                out.push(acc);
                for (_, ts) in cs {
                    ts.iter().for_each(|t| go(t, acc, out, depth + 1));
                }
            }
            STy::Acc { arr, .. } => go(arr, true, out, depth + 1),
            _ => {}
        }
    }
    let mut out = vec![];
    go(t, false, &mut out, 0);
    out
}

/// Whether a type is or contains an accumulator.
pub(crate) fn has_acc(t: &STy) -> bool {
    flat_acc(t).contains(&true)
}

/// Number of flat IR values of a type.
pub(crate) fn nflat(t: &STy) -> Result<usize, String> {
    flat(t).map(|v| v.len())
}

/// True if the type contains no function types and no type parameters.
pub(crate) fn first_order(t: &STy) -> bool {
    flat(t).is_ok()
}

/// Peels `n` arrows off a function type; returns the parameter types and the result.
pub(crate) fn peel(t: &STy, n: usize) -> (Vec<STy>, Option<STy>) {
    let mut ps = vec![];
    let mut cur = t;
    for _ in 0..n {
        match cur {
            STy::Arrow { param, ret, .. } => {
                ps.push((**param).clone());
                cur = ret;
            }
            _ => return (ps, None),
        }
    }
    (ps, Some(cur.clone()))
}

/// Size names used in a type's shapes.
fn size_names(t: &STy, out: &mut Vec<Name>) {
    match t {
        STy::Array { elem, shape, .. } => {
            for s in shape {
                if let Size::Var(n) = s {
                    if !out.contains(n) {
                        out.push(n.clone());
                    }
                }
            }
            size_names(elem, out);
        }
        STy::Record(fs) => fs.iter().for_each(|(_, t)| size_names(t, out)),
        STy::Sum(cs) => cs
            .iter()
            .for_each(|(_, ts)| ts.iter().for_each(|t| size_names(t, out))),
        _ => {}
    }
}

/// `t` without uniqueness marks: a type argument is instantiated without
/// them (`id (transpose xs)` instantiates `id`'s `t` with `[m][n]f64`, not
/// with the unique type of `transpose`'s result), so a parameter or result
/// of type `t` is unique only where the definition writes `*`.
fn nonunique(t: &STy) -> STy {
    match t {
        STy::Array { elem, shape, .. } => STy::Array {
            elem: Box::new(nonunique(elem)),
            shape: shape.clone(),
            unique: false,
        },
        _ => t.map_children(nonunique),
    }
}

/// `t` with every size not bound by one of its own arrows (`(n: i64) -> [n]t`)
/// replaced by `f(size)`.
fn map_free_sizes(t: &STy, bound: &mut Vec<Name>, f: &mut impl FnMut(&Size) -> Size) -> STy {
    match t {
        STy::Array {
            elem,
            shape,
            unique,
        } => {
            let shape = shape
                .iter()
                .map(|s| match s {
                    Size::Var(n) if bound.contains(n) => s.clone(),
                    _ => f(s),
                })
                .collect();
            array_of_shape(map_free_sizes(elem, bound, f), shape, *unique)
        }
        STy::Arrow {
            param_name,
            param,
            ret,
        } => {
            let param = map_free_sizes(param, bound, f);
            bound.extend(param_name.iter().cloned());
            let ret = map_free_sizes(ret, bound, f);
            if param_name.is_some() {
                bound.pop();
            }
            STy::Arrow {
                param_name: param_name.clone(),
                param: Box::new(param),
                ret: Box::new(ret),
            }
        }
        _ => t.map_children(|c| map_free_sizes(c, bound, f)),
    }
}

/// An instantiation with the sizes of its type arguments left out (how an
/// IR function shared by instantiations differing in sizes is named).
fn erase_subst_sizes(s: &Subst) -> Subst {
    Rc::new(
        s.iter()
            .map(|(n, t)| {
                (
                    n.clone(),
                    map_free_sizes(t, &mut vec![], &mut |_| Size::Any),
                )
            })
            .collect(),
    )
}

/// An instantiation independent of the caller's variables, for an IR
/// function shared by the calls that differ only in them: each distinct size
/// variable in the type arguments becomes `@0`, `@1`, … in order of
/// appearance (type parameters by name), a name no program can write (the
/// constants stay: they are part of the instantiation); the second result
/// is the caller's size each stands for.
fn generic_inst(s: &Subst) -> (Subst, Vec<Size>) {
    let mut sizes: Vec<Size> = Vec::new();
    let mut names: Vec<&Name> = s.keys().collect();
    names.sort();
    let mut out = HashMap::new();
    for n in names {
        let t = map_free_sizes(&s[n], &mut vec![], &mut |z| match z {
            Size::Any | Size::Const(_) => z.clone(),
            z => {
                let k = match sizes.iter().position(|y| y == z) {
                    Some(k) => k,
                    None => {
                        sizes.push(z.clone());
                        sizes.len() - 1
                    }
                };
                Size::Var(format!("@{k}"))
            }
        });
        out.insert(n.clone(), t);
    }
    (Rc::new(out), sizes)
}

/// The instantiation of a function whose body is elaborated inline at a
/// call: a size variable in the type arguments names a variable of the
/// caller, which the callee's own names (its size parameters, locals) could
/// capture, so it is renamed to a name no program can write (`n@`), bound in
/// the returned environment entries to the caller's value; a size unknown at
/// the caller becomes unknown.
fn rename_subst_sizes<'a>(s: &Subst, caller: &Env<'a>) -> (Subst, Vec<(Name, SV<'a>)>) {
    let mut aliases: Vec<(Name, SV<'a>)> = Vec::new();
    let s = s
        .iter()
        .map(|(n, t)| {
            let t = map_free_sizes(t, &mut vec![], &mut |size| match size {
                Size::Var(v) => match caller.get(v) {
                    Some(val) => {
                        let alias = format!("{v}@");
                        if !aliases.iter().any(|(a, _)| *a == alias) {
                            aliases.push((alias.clone(), val.clone()));
                        }
                        Size::Var(alias)
                    }
                    None => Size::Any,
                },
                other => other.clone(),
            });
            (n.clone(), t)
        })
        .collect();
    (Rc::new(s), aliases)
}

pub(crate) fn prim_of(t: &STy, span: Span) -> R<PrimType> {
    match t {
        STy::Prim(p) => Ok(*p),
        t => Err(err(span, format!("expected a primitive type, found {t}"))),
    }
}

/// The constant of a literal at primitive type `p`.
pub(crate) fn lit_value(l: &Literal, p: PrimType) -> PrimValue {
    match l {
        Literal::Int { value, .. } => {
            if p.is_float() {
                fb::float_value(p, *value as f64)
            } else {
                fb::int_value(p, *value)
            }
        }
        Literal::Float { value, text, .. } => {
            let clean: String = text.chars().filter(|c| *c != '_').collect();
            match p {
                PrimType::F32 => PrimValue::F32(clean.parse::<f32>().unwrap_or(*value as f32)),
                _ => fb::float_value(p, *value),
            }
        }
        Literal::Bool(b) => {
            if p == PrimType::Bool {
                PrimValue::Bool(*b)
            } else {
                fb::int_value(p, *b as i128)
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Static values
// ---------------------------------------------------------------------------

impl<'a> SV<'a> {
    pub fn ty(&self) -> Option<&STy> {
        match self {
            SV::Dyn(_, t) => Some(t),
            _ => None,
        }
    }
}

pub(crate) fn atoms_of(sv: &SV<'_>, span: Span) -> R<Vec<Atom>> {
    match sv {
        SV::Dyn(a, _) => Ok(a.clone()),
        _ => Err(err(span, "a function (or a record containing one) is used where Futhark requires a first-order value (in an array, a branch result, a loop parameter or an entry point)")),
    }
}

pub(crate) fn dyn_of<'a>(sv: SV<'a>, span: Span) -> R<(Vec<Atom>, STy)> {
    match sv {
        SV::Dyn(a, t) => Ok((a, t)),
        _ => Err(err(span, "a function (or a record containing one) is used where Futhark requires a first-order value (in an array, a branch result, a loop parameter or an entry point)")),
    }
}

/// Builds a record value from fields in type order.
pub(crate) fn mk_record<'a>(fields: Vec<(Name, SV<'a>)>) -> SV<'a> {
    if fields.iter().all(|(_, v)| matches!(v, SV::Dyn(..))) {
        let mut atoms = vec![];
        let mut tys = vec![];
        for (n, v) in fields {
            if let SV::Dyn(a, t) = v {
                atoms.extend(a);
                tys.push((n, t));
            }
        }
        SV::Dyn(atoms, STy::Record(tys))
    } else {
        SV::Rec(fields)
    }
}

pub(crate) fn mk_tuple<'a>(vals: Vec<SV<'a>>) -> SV<'a> {
    if vals.len() == 1 {
        return vals.into_iter().next().unwrap();
    }
    mk_record(
        vals.into_iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
    )
}

/// The fields of a record value, in type order.
pub(crate) fn fields_of<'a>(sv: &SV<'a>, span: Span) -> R<Vec<(Name, SV<'a>)>> {
    match sv {
        SV::Rec(fs) => Ok(fs.clone()),
        SV::Dyn(atoms, STy::Record(fs)) => {
            let mut off = 0;
            let mut out = vec![];
            for (n, t) in fs {
                let k = nflat(t).map_err(|m| err(span, m))?;
                let part = atoms
                    .get(off..off + k)
                    .ok_or_else(|| err(span, "internal: record value too short"))?;
                out.push((n.clone(), SV::Dyn(part.to_vec(), t.clone())));
                off += k;
            }
            Ok(out)
        }
        SV::Dyn(_, t) => Err(err(
            span,
            format!("expected a record, found a value of type {t}"),
        )),
        SV::Fun(_) => Err(err(span, "expected a record, found a function")),
        SV::Constr(..) => Err(err(span, "expected a record, found a sum")),
    }
}

pub(crate) fn project<'a>(sv: &SV<'a>, field: &str, span: Span) -> R<SV<'a>> {
    fields_of(sv, span)?
        .into_iter()
        .find(|(n, _)| n == field)
        .map(|(_, v)| v)
        .ok_or_else(|| err(span, format!("record has no field {field}")))
}

fn record_set<'a>(sv: &SV<'a>, path: &[Ident], val: SV<'a>, span: Span) -> R<SV<'a>> {
    if path.is_empty() {
        return Ok(val);
    }
    let mut fs = fields_of(sv, span)?;
    let f = fs
        .iter_mut()
        .find(|(n, _)| *n == path[0].name)
        .ok_or_else(|| {
            err(
                path[0].span,
                format!("record has no field {}", path[0].name),
            )
        })?;
    f.1 = record_set(&f.1, &path[1..], val, span)?;
    Ok(mk_record(fs))
}

fn irrefutable(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Id(_) | PatKind::Wildcard => true,
        PatKind::Tuple(ps) => ps.iter().all(irrefutable),
        PatKind::Record(fs) => fs.iter().all(|(_, p)| irrefutable(p)),
        PatKind::Ascribe(p, _) => irrefutable(p),
        PatKind::Lit(_) | PatKind::Constr(..) => false,
    }
}

// ---------------------------------------------------------------------------
// The elaborator
// ---------------------------------------------------------------------------

impl<'a> Elab<'a> {
    pub fn new(files: &'a [ast::Program], size_exprs: &'a typed_arena::Arena<Expr>) -> Elab<'a> {
        let mut defs = HashMap::new();
        fn add<'a>(d: &'a ast::Dec, defs: &mut HashMap<NodeId, &'a ValBind>) {
            match d {
                ast::Dec::Val(vb) => {
                    defs.insert(vb.id, vb);
                }
                ast::Dec::Local(d, _) => add(d, defs),
                _ => {}
            }
        }
        for f in files {
            for d in &f.decs {
                add(d, &mut defs);
            }
        }
        let recursive = defs
            .values()
            .filter(|d| specialise::is_recursive(d))
            .map(|d| d.id)
            .collect();
        Elab {
            defs,
            funs: vec![],
            cache: HashMap::new(),
            recursive,
            provisional: HashMap::new(),
            lambda_names: HashMap::new(),
            inline_depth: 0,
            depth: 0,
            steps: 0,
            sources: None,
            size_exprs,
            seq_streams: vec![],
        }
    }

    /// The message of a failed `assert c e` whose whole application spans
    /// `span`: Futhark's `Assertion is false: c`, with `c` (the first
    /// argument, an atomic expression) as written in the source; just
    /// `Assertion is false` without the source text.
    pub fn assert_message(&self, span: Span) -> String {
        let text = self
            .sources
            .and_then(|m| m.files.get(span.file.0 as usize))
            .and_then(|f| f.text.get(span.start as usize..span.end as usize));
        match text.and_then(assert_condition_text) {
            Some(c) => format!("Assertion is false: {c}"),
            None => "Assertion is false".to_string(),
        }
    }

    pub fn ty_of(&self, e: &Expr, ctx: &Ctx<'a>) -> R<STy> {
        match &e.ty {
            Some(t) => Ok(subst_ty(t, &ctx.subst)),
            None => Err(err(
                e.span,
                "expression has no type annotation (was the program type-checked?)",
            )),
        }
    }

    fn pat_ty(&self, p: &Pat, ctx: &Ctx<'a>) -> R<STy> {
        match &p.ty {
            Some(t) => Ok(subst_ty(t, &ctx.subst)),
            None => Err(err(
                p.span,
                "pattern has no type annotation (was the program type-checked?)",
            )),
        }
    }

    /// The IR dimension of a semantic size in a context.
    pub fn size_dim(&self, s: &Size, env: &Env<'a>) -> Dim {
        match s {
            Size::Const(c) if *c >= 0 => Dim::Const(*c),
            Size::Const(_) => Dim::Ext,
            Size::Var(n) => match env.get(n) {
                Some(SV::Dyn(a, _)) if a.len() == 1 => atom_dim(a[0]),
                _ => Dim::Ext,
            },
            Size::Expr(_) | Size::Any => Dim::Ext,
        }
    }

    /// The atom holding a semantic size, if it is known.
    pub fn size_atom(&self, s: &Size, env: &Env<'a>) -> Option<Atom> {
        match s {
            Size::Const(c) => Some(i64c(*c)),
            Size::Var(n) => match env.get(n) {
                Some(SV::Dyn(a, STy::Prim(PrimType::I64))) if a.len() == 1 => Some(a[0]),
                _ => None,
            },
            Size::Expr(_) | Size::Any => None,
        }
    }

    /// [`Elab::size_atom`], or, for a name not bound here that is a
    /// top-level constant of type `i64` (`def k = 2i64` in `[k]i64`, also
    /// through a type abbreviation), its value, computed by a reference to
    /// it at `span`.
    fn size_at(
        &mut self,
        fb: &mut FunBuilder,
        s: &Size,
        env: &Env<'a>,
        span: Span,
    ) -> R<Option<Atom>> {
        if let Some(a) = self.size_atom(s, env) {
            return Ok(Some(a));
        }
        let n = match s {
            Size::Var(n) => n,
            // A name the type checker keeps as an expression (a top-level
            // constant written in the type: `[k]i64`).
            Size::Expr(x) => match &strip_parens(x.expr()).kind {
                ExprKind::Var { name, .. } if name.quals.is_empty() => &name.name,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        if env.get(n).is_some() {
            return Ok(None);
        }
        let Some(def) = self.global_size_constant(n) else {
            return Ok(None);
        };
        match self.global_const(fb, def, Rc::new(HashMap::new()), None, env, span)? {
            SV::Dyn(a, STy::Prim(PrimType::I64)) if a.len() == 1 => Ok(Some(a[0])),
            _ => Ok(None),
        }
    }

    /// The top-level definition named `name` (a flat name: the module pass
    /// makes them unique) that is a constant without size or type
    /// parameters, which a size may name.
    fn global_size_constant(&self, name: &str) -> Option<&'a ValBind> {
        self.defs
            .values()
            .copied()
            .find(|d| d.name.name == name && d.params.is_empty() && d.type_params.is_empty())
    }

    /// The atom holding a semantic size, computing a compound size
    /// expression (`[n * m]`, `[i64.i32 k]`) from the values of the names
    /// it mentions; `None` where a name is not bound here or the size is
    /// unknown.
    pub fn size_value(
        &mut self,
        fb: &mut FunBuilder,
        s: &Size,
        env: &Env<'a>,
        subst: &Subst,
    ) -> Option<Atom> {
        let Size::Expr(x) = s else {
            return self.size_atom(s, env);
        };
        let mut names = vec![];
        s.names(&mut names);
        if !names.iter().all(|n| env.get(n).is_some()) {
            return None;
        }
        let e: &'a Expr = self.size_exprs.alloc(x.expr().clone());
        let ctx = Ctx {
            env: env.clone(),
            subst: subst.clone(),
        };
        self.index_atom(fb, e, &ctx).ok()
    }

    /// IR types of a semantic type's components.
    pub fn ir_types(&self, t: &STy, env: &Env<'a>, span: Span) -> R<Vec<ir::Type>> {
        let comps = flat(t).map_err(|m| err(span, m))?;
        let accs = if self.seq_streams.is_empty() {
            flat_acc(t)
        } else {
            // Inside a stream elaborated as a loop, accumulators are arrays.
            vec![false; comps.len()]
        };
        Ok(comps
            .into_iter()
            .zip(accs)
            .map(|((p, shape), acc)| {
                let dims = shape.iter().map(|s| self.size_dim(s, env)).collect();
                if acc {
                    ir::Type::Acc(p, dims)
                } else if shape.is_empty() {
                    ir::Type::Prim(p)
                } else {
                    ir::Type::Array(p, dims)
                }
            })
            .collect())
    }

    /// Blank (zero) values of a semantic type (for inactive sum payloads).
    pub fn blanks(
        &mut self,
        fb: &mut FunBuilder,
        t: &STy,
        env: &Env<'a>,
        span: Span,
    ) -> R<Vec<Atom>> {
        let comps = flat(t).map_err(|m| err(span, m))?;
        let mut out = vec![];
        for (p, shape) in comps {
            let mut v = Atom::Const(fb::zero(p));
            let mut ty = ir::Type::Prim(p);
            for s in shape.iter().rev() {
                let n = self.size_atom(s, env).unwrap_or(i64c(0));
                ty = ty.array_of(atom_dim(n));
                v = fb.bind1("blank", ty.clone(), Exp::Replicate(n, v), span);
            }
            out.push(v);
        }
        Ok(out)
    }

    pub fn atom1(&mut self, fb: &mut FunBuilder, e: &'a Expr, ctx: &Ctx<'a>) -> R<Atom> {
        let v = self.elab_expr(fb, e, ctx)?;
        let a = atoms_of(&v, e.span)?;
        if a.len() != 1 {
            return Err(err(e.span, "expected a single primitive value"));
        }
        Ok(a[0])
    }

    /// An `i64` atom from an integer expression (converted if needed).
    fn index_atom(&mut self, fb: &mut FunBuilder, e: &'a Expr, ctx: &Ctx<'a>) -> R<Atom> {
        let a = self.atom1(fb, e, ctx)?;
        let t = fb.atom_ty(a).elem();
        Ok(fb.conv(t, PrimType::I64, a, e.span))
    }

    // ---- expressions ----------------------------------------------------

    pub fn elab_expr(&mut self, fb: &mut FunBuilder, e: &'a Expr, ctx: &Ctx<'a>) -> R<SV<'a>> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(err(e.span, "expression nested too deeply"));
        }
        self.steps += 1;
        if self.steps > MAX_ELAB_STEPS {
            self.depth -= 1;
            return Err(err(
                e.span,
                format!(
                    "the program is too large to elaborate (more than {MAX_ELAB_STEPS} expressions after inlining function values); it grows exponentially, e.g. through nested applications of a higher-order function"
                ),
            ));
        }
        // Deep nesting and long call chains (each call elaborates its
        // callee here) grow the native stack on the heap instead of
        // overflowing it.
        let r = stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || {
            self.elab_expr_inner(fb, e, ctx)
        });
        self.depth -= 1;
        r
    }

    fn elab_expr_inner(&mut self, fb: &mut FunBuilder, e: &'a Expr, ctx: &Ctx<'a>) -> R<SV<'a>> {
        let span = e.span;
        match &e.kind {
            ExprKind::Lit(l) => {
                let t = self.ty_of(e, ctx)?;
                let p = prim_of(&t, span)?;
                Ok(SV::Dyn(vec![Atom::Const(lit_value(l, p))], t))
            }
            ExprKind::Var { name, res, inst } => {
                let t = e.ty.as_ref().map(|t| subst_ty(t, &ctx.subst));
                self.elab_name(fb, name, res, inst, t, ctx, span)
            }
            ExprKind::Attr(a, x) => {
                if a.text.trim() == "break" {
                    break_mark(fb, &ctx.env, span);
                }
                self.elab_expr(fb, x, ctx)
            }
            ExprKind::Parens(x) | ExprKind::LocalOpen(_, x) | ExprKind::Ascribe(x, _) => {
                self.elab_expr(fb, x, ctx)
            }
            ExprKind::Tuple(es) => {
                let mut vs = vec![];
                for x in es {
                    vs.push(self.elab_expr(fb, x, ctx)?);
                }
                Ok(mk_tuple(vs))
            }
            ExprKind::Record(fields) => {
                let mut vals: Vec<(Name, SV<'a>)> = vec![];
                for f in fields {
                    let (n, v) = match f {
                        ast::RecordField::Named(id, x) => {
                            (id.name.clone(), self.elab_expr(fb, x, ctx)?)
                        }
                        ast::RecordField::Pun(id) => (
                            id.name.clone(),
                            ctx.env.get(&id.name).cloned().ok_or_else(|| {
                                err(id.span, format!("unknown variable {}", id.name))
                            })?,
                        ),
                    };
                    vals.retain(|(m, _)| *m != n);
                    vals.push((n, v));
                }
                let order: Vec<Name> = match self.ty_of(e, ctx)? {
                    STy::Record(fs) => fs.into_iter().map(|(n, _)| n).collect(),
                    _ => {
                        let mut ns: Vec<Name> = vals.iter().map(|(n, _)| n.clone()).collect();
                        ns.sort();
                        ns
                    }
                };
                let mut out = vec![];
                for n in order {
                    let v = vals
                        .iter()
                        .find(|(m, _)| *m == n)
                        .ok_or_else(|| err(span, format!("missing field {n}")))?;
                    out.push(v.clone());
                }
                Ok(mk_record(out))
            }
            ExprKind::ArrayLit(es) => self.array_lit(fb, es, e, ctx),
            ExprKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let t = self.ty_of(e, ctx)?;
                let s = self.atom1(fb, start, ctx)?;
                let sec = match second {
                    Some(x) => Some(self.atom1(fb, x, ctx)?),
                    None => None,
                };
                let en = self.atom1(fb, end, ctx)?;
                let arr = crate::intrin::range(fb, s, sec, en, *kind, span)?;
                Ok(SV::Dyn(vec![arr], t))
            }
            ExprKind::Project(x, f) => {
                let v = self.elab_expr(fb, x, ctx)?;
                project(&v, &f.name, f.span)
            }
            ExprKind::Index(a, idxs) => {
                let av = self.elab_expr(fb, a, ctx)?;
                let t = self.ty_of(e, ctx)?;
                self.index(fb, &av, idxs, t, ctx, span)
            }
            ExprKind::Apply(f, args) => {
                let fv = self.elab_expr(fb, f, ctx)?;
                let mut avs = vec![];
                for a in args {
                    avs.push(self.elab_expr(fb, a, ctx)?);
                }
                let fv = self.size_hints(fb, fv, args, ctx)?;
                self.apply(fb, fv, avs, span)
            }
            ExprKind::Negate(x) => {
                self.scalar_unop(fb, x, ir::UnOp::Neg, "neg", "negation", ctx, span)
            }
            ExprKind::Not(x) => self.scalar_unop(fb, x, ir::UnOp::Not, "not", "!", ctx, span),
            ExprKind::BinOp {
                op,
                op_res,
                op_inst,
                lhs,
                rhs,
            } => {
                if let Some(Res::Intrinsic(n)) = op_res {
                    if n == "&&" || n == "||" {
                        return self.short_circuit(fb, n == "&&", lhs, rhs, ctx, span);
                    }
                }
                let l = self.elab_expr(fb, lhs, ctx)?;
                // The left operand is evaluated first: its sizes are known
                // to the right one (`filter p xs |> f g`, where `f`'s size
                // parameter is the size of the filtered array).
                let mut after_lhs = ctx.clone();
                if let Some(t) = &lhs.ty {
                    let t = subst_ty(t, &ctx.subst);
                    self.bind_value_sizes(fb, &t, &l, &mut after_lhs, lhs.span);
                }
                let ctx = &after_lhs;
                let r = self.elab_expr(fb, rhs, ctx)?;
                let ty = match (&lhs.ty, &rhs.ty, &e.ty) {
                    (Some(a), Some(b), Some(c)) => Some(subst_ty(
                        &STy::Arrow {
                            param_name: None,
                            param: Box::new(a.clone()),
                            ret: Box::new(STy::Arrow {
                                param_name: None,
                                param: Box::new(b.clone()),
                                ret: Box::new(c.clone()),
                            }),
                        },
                        &ctx.subst,
                    )),
                    _ => None,
                };
                let f = self.elab_name(fb, op, op_res, op_inst, ty, ctx, op.span)?;
                self.apply(fb, f, vec![l, r], span)
            }
            ExprKind::OpSection {
                op,
                op_res,
                op_inst,
            } => {
                let t = self.ty_of(e, ctx).ok();
                self.elab_name(fb, op, op_res, op_inst, t, ctx, span)
            }
            ExprKind::OpSectionLeft {
                op,
                op_res,
                op_inst,
                lhs,
            } => {
                let l = self.elab_expr(fb, lhs, ctx)?;
                let ty = match (&lhs.ty, &e.ty) {
                    (Some(a), Some(b)) => Some(subst_ty(
                        &STy::Arrow {
                            param_name: None,
                            param: Box::new(a.clone()),
                            ret: Box::new(b.clone()),
                        },
                        &ctx.subst,
                    )),
                    _ => None,
                };
                let f = self.elab_name(fb, op, op_res, op_inst, ty, ctx, span)?;
                self.apply(fb, f, vec![l], span)
            }
            ExprKind::OpSectionRight {
                op,
                op_res,
                op_inst,
                rhs,
            } => {
                let r = self.elab_expr(fb, rhs, ctx)?;
                let ty = match (&e.ty, &rhs.ty) {
                    (Some(STy::Arrow { param, ret, .. }), Some(rt)) => Some(subst_ty(
                        &STy::Arrow {
                            param_name: None,
                            param: param.clone(),
                            ret: Box::new(STy::Arrow {
                                param_name: None,
                                param: Box::new(rt.clone()),
                                ret: ret.clone(),
                            }),
                        },
                        &ctx.subst,
                    )),
                    _ => None,
                };
                let f = self.elab_name(fb, op, op_res, op_inst, ty, ctx, span)?;
                Ok(SV::Fun(Rc::new(Clo::RightSection { op: f, rhs: r })))
            }
            ExprKind::ProjSection(fields) => Ok(SV::Fun(Rc::new(Clo::ProjSection(fields)))),
            ExprKind::Lambda { params, body, .. } => Ok(SV::Fun(Rc::new(Clo::Lambda {
                params,
                body,
                env: ctx.env.clone(),
                subst: ctx.subst.clone(),
                type_params: &[],
            }))),
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => {
                let v = self.elab_expr(fb, value, ctx)?;
                let mut c2 = ctx.clone();
                self.bind_pat(fb, pat, v.clone(), &mut c2)?;
                if !sizes.is_empty() {
                    let pt = self.pat_ty(pat, ctx)?;
                    for (k, s) in sizes.iter().enumerate() {
                        let a = match self.find_size(fb, &s.name, &pt, &v, span) {
                            Some(a) => a,
                            None => {
                                // Fall back to the k-th dimension of the first array.
                                let atoms = atoms_of(&v, span)?;
                                match atoms.iter().find(|a| fb.atom_ty(**a).rank() > k) {
                                    Some(Atom::Var(x)) => fb.size_of(*x, k, s.span),
                                    _ => {
                                        return Err(err(
                                            s.span,
                                            format!("cannot determine size {}", s.name),
                                        ))
                                    }
                                }
                            }
                        };
                        c2.env = c2
                            .env
                            .bind(&s.name, SV::Dyn(vec![a], STy::Prim(PrimType::I64)));
                    }
                }
                self.elab_expr(fb, body, &c2)
            }
            ExprKind::LetFun {
                name,
                type_params,
                params,
                value,
                body,
                ..
            } => {
                let v = if params.is_empty() {
                    self.elab_expr(fb, value, ctx)?
                } else {
                    SV::Fun(Rc::new(Clo::Lambda {
                        params,
                        body: value,
                        env: ctx.env.clone(),
                        subst: ctx.subst.clone(),
                        type_params,
                    }))
                };
                let mut c2 = ctx.clone();
                c2.env = c2.env.bind(&name.name, v);
                self.elab_expr(fb, body, &c2)
            }
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => {
                let arr = ctx
                    .env
                    .get(&dest.name)
                    .cloned()
                    .ok_or_else(|| err(dest.span, format!("unknown variable {}", dest.name)))?;
                let v = self.elab_expr(fb, value, ctx)?;
                let new = self.update(fb, &arr, indices, &v, ctx, span)?;
                let mut c2 = ctx.clone();
                c2.env = c2.env.bind(&dest.name, new);
                self.elab_expr(fb, body, &c2)
            }
            ExprKind::Update {
                src,
                path,
                indices,
                value,
            } => {
                let s = self.elab_expr(fb, src, ctx)?;
                let v = self.elab_expr(fb, value, ctx)?;
                // `r with a.b[i] = v`: update the array in field `a.b`.
                let mut arr = s.clone();
                for f in path {
                    arr = project(&arr, &f.name, f.span)?;
                }
                let new = self.update(fb, &arr, indices, &v, ctx, span)?;
                record_set(&s, path, new, span)
            }
            ExprKind::RecordUpdate { src, path, value } => {
                let s = self.elab_expr(fb, src, ctx)?;
                let v = self.elab_expr(fb, value, ctx)?;
                record_set(&s, path, v, span)
            }
            ExprKind::If { cond, then_, else_ } => {
                let c = self.atom1(fb, cond, ctx)?;
                if let Atom::Const(PrimValue::Bool(b)) = c {
                    // Statically known: only one branch exists (lets function-valued branches work).
                    return self.elab_expr(fb, if b { then_ } else { else_ }, ctx);
                }
                let t = self.ty_of(e, ctx)?;
                let mark = fb.mark();
                fb.begin();
                let tv = self.elab_expr(fb, then_, ctx)?;
                let ta = atoms_of(&tv, then_.span)?;
                let tb = fb.end(ta.clone());
                fb.begin();
                let ev = self.elab_expr(fb, else_, ctx)?;
                let ea = atoms_of(&ev, else_.span)?;
                let eb = fb.end(ea.clone());
                self.mk_if(fb, c, tb, eb, &ta, &ea, t, mark, span)
            }
            ExprKind::Match { scrutinee, cases } => {
                let sv = self.elab_expr(fb, scrutinee, ctx)?;
                let t = self.ty_of(e, ctx)?;
                if cases.is_empty() {
                    return Err(err(span, "match without cases"));
                }
                self.match_cases(fb, &sv, cases, 0, &t, ctx, span)
            }
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body,
                attrs,
            } => self.elab_loop(fb, sizes, pat, init.as_deref(), form, body, attrs, e, ctx),
            ExprKind::Coerce(x, te) => {
                let v = self.elab_expr(fb, x, ctx)?;
                let t = self.ty_of(e, ctx)?;
                let compound = self.compound_coercion_sizes(fb, te, ctx)?;
                self.coerce(fb, v, t, &compound, &ctx.env, span)
            }
            ExprKind::Constr(c, args) => {
                let t = self.ty_of(e, ctx)?;
                let cs = match &t {
                    STy::Sum(cs) => cs.clone(),
                    t => {
                        return Err(err(
                            span,
                            format!("constructor #{} used at non-sum type {t}", c.name),
                        ))
                    }
                };
                let idx = cs
                    .iter()
                    .position(|(n, _)| *n == c.name)
                    .ok_or_else(|| err(c.span, format!("unknown constructor #{}", c.name)))?;
                if !first_order(&t) {
                    let mut payload = vec![];
                    for a in args {
                        payload.push(self.elab_expr(fb, a, ctx)?);
                    }
                    return Ok(SV::Constr(c.name.clone(), payload));
                }
                let mut atoms = vec![Atom::Const(PrimValue::I8(idx as i8))];
                let mut argv = vec![];
                for a in args {
                    let v = self.elab_expr(fb, a, ctx)?;
                    argv.push(atoms_of(&v, a.span)?);
                }
                for (i, (_, tys)) in cs.iter().enumerate() {
                    if i == idx {
                        if argv.len() != tys.len() {
                            return Err(err(
                                span,
                                format!("constructor #{} expects {} arguments", c.name, tys.len()),
                            ));
                        }
                        for (a, ty) in argv.iter().zip(tys) {
                            if a.len() != nflat(ty).map_err(|m| err(span, m))? {
                                return Err(err(span, "constructor payload has the wrong shape"));
                            }
                            atoms.extend(a.iter().cloned());
                        }
                    } else {
                        for ty in tys {
                            let b = self.blanks(fb, ty, &ctx.env, span)?;
                            atoms.extend(b);
                        }
                    }
                }
                Ok(SV::Dyn(atoms, t))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mk_if(
        &mut self,
        fb: &mut FunBuilder,
        c: Atom,
        tb: ir::Body,
        eb: ir::Body,
        ta: &[Atom],
        ea: &[Atom],
        t: STy,
        mark: u32,
        span: Span,
    ) -> R<SV<'a>> {
        if ta.len() != ea.len() {
            return Err(err(span, "branches of different shapes"));
        }
        let tys: Vec<ir::Type> = ta
            .iter()
            .zip(ea)
            .map(|(a, b)| {
                join_ty(
                    &sanitize(fb.atom_ty(*a), mark),
                    &sanitize(fb.atom_ty(*b), mark),
                )
            })
            .collect();
        let vs = fb.bind(
            "if",
            tys,
            Exp::If {
                cond: c,
                then_: tb,
                else_: eb,
            },
            span,
        );
        Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), t))
    }

    /// Prefix `-x` / `!x`: one [`Exp::UnOp`] on a scalar operand, bound to a
    /// fresh variable named after `hint`. `what` names the operator in the
    /// error for a non-scalar operand.
    #[allow(clippy::too_many_arguments)]
    fn scalar_unop(
        &mut self,
        fb: &mut FunBuilder,
        x: &'a Expr,
        op: ir::UnOp,
        hint: &str,
        what: &str,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let v = self.elab_expr(fb, x, ctx)?;
        let (a, t) = dyn_of(v, span)?;
        let p = prim_of(&t, span)?;
        if a.len() != 1 {
            return Err(err(span, format!("{what} of a non-scalar")));
        }
        let r = fb.bind1(hint, ir::Type::Prim(p), Exp::UnOp(op, a[0]), span);
        Ok(SV::Dyn(vec![r], t))
    }

    fn short_circuit(
        &mut self,
        fb: &mut FunBuilder,
        and: bool,
        lhs: &'a Expr,
        rhs: &'a Expr,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let l = self.atom1(fb, lhs, ctx)?;
        fb.begin();
        let r = self.atom1(fb, rhs, ctx)?;
        let rb = fb.end(vec![r]);
        let cb = ir::Body {
            stms: vec![],
            result: vec![boolc(!and)],
        };
        let (tb, eb) = if and { (rb, cb) } else { (cb, rb) };
        let v = fb.bind1(
            if and { "and" } else { "or" },
            ir::Type::Prim(PrimType::Bool),
            Exp::If {
                cond: l,
                then_: tb,
                else_: eb,
            },
            span,
        );
        Ok(SV::Dyn(vec![v], STy::Prim(PrimType::Bool)))
    }

    fn array_lit(
        &mut self,
        fb: &mut FunBuilder,
        es: &'a [Expr],
        e: &'a Expr,
        ctx: &Ctx<'a>,
    ) -> R<SV<'a>> {
        let span = e.span;
        let t = self.ty_of(e, ctx)?;
        let row = sty_row(&t);
        if es.is_empty() {
            let rtys = self.ir_types(&row, &ctx.env, span)?;
            let mut out = vec![];
            for rt in rtys {
                let at = rt.array_of(ir::Dim::Const(0));
                out.push(fb.bind1("arr", at, Exp::ArrayLit(vec![], rt), span));
            }
            return Ok(SV::Dyn(out, t));
        }
        let mut rows = vec![];
        for x in es {
            let v = self.elab_expr(fb, x, ctx)?;
            rows.push(atoms_of(&v, x.span)?);
        }
        let k = rows[0].len();
        if rows.iter().any(|r| r.len() != k) {
            return Err(err(span, "array literal rows of different shapes"));
        }
        let mut out = vec![];
        for j in 0..k {
            let mut rt = fb.atom_ty(rows[0][j]);
            for r in &rows[1..] {
                rt = join_ty(&rt, &fb.atom_ty(r[j]));
            }
            let atoms: Vec<Atom> = rows.iter().map(|r| r[j]).collect();
            let at = rt.array_of(ir::Dim::Const(es.len() as i64));
            out.push(fb.bind1("arr", at, Exp::ArrayLit(atoms, rt), span));
        }
        Ok(SV::Dyn(out, t))
    }

    // ---- names ----------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn elab_name(
        &mut self,
        fb: &mut FunBuilder,
        name: &ast::QualName,
        res: &Option<Res>,
        inst: &[(Name, STy)],
        ty: Option<STy>,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        match res {
            Some(Res::Local) | Some(Res::Size) => {
                let v = ctx
                    .env
                    .get(&name.name)
                    .cloned()
                    .ok_or_else(|| err(span, format!("unknown variable {}", name.name)))?;
                if is_unknown_size(&v) {
                    return Err(err(
                        span,
                        format!(
                            "size parameter {} cannot be determined from the arguments or from the type at the call (coerce an argument or ascribe the result, e.g. `split (xs :> [k + (n - k)]t)`)",
                            name.name
                        ),
                    ));
                }
                if !inst.is_empty() {
                    if let SV::Fun(c) = &v {
                        if let Clo::Lambda {
                            params,
                            body,
                            env,
                            subst,
                            type_params,
                        } = &**c
                        {
                            let mut s: HashMap<Name, STy> = (**subst).clone();
                            for (n, t) in inst {
                                s.insert(n.clone(), subst_ty(t, &ctx.subst));
                            }
                            return Ok(SV::Fun(Rc::new(Clo::Lambda {
                                params,
                                body,
                                env: env.clone(),
                                subst: Rc::new(s),
                                type_params,
                            })));
                        }
                    }
                }
                Ok(v)
            }
            Some(Res::Global(id)) => {
                let def = *self
                    .defs
                    .get(id)
                    .ok_or_else(|| err(span, format!("unknown definition {}", name.name)))?;
                let s: HashMap<Name, STy> = inst
                    .iter()
                    .map(|(n, t)| (n.clone(), nonunique(&subst_ty(t, &ctx.subst))))
                    .collect();
                let s = Rc::new(s);
                if !def.params.is_empty() {
                    return Ok(SV::Fun(Rc::new(Clo::Global {
                        id: *id,
                        subst: s,
                        ty,
                        env: ctx.env.clone(),
                        hints: vec![],
                    })));
                }
                self.global_const(fb, def, s, ty.as_ref(), &ctx.env, span)
            }
            Some(Res::Intrinsic(n)) => {
                if let Some((v, t)) = crate::intrin::constant(n) {
                    return Ok(SV::Dyn(vec![Atom::Const(v)], STy::Prim(t)));
                }
                let ty = ty.ok_or_else(|| err(span, format!("intrinsic {n} has no type")))?;
                Ok(SV::Fun(Rc::new(Clo::Intrinsic {
                    name: n.clone(),
                    ty,
                    env: ctx.env.clone(),
                    hints: vec![],
                })))
            }
            None => Err(err(
                span,
                format!(
                    "name {} was not resolved (was the program type-checked?)",
                    name.name
                ),
            )),
        }
    }

    /// A reference to a top-level constant, instantiated at `s`; `use_ty` is
    /// its type at the reference, which gives the values of its size
    /// parameters (`def iiota [n] : [n]i64 = iota n` used as a `[x]i64`).
    fn global_const(
        &mut self,
        fb: &mut FunBuilder,
        def: &'a ValBind,
        s: Subst,
        use_ty: Option<&STy>,
        caller: &Env<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let full = match &def.ty {
            Some(t) => subst_ty(t, &s),
            None => match &def.body.ty {
                Some(t) => subst_ty(t, &s),
                None => return Err(err(def.span, "definition has no type")),
            },
        };
        let (inner, aliases) = rename_subst_sizes(&s, caller);
        let inner_full = def.ty.as_ref().map(|t| subst_ty(t, &inner));
        let use_site = use_ty.zip(inner_full.as_ref()).map(|(u, f)| (f, u, caller));
        let sizes = self.size_args(fb, &[], &def.type_params, &[], &inner, use_site, span);
        if first_order(&full) {
            let known: Vec<bool> = sizes.iter().map(|(_, a)| a.is_some()).collect();
            let (fid, targs) = self.get_function(def, s.clone(), caller, known, None)?;
            let mut args: Vec<Atom> = sizes.iter().filter_map(|(_, a)| *a).collect();
            args.extend(targs);
            let ret = match self.funs[fid.0 as usize].as_ref() {
                Some(f) => call_result_types(f, &args),
                None => vec![],
            };
            let vs = fb.bind(&def.name.name, ret, Exp::Apply(fid, args), span);
            return Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), full));
        }
        self.enter_inline(span)?;
        let mut ctx = Ctx {
            env: Env::default(),
            subst: inner,
        };
        for (n, v) in aliases {
            ctx.env = ctx.env.bind(&n, v);
        }
        bind_sizes(&mut ctx, sizes);
        let r = self.elab_expr(fb, &def.body, &ctx);
        self.inline_depth -= 1;
        r
    }

    /// The result types of an instance of the recursive function `def` at
    /// `s` as its recursive calls see them while it is being built: those
    /// of its declared (or inferred) result type, every dimension
    /// existential (the final function may say more).
    fn provisional_result(&self, def: &ValBind, s: &HashMap<Name, STy>) -> Vec<ir::Type> {
        let Some(full) = def.ty.as_ref().map(|t| subst_ty(t, s)) else {
            return vec![];
        };
        let ret = peel(&full, def.params.len()).1.unwrap_or_else(STy::unit);
        flat(&ret)
            .unwrap_or_default()
            .into_iter()
            .map(|(p, shape)| {
                if shape.is_empty() {
                    ir::Type::Prim(p)
                } else {
                    ir::Type::Array(p, shape.iter().map(|_| Dim::Ext).collect())
                }
            })
            .collect()
    }

    fn enter_inline(&mut self, span: Span) -> R<()> {
        self.inline_depth += 1;
        if self.inline_depth > MAX_INLINE {
            self.inline_depth -= 1;
            return Err(err(
                span,
                "function inlining nested too deeply (recursive higher-order function?)",
            ));
        }
        Ok(())
    }

    // ---- application ----------------------------------------------------

    fn arity(&self, c: &Clo<'a>) -> usize {
        match c {
            Clo::Lambda { params, .. } => params.len().max(1),
            Clo::Global { id, .. } => self
                .defs
                .get(id)
                .map(|d| d.params.len())
                .unwrap_or(1)
                .max(1),
            Clo::Intrinsic { name, ty, .. } => crate::intrin::arity(name, ty),
            Clo::Partial { f, args } => self.arity(f).saturating_sub(args.len()).max(1),
            Clo::RightSection { .. } | Clo::ProjSection(_) => 1,
        }
    }

    /// Applies a static function to arguments (partial and over-application allowed).
    pub fn apply(
        &mut self,
        fb: &mut FunBuilder,
        f: SV<'a>,
        args: Vec<SV<'a>>,
        span: Span,
    ) -> R<SV<'a>> {
        let mut f = f;
        let mut args = args;
        loop {
            if args.is_empty() {
                return Ok(f);
            }
            let clo = match f {
                SV::Fun(c) => c,
                _ => return Err(err(span, "applying a value that is not a function")),
            };
            let n = self.arity(&clo);
            if args.len() < n {
                return Ok(SV::Fun(Rc::new(Clo::Partial { f: clo, args })));
            }
            let rest = args.split_off(n);
            f = self.call(fb, &clo, args, span)?;
            args = rest;
        }
    }

    fn call(
        &mut self,
        fb: &mut FunBuilder,
        clo: &Clo<'a>,
        args: Vec<SV<'a>>,
        span: Span,
    ) -> R<SV<'a>> {
        match clo {
            Clo::Lambda {
                params,
                body,
                env,
                subst,
                type_params,
            } => {
                self.enter_inline(span)?;
                let r = (|| {
                    let mut ctx = Ctx {
                        env: env.clone(),
                        subst: subst.clone(),
                    };
                    let sizes = self.size_args(fb, params, type_params, &args, subst, None, span);
                    self.bind_params(fb, params, args, &mut ctx)?;
                    bind_sizes(&mut ctx, sizes);
                    self.elab_expr(fb, body, &ctx)
                })();
                self.inline_depth -= 1;
                r
            }
            Clo::Global {
                id,
                subst,
                ty,
                env,
                hints,
            } => {
                let def = *self
                    .defs
                    .get(id)
                    .ok_or_else(|| err(span, "unknown definition"))?;
                let full = match &def.ty {
                    Some(t) => subst_ty(t, subst),
                    None => return Err(err(def.span, "definition has no type")),
                };
                let (ps, ret) = peel(&full, def.params.len());
                // Accumulators live only inside the `with_acc` that made
                // them: a function taking or returning one is inlined.
                let fo = ps.iter().all(first_order)
                    && ret.as_ref().map(first_order).unwrap_or(false)
                    && !ps.iter().chain(ret.as_ref()).any(has_acc);
                // Inside the callee, the caller's sizes in the type arguments
                // go by names the callee's cannot capture.
                let (inner, aliases) = rename_subst_sizes(subst, env);
                let inner_full = def.ty.as_ref().map(|t| subst_ty(t, &inner));
                let use_site = ty
                    .as_ref()
                    .zip(inner_full.as_ref())
                    .map(|(u, f)| (f, u, env));
                let mut sizes = self.size_args(
                    fb,
                    &def.params,
                    &def.type_params,
                    &args,
                    &inner,
                    use_site,
                    span,
                );
                for (n, a) in sizes.iter_mut() {
                    if a.is_none() {
                        *a = hints.iter().find(|(m, _)| m == n).map(|(_, x)| *x);
                    }
                }
                // An unknown size used in the body is reported at this call.
                let unknown: Vec<Name> = sizes
                    .iter()
                    .filter(|(_, a)| a.is_none())
                    .map(|(n, _)| n.clone())
                    .collect();
                let relabel = |d: Diagnostic| -> Diagnostic {
                    let inside = d.span.file == def.span.file
                        && d.span.start >= def.span.start
                        && d.span.end <= def.span.end;
                    match unknown
                        .iter()
                        .find(|n| d.message.starts_with(&format!("size parameter {n} cannot")))
                    {
                        Some(n) if inside => err(
                            span,
                            format!(
                                "Ambiguous size \"{n}\" arising from instantiated size parameter of \"{}\": it cannot be determined from the arguments or from the type at the call (coerce an argument or ascribe the result, e.g. `split (xs :> [k + (n - k)]t)`)",
                                def.name.name
                            ),
                        )
                        .with_label(d.span, format!("{n} is used here")),
                        _ => d,
                    }
                };
                // A recursive function becomes an IR function even where it
                // takes functions: one per shape of the functions passed
                // (see `specialise`).
                if fo || self.recursive.contains(id) {
                    let known: Vec<bool> = sizes.iter().map(|(_, a)| a.is_some()).collect();
                    let statics = (!fo).then(|| self.static_args(fb, &ps, &args));
                    let (fid, targs) = self
                        .get_function(def, subst.clone(), env, known, statics.as_ref())
                        .map_err(relabel)?;
                    let mut flat_args: Vec<Atom> = sizes.iter().filter_map(|(_, a)| *a).collect();
                    flat_args.extend(targs);
                    for (k, (a, p)) in args.iter().zip(&def.params).enumerate() {
                        if statics.as_ref().is_none_or(|st| st.args[k].is_none()) {
                            flat_args.extend(atoms_of(a, p.span)?);
                        }
                    }
                    if let Some(st) = &statics {
                        flat_args.extend(st.caps.iter().map(|(v, _)| Atom::Var(*v)));
                    }
                    let fret = match self.funs[fid.0 as usize].as_ref() {
                        Some(f) => call_result_types(f, &flat_args),
                        None => self.provisional.get(&fid).cloned().unwrap_or_default(),
                    };
                    let vs = fb.bind(&def.name.name, fret, Exp::Apply(fid, flat_args), span);
                    return Ok(SV::Dyn(
                        vs.into_iter().map(Atom::Var).collect(),
                        ret.unwrap_or_else(STy::unit),
                    ));
                }
                self.enter_inline(span)?;
                let r = (|| {
                    let mut ctx = Ctx {
                        env: Env::default(),
                        subst: inner,
                    };
                    for (n, v) in aliases {
                        ctx.env = ctx.env.bind(&n, v);
                    }
                    self.bind_params(fb, &def.params, args, &mut ctx)?;
                    bind_sizes(&mut ctx, sizes);
                    self.elab_expr(fb, &def.body, &ctx)
                })();
                self.inline_depth -= 1;
                r.map_err(relabel)
            }
            Clo::Intrinsic {
                name,
                ty,
                env,
                hints,
            } => crate::intrin::call(self, fb, name, ty, env, hints, args, span),
            Clo::Partial { f, args: a0 } => {
                let mut all = a0.clone();
                all.extend(args);
                self.apply(fb, SV::Fun(f.clone()), all, span)
            }
            Clo::RightSection { op, rhs } => {
                let mut all = args;
                all.push(rhs.clone());
                self.apply(fb, op.clone(), all, span)
            }
            Clo::ProjSection(fields) => {
                let mut v = args
                    .into_iter()
                    .next()
                    .ok_or_else(|| err(span, "projection section without argument"))?;
                for f in fields.iter() {
                    v = project(&v, &f.name, f.span)?;
                }
                Ok(v)
            }
        }
    }

    /// Size parameters given by size expressions in the types of coerced (or
    /// ascribed) arguments, matched syntactically against the parameter
    /// types: `split (xs :> [k + (n - k)]t)` against `split`'s `[n + m]t`
    /// gives `n = k`, `m = n - k`; `unflatten (xs :> [a * b]t)` gives the
    /// result sizes `a`, `b`. The type checker does not track such size
    /// expressions (it records `Size::Any`), so this recovers what Futhark's
    /// size unification would infer in these common idioms.
    fn size_hints(
        &mut self,
        fb: &mut FunBuilder,
        fv: SV<'a>,
        args: &'a [Expr],
        ctx: &Ctx<'a>,
    ) -> R<SV<'a>> {
        let SV::Fun(clo) = &fv else { return Ok(fv) };
        match &**clo {
            Clo::Global {
                id,
                subst,
                ty,
                env,
                hints,
            } if hints.is_empty() => {
                let Some(def) = self.defs.get(id).copied() else {
                    return Ok(fv);
                };
                let names: Vec<&str> = def
                    .type_params
                    .iter()
                    .filter_map(|tp| match tp {
                        TypeParam::Size(n) => Some(n.name.as_str()),
                        _ => None,
                    })
                    .collect();
                if names.is_empty() {
                    return Ok(fv);
                }
                let mut pairs = vec![];
                for (p, a) in def.params.iter().zip(args) {
                    if let (Some(pt), Some(at)) = (pat_type_exp(p), arg_type_exp(a)) {
                        match_type_exps(pt, at, &names, &mut pairs, 0);
                    }
                }
                let mut out: Vec<(Name, Atom)> = vec![];
                for (n, e) in pairs {
                    if out.iter().any(|(m, _)| *m == n) {
                        continue;
                    }
                    let a = self.index_atom(fb, e, ctx)?;
                    out.push((n, a));
                }
                if out.is_empty() {
                    return Ok(fv);
                }
                Ok(SV::Fun(Rc::new(Clo::Global {
                    id: *id,
                    subst: subst.clone(),
                    ty: ty.clone(),
                    env: env.clone(),
                    hints: out,
                })))
            }
            Clo::Intrinsic {
                name,
                ty,
                env,
                hints,
            } if hints.is_empty() && (name == "unflatten" || name == "unflatten_3d") => {
                let k = if name == "unflatten" { 2 } else { 3 };
                let Some(te) = args.first().and_then(arg_type_exp) else {
                    return Ok(fv);
                };
                let TypeExp::Array(SizeExp::Expr(e), _, _) = strip_unique(te) else {
                    return Ok(fv);
                };
                let mut factors = vec![];
                product_factors(e, &mut factors, 0);
                if factors.len() != k {
                    return Ok(fv);
                }
                let mut out = vec![];
                for f in factors {
                    out.push(self.index_atom(fb, f, ctx)?);
                }
                Ok(SV::Fun(Rc::new(Clo::Intrinsic {
                    name: name.clone(),
                    ty: ty.clone(),
                    env: env.clone(),
                    hints: out,
                })))
            }
            _ => Ok(fv),
        }
    }

    /// Binds parameters to arguments (size parameters are bound separately,
    /// see [`Elab::size_args`] and [`bind_sizes`]).
    fn bind_params(
        &mut self,
        fb: &mut FunBuilder,
        params: &'a [Pat],
        args: Vec<SV<'a>>,
        ctx: &mut Ctx<'a>,
    ) -> R<()> {
        if params.len() != args.len() {
            let span = params.first().map(|p| p.span).unwrap_or_default();
            return Err(err(span, "wrong number of arguments"));
        }
        for (p, a) in params.iter().zip(args) {
            self.bind_pat(fb, p, a, ctx)?;
        }
        Ok(())
    }

    /// The values of a function's size parameters at a call, in order: from
    /// the arguments' shapes where a parameter's type has the size as a
    /// dimension, else from the function's instantiated type at the use site
    /// (`use_site`: the declared type after substitution, the use-site type,
    /// and the environment there), else `None` (unknown).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn size_args(
        &mut self,
        fb: &mut FunBuilder,
        params: &'a [Pat],
        tps: &'a [TypeParam],
        args: &[SV<'a>],
        subst: &Subst,
        use_site: Option<(&STy, &STy, &Env<'a>)>,
        span: Span,
    ) -> Vec<(Name, Option<Atom>)> {
        let names: Vec<&str> = tps
            .iter()
            .filter_map(|tp| match tp {
                TypeParam::Size(n) => Some(n.name.as_str()),
                _ => None,
            })
            .collect();
        if names.is_empty() {
            return vec![];
        }
        let mut from_use: Option<HashMap<Name, Size>> = None;
        let mut out = vec![];
        for n in &names {
            let mut found = None;
            for (p, a) in params.iter().zip(args) {
                if let Some(t) = &p.ty {
                    let t = subst_ty(t, subst);
                    if let Some(x) = self.find_size(fb, n, &t, a, span) {
                        found = Some(x);
                        break;
                    }
                }
            }
            if found.is_none() {
                if let Some((decl, use_ty, env)) = use_site {
                    let m = from_use.get_or_insert_with(|| {
                        let mut m = HashMap::new();
                        match_sizes(decl, use_ty, &names, &mut m, 0);
                        m
                    });
                    if let Some(s) = m.get(*n).cloned() {
                        found = self.size_value(fb, &s, env, &Subst::default());
                    }
                }
            }
            // A size that is a part of a parameter's compound size (`n` in
            // `xs: [n * m]t`), read off the argument's type (`[a * b]`).
            if found.is_none() {
                if let Some((_, _, env)) = use_site {
                    for (p, a) in params.iter().zip(args) {
                        let (Some(t), SV::Dyn(_, at)) = (&p.ty, a) else {
                            continue;
                        };
                        let mut m = HashMap::new();
                        match_sizes(&subst_ty(t, subst), at, &names, &mut m, 0);
                        if let Some(s) = m.get(*n).cloned() {
                            found = self.size_value(fb, &s, env, &Subst::default());
                            if found.is_some() {
                                break;
                            }
                        }
                    }
                }
            }
            out.push((n.to_string(), found));
        }
        // A size that is one term of a parameter's sum or difference
        // (`n` in `xs: [n + m]t`), the other term known: solved from the
        // argument's length (the argument's own size may be one no name
        // here holds: `f (let ys = filter p xs in ys ++ xs)`).
        for k in 0..out.len() {
            if out[k].1.is_some() {
                continue;
            }
            let env = out.iter().filter_map(|(m, a)| Some((m, (*a)?))).fold(
                use_site.map(|u| u.2.clone()).unwrap_or_default(),
                |env, (m, a)| env.bind(m, SV::Dyn(vec![a], STy::Prim(PrimType::I64))),
            );
            let n = out[k].0.clone();
            for (p, a) in params.iter().zip(args) {
                let (Some(t), SV::Dyn(atoms, _)) = (&p.ty, a) else {
                    continue;
                };
                if let Some(x) =
                    self.solve_size_term(fb, &n, &subst_ty(t, subst), atoms, &env, span)
                {
                    out[k].1 = Some(x);
                    break;
                }
            }
        }
        out
    }

    /// The value of the size `n` where a dimension of the parameter type
    /// `t` is `n + e`, `e + n` or `n - e` and `e` can be computed in `env`:
    /// the matching dimension of the argument (its `atoms`) minus (plus) `e`.
    fn solve_size_term(
        &mut self,
        fb: &mut FunBuilder,
        n: &str,
        t: &STy,
        atoms: &[Atom],
        env: &Env<'a>,
        span: Span,
    ) -> Option<Atom> {
        use nabla_syntax::size_expr::{size_of_expr, strip_parens};
        let comps = flat(t).ok()?;
        if comps.len() != atoms.len() {
            return None;
        }
        for ((_, shape), a) in comps.iter().zip(atoms) {
            let Atom::Var(arr) = a else { continue };
            for (d, s) in shape.iter().enumerate() {
                let Size::Expr(x) = s else { continue };
                let ExprKind::BinOp { op, lhs, rhs, .. } = &strip_parens(x.expr()).kind else {
                    continue;
                };
                let is_n = |e: &Expr| matches!(size_of_expr(e), Some(Size::Var(v)) if v == n);
                let (other, op) = match op.name.as_str() {
                    "+" if is_n(lhs) => (rhs, ir::BinOp::Sub),
                    "+" if is_n(rhs) => (lhs, ir::BinOp::Sub),
                    "-" if is_n(lhs) => (rhs, ir::BinOp::Add),
                    _ => continue,
                };
                if fb.atom_ty(*a).rank() <= d {
                    continue;
                }
                let other = size_of_expr(other)?;
                if other.mentions(n) {
                    continue;
                }
                let Some(e) = self.size_value(fb, &other, env, &Subst::default()) else {
                    continue;
                };
                let len = fb.size_of(*arr, d, span);
                return Some(fb.binop(op, len, e, span));
            }
        }
        None
    }

    /// Finds an atom holding the size `name` in a value of type `t` (by its shape).
    pub fn find_size(
        &self,
        fb: &mut FunBuilder,
        name: &str,
        t: &STy,
        v: &SV<'a>,
        span: Span,
    ) -> Option<Atom> {
        match v {
            SV::Dyn(atoms, _) => {
                let comps = flat(t).ok()?;
                if comps.len() != atoms.len() {
                    return None;
                }
                for ((_, shape), a) in comps.iter().zip(atoms) {
                    if let Some(d) = shape
                        .iter()
                        .position(|s| matches!(s, Size::Var(n) if n == name))
                    {
                        if let Atom::Var(x) = a {
                            if fb.atom_ty(*a).rank() > d {
                                return Some(fb.size_of(*x, d, span));
                            }
                        }
                    }
                }
                None
            }
            SV::Rec(fs) => {
                if let STy::Record(tfs) = t {
                    for (n, ft) in tfs {
                        if let Some((_, fv)) = fs.iter().find(|(m, _)| m == n) {
                            if let Some(a) = self.find_size(fb, name, ft, fv, span) {
                                return Some(a);
                            }
                        }
                    }
                }
                None
            }
            SV::Fun(_) | SV::Constr(..) => None,
        }
    }

    // ---- patterns -------------------------------------------------------

    /// Checks at run time that every dimension of `v` declared with a size
    /// name (`x: [n][n]t`) equals the size that name is bound to, so that a
    /// parameter's repeated or earlier-bound sizes are enforced (an entry
    /// point given a 2×3 array for `[n][n]` fails, naming the parameter).
    fn check_named_sizes(
        &self,
        fb: &mut FunBuilder,
        pat: &Pat,
        t: &STy,
        v: &SV<'a>,
        env: &Env<'a>,
        span: Span,
    ) {
        let SV::Dyn(atoms, _) = v else { return };
        let Ok(comps) = flat(t) else { return };
        if comps.len() != atoms.len() {
            return;
        }
        let what = match &pat.kind {
            PatKind::Id(x) => format!("parameter {}", x.name),
            _ => "value".to_string(),
        };
        for ((_, shape), a) in comps.iter().zip(atoms) {
            let Atom::Var(x) = a else { continue };
            for (d, s) in shape.iter().enumerate() {
                let Size::Var(n) = s else { continue };
                let Some(bound) = self.size_atom(s, env) else {
                    continue;
                };
                if fb.atom_ty(*a).rank() <= d {
                    continue;
                }
                let actual = fb.size_of(*x, d, span);
                if actual != bound {
                    fb.effect(
                        Exp::AssertEqSizes(
                            vec![actual, bound],
                            format!("{what}: dimension {d} does not have the size {n}"),
                        ),
                        span,
                    );
                }
            }
        }
    }

    pub fn bind_pat(
        &mut self,
        fb: &mut FunBuilder,
        p: &'a Pat,
        v: SV<'a>,
        ctx: &mut Ctx<'a>,
    ) -> R<()> {
        match &p.kind {
            PatKind::Id(x) => {
                // `let ys = filter p xs`: the existential size of `ys`'s
                // type is known from here on (Futhark's sizes of a
                // binding).
                if let Some(t) = &p.ty {
                    let t = subst_ty(t, &ctx.subst);
                    self.bind_value_sizes(fb, &t, &v, ctx, p.span);
                }
                ctx.env = ctx.env.bind(&x.name, v);
            }
            PatKind::Wildcard | PatKind::Lit(_) => {}
            PatKind::Tuple(ps) => {
                if ps.len() == 1 {
                    return self.bind_pat(fb, &ps[0], v, ctx);
                }
                for (i, q) in ps.iter().enumerate() {
                    let f = project(&v, &i.to_string(), q.span)?;
                    self.bind_pat(fb, q, f, ctx)?;
                }
            }
            PatKind::Record(fs) => {
                for (id, q) in fs {
                    let f = project(&v, &id.name, id.span)?;
                    self.bind_pat(fb, q, f, ctx)?;
                }
            }
            PatKind::Ascribe(q, _) => {
                self.bind_pat(fb, q, v.clone(), ctx)?;
                if let Some(t) = &p.ty {
                    let t = subst_ty(t, &ctx.subst);
                    self.bind_value_sizes(fb, &t, &v, ctx, p.span);
                    self.check_named_sizes(fb, q, &t, &v, &ctx.env, p.span);
                }
            }
            PatKind::Constr(c, ps) => {
                let (atoms, t) = match &v {
                    SV::Dyn(a, t) => (a.clone(), t.clone()),
                    SV::Constr(n, payload) if *n == c.name => {
                        for (q, pv) in ps.iter().zip(payload) {
                            self.bind_pat(fb, q, pv.clone(), ctx)?;
                        }
                        return Ok(());
                    }
                    _ => return Err(err(p.span, "constructor pattern on a non-sum value")),
                };
                let cs = match t {
                    STy::Sum(cs) => cs,
                    t => {
                        return Err(err(
                            p.span,
                            format!("constructor pattern on a value of type {t}"),
                        ))
                    }
                };
                let mut off = 1;
                for (n, tys) in &cs {
                    if *n == c.name {
                        for (q, ty) in ps.iter().zip(tys) {
                            let k = nflat(ty).map_err(|m| err(p.span, m))?;
                            let part = atoms
                                .get(off..off + k)
                                .ok_or_else(|| err(p.span, "internal: sum value too short"))?;
                            self.bind_pat(fb, q, SV::Dyn(part.to_vec(), ty.clone()), ctx)?;
                            off += k;
                        }
                        return Ok(());
                    }
                    for ty in tys {
                        off += nflat(ty).map_err(|m| err(p.span, m))?;
                    }
                }
                return Err(err(c.span, format!("unknown constructor #{}", c.name)));
            }
        }
        Ok(())
    }

    /// Binds each size name of `t` not yet bound in `ctx` to the matching
    /// dimension of the value `v` of type `t` (the sizes a value makes
    /// known: an existential size of a `let`-bound value, the sizes of a
    /// pipeline's left operand before its right one is evaluated).
    fn bind_value_sizes(
        &mut self,
        fb: &mut FunBuilder,
        t: &STy,
        v: &SV<'a>,
        ctx: &mut Ctx<'a>,
        span: Span,
    ) {
        let mut names = vec![];
        size_names(t, &mut names);
        for n in names {
            if ctx.env.get(&n).is_none() {
                if let Some(a) = self.find_size(fb, &n, t, v, span) {
                    ctx.env = ctx.env.bind(&n, SV::Dyn(vec![a], STy::Prim(PrimType::I64)));
                }
            }
        }
    }

    /// The run-time test that a value matches a pattern (`None`: always matches).
    fn pat_test(&mut self, fb: &mut FunBuilder, p: &'a Pat, v: &SV<'a>) -> R<Option<Atom>> {
        let span = p.span;
        match &p.kind {
            PatKind::Id(_) | PatKind::Wildcard => Ok(None),
            PatKind::Ascribe(q, _) => self.pat_test(fb, q, v),
            PatKind::Tuple(ps) if ps.len() == 1 => self.pat_test(fb, &ps[0], v),
            PatKind::Tuple(ps) => {
                let mut acc = None;
                for (i, q) in ps.iter().enumerate() {
                    let f = project(v, &i.to_string(), q.span)?;
                    let t = self.pat_test(fb, q, &f)?;
                    acc = conj(fb, acc, t, span);
                }
                Ok(acc)
            }
            PatKind::Record(fs) => {
                let mut acc = None;
                for (id, q) in fs {
                    let f = project(v, &id.name, id.span)?;
                    let t = self.pat_test(fb, q, &f)?;
                    acc = conj(fb, acc, t, span);
                }
                Ok(acc)
            }
            PatKind::Lit(l) => {
                let (a, t) = match v {
                    SV::Dyn(a, t) if a.len() == 1 => (a[0], t.clone()),
                    _ => return Err(err(span, "literal pattern on a non-scalar")),
                };
                let pt = prim_of(&t, span)?;
                let c = Atom::Const(lit_value(l, pt));
                Ok(Some(fb.cmp(ir::CmpOp::Eq, a, c, span)))
            }
            PatKind::Constr(c, ps) => {
                let (atoms, t) = match v {
                    SV::Dyn(a, t) => (a.clone(), t.clone()),
                    // A static sum: the constructor is known here.
                    SV::Constr(n, payload) => {
                        if *n != c.name {
                            return Ok(Some(boolc(false)));
                        }
                        let mut acc = None;
                        for (q, pv) in ps.iter().zip(payload) {
                            let t = self.pat_test(fb, q, pv)?;
                            acc = conj(fb, acc, t, span);
                        }
                        return Ok(acc);
                    }
                    _ => return Err(err(span, "constructor pattern on a non-sum value")),
                };
                let cs = match t {
                    STy::Sum(cs) => cs,
                    t => {
                        return Err(err(
                            span,
                            format!("constructor pattern on a value of type {t}"),
                        ))
                    }
                };
                let mut off = 1;
                for (i, (n, tys)) in cs.iter().enumerate() {
                    if *n == c.name {
                        let tag = *atoms
                            .first()
                            .ok_or_else(|| err(span, "internal: empty sum value"))?;
                        let mut acc = Some(fb.cmp(
                            ir::CmpOp::Eq,
                            tag,
                            Atom::Const(PrimValue::I8(i as i8)),
                            span,
                        ));
                        for (q, ty) in ps.iter().zip(tys) {
                            let k = nflat(ty).map_err(|m| err(span, m))?;
                            let part = atoms
                                .get(off..off + k)
                                .ok_or_else(|| err(span, "internal: sum value too short"))?;
                            let t = self.pat_test(fb, q, &SV::Dyn(part.to_vec(), ty.clone()))?;
                            acc = conj(fb, acc, t, span);
                            off += k;
                        }
                        return Ok(acc);
                    }
                    for ty in tys {
                        off += nflat(ty).map_err(|m| err(span, m))?;
                    }
                }
                Err(err(c.span, format!("unknown constructor #{}", c.name)))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn match_cases(
        &mut self,
        fb: &mut FunBuilder,
        sv: &SV<'a>,
        cases: &'a [ast::Case],
        i: usize,
        t: &STy,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let case = &cases[i];
        let last = i + 1 == cases.len();
        let cond = if last && irrefutable(&case.pat) {
            None
        } else {
            self.pat_test(fb, &case.pat, sv)?
        };
        // A case decided statically (a static sum's constructor).
        let cond = cond.filter(|c| *c != boolc(true));
        if cond == Some(boolc(false)) {
            if last {
                return Err(err(span, "no case of this `match` matches the value"));
            }
            return self.match_cases(fb, sv, cases, i + 1, t, ctx, span);
        }
        let Some(cond) = cond else {
            let mut c2 = ctx.clone();
            self.bind_pat(fb, &case.pat, sv.clone(), &mut c2)?;
            return self.elab_expr(fb, &case.body, &c2);
        };
        let mark = fb.mark();
        fb.begin();
        let mut c2 = ctx.clone();
        self.bind_pat(fb, &case.pat, sv.clone(), &mut c2)?;
        let tv = self.elab_expr(fb, &case.body, &c2)?;
        let ta = atoms_of(&tv, case.body.span)?;
        let tb = fb.end(ta.clone());
        fb.begin();
        let ea = if last {
            fb.effect(
                Exp::Assert(
                    boolc(false),
                    "non-exhaustive match: no case matches the value".into(),
                    vec![],
                ),
                span,
            );
            let mut out = vec![];
            // Blanks shaped like the then-branch results.
            for a in &ta {
                let ty = sanitize(fb.atom_ty(*a), mark);
                let p = ty.elem();
                let mut v = Atom::Const(fb::zero(p));
                let mut cur = ir::Type::Prim(p);
                if let ir::Type::Array(_, ds) = &ty {
                    for d in ds.iter().rev() {
                        let n = match d {
                            Dim::Const(c) => i64c(*c),
                            Dim::Var(x) => Atom::Var(*x),
                            Dim::Ext => i64c(0),
                        };
                        cur = cur.array_of(atom_dim(n));
                        v = fb.bind1("blank", cur.clone(), Exp::Replicate(n, v), span);
                    }
                }
                out.push(v);
            }
            out
        } else {
            let ev = self.match_cases(fb, sv, cases, i + 1, t, ctx, span)?;
            atoms_of(&ev, cases[i + 1].span)?
        };
        let eb = fb.end(ea.clone());
        self.mk_if(fb, cond, tb, eb, &ta, &ea, t.clone(), mark, case.span)
    }

    /// The value of a loop pattern's variables taken from the environment
    /// (`loop x for …` without `= init`).
    fn pat_value(&self, p: &'a Pat, ctx: &Ctx<'a>) -> R<SV<'a>> {
        match &p.kind {
            PatKind::Id(x) => ctx
                .env
                .get(&x.name)
                .cloned()
                .ok_or_else(|| err(x.span, format!("unknown variable {}", x.name))),
            PatKind::Ascribe(q, _) => self.pat_value(q, ctx),
            PatKind::Tuple(ps) => {
                let mut vs = vec![];
                for q in ps {
                    vs.push(self.pat_value(q, ctx)?);
                }
                Ok(mk_tuple(vs))
            }
            PatKind::Record(fs) => {
                let mut vs = vec![];
                for (id, q) in fs {
                    vs.push((id.name.clone(), self.pat_value(q, ctx)?));
                }
                vs.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Ok(mk_record(vs))
            }
            _ => Err(err(
                p.span,
                "loop without an initial value needs a pattern of variables",
            )),
        }
    }

    // ---- loops ----------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn elab_loop(
        &mut self,
        fb: &mut FunBuilder,
        sizes: &'a [Ident],
        pat: &'a Pat,
        init: Option<&'a Expr>,
        form: &'a ast::LoopForm,
        body: &'a Expr,
        attrs: &'a [ast::Attr],
        e: &'a Expr,
        ctx: &Ctx<'a>,
    ) -> R<SV<'a>> {
        let span = e.span;
        let stripmine = loop_attr(attrs, "stripmine");
        let bound_attr = loop_attr(attrs, "bound");
        let init_sv = match init {
            Some(x) => self.elab_expr(fb, x, ctx)?,
            None => self.pat_value(pat, ctx)?,
        };
        let (init_atoms, init_ty) = dyn_of(init_sv, span)?;
        let pty = self.pat_ty(pat, ctx).unwrap_or(init_ty);
        let mut ptys = self.ir_types(&pty, &ctx.env, pat.span)?;
        if ptys.len() != init_atoms.len() {
            return Err(err(
                span,
                "loop initial value does not match the loop pattern",
            ));
        }
        for (pt, a) in ptys.iter_mut().zip(&init_atoms) {
            let it = fb.atom_ty(*a);
            if pt.rank() != it.rank() {
                *pt = match it {
                    ir::Type::Array(p, ds) => {
                        ir::Type::Array(p, ds.iter().map(|_| Dim::Ext).collect())
                    }
                    t => t,
                };
            }
        }
        let params: Vec<Param> = ptys
            .iter()
            .map(|t| Param::new(fb.var("acc", t.clone()), t.clone()))
            .collect();
        let psv = SV::Dyn(
            params.iter().map(|p| Atom::Var(p.var)).collect(),
            pty.clone(),
        );
        let bind_loop_pat = |this: &mut Self, fb: &mut FunBuilder, c: &mut Ctx<'a>| -> R<()> {
            this.bind_pat(fb, pat, psv.clone(), c)?;
            for (k, s) in sizes.iter().enumerate() {
                let a = match this.find_size(fb, &s.name, &pty, &psv, s.span) {
                    Some(a) => a,
                    None => match params.iter().find(|p| p.ty.rank() > k) {
                        Some(p) => fb.size_of(p.var, k, s.span),
                        None => {
                            return Err(err(s.span, format!("cannot determine size {}", s.name)))
                        }
                    },
                };
                c.env = c
                    .env
                    .bind(&s.name, SV::Dyn(vec![a], STy::Prim(PrimType::I64)));
            }
            Ok(())
        };
        let form_ir;
        let body_ir;
        match form {
            ast::LoopForm::For(i, bound) => {
                let b = self.atom1(fb, bound, ctx)?;
                let it = fb.atom_ty(b).elem();
                let iv = fb.var(&i.name, ir::Type::Prim(it));
                let mut c2 = ctx.clone();
                c2.env = c2
                    .env
                    .bind(&i.name, SV::Dyn(vec![Atom::Var(iv)], STy::Prim(it)));
                fb.begin();
                bind_loop_pat(self, fb, &mut c2)?;
                let r = self.elab_expr(fb, body, &c2)?;
                let ra = atoms_of(&r, body.span)?;
                body_ir = fb.end(ra);
                form_ir = ir::LoopForm::For { i: iv, bound: b };
            }
            ast::LoopForm::ForIn(p, xs) => {
                let xv = self.elab_expr(fb, xs, ctx)?;
                let (xa, xt) = dyn_of(xv, xs.span)?;
                let first = match xa.first() {
                    Some(Atom::Var(v)) => *v,
                    _ => return Err(err(xs.span, "for-in loop over an array without components")),
                };
                let n = fb.size_of(first, 0, xs.span);
                let iv = fb.var("i", ir::Type::Prim(PrimType::I64));
                let mut c2 = ctx.clone();
                fb.begin();
                let row = self.index_rows(fb, &xa, &xt, Atom::Var(iv), xs.span)?;
                self.bind_pat(fb, p, row, &mut c2)?;
                bind_loop_pat(self, fb, &mut c2)?;
                let r = self.elab_expr(fb, body, &c2)?;
                let ra = atoms_of(&r, body.span)?;
                body_ir = fb.end(ra);
                form_ir = ir::LoopForm::For { i: iv, bound: n };
            }
            ast::LoopForm::While(cond) => {
                let mut c1 = ctx.clone();
                fb.begin();
                bind_loop_pat(self, fb, &mut c1)?;
                let c = self.atom1(fb, cond, &c1)?;
                let cond_body = fb.end(vec![c]);
                let mut c2 = ctx.clone();
                fb.begin();
                bind_loop_pat(self, fb, &mut c2)?;
                let r = self.elab_expr(fb, body, &c2)?;
                let ra = atoms_of(&r, body.span)?;
                body_ir = fb.end(ra);
                form_ir = ir::LoopForm::While {
                    cond: Box::new(cond_body),
                };
            }
        }
        if body_ir.result.len() != params.len() {
            return Err(err(
                body.span,
                "loop body result does not match the loop parameters",
            ));
        }
        let t = self.ty_of(e, ctx).unwrap_or(pty);
        let unknown = |u: ir::builder::UnknownVariable| err(span, u.to_string());
        let exp = match (form_ir, stripmine, bound_attr) {
            (ir::LoopForm::For { i, bound }, Some((arg, aspan)), _) => {
                let depth = match arg.parse::<usize>() {
                    Ok(k) if (1..=8).contains(&k) => k,
                    _ => {
                        return Err(err(
                            aspan,
                            format!("#[stripmine(k)] needs a depth k from 1 to 8, not `{arg}`"),
                        ))
                    }
                };
                fb.ir.set_span(span);
                ir::loops::strip_mine(&mut fb.ir, params, init_atoms, i, bound, body_ir, depth)
                    .map_err(unknown)?
            }
            (ir::LoopForm::While { cond }, _, Some((arg, aspan))) => {
                let bound = match arg.parse::<i64>() {
                    Ok(n) => Atom::Const(PrimValue::I64(n)),
                    Err(_) => match ctx.env.get(&arg) {
                        Some(SV::Dyn(atoms, STy::Prim(PrimType::I64))) if atoms.len() == 1 => {
                            atoms[0]
                        }
                        _ => {
                            return Err(err(
                                aspan,
                                format!(
                                    "#[bound(n)] needs an integer literal or an i64 variable, not `{arg}`"
                                ),
                            ))
                        }
                    },
                };
                fb.ir.set_span(span);
                ir::loops::bounded_while(
                    &mut fb.ir,
                    params,
                    init_atoms,
                    *cond,
                    body_ir,
                    bound,
                    format!("the while loop ran past its #[bound({arg})]"),
                )
                .map_err(unknown)?
            }
            (form, _, _) => Exp::Loop {
                params,
                init: init_atoms,
                form,
                body: body_ir,
            },
        };
        let vs = fb.bind("loop", ptys, exp, span);
        Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), t))
    }

    /// Row `i` of a flattened array value.
    pub fn index_rows(
        &mut self,
        fb: &mut FunBuilder,
        xa: &[Atom],
        xt: &STy,
        i: Atom,
        span: Span,
    ) -> R<SV<'a>> {
        let mut out = vec![];
        for a in xa {
            let v = match a {
                Atom::Var(v) => *v,
                _ => return Err(err(span, "indexing a scalar")),
            };
            let rt = fb
                .var_ty(v)
                .row()
                .ok_or_else(|| err(span, "indexing a scalar"))?;
            out.push(fb.bind1("row", rt, Exp::Index(v, vec![ir::DimIndex::Fix(i)]), span));
        }
        Ok(SV::Dyn(out, sty_row(xt)))
    }

    // ---- indexing and updates ----------------------------------------------

    fn dim_indices(
        &mut self,
        fb: &mut FunBuilder,
        idxs: &'a [ast::DimIndex],
        v0: Var,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<Vec<ir::DimIndex>> {
        let mut out = vec![];
        for (k, di) in idxs.iter().enumerate() {
            match di {
                ast::DimIndex::Fix(x) => out.push(ir::DimIndex::Fix(self.index_atom(fb, x, ctx)?)),
                ast::DimIndex::Slice { start, end, stride } => {
                    use ir::BinOp::*;
                    let n = fb.size_of(v0, k, span);
                    let i = match start {
                        Some(x) => Some(self.index_atom(fb, x, ctx)?),
                        None => None,
                    };
                    let j = match end {
                        Some(x) => Some(self.index_atom(fb, x, ctx)?),
                        None => None,
                    };
                    let s = match stride {
                        Some(x) => self.index_atom(fb, x, ctx)?,
                        None => i64c(1),
                    };
                    let (start, len) = match s {
                        Atom::Const(PrimValue::I64(sc)) if sc > 0 => {
                            let i = i.unwrap_or(i64c(0));
                            let j = j.unwrap_or(n);
                            let d = fb.binop(Sub, j, i, span);
                            let len = if sc == 1 {
                                d
                            } else {
                                slice_len(fb, d, Atom::Const(PrimValue::U64(sc as u64)), span)
                            };
                            (i, len)
                        }
                        Atom::Const(PrimValue::I64(sc)) if sc < 0 => {
                            let i = match i {
                                Some(i) => i,
                                None => fb.binop(Sub, n, i64c(1), span),
                            };
                            let j = j.unwrap_or(i64c(-1));
                            let d = fb.binop(Sub, i, j, span);
                            let abs = Atom::Const(PrimValue::U64(sc.unsigned_abs()));
                            let len = slice_len(fb, d, abs, span);
                            (i, len)
                        }
                        _ => {
                            let neg = fb.cmp(ir::CmpOp::Lt, s, i64c(0), span);
                            let nm1 = fb.binop(Sub, n, i64c(1), span);
                            let i = match i {
                                Some(i) => i,
                                None => fb.select(neg, nm1, i64c(0), span),
                            };
                            let j = match j {
                                Some(j) => j,
                                None => fb.select(neg, i64c(-1), n, span),
                            };
                            // A zero stride is out of bounds (Futhark).
                            let nonzero = fb.cmp(ir::CmpOp::Neq, s, i64c(0), span);
                            fb.effect(
                                Exp::Assert(
                                    nonzero,
                                    "Index [{}:{}:{}] out of bounds for array of shape [{}] (the stride of a slice may not be 0).".into(),
                                    vec![i, j, s, n],
                                ),
                                span,
                            );
                            let dn = fb.binop(Sub, i, j, span);
                            let dp = fb.binop(Sub, j, i, span);
                            let d = fb.select(neg, dn, dp, span);
                            let ns = fb.bind1(
                                "ns",
                                ir::Type::Prim(PrimType::I64),
                                Exp::UnOp(ir::UnOp::Neg, s),
                                span,
                            );
                            let abs = fb.select(neg, ns, s, span);
                            // |i64.min| wraps to i64.min, whose bits as u64 are right.
                            let abs = fb.conv(PrimType::I64, PrimType::U64, abs, span);
                            let len = slice_len(fb, d, abs, span);
                            (i, len)
                        }
                    };
                    out.push(ir::DimIndex::Slice {
                        start,
                        len,
                        stride: s,
                    });
                }
            }
        }
        Ok(out)
    }

    fn index(
        &mut self,
        fb: &mut FunBuilder,
        av: &SV<'a>,
        idxs: &'a [ast::DimIndex],
        t: STy,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let atoms = atoms_of(av, span)?;
        let Some(v0) = atoms
            .iter()
            .find_map(|a| if let Atom::Var(v) = a { Some(*v) } else { None })
        else {
            if atoms.is_empty() {
                return Ok(SV::Dyn(vec![], t));
            }
            return Err(err(span, "indexing a scalar"));
        };
        let dis = self.dim_indices(fb, idxs, v0, ctx, span)?;
        let mut out = vec![];
        for a in atoms {
            let Atom::Var(v) = a else {
                return Err(err(span, "indexing a scalar"));
            };
            let (p, dims) = match fb.var_ty(v) {
                ir::Type::Array(p, d) => (p, d),
                _ => return Err(err(span, "indexing a scalar")),
            };
            if dis.len() > dims.len() {
                return Err(err(span, "too many indices"));
            }
            let mut nd = vec![];
            for (k, di) in dis.iter().enumerate() {
                if let ir::DimIndex::Slice { len, .. } = di {
                    nd.push(atom_dim(*len));
                }
                let _ = k;
            }
            nd.extend(dims[dis.len()..].iter().cloned());
            let rt = if nd.is_empty() {
                ir::Type::Prim(p)
            } else {
                ir::Type::Array(p, nd)
            };
            out.push(fb.bind1("idx", rt, Exp::Index(v, dis.clone()), span));
        }
        Ok(SV::Dyn(out, t))
    }

    fn update(
        &mut self,
        fb: &mut FunBuilder,
        arr: &SV<'a>,
        idxs: &'a [ast::DimIndex],
        val: &SV<'a>,
        ctx: &Ctx<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let (atoms, t) = dyn_of(arr.clone(), span)?;
        let va = atoms_of(val, span)?;
        if va.len() != atoms.len() {
            return Err(err(
                span,
                "updated value does not match the array's element type",
            ));
        }
        let Some(v0) = atoms
            .iter()
            .find_map(|a| if let Atom::Var(v) = a { Some(*v) } else { None })
        else {
            return Ok(SV::Dyn(atoms, t));
        };
        let dis = self.dim_indices(fb, idxs, v0, ctx, span)?;
        let mut out = vec![];
        for (a, x) in atoms.iter().zip(va) {
            let Atom::Var(v) = a else {
                return Err(err(span, "updating a scalar"));
            };
            out.push(fb.bind1("upd", fb.var_ty(*v), Exp::Update(*v, dis.clone(), x), span));
        }
        Ok(SV::Dyn(out, t))
    }

    /// The sizes of `e :> [d1][d2]...t` given by size expressions that the
    /// type checker does not track (`[n+1]`, `[1+2]`), evaluated here, one
    /// entry per dimension of a plain array type (`None` where the
    /// dimension is `[]`, a name or a literal, which the checked type
    /// already gives). Empty for any other type expression.
    fn compound_coercion_sizes(
        &mut self,
        fb: &mut FunBuilder,
        te: &'a TypeExp,
        ctx: &Ctx<'a>,
    ) -> R<Vec<Option<Atom>>> {
        let mut out = vec![];
        let mut cur = strip_unique(te);
        while let TypeExp::Array(size, elem, _) = cur {
            let compound = match size {
                SizeExp::Expr(e) => match &strip_parens(e).kind {
                    ExprKind::Var { .. } | ExprKind::Lit(_) => None,
                    _ => Some(self.index_atom(fb, e, ctx)?),
                },
                SizeExp::Any(_) => None,
            };
            out.push(compound);
            cur = strip_unique(elem);
        }
        Ok(out)
    }

    /// `e :> t`: checks each known dimension at run time and reshapes.
    /// `compound`: sizes of the dimensions given by size expressions (see
    /// [`Elab::compound_coercion_sizes`]); they are checked too.
    pub fn coerce(
        &mut self,
        fb: &mut FunBuilder,
        v: SV<'a>,
        t: STy,
        compound: &[Option<Atom>],
        env: &Env<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let (atoms, _) = dyn_of(v, span)?;
        let comps = flat(&t).map_err(|m| err(span, m))?;
        if comps.len() != atoms.len() {
            return Err(err(span, "coercion to a type of a different structure"));
        }
        let mut out = vec![];
        for ((p, shape), a) in comps.iter().zip(atoms) {
            let Atom::Var(v) = a else {
                out.push(a);
                continue;
            };
            // Compound sizes apply only to a single array component.
            let compound = if comps.len() == 1 { compound } else { &[] };
            let mut known = Vec::with_capacity(shape.len());
            for s in shape {
                known.push(self.size_at(fb, s, env, span)?);
            }
            let target_of =
                |k: usize, _: &Size| known[k].or_else(|| compound.get(k).copied().flatten());
            if shape.is_empty()
                || shape
                    .iter()
                    .enumerate()
                    .all(|(k, s)| target_of(k, s).is_none())
            {
                out.push(a);
                continue;
            }
            // Futhark's message first, with the value's shape and the
            // target's (the per-dimension checks below then hold, and give
            // the optimiser the sizes' equalities).
            let actuals: Vec<Atom> = (0..shape.len()).map(|k| fb.size_of(v, k, span)).collect();
            let targets: Vec<Atom> = shape
                .iter()
                .enumerate()
                .map(|(k, s)| target_of(k, s).unwrap_or(actuals[k]))
                .collect();
            let mut ok: Option<Atom> = None;
            for (a, t) in actuals.iter().zip(&targets) {
                if a != t {
                    let eq = fb.cmp(ir::CmpOp::Eq, *a, *t, span);
                    ok = Some(match ok {
                        Some(o) => fb.binop(ir::BinOp::LogAnd, o, eq, span),
                        None => eq,
                    });
                }
            }
            if let Some(ok) = ok {
                let dims = "[{}]".repeat(shape.len());
                fb.effect(
                    Exp::Assert(
                        ok,
                        format!("value of shape {dims} cannot match shape of type \"{dims}{p}\"."),
                        actuals.iter().chain(&targets).copied().collect(),
                    ),
                    span,
                );
            }
            let mut dims = vec![];
            for (k, s) in shape.iter().enumerate() {
                let actual = actuals[k];
                match target_of(k, s) {
                    Some(target) => {
                        if target != actual {
                            let what = match s {
                                Size::Any => format!("length of dimension {k}"),
                                s => format!("size {s}"),
                            };
                            fb.effect(
                                Exp::AssertEqSizes(
                                    vec![actual, target],
                                    format!(
                                        "value does not have the {what} required by the coercion"
                                    ),
                                ),
                                span,
                            );
                        }
                        dims.push(target);
                    }
                    None => dims.push(actual),
                }
            }
            let ty = ir::Type::Array(*p, dims.iter().map(|a| atom_dim(*a)).collect());
            out.push(fb.bind1("coerce", ty, Exp::Reshape(dims, v), span));
        }
        Ok(SV::Dyn(out, t))
    }

    // ---- functions ------------------------------------------------------

    /// The IR function for a top-level definition at an instantiation
    /// (cached): a first-order one, or a recursive one specialised to the
    /// static arguments `statics`. `known`: which of the definition's size
    /// parameters the caller passes (as leading `i64` parameters of the IR
    /// function). `s` is in the caller's terms, `caller` its environment:
    /// the sizes in the type arguments become further `i64` parameters (see
    /// [`generic_inst`]), and the second result is what the caller passes
    /// for them, after the size parameters and before the value parameters.
    /// A recursive use of an instance still being built gets that instance
    /// (its result types in `provisional` until it is done).
    fn get_function(
        &mut self,
        def: &'a ValBind,
        s: Subst,
        caller: &Env<'a>,
        known: Vec<bool>,
        statics: Option<&Statics<'a>>,
    ) -> R<(ir::FunId, Vec<Atom>)> {
        let (gs, tsizes) = generic_inst(&s);
        let targs: Vec<Option<Atom>> = tsizes.iter().map(|z| self.size_atom(z, caller)).collect();
        let tknown: Vec<bool> = targs.iter().map(Option::is_some).collect();
        let targs: Vec<Atom> = targs.into_iter().flatten().collect();
        let mut keys: Vec<(&Name, String)> = gs.iter().map(|(n, t)| (n, t.to_string())).collect();
        keys.sort();
        let mut key = format!("{}:{:?}:{:?}:{:?}", def.id.0, keys, known, tknown);
        if let Some(st) = statics {
            key.push_str(&st.key);
        }
        if let Some(f) = self.cache.get(&key) {
            return Ok((*f, targs));
        }
        let fid = ir::FunId(self.funs.len() as u32);
        self.funs.push(None);
        self.cache.insert(key.clone(), fid);
        if self.recursive.contains(&def.id) {
            let ret = self.provisional_result(def, &s);
            self.provisional.insert(fid, ret);
        }
        let mut name = def.name.name.clone();
        if !s.is_empty() {
            let mut ks: Vec<_> = erase_subst_sizes(&s)
                .iter()
                .map(|(n, t)| format!("{n}={t}"))
                .collect();
            ks.sort();
            name = format!("{name}<{}>", ks.join(","));
        }
        let unknown: Vec<String> = def
            .type_params
            .iter()
            .filter_map(|tp| match tp {
                TypeParam::Size(n) => Some(n.name.as_str()),
                _ => None,
            })
            .zip(known.iter().copied().chain(std::iter::repeat(false)))
            .filter(|(_, k)| !k)
            .map(|(n, _)| format!("[{n}=?]"))
            .collect();
        name.push_str(&unknown.concat());
        let saved = (self.inline_depth, self.depth);
        self.inline_depth = 0;
        self.depth = 0;
        if statics.is_some() {
            name.push_str(&format!("{{specialised#{}}}", fid.0));
        }
        let r = self.build_instance(def, gs, name, Some(known), &tknown, statics);
        self.inline_depth = saved.0;
        self.depth = saved.1;
        self.provisional.remove(&fid);
        let (f, _, _) = r?;
        self.funs[fid.0 as usize] = Some(f);
        Ok((fid, targs))
    }

    /// Builds an IR function from a definition.
    ///
    /// Parameters: with `known = Some(k)` (an ordinary function), first one
    /// `i64` parameter per size parameter marked known in `k` (the caller
    /// passes it; unknown ones are unbound in the body), then the flattened
    /// value parameters. With `None` (an entry point) only the value
    /// parameters, and size parameters are bound from their shapes.
    /// `tknown`: which of the sizes `@0`, `@1`, … of the type arguments in `s`
    /// (see [`generic_inst`]) the caller passes, as `i64` parameters after
    /// the size parameters; the others are unknown (existential) inside.
    /// Parameter and result dimensions are constants, size variables that
    /// are parameters of the function (so callers and the interpreter can
    /// check and propagate them), or existential.
    pub fn build_function(
        &mut self,
        def: &'a ValBind,
        s: Subst,
        name: String,
        known: Option<Vec<bool>>,
        tknown: &[bool],
    ) -> R<(ir::Function, Vec<usize>, STy)> {
        self.build_instance(def, s, name, known, tknown, None)
    }

    /// [`Elab::build_function`], for a recursive function specialised to
    /// the functions passed to it with `statics`: the static parameters
    /// take no IR parameters of their own; the variables their values
    /// capture are the last parameters.
    fn build_instance(
        &mut self,
        def: &'a ValBind,
        s: Subst,
        name: String,
        known: Option<Vec<bool>>,
        tknown: &[bool],
        statics: Option<&Statics<'a>>,
    ) -> R<(ir::Function, Vec<usize>, STy)> {
        let mut fb = FunBuilder::new();
        let mut ctx = Ctx {
            env: Env::default(),
            subst: s,
        };
        let mut params = vec![];
        let mut arity = vec![];
        let mut args = vec![];
        let mut sizes = vec![];
        if let Some(known) = &known {
            let mut k = 0;
            for tp in &def.type_params {
                if let TypeParam::Size(n) = tp {
                    if known.get(k).copied().unwrap_or(false) {
                        let ty = ir::Type::Prim(PrimType::I64);
                        let v = fb.var(&n.name, ty.clone());
                        params.push(Param::new(v, ty));
                        sizes.push((n.name.clone(), Some(Atom::Var(v))));
                    } else {
                        sizes.push((n.name.clone(), None));
                    }
                    k += 1;
                }
            }
            bind_sizes(&mut ctx, sizes.clone());
        }
        for (k, _) in tknown.iter().enumerate().filter(|(_, kn)| **kn) {
            let ty = ir::Type::Prim(PrimType::I64);
            let v = fb.var("tsize", ty.clone());
            params.push(Param::new(v, ty));
            ctx.env = ctx.env.bind(
                &format!("@{k}"),
                SV::Dyn(vec![Atom::Var(v)], STy::Prim(PrimType::I64)),
            );
        }
        let (captured, cap_params) = capture_params(&mut fb, statics);
        let mut rebuilt = HashMap::new();
        // Value parameters: provisional types with the size parameters known so far.
        let mut comps_of = vec![];
        for (k, p) in def.params.iter().enumerate() {
            if let Some(sv) = statics
                .and_then(|st| st.args.get(k))
                .and_then(Option::as_ref)
            {
                comps_of.push(vec![]);
                arity.push(0);
                args.push(self.rebuild_static(sv, &captured, &mut rebuilt));
                continue;
            }
            let t = self.pat_ty(p, &ctx)?;
            // Functions over accumulators are inlined: only an entry point
            // (`main` without `entry` declarations) gets here with one.
            if has_acc(&t) {
                return Err(err(
                    p.span,
                    format!(
                        "the entry point `{}` takes an accumulator, but accumulators exist only inside the `scatter_stream` or `hist_stream` that makes them",
                        def.name.name
                    ),
                ));
            }
            let comps =
                flat(&t).map_err(|m| err(p.span, format!("parameter of an IR function: {m}")))?;
            let mut atoms = vec![];
            let unique = flat_unique(&t);
            for (k, (pt, shape)) in comps.iter().enumerate() {
                let ty = self.param_type(*pt, shape, &ctx.env, &params);
                let v = fb.var(&param_name(p), ty.clone());
                let mut param = Param::new(v, ty);
                param.unique = unique.get(k).copied().unwrap_or(false) && param.ty.rank() > 0;
                params.push(param);
                atoms.push(Atom::Var(v));
            }
            comps_of.push(comps);
            arity.push(atoms.len());
            args.push(SV::Dyn(atoms, t));
        }
        if known.is_none() {
            sizes = self.size_args(
                &mut fb,
                &def.params,
                &def.type_params,
                &args,
                &ctx.subst,
                None,
                def.span,
            );
        }
        self.bind_params(&mut fb, &def.params, args, &mut ctx)?;
        if known.is_none() {
            bind_sizes(&mut ctx, sizes);
        }
        // Final parameter types: sizes may also name value parameters (`(n: i64) (xs: [n]t)`).
        let nsize = params.len() - arity.iter().sum::<usize>();
        let mut i = nsize;
        for comps in &comps_of {
            for (pt, shape) in comps {
                let ty = self.param_type(*pt, shape, &ctx.env, &params);
                fb.set_type(params[i].var, ty.clone());
                params[i].ty = ty;
                i += 1;
            }
        }
        params.extend(cap_params);
        let extra = self.eta_params(&mut fb, def, &ctx, &mut params, &mut arity)?;
        let neta = extra.len();
        let mut r = self.elab_expr(&mut fb, &def.body, &ctx)?;
        if !extra.is_empty() {
            r = self.apply(&mut fb, r, extra, def.body.span)?;
        }
        let (ra, rt) = dyn_of(r, def.body.span)?;
        let ret: Vec<ir::Type> = ra
            .iter()
            .map(|a| match fb.atom_ty(*a) {
                ir::Type::Array(p, ds) => ir::Type::Array(
                    p,
                    ds.into_iter().map(|d| keep_param_dim(d, &params)).collect(),
                ),
                t => t,
            })
            .collect();
        let body = fb.end(ra);
        // Uniqueness of the results comes from the declared type (`: *[n]t`).
        let declared_ret = def
            .ty
            .as_ref()
            .and_then(|t| peel(t, def.params.len() + neta).1)
            .unwrap_or_else(|| rt.clone());
        // A result declared `*t` makes every array in it unique, also where
        // `t` is a type parameter (the prelude's `manifest 't (a: t): *t`).
        let mut unique_ret = if matches!(def.ret, Some(TypeExp::Unique(..))) {
            vec![true; ret.len()]
        } else {
            flat_unique(&declared_ret)
        };
        unique_ret.resize(ret.len(), false);
        for (u, t) in unique_ret.iter_mut().zip(&ret) {
            *u &= t.rank() > 0;
        }
        let f = ir::Function {
            name,
            params,
            ret,
            unique_ret,
            body,
            var_names: {
                fb.check().map_err(|u| err(def.span, u.to_string()))?;
                fb.into_names()
            },
            span: def.span,
        };
        Ok((f, arity, rt))
    }

    /// The parameters that an entry point defined as a function value
    /// (`entry f = g`, `def main = map f32.acos`, `def main (x: i32) = plus
    /// x`) takes beyond its written ones: one per arrow of the type its
    /// body returns, as Futhark's entry points do (eta-expansion; the type
    /// checker has made sure that they are first-order). Their flat
    /// components are appended to `params` and their arities to `arity`;
    /// returns their values, to apply the body to. A size named by one of
    /// them (`(n: i64) -> [n]t`) is that parameter in the types of the
    /// later ones. Nothing for a definition whose result is not a function.
    fn eta_params(
        &mut self,
        fb: &mut FunBuilder,
        def: &'a ValBind,
        ctx: &Ctx<'a>,
        params: &mut Vec<Param>,
        arity: &mut Vec<usize>,
    ) -> R<Vec<SV<'a>>> {
        let Some(full) = def.ty.as_ref().map(|t| subst_ty(t, &ctx.subst)) else {
            return Ok(vec![]);
        };
        let span = def.ret.as_ref().map_or(def.name.span, |te| te.span());
        let mut env = ctx.env.clone();
        let mut out = vec![];
        let mut rest = peel(&full, def.params.len()).1;
        while let Some(STy::Arrow {
            param_name,
            param,
            ret,
        }) = rest
        {
            let comps =
                flat(&param).map_err(|m| err(span, format!("parameter of an entry point: {m}")))?;
            let unique = flat_unique(&param);
            let name = param_name.clone().unwrap_or_else(|| "x".into());
            let mut atoms = vec![];
            for (k, (pt, shape)) in comps.iter().enumerate() {
                let ty = self.param_type(*pt, shape, &env, params);
                let v = fb.var(&name, ty.clone());
                let mut p = Param::new(v, ty);
                p.unique = unique.get(k).copied().unwrap_or(false) && p.ty.rank() > 0;
                params.push(p);
                atoms.push(Atom::Var(v));
            }
            if let Some(n) = &param_name {
                env = env.bind(n, SV::Dyn(atoms.clone(), (*param).clone()));
            }
            arity.push(atoms.len());
            out.push(SV::Dyn(atoms, *param));
            rest = Some(*ret);
        }
        Ok(out)
    }

    /// The IR type of a parameter component: dimensions that are constants
    /// or parameters of the function, others existential.
    fn param_type(&self, p: PrimType, shape: &[Size], env: &Env<'a>, params: &[Param]) -> ir::Type {
        if shape.is_empty() {
            return ir::Type::Prim(p);
        }
        ir::Type::Array(
            p,
            shape
                .iter()
                .map(|s| keep_param_dim(self.size_dim(s, env), params))
                .collect(),
        )
    }
}

/// The parameters of a specialisation (see [`Statics`]) for the variables
/// its static arguments capture: the map from each captured variable of the
/// caller to its parameter, and the parameters (with the caller's types,
/// whose dimensions name other captured sizes or are existential).
fn capture_params(
    fb: &mut FunBuilder,
    statics: Option<&Statics<'_>>,
) -> (HashMap<Var, Var>, Vec<Param>) {
    let Some(st) = statics else {
        return (HashMap::new(), vec![]);
    };
    let i64t = ir::Type::Prim(PrimType::I64);
    let map: HashMap<Var, Var> = st
        .caps
        .iter()
        .map(|(v, t)| (*v, fb.var("captured", t.clone())))
        .collect();
    let params = st
        .caps
        .iter()
        .map(|(v, t)| {
            let t = match t {
                ir::Type::Array(p, ds) => ir::Type::Array(
                    *p,
                    ds.iter()
                        .map(|d| match d {
                            Dim::Var(x) => match map.get(x) {
                                Some(y) if st.caps.iter().any(|(c, ct)| c == x && *ct == i64t) => {
                                    Dim::Var(*y)
                                }
                                _ => Dim::Ext,
                            },
                            d => *d,
                        })
                        .collect(),
                ),
                t => t.clone(),
            };
            fb.set_type(map[v], t.clone());
            Param::new(map[v], t)
        })
        .collect();
    (map, params)
}

/// A dimension as seen from outside a function: constants and the
/// function's own `i64` parameters are kept, anything else is existential.
fn keep_param_dim(d: Dim, params: &[Param]) -> Dim {
    match d {
        Dim::Const(c) => Dim::Const(c),
        Dim::Var(v)
            if params
                .iter()
                .any(|p| p.var == v && p.ty == ir::Type::Prim(PrimType::I64)) =>
        {
            Dim::Var(v)
        }
        _ => Dim::Ext,
    }
}

fn param_name(p: &Pat) -> String {
    match &p.kind {
        PatKind::Id(x) => x.name.clone(),
        PatKind::Ascribe(q, _) => param_name(q),
        _ => "p".into(),
    }
}

/// The conjunction of two pattern tests (`None`: always true), folded
/// where one is a constant (a static sum's constructor test).
fn conj(fb: &mut FunBuilder, a: Option<Atom>, b: Option<Atom>, span: Span) -> Option<Atom> {
    let t = Some(boolc(true));
    let f = Some(boolc(false));
    match (a, b) {
        (None, x) | (x, None) => x,
        (x, y) if x == f || y == f => f,
        (x, y) if x == t => y,
        (x, y) if y == t => x,
        (Some(a), Some(b)) => Some(fb.binop(ir::BinOp::LogAnd, a, b, span)),
    }
}

/// Binds size parameters (unknown ones to the [`unknown_size`] marker).
fn bind_sizes(ctx: &mut Ctx<'_>, sizes: Vec<(Name, Option<Atom>)>) {
    for (n, a) in sizes {
        let v = match a {
            Some(a) => SV::Dyn(vec![a], STy::Prim(PrimType::I64)),
            None => unknown_size(),
        };
        ctx.env = ctx.env.bind(&n, v);
    }
}

/// The caller-side types of a call's results: dimensions that name one of
/// the callee's parameters become the argument passed for it.
fn call_result_types(f: &ir::Function, args: &[Atom]) -> Vec<ir::Type> {
    f.ret
        .iter()
        .map(|t| match t {
            ir::Type::Array(p, ds) => ir::Type::Array(
                *p,
                ds.iter()
                    .map(|d| match d {
                        Dim::Var(v) => f
                            .params
                            .iter()
                            .position(|q| q.var == *v)
                            .and_then(|i| args.get(i))
                            .map(|a| atom_dim(*a))
                            .unwrap_or(Dim::Ext),
                        d => *d,
                    })
                    .collect(),
            ),
            t => t.clone(),
        })
        .collect()
}

/// The value bound to a size parameter that neither the arguments nor the
/// use site determine: types mentioning it get `Dim::Ext`; using it as a
/// value is an error (see `elab_name`).
fn unknown_size<'a>() -> SV<'a> {
    SV::Dyn(vec![], STy::Prim(PrimType::I64))
}

fn is_unknown_size(v: &SV<'_>) -> bool {
    matches!(v, SV::Dyn(a, STy::Prim(PrimType::I64)) if a.is_empty())
}

/// Matches a definition's declared type against its instantiated type at a
/// use site: for each size parameter in `names` that appears as a dimension
/// of `decl`, the size at the same place in `use_ty` (first match wins).
fn match_sizes(
    decl: &STy,
    use_ty: &STy,
    names: &[&str],
    out: &mut HashMap<Name, Size>,
    depth: usize,
) {
    if depth > 200 {
        return;
    }
    match (decl, use_ty) {
        (
            STy::Array {
                elem: e1,
                shape: s1,
                ..
            },
            STy::Array {
                elem: e2,
                shape: s2,
                ..
            },
        ) => {
            for (a, b) in s1.iter().zip(s2) {
                match_size(a, b, names, out, depth + 1);
            }
            if s1.len() == s2.len() {
                match_sizes(e1, e2, names, out, depth + 1);
            }
        }
        (STy::Record(f1), STy::Record(f2)) => {
            for ((n1, t1), (n2, t2)) in f1.iter().zip(f2) {
                if n1 == n2 {
                    match_sizes(t1, t2, names, out, depth + 1);
                }
            }
        }
        (STy::Sum(c1), STy::Sum(c2)) => {
            for ((n1, t1), (n2, t2)) in c1.iter().zip(c2) {
                if n1 == n2 {
                    for (a, b) in t1.iter().zip(t2) {
                        match_sizes(a, b, names, out, depth + 1);
                    }
                }
            }
        }
        (
            STy::Arrow {
                param: p1, ret: r1, ..
            },
            STy::Arrow {
                param: p2, ret: r2, ..
            },
        ) => {
            match_sizes(p1, p2, names, out, depth + 1);
            match_sizes(r1, r2, names, out, depth + 1);
        }
        _ => {}
    }
}

/// Matches one declared size against the size at the use site: a size
/// parameter named in `names` gets the use site's size; compound sizes
/// with the same outermost construct match part by part (`[n * m]`
/// against `[a * (b + 1)]` gives `n = a`, `m = b + 1`).
fn match_size(a: &Size, b: &Size, names: &[&str], out: &mut HashMap<Name, Size>, depth: usize) {
    if depth > 200 {
        return;
    }
    match (a, b) {
        (Size::Var(n), b)
            if names.contains(&n.as_str()) && !out.contains_key(n) && *b != Size::Any =>
        {
            out.insert(n.clone(), b.clone());
        }
        (Size::Expr(x), Size::Expr(y)) => {
            for (p, q) in nabla_syntax::size_expr::similar_parts(x, y).unwrap_or_default() {
                match_size(&p, &q, names, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The type expression of a parameter pattern (`(xs: [n + m]t)`).
fn pat_type_exp(p: &Pat) -> Option<&TypeExp> {
    match &p.kind {
        PatKind::Ascribe(_, te) => Some(te),
        PatKind::Tuple(ps) if ps.len() == 1 => pat_type_exp(&ps[0]),
        _ => None,
    }
}

/// The length of a slice spanning the distance `d` (`j - i` in the
/// stride's direction) with a stride of magnitude `abs` (a `u64`, so that
/// `|i64.min|` fits): `(d + abs - 1) quot abs`, as for small strides, but
/// computed without overflow for any stride (a negative length is an
/// out-of-bounds slice at run time).
fn slice_len(fb: &mut FunBuilder, d: Atom, abs: Atom, span: Span) -> Atom {
    use ir::BinOp::{Add, Div, Sub};
    let (i64_, u64_) = (PrimType::I64, PrimType::U64);
    // d > 0: (d - 1) / abs + 1.
    let positive = fb.cmp(ir::CmpOp::Lt, i64c(0), d, span);
    let dm1 = fb.binop(Sub, d, i64c(1), span);
    let dm1_u = fb.conv(i64_, u64_, dm1, span);
    let q_u = fb.binop(Div, dm1_u, abs, span);
    let q = fb.conv(u64_, i64_, q_u, span);
    let ceil = fb.binop(Add, q, i64c(1), span);
    // d <= 0: x = d + (abs - 1) does not overflow; 0 when x >= 0 (as
    // x < abs), else -((-x) / abs).
    let am1_u = fb.binop(Sub, abs, Atom::Const(PrimValue::U64(1)), span);
    let am1 = fb.conv(u64_, i64_, am1_u, span);
    let x = fb.binop(Add, d, am1, span);
    let x_nonneg = fb.cmp(ir::CmpOp::Le, i64c(0), x, span);
    let nx = fb.binop(Sub, i64c(0), x, span);
    let nx_u = fb.conv(i64_, u64_, nx, span);
    let nq_u = fb.binop(Div, nx_u, abs, span);
    let nq = fb.conv(u64_, i64_, nq_u, span);
    let neg_len = fb.binop(Sub, i64c(0), nq, span);
    let short = fb.select(x_nonneg, i64c(0), neg_len, span);
    fb.select(positive, ceil, short, span)
}

/// The type expression of a coerced or ascribed argument (`(xs :> [a * b]t)`).
fn arg_type_exp(e: &Expr) -> Option<&TypeExp> {
    match &e.kind {
        ExprKind::Parens(x) => arg_type_exp(x),
        ExprKind::Coerce(_, te) | ExprKind::Ascribe(_, te) => Some(te),
        _ => None,
    }
}

fn strip_unique(te: &TypeExp) -> &TypeExp {
    match te {
        TypeExp::Unique(t, _) => strip_unique(t),
        t => t,
    }
}

fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Parens(x) => strip_parens(x),
        _ => e,
    }
}

/// Matches a declared parameter type expression against an argument's:
/// where the declared size is a size parameter, the argument's size
/// expression at the same place gives it; `+`, `-`, `*` size expressions
/// are matched operand by operand.
fn match_type_exps<'a>(
    decl: &'a TypeExp,
    actual: &'a TypeExp,
    names: &[&str],
    out: &mut Vec<(Name, &'a Expr)>,
    depth: usize,
) {
    if depth > 100 {
        return;
    }
    match (strip_unique(decl), strip_unique(actual)) {
        (TypeExp::Array(sd, d, _), TypeExp::Array(sa, a, _)) => {
            if let (SizeExp::Expr(de), SizeExp::Expr(ae)) = (sd, sa) {
                match_size_exps(de, ae, names, out, depth + 1);
            }
            match_type_exps(d, a, names, out, depth + 1);
        }
        (TypeExp::Tuple(ds, _), TypeExp::Tuple(as_, _)) if ds.len() == as_.len() => {
            for (d, a) in ds.iter().zip(as_) {
                match_type_exps(d, a, names, out, depth + 1);
            }
        }
        _ => {}
    }
}

fn match_size_exps<'a>(
    de: &'a Expr,
    ae: &'a Expr,
    names: &[&str],
    out: &mut Vec<(Name, &'a Expr)>,
    depth: usize,
) {
    if depth > 100 {
        return;
    }
    let (de, ae) = (strip_parens(de), strip_parens(ae));
    match (&de.kind, &ae.kind) {
        (ExprKind::Var { name, .. }, _)
            if name.quals.is_empty() && names.contains(&name.name.as_str()) =>
        {
            out.push((name.name.clone(), ae));
        }
        (
            ExprKind::BinOp {
                op: o1,
                lhs: l1,
                rhs: r1,
                ..
            },
            ExprKind::BinOp {
                op: o2,
                lhs: l2,
                rhs: r2,
                ..
            },
        ) if o1.name == o2.name && matches!(o1.name.as_str(), "+" | "-" | "*") => {
            match_size_exps(l1, l2, names, out, depth + 1);
            match_size_exps(r1, r2, names, out, depth + 1);
        }
        _ => {}
    }
}

/// The factors of a left-nested product `a * b * c`.
fn product_factors<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>, depth: usize) {
    let e = strip_parens(e);
    match &e.kind {
        ExprKind::BinOp { op, lhs, rhs, .. } if op.name == "*" && depth < 8 => {
            product_factors(lhs, out, depth + 1);
            out.push(strip_parens(rhs));
        }
        _ => out.push(e),
    }
}

/// The argument of the loop attribute `#[name(arg)]`, if present, and the
/// attribute's span.
fn loop_attr(attrs: &[ast::Attr], name: &str) -> Option<(String, Span)> {
    attrs.iter().find_map(|a| {
        let text = a.text.trim();
        let rest = text.strip_prefix(name)?.trim_start();
        let arg = rest.strip_prefix('(')?.strip_suffix(')')?;
        Some((arg.trim().to_string(), a.span))
    })
}

/// The condition of an `assert c e` application given its source text: the
/// first argument after `assert`, a parenthesised expression (up to its
/// matching parenthesis) or an atom without spaces (`ok`, `xs[i]`, `r.ok`);
/// whitespace runs inside become one space.
fn assert_condition_text(call: &str) -> Option<String> {
    let rest = call.trim_start().strip_prefix("assert")?.trim_start();
    let end = if rest.starts_with('(') {
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        end?
    } else {
        rest.find(char::is_whitespace).unwrap_or(rest.len())
    };
    let cond = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    (!cond.is_empty()).then_some(cond)
}

#[cfg(test)]
mod assert_text_tests {
    use super::assert_condition_text;

    #[test]
    fn condition_of_an_assert() {
        assert_eq!(
            assert_condition_text("assert (x > 0) (x + 1)").as_deref(),
            Some("(x > 0)")
        );
        assert_eq!(
            assert_condition_text("assert (f (g x)\n   == 1) y").as_deref(),
            Some("(f (g x) == 1)")
        );
        assert_eq!(assert_condition_text("assert ok 3").as_deref(), Some("ok"));
        assert_eq!(assert_condition_text("assert (unbalanced 3"), None);
        assert_eq!(assert_condition_text("id x"), None);
    }
}
