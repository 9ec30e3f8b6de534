//! Unification variables, class/record/sum constraints, and unification with
//! an occurs check (Hindley–Milner with constrained type variables, in the
//! style of Futhark's type checker).
//!
//! Size variables: an unknown size is `Size::Var("?k")` (a name no program can
//! write); size unification binds these. Two different known sizes (size
//! parameters, constants) do not unify — `map2 f (xs: [n]t) (ys: [m]t)` is a
//! type error, as in Futhark — except where Futhark gives the result an
//! existential size (the branches of `if` and `match`: see
//! [`Tcx::lenient_sizes`]). Sizes the checker does not track (`Size::Any`,
//! e.g. of `filter` or `xs ++ ys`) unify with anything and are checked at
//! run time.

use crate::sig::{mk_array, Class};
use nabla_prim::PrimType;
use nabla_syntax::ast::Liftedness;
use nabla_syntax::size_expr::similar_parts;
use nabla_syntax::types::{Name, Size, Type};
use nabla_syntax::Span;
use std::collections::{BTreeMap, HashMap};

/// Bitmask over `PrimType::ALL` indices.
pub(crate) type PrimSet = u16;

pub(crate) fn prim_bit(p: PrimType) -> PrimSet {
    1 << PrimType::ALL.iter().position(|q| *q == p).unwrap_or(0)
}

pub(crate) fn prim_set(f: impl Fn(PrimType) -> bool) -> PrimSet {
    PrimType::ALL
        .iter()
        .filter(|p| f(**p))
        .fold(0, |a, p| a | prim_bit(*p))
}

/// A constraint on an unbound unification variable.
#[derive(Clone, Debug)]
pub(crate) enum Constraint {
    None,
    /// One of a set of primitive types, with a default.
    Prims {
        set: PrimSet,
        default: PrimType,
        what: &'static str,
    },
    /// A non-functional type.
    Eq,
    /// A record with at least these fields.
    Fields(BTreeMap<Name, Type>),
    /// A sum type with at least these constructors.
    Constrs(BTreeMap<Name, Vec<Type>>),
}

#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub binding: Option<Type>,
    pub constraint: Constraint,
    /// Where the variable (or its constraint) came from.
    pub span: Span,
    /// The scope depth at which the variable was made (see [`Tcx::level`]).
    pub level: u32,
    /// The variable may not become a function type, nor a type containing
    /// one (Futhark's unlifted type variables: an instance of a type
    /// parameter `'a` that is not lifted, an array element). Passed on to
    /// the variables of the type it is bound to.
    pub unlifted: bool,
}

/// A flexible size variable `?k` (a size to be inferred).
#[derive(Clone, Debug)]
pub(crate) struct SizeVar {
    pub binding: Option<Size>,
    /// The scope depth at which it was made: it may only be bound to a size
    /// whose names are in scope at that depth.
    pub level: u32,
    /// The name it is shown as (the size parameter it instantiates, …).
    pub hint: Name,
}

/// An unknown size: a rigid size the checker invents where a size cannot be
/// expressed (Futhark's "unknown size"), named with a subscript no program
/// can write (`k₃`).
#[derive(Clone, Debug)]
#[allow(dead_code)] // `span` and `what` are for messages that name an unknown size's origin
pub(crate) struct Unknown {
    pub level: u32,
    /// The expression that produces it.
    pub span: Span,
    /// Where it comes from, as a phrase: "is the unknown length of a range".
    pub what: String,
}

/// The unifier's state.
#[derive(Default)]
pub(crate) struct Tcx {
    pub vars: Vec<VarInfo>,
    pub sizes: Vec<SizeVar>,
    /// The current scope depth: each binding construct (a parameter, a
    /// `let`, a `match` case, a loop) is one deeper. A variable made at
    /// depth `d` may not be bound to a type or size that refers to a name
    /// bound deeper (Futhark's "scope-violation").
    pub level: u32,
    /// The depth of each local value or size name in scope.
    pub rigid_sizes: HashMap<Name, u32>,
    /// The depth of each local type parameter in scope.
    pub rigid_types: HashMap<Name, u32>,
    /// The size each existential size of the declared result type
    /// (`∃k`) has in the body being checked (see
    /// [`Tcx::unify_existential`]); empty at the start of each function.
    pub existential_sizes: HashMap<Name, Size>,
    /// The unknown sizes made so far, by name.
    pub unknowns: HashMap<Name, Unknown>,
    /// Their names, in the order they were made.
    pub unknown_order: Vec<Name>,
    /// After a failed [`Tcx::unify`]: the constructor that a sum type lacks
    /// (or has with another number of payloads), and where the constrained
    /// variable came from.
    pub blame: Option<(Name, Span)>,
    /// Every constructor use (expression or pattern) with its span, to
    /// locate the one a failed unification blames.
    pub constr_sites: Vec<(Name, Span)>,
    /// While set, two different known sizes unify (the value's size is
    /// then checked at run time where it matters). Set while the branches
    /// of `if`/`match` are unified: Futhark gives such a result a fresh
    /// existential size instead of rejecting it.
    pub lenient_sizes: bool,
    /// After a failed [`Tcx::unify`]: the function type (or type containing
    /// one) that an unlifted variable was to be bound to.
    pub functional: Option<Type>,
    /// The constructors standing for abstract types declared lifted
    /// (`type~ t`, `type^ t`) in the sealed check of the module pass (see
    /// `nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR`), with their
    /// liftedness: such a type may be (or hide) a function or an array of
    /// varying size.
    pub lifted_abstract: HashMap<Name, Liftedness>,
    /// The type parameters in scope declared lifted (`'^a`) or size-lifted
    /// (`'~a`).
    pub lifted_params: Vec<(Name, Liftedness)>,
    /// The scope depths of the bodies of the loops being checked
    /// (innermost last), for messages about sizes computed in them.
    pub loop_body_levels: Vec<u32>,
    /// The parameter names of the dependent function types whose results
    /// are being unified (innermost last; see
    /// [`Tcx::unify_arrow_results`]).
    pub arrow_bound: Vec<Name>,
}

const MAX_DEPTH: usize = 400;

impl Tcx {
    pub fn fresh(&mut self, span: Span) -> Type {
        self.fresh_c(Constraint::None, span)
    }

    pub fn fresh_c(&mut self, constraint: Constraint, span: Span) -> Type {
        self.vars.push(VarInfo {
            binding: None,
            constraint,
            span,
            level: self.level,
            unlifted: false,
        });
        Type::Var(self.vars.len() as u32 - 1)
    }

    /// A fresh variable that may not become a function type (see
    /// [`VarInfo::unlifted`]).
    pub fn fresh_unlifted(&mut self, span: Span) -> Type {
        let t = self.fresh(span);
        if let Type::Var(v) = t {
            self.vars[v as usize].unlifted = true;
        }
        t
    }

    /// Requires `t` to be first-order (Futhark's "zero-order" types): an
    /// error if it is, or contains, a function type; its unbound variables
    /// become unlifted, so that they cannot become functions later.
    pub fn require_unlifted(&mut self, t: &Type) -> Result<(), String> {
        let z = self.zonk(t);
        if self.liftedness(&z) != Liftedness::Unlifted {
            let shown = z.to_string();
            self.functional = Some(z);
            return Err(format!("type `{shown}` found to be functional"));
        }
        let mut vs = Vec::new();
        collect_vars(&z, &mut vs);
        for v in vs {
            self.vars[v as usize].unlifted = true;
        }
        Ok(())
    }

    /// How lifted a (zonked) type is: `Lifted` if it is or contains a
    /// function, a lifted type parameter or abstract type, else
    /// `SizeLifted` if it contains a size-lifted one, else `Unlifted`.
    pub fn liftedness(&self, t: &Type) -> Liftedness {
        let rank = |l: Liftedness| match l {
            Liftedness::Unlifted => 0,
            Liftedness::SizeLifted => 1,
            Liftedness::Lifted => 2,
        };
        let max = |a: Liftedness, b: Liftedness| if rank(b) > rank(a) { b } else { a };
        match t {
            Type::Arrow { .. } => Liftedness::Lifted,
            Type::Param(p) => self
                .lifted_params
                .iter()
                .rev()
                .find(|(n, _)| n == p)
                .map_or(Liftedness::Unlifted, |(_, l)| *l),
            Type::Prim(_) | Type::Var(_) => Liftedness::Unlifted,
            Type::Array { elem, .. } | Type::Acc { arr: elem, .. } => self.liftedness(elem),
            Type::Record(fs) => fs
                .iter()
                .fold(Liftedness::Unlifted, |l, (_, t)| max(l, self.liftedness(t))),
            Type::Sum(cs) => cs.iter().fold(Liftedness::Unlifted, |l, (c, ts)| {
                let own = self
                    .lifted_abstract
                    .get(c)
                    .copied()
                    .unwrap_or(Liftedness::Unlifted);
                ts.iter()
                    .fold(max(l, own), |l, t| max(l, self.liftedness(t)))
            }),
        }
    }

    pub fn fresh_class(&mut self, c: Class, span: Span) -> Type {
        if c == Class::Unlifted {
            return self.fresh_unlifted(span);
        }
        let num = prim_set(|p| p.is_numeric());
        let int = prim_set(|p| p.is_int());
        let cons = match c {
            Class::Any | Class::Unlifted => Constraint::None,
            Class::Num => Constraint::Prims {
                set: num,
                default: PrimType::I32,
                what: "numeric",
            },
            Class::Int => Constraint::Prims {
                set: int,
                default: PrimType::I32,
                what: "integral",
            },
            Class::IntBool => Constraint::Prims {
                set: int | prim_bit(PrimType::Bool),
                default: PrimType::I32,
                what: "integral or bool",
            },
            Class::Prim => Constraint::Prims {
                set: prim_set(|_| true),
                default: PrimType::I32,
                what: "primitive",
            },
            Class::Eq => Constraint::Eq,
        };
        self.fresh_c(cons, span)
    }

    pub fn float_var(&mut self, span: Span) -> Type {
        self.fresh_c(
            Constraint::Prims {
                set: prim_set(|p| p.is_float()),
                default: PrimType::F64,
                what: "floating-point",
            },
            span,
        )
    }

    /// A variable for a signed integer type (`i8` … `i64`, default `i32`):
    /// the type of an index whose type is not known yet.
    pub fn signed_int_var(&mut self, span: Span) -> Type {
        self.fresh_c(
            Constraint::Prims {
                set: prim_set(|p| p.is_signed_int()),
                default: PrimType::I32,
                what: "signed integer",
            },
            span,
        )
    }

    pub fn fresh_size(&mut self) -> Size {
        self.fresh_size_named("d")
    }

    /// A fresh flexible size variable, shown in messages as `hint`.
    pub fn fresh_size_named(&mut self, hint: &str) -> Size {
        self.sizes.push(SizeVar {
            binding: None,
            level: self.level,
            hint: hint.to_string(),
        });
        Size::Var(format!("?{}", self.sizes.len() - 1))
    }

    /// A fresh unknown size (rigid: equal only to itself) made by the
    /// expression at `span`; `what` says where it comes from.
    pub fn new_unknown(&mut self, hint: &str, span: Span, what: String) -> Size {
        const SUB: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
        let k = self.unknown_order.len();
        let name: String = hint
            .chars()
            .chain(
                k.to_string()
                    .chars()
                    .map(|c| SUB[c as usize - '0' as usize]),
            )
            .collect();
        self.unknown_order.push(name.clone());
        self.unknowns.insert(
            name.clone(),
            Unknown {
                level: self.level,
                span,
                what,
            },
        );
        Size::Var(name)
    }

    /// Moves the unknown sizes in `t` made deeper than `level` up to it:
    /// `t` is the type of a value leaving their scope, and they go with it.
    pub fn hoist_unknowns(&mut self, t: &Type, level: u32) {
        let mut names = vec![];
        collect_size_names(&self.zonk(t), &mut names);
        for n in names {
            if let Some(u) = self.unknowns.get_mut(&n) {
                u.level = u.level.min(level);
            }
        }
    }

    /// The scope depth of a name in a size: a flexible variable's, an
    /// unknown size's, a local's; 0 for anything else (globals).
    fn size_name_level(&self, n: &str) -> u32 {
        if let Some(i) = Self::size_var_index(&Size::Var(n.to_string())) {
            return self.sizes.get(i).map_or(0, |v| v.level);
        }
        if let Some(u) = self.unknowns.get(n) {
            return u.level;
        }
        self.rigid_sizes.get(n).copied().unwrap_or(0)
    }

    /// Checks that the names of `s` are in scope at depth `level` (flexible
    /// variables deeper are moved up to it); the error names the first one
    /// bound deeper.
    fn scope_check_size(&mut self, s: &Size, level: u32, what: &str) -> Result<(), String> {
        let mut names = vec![];
        s.names(&mut names);
        for n in names {
            if let Some(j) = Self::size_var_index(&Size::Var(n.clone())) {
                if let Some(v) = self.sizes.get_mut(j) {
                    v.level = v.level.min(level);
                }
            } else if self.arrow_bound.contains(&n) {
                return Err(format!(
                    "Sizes \"{}\" and \"{}\" do not match: \"{n}\" is the named parameter of a function type, and means nothing outside that type",
                    what.trim_start_matches('"').split('"').next().unwrap_or(what),
                    self.show_size(s)
                ));
            } else if self.size_name_level(&n) > level {
                let name_level = self.size_name_level(&n);
                if self
                    .loop_body_levels
                    .iter()
                    .any(|&l| level < l && l <= name_level)
                {
                    return Err(format!(
                        "Cannot make {what} \"{}\": \"{n}\" is computed inside the loop body, and a size of the loop's parameters cannot be one iteration's size (scope-violation)",
                        self.show_size(s)
                    ));
                }
                return Err(format!(
                    "Cannot make {what} \"{}\": \"{n}\" is bound in a deeper scope than where {what} is needed (scope-violation)",
                    self.show_size(s)
                ));
            }
        }
        Ok(())
    }

    /// Checks that `t` (resolved) refers to no type parameter or size name
    /// bound deeper than `level`; variables deeper are moved up to it.
    fn scope_check_type(&mut self, t: &Type, level: u32) -> Result<(), String> {
        match t {
            Type::Var(v) => {
                let info = &mut self.vars[*v as usize];
                info.level = info.level.min(level);
                Ok(())
            }
            Type::Param(p) => match self.rigid_types.get(p) {
                Some(l) if *l > level => Err(format!(
                    "Cannot unify a type with the type parameter \"{p}\": \"{p}\" is bound in a deeper scope than the type (scope-violation)"
                )),
                _ => Ok(()),
            },
            Type::Prim(_) => Ok(()),
            Type::Array { elem, shape, .. } => {
                for s in shape {
                    self.scope_check_size(s, level, "the size of an array")?;
                }
                self.scope_check_type(elem, level)
            }
            Type::Record(fs) => fs.iter().try_for_each(|(_, t)| self.scope_check_type(t, level)),
            Type::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .try_for_each(|t| self.scope_check_type(t, level)),
            Type::Arrow { param, ret, .. } => {
                self.scope_check_type(param, level)?;
                self.scope_check_type(ret, level)
            }
            Type::Acc { arr, .. } => self.scope_check_type(arr, level),
        }
    }

    /// A size as messages show it: flexible variables by their hint.
    pub fn show_size(&self, s: &Size) -> String {
        show_size(&self.hinted_size(s))
    }

    /// `s` resolved, with its flexible variables renamed to their hints
    /// (for messages only: `?12 * ?13` reads `n * m`).
    pub fn hinted_size(&self, s: &Size) -> Size {
        self.resolve_size(s).subst(&|v: &str| {
            let i = Self::size_var_index(&Size::Var(v.to_string()))?;
            Some(Size::Var(self.sizes.get(i)?.hint.clone()))
        })
    }

    fn size_var_index(s: &Size) -> Option<usize> {
        match s {
            Size::Var(v) if v.starts_with('?') => v[1..].parse().ok(),
            _ => None,
        }
    }

    /// `s` with the bindings of its flexible size variables substituted,
    /// also inside compound size expressions.
    pub fn resolve_size(&self, s: &Size) -> Size {
        let mut s = s.clone();
        for _ in 0..10_000 {
            match Self::size_var_index(&s)
                .and_then(|i| self.sizes.get(i))
                .and_then(|b| b.binding.clone())
            {
                Some(b) => s = b,
                None => break,
            }
        }
        match &s {
            Size::Expr(_) => s.subst(&|v: &str| {
                let i = Self::size_var_index(&Size::Var(v.to_string()))?;
                self.sizes.get(i)?.binding.as_ref()?;
                Some(self.resolve_size(&Size::Var(v.to_string())))
            }),
            _ => s,
        }
    }

    /// Whether the flexible size variable number `i` occurs in `s` (already
    /// resolved).
    fn size_occurs(i: usize, s: &Size) -> bool {
        let mut names = vec![];
        s.names(&mut names);
        names.iter().any(|n| n == &format!("?{i}"))
    }

    /// Binds the flexible size variable number `i` to `s` (resolved),
    /// refusing a size that contains the variable itself.
    fn bind_size(&mut self, i: usize, s: Size) -> Result<(), String> {
        if Self::size_occurs(i, &s) {
            return Err(format!(
                "Occurs check: cannot instantiate the size \"{}\" with \"{}\", which contains it",
                self.sizes[i].hint,
                self.show_size(&s)
            ));
        }
        let what = format!("\"{}\" the size", self.sizes[i].hint);
        self.scope_check_size(&s, self.sizes[i].level, &what)?;
        self.sizes[i].binding = Some(s);
        Ok(())
    }

    /// Unifies two sizes, as Futhark does: syntactically, up to the
    /// substitution of flexible size variables (`?k`, bound to the other
    /// size); two compound expressions with the same outermost construct
    /// unify part by part (`?n * ?m` with `a * b`). `Size::Any` unifies
    /// with anything; other different sizes do not match (unless
    /// [`Tcx::lenient_sizes`] is set): `Sizes "n" and "m" do not match`.
    pub fn unify_size(&mut self, a: &Size, b: &Size) -> Result<(), String> {
        let a = self.resolve_size(a);
        let b = self.resolve_size(b);
        if a == b {
            return Ok(());
        }
        // An existential size of a declared result type (`: []t`) takes any
        // size the body has; it constrains nothing, and a flexible size is
        // not bound to it (it would leak into the parameters).
        let existential = |s: &Size| matches!(s, Size::Var(n) if is_existential(n));
        if existential(&a) || existential(&b) {
            return self.unify_existential(&a, &b, existential(&a));
        }
        // Where sizes may differ (the branches of `if`), a flexible size that
        // cannot take the other (it is bound in a deeper scope) stays as it
        // is: the joined size is existential.
        if let Some(i) = Self::size_var_index(&a) {
            let r = self.bind_size(i, b);
            return if self.lenient_sizes { Ok(()) } else { r };
        }
        if let Some(i) = Self::size_var_index(&b) {
            let r = self.bind_size(i, a);
            return if self.lenient_sizes { Ok(()) } else { r };
        }
        if a == Size::Any
            || b == Size::Any
            || self.lenient_sizes
            || matches!(&a, Size::Var(n) if is_existential(n))
            || matches!(&b, Size::Var(n) if is_existential(n))
        {
            return Ok(());
        }
        if let (Size::Expr(x), Size::Expr(y)) = (&a, &b) {
            if let Some(parts) = similar_parts(x, y) {
                for (p, q) in parts {
                    self.unify_size(&p, &q)?;
                }
                return Ok(());
            }
        }
        let mut msg = format!(
            "Sizes \"{}\" and \"{}\" do not match",
            self.show_size(&a),
            self.show_size(&b)
        );
        // `n` against `n + n`: no size can be both (Futhark reports this
        // as an occurs check).
        let contains = |x: &Size, y: &Size| matches!(x, Size::Var(n) if y.mentions(n));
        if contains(&a, &b) || contains(&b, &a) {
            msg.push_str(" (Occurs check: a size cannot equal a size expression that contains it)");
        }
        for s in [&a, &b] {
            if let Some(u) = match s {
                Size::Var(n) => self.unknowns.get(n).map(|u| (n, u)),
                _ => None,
            } {
                msg.push_str(&format!("; \"{}\" is {}", u.0, u.1.what));
            }
        }
        Err(msg)
    }

    /// [`Tcx::unify_size`] where `a` (if `a_existential`, else `b`) is an
    /// existential size of the declared result type: the first definite size
    /// it meets is its size in the body, and every later one must be that
    /// size (`square []` is `[∃1][∃1]`, so `[n+1][n+2]` does not match). A
    /// flexible size, `[]`, another existential size or a branch's size
    /// (lenient unification) decides nothing.
    fn unify_existential(&mut self, a: &Size, b: &Size, a_existential: bool) -> Result<(), String> {
        let (e, other) = if a_existential { (a, b) } else { (b, a) };
        let Size::Var(name) = e else { return Ok(()) };
        if self.lenient_sizes
            || *other == Size::Any
            || matches!(other, Size::Var(n) if is_existential(n))
            || Self::size_var_index(other).is_some()
        {
            return Ok(());
        }
        match self.existential_sizes.get(name).cloned() {
            None => {
                self.existential_sizes.insert(name.clone(), other.clone());
                Ok(())
            }
            Some(bound) => self.unify_size(&bound, other),
        }
    }

    /// Follows variable bindings at the top and normalises nested arrays.
    pub fn head(&self, t: &Type) -> Type {
        let mut t = t.clone();
        for _ in 0..100_000 {
            match &t {
                Type::Var(v) => match self.vars.get(*v as usize).and_then(|i| i.binding.clone()) {
                    Some(b) => t = b,
                    None => return t,
                },
                Type::Array {
                    elem,
                    shape,
                    unique,
                } => {
                    let e = self.head(elem);
                    if let Type::Array { .. } = e {
                        return mk_array(e, shape.clone(), *unique);
                    }
                    return t;
                }
                _ => return t,
            }
        }
        t
    }

    /// Whether `t`, with its variables' bindings substituted, has more than
    /// `cap` parts (type constructors). Walks at most `cap` parts, without
    /// building the substituted type (which may be exponentially larger
    /// than its representation through shared variables).
    pub fn larger_than(&self, t: &Type, cap: usize) -> bool {
        fn go(tcx: &Tcx, t: &Type, left: &mut usize) -> bool {
            if *left == 0 {
                return true;
            }
            *left -= 1;
            match t {
                Type::Var(v) => match tcx.vars.get(*v as usize).and_then(|i| i.binding.as_ref()) {
                    Some(b) => go(tcx, b, left),
                    None => false,
                },
                Type::Prim(_) | Type::Param(_) => false,
                Type::Array { elem, .. } => go(tcx, elem, left),
                Type::Record(fs) => fs.iter().any(|(_, t)| go(tcx, t, left)),
                Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(|t| go(tcx, t, left)),
                Type::Arrow { param, ret, .. } => go(tcx, param, left) || go(tcx, ret, left),
                Type::Acc { arr, .. } => go(tcx, arr, left),
            }
        }
        let mut left = cap;
        go(self, t, &mut left)
    }

    /// Substitutes all bound variables (unbound ones stay; unknown sizes stay).
    /// `t` with its bindings filled in, as a message about unification
    /// shows it: without the uniqueness markers of its values' arrays
    /// (unification ignores them; `*[3]f64 is not f64` would mislead).
    pub fn shown(&self, t: &Type) -> Type {
        without_uniqueness(&self.zonk(t))
    }

    pub fn zonk(&self, t: &Type) -> Type {
        self.zonk_d(t, 0)
    }

    fn zonk_d(&self, t: &Type, d: usize) -> Type {
        if d > 10 * MAX_DEPTH {
            return t.clone();
        }
        match self.head(t) {
            Type::Array {
                elem,
                shape,
                unique,
            } => {
                let shape = shape.iter().map(|s| self.resolve_size(s)).collect();
                mk_array(self.zonk_d(&elem, d + 1), shape, unique)
            }
            t => t.map_children(|c| self.zonk_d(c, d + 1)),
        }
    }

    /// Like `zonk`, and unknown sizes become `Size::Any`; the types inside
    /// compound size expressions are finalised too.
    pub fn finalize(&self, t: &Type) -> Type {
        self.finalize_with(t, false)
    }

    /// Like [`Tcx::finalize`], but an unknown size (`d₁₄`: the size of a
    /// function's result at one application, of a range, …) keeps its name:
    /// the type of an expression or a local binding, inside the definition
    /// where that size is made, so that the elaborator can bind it to the
    /// value's dimension and use it where a later size depends on it
    /// (`let ys = filter p xs in f g ys`, where `f`'s size parameter is
    /// `ys`'s length). A name the elaborator has not bound is an unknown
    /// size there, as `Size::Any` is.
    pub fn finalize_keeping_unknowns(&self, t: &Type) -> Type {
        self.finalize_with(t, true)
    }

    fn finalize_with(&self, t: &Type, keep_unknowns: bool) -> Type {
        fn go(tcx: &Tcx, t: &Type, keep: bool) -> Type {
            match t {
                Type::Array {
                    elem,
                    shape,
                    unique,
                } => Type::Array {
                    elem: Box::new(go(tcx, elem, keep)),
                    shape: shape
                        .iter()
                        .map(|s| tcx.finalize_size_with(s, keep))
                        .collect(),
                    unique: *unique,
                },
                t => t.map_children(|c| go(tcx, c, keep)),
            }
        }
        go(self, &self.zonk(t), keep_unknowns)
    }

    /// A resolved size in final form: an unbound flexible variable (also
    /// inside a compound expression) becomes `Size::Any`, and so does an
    /// unknown size unless `keep_unknowns` (see
    /// [`Tcx::finalize_keeping_unknowns`]).
    fn finalize_size_with(&self, s: &Size, keep_unknowns: bool) -> Size {
        let s = self.resolve_size(s);
        let mut names = vec![];
        s.names(&mut names);
        // An unknown size that reaches a definition's final type is
        // existential there: no caller can name it.
        if names
            .iter()
            .any(|n| n.starts_with('?') || (!keep_unknowns && self.unknowns.contains_key(n)))
        {
            return Size::Any;
        }
        match s {
            Size::Expr(_) => {
                s.map_expr_types(&mut |t| erase_sizes(&self.finalize(&erase_sizes(t, false)), true))
            }
            s => s,
        }
    }

    fn occurs(&self, v: u32, t: &Type) -> bool {
        let mut vs = Vec::new();
        collect_vars(&self.zonk(t), &mut vs);
        vs.contains(&v)
    }

    /// Unifies `a` (expected) with `b` (found). On failure, a short
    /// description of the innermost conflict.
    pub fn unify(&mut self, a: &Type, b: &Type) -> Result<(), String> {
        self.blame = None;
        self.functional = None;
        self.unify_d(a, b, 0)
    }

    fn unify_d(&mut self, a: &Type, b: &Type, d: usize) -> Result<(), String> {
        if d > MAX_DEPTH {
            return Err("types are nested too deeply".into());
        }
        let a = self.head(a);
        let b = self.head(b);
        match (&a, &b) {
            (Type::Var(x), Type::Var(y)) if x == y => Ok(()),
            // Two unbound variables: the younger one is bound to the older
            // one, so that unifying a long-lived type (an array literal's
            // element type, a result type) with many fresh variables keeps
            // binding chains short (`head` stays O(1), not O(n)).
            (Type::Var(x), Type::Var(y)) if y < x => self.bind(*x, &b, d),
            (Type::Var(_), Type::Var(y)) => self.bind(*y, &a, d),
            (Type::Var(x), _) => self.bind(*x, &b, d),
            (_, Type::Var(y)) => self.bind(*y, &a, d),
            (Type::Prim(p), Type::Prim(q)) if p == q => Ok(()),
            (Type::Param(p), Type::Param(q)) if p == q => Ok(()),
            (
                Type::Array {
                    elem: e1,
                    shape: s1,
                    ..
                },
                Type::Array {
                    elem: e2,
                    shape: s2,
                    ..
                },
            ) => {
                let n = s1.len().min(s2.len());
                for i in 0..n {
                    self.unify_size(&s1[i], &s2[i])?;
                }
                let r1 = mk_array((**e1).clone(), s1[n..].to_vec(), false);
                let r2 = mk_array((**e2).clone(), s2[n..].to_vec(), false);
                if s1.len() != s2.len()
                    && !matches!(self.head(e1), Type::Var(_))
                    && !matches!(self.head(e2), Type::Var(_))
                {
                    return Err(format!(
                        "arrays of different rank: {} and {}",
                        self.shown(&a),
                        self.shown(&b)
                    ));
                }
                self.unify_d(&r1, &r2, d + 1)
            }
            (Type::Record(f1), Type::Record(f2)) => {
                let n1: Vec<&Name> = f1.iter().map(|f| &f.0).collect();
                let n2: Vec<&Name> = f2.iter().map(|f| &f.0).collect();
                if n1 != n2 {
                    let mut unshared: Vec<&str> = n1
                        .iter()
                        .filter(|n| !n2.contains(n))
                        .chain(n2.iter().filter(|n| !n1.contains(n)))
                        .map(|n| n.as_str())
                        .collect();
                    unshared.sort_unstable();
                    return Err(format!(
                        "Cannot unify record types with unshared fields: {}.",
                        unshared.join(", ")
                    ));
                }
                for ((n, t1), (_, t2)) in f1.iter().zip(f2.iter()) {
                    self.unify_d(t1, t2, d + 1)
                        .map_err(|e| format!("{e} (when matching field \"{n}\")"))?;
                }
                Ok(())
            }
            (Type::Sum(c1), Type::Sum(c2)) => {
                let n1: Vec<(&Name, usize)> = c1.iter().map(|c| (&c.0, c.1.len())).collect();
                let n2: Vec<(&Name, usize)> = c2.iter().map(|c| (&c.0, c.1.len())).collect();
                if n1 != n2 {
                    let mut unshared: Vec<String> = n1
                        .iter()
                        .filter(|n| !n2.contains(n))
                        .chain(n2.iter().filter(|n| !n1.contains(n)))
                        .map(|(n, _)| format!("#{n}"))
                        .collect();
                    unshared.sort_unstable();
                    unshared.dedup();
                    return Err(format!(
                        "The sum types have different constructors. Unshared constructors: {}.",
                        unshared.join(", ")
                    ));
                }
                for ((_, t1), (_, t2)) in c1.iter().zip(c2.iter()) {
                    for (x, y) in t1.iter().zip(t2.iter()) {
                        self.unify_d(x, y, d + 1)?;
                    }
                }
                Ok(())
            }
            (
                Type::Arrow {
                    param_name: n1,
                    param: p1,
                    ret: r1,
                },
                Type::Arrow {
                    param_name: n2,
                    param: p2,
                    ret: r2,
                },
            ) => {
                self.unify_d(p1, p2, d + 1)?;
                self.unify_arrow_results(n1.as_deref(), r1, n2.as_deref(), r2, d)
            }
            (Type::Acc { arr: a1, .. }, Type::Acc { arr: a2, .. }) => self.unify_d(a1, a2, d + 1),
            _ => Err(format!("{} is not {}", self.shown(&b), self.shown(&a))),
        }
    }

    /// Unifies the result types `r1` and `r2` of two function types whose
    /// parameters are named `n1` and `n2` (dependent function types,
    /// `(n: i64) -> [n]t`), as Futhark does: the two names are made one
    /// (renaming where the other result mentions the name from outside),
    /// and inside the results that name is bound: it matches only itself,
    /// and a flexible size cannot take it (`(n: i64) -> [n]t` is not
    /// `i64 -> [d]t` for any `d` outside). A type variable bound meanwhile
    /// forgets the name (its size becomes unknown), so `map iota ns` keeps
    /// type-checking.
    fn unify_arrow_results(
        &mut self,
        n1: Option<&str>,
        r1: &Type,
        n2: Option<&str>,
        r2: &Type,
        d: usize,
    ) -> Result<(), String> {
        let rename = |t: &Type, from: &str, to: &str| {
            subst(t, &|_| None, &|v: &str| {
                (v == from).then(|| Size::Var(to.to_string()))
            })
        };
        let (name, r1, r2) = match (n1, n2) {
            (None, None) => return self.unify_d(r1, r2, d + 1),
            (Some(a), Some(b)) if a == b => (a.to_string(), r1.clone(), r2.clone()),
            (Some(a), other) | (other, Some(a)) => {
                let (mine, theirs, b) = if n1 == Some(a) {
                    (r1, r2, other)
                } else {
                    (r2, r1, other)
                };
                let mut fresh = a.to_string();
                while mentions_size_name(theirs, &fresh) && Some(fresh.as_str()) != b {
                    fresh.push('\'');
                }
                let mine = rename(mine, a, &fresh);
                let theirs = match b {
                    Some(b) => rename(theirs, b, &fresh),
                    None => theirs.clone(),
                };
                if n1 == Some(a) {
                    (fresh, mine, theirs)
                } else {
                    (fresh, theirs, mine)
                }
            }
        };
        let previous = self.rigid_sizes.insert(name.clone(), u32::MAX);
        self.arrow_bound.push(name.clone());
        let result = self.unify_d(&r1, &r2, d + 1);
        self.arrow_bound.pop();
        match previous {
            Some(l) => self.rigid_sizes.insert(name, l),
            None => self.rigid_sizes.remove(&name),
        };
        result
    }

    fn set(&mut self, v: u32, t: Type) {
        self.vars[v as usize].binding = Some(t);
    }

    /// Binds the unbound variable `v` to `t` (already `head`ed), checking
    /// `v`'s constraint.
    fn bind(&mut self, v: u32, t: &Type, d: usize) -> Result<(), String> {
        // A size named by a dependent parameter becomes unknown in the
        // type (`map iota`'s `b` is `[]i64`), but not where it sizes a
        // function's parameter and no array outside functions has it (is
        // its witness, as Futhark says): no caller could give such a
        // function an argument.
        if let Some(n) = self
            .arrow_bound
            .iter()
            .find(|n| parameter_mentions_size(t, n, false) && !witnesses_size(t, n))
        {
            return Err(format!(
                "Existential size would appear in function parameter of return type: the type `{}` would have the size \"{n}\", the named parameter of a function type, which means nothing outside that type",
                self.shown(t)
            ));
        }
        let forgotten;
        let t = if self.arrow_bound.is_empty() {
            t
        } else {
            let bound = self.arrow_bound.clone();
            forgotten = subst(t, &|_| None, &|s: &str| {
                bound.iter().any(|b| b == s).then_some(Size::Any)
            });
            &forgotten
        };
        if self.occurs(v, t) {
            return Err(
                "Occurs check: cannot instantiate a type variable with a type that contains it (the type would have to contain itself)"
                    .to_string(),
            );
        }
        let level = self.vars[v as usize].level;
        let z = self.zonk(t);
        self.scope_check_type(&z, level)?;
        if self.vars[v as usize].unlifted {
            self.require_unlifted(t)?;
        }
        let c = self.vars[v as usize].constraint.clone();
        match (c, t) {
            (Constraint::None, _) => {
                self.set(v, t.clone());
                Ok(())
            }
            (c, Type::Var(w)) => {
                // Merge constraints into w.
                let w = *w;
                let cw = self.vars[w as usize].constraint.clone();
                self.set(v, t.clone());
                let merged = match (c, cw) {
                    (c, Constraint::None) => c,
                    (Constraint::None, c) => c,
                    (Constraint::Eq, c) | (c, Constraint::Eq) => c,
                    (
                        Constraint::Prims {
                            set: s1,
                            default: d1,
                            what: w1,
                        },
                        Constraint::Prims {
                            set: s2,
                            default: d2,
                            what: w2,
                        },
                    ) => {
                        let set = s1 & s2;
                        if set == 0 {
                            return Err(format!("a type cannot be both {w1} and {w2}"));
                        }
                        let default = if set & prim_bit(d1) != 0 {
                            d1
                        } else if set & prim_bit(d2) != 0 {
                            d2
                        } else {
                            *PrimType::ALL
                                .iter()
                                .find(|p| set & prim_bit(**p) != 0)
                                .unwrap_or(&d1)
                        };
                        let what = if s1 & !s2 == 0 { w1 } else { w2 };
                        Constraint::Prims { set, default, what }
                    }
                    (Constraint::Fields(mut f1), Constraint::Fields(f2)) => {
                        for (n, t2) in f2 {
                            if let Some(t1) = f1.get(&n).cloned() {
                                self.unify_d(&t1, &t2, d + 1)?;
                            } else {
                                f1.insert(n, t2);
                            }
                        }
                        Constraint::Fields(f1)
                    }
                    (Constraint::Constrs(mut c1), Constraint::Constrs(c2)) => {
                        for (n, t2) in c2 {
                            if let Some(t1) = c1.get(&n).cloned() {
                                if t1.len() != t2.len() {
                                    return Err(format!(
                                        "constructor #{n} used with different numbers of payloads"
                                    ));
                                }
                                for (x, y) in t1.iter().zip(t2.iter()) {
                                    self.unify_d(x, y, d + 1)?;
                                }
                            } else {
                                c1.insert(n, t2);
                            }
                        }
                        Constraint::Constrs(c1)
                    }
                    (c1, c2) => {
                        let record = match (&c1, &c2) {
                            (Constraint::Fields(_), other) | (other, Constraint::Fields(_)) => {
                                Some(other)
                            }
                            _ => None,
                        };
                        if let Some(other) = record {
                            let field = [&c1, &c2].into_iter().find_map(|c| match c {
                                Constraint::Fields(fs) => fs.keys().next().cloned(),
                                _ => None,
                            });
                            return Err(format!(
                                "Cannot unify {} with type that must be a record with field {}",
                                describe(other),
                                field.unwrap_or_default()
                            ));
                        }
                        return Err(format!(
                            "Cannot unify {} with {}: they are incompatible",
                            describe(&c1),
                            describe(&c2)
                        ));
                    }
                };
                self.vars[w as usize].constraint = merged;
                // The fields' and payloads' types are those of a value of
                // `v`'s scope now: nothing in them may be bound deeper.
                let level = self.vars[w as usize].level;
                let inner: Vec<Type> = match &self.vars[w as usize].constraint {
                    Constraint::Fields(fs) => fs.values().cloned().collect(),
                    Constraint::Constrs(cs) => cs.values().flatten().cloned().collect(),
                    _ => Vec::new(),
                };
                for t in inner {
                    let z = self.zonk(&t);
                    self.scope_check_type(&z, level)?;
                }
                Ok(())
            }
            (Constraint::Prims { set, what, .. }, t) => match t {
                Type::Prim(p) if set & prim_bit(*p) != 0 => {
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!("{} is not {what}", self.shown(t))),
            },
            (Constraint::Eq, t) => {
                if let Type::Arrow { .. } = t {
                    return Err(
                        "a function type does not support equality: values of function type cannot be compared"
                            .to_string(),
                    );
                }
                if let Type::Param(p) = t {
                    return Err(format!(
                        "the type parameter `{p}` does not support equality: a type parameter may be instantiated with a type that cannot be compared with =="
                    ));
                }
                self.set(v, t.clone());
                Ok(())
            }
            (Constraint::Fields(fs), t) => match t {
                Type::Record(have) => {
                    for (n, ft) in &fs {
                        match have.iter().find(|(m, _)| m == n) {
                            Some((_, ht)) => self.unify_d(ht, ft, d + 1)?,
                            None => {
                                return Err(format!(
                                    "Cannot unify record type {} with a type that must be a record with field {n}",
                                    self.shown(t)
                                ))
                            }
                        }
                    }
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!(
                    "{} is not a record (has no field {})",
                    self.shown(t),
                    fs.keys().next().map(|s| s.as_str()).unwrap_or("")
                )),
            },
            (Constraint::Constrs(cs), t) => match t {
                Type::Sum(have) => {
                    for (n, ts) in &cs {
                        match have.iter().find(|(m, _)| m == n) {
                            Some((_, hts)) if hts.len() == ts.len() => {
                                for (x, y) in hts.iter().zip(ts.iter()) {
                                    self.unify_d(x, y, d + 1)?;
                                }
                            }
                            Some((_, hts)) => {
                                self.blame = Some((n.clone(), self.vars[v as usize].span));
                                return Err(format!(
                                    "the uses of constructor #{n} differ in arity: {} payloads here, {} in {}",
                                    ts.len(),
                                    hts.len(),
                                    self.shown(t)
                                ));
                            }
                            None => {
                                self.blame = Some((n.clone(), self.vars[v as usize].span));
                                return Err(format!(
                                    "{} has no constructor #{n}. Unshared constructors: #{n}.",
                                    self.shown(t)
                                ));
                            }
                        }
                    }
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!(
                    "Cannot unify type with constructors (#{}) with {}, which is not a sum type",
                    cs.keys().next().map(|s| s.as_str()).unwrap_or(""),
                    kind_of(t)
                )),
            },
        }
    }
}

/// What kind of type `t` is, in words that show no inference variable
/// (`an array type`).
fn kind_of(t: &Type) -> &'static str {
    match t {
        Type::Array { .. } => "an array type",
        Type::Record(_) => "a record type",
        Type::Arrow { .. } => "a function type",
        Type::Prim(_) => "a primitive type",
        Type::Param(_) => "a type parameter",
        Type::Sum(_) => "a sum type",
        _ => "a type",
    }
}

fn describe(c: &Constraint) -> String {
    match c {
        Constraint::None => "any type".into(),
        Constraint::Prims { what, .. } => format!("a {what} type"),
        Constraint::Eq => "an equality type".into(),
        Constraint::Fields(fs) => format!(
            "a record with field {}",
            fs.keys().next().map(|s| s.as_str()).unwrap_or("")
        ),
        Constraint::Constrs(cs) => {
            format!(
                "a sum type with constructor #{}",
                cs.keys().next().map(|s| s.as_str()).unwrap_or("")
            )
        }
    }
}

/// Whether a (zonked) type is or contains a function type.
pub(crate) fn contains_arrow(t: &Type) -> bool {
    let mut found = matches!(t, Type::Arrow { .. });
    t.for_each_child(|c| found = found || contains_arrow(c));
    found
}

/// Unbound variables of an already-zonked type, in order of first appearance.
pub(crate) fn collect_vars(t: &Type, out: &mut Vec<u32>) {
    match t {
        Type::Var(v) => {
            if !out.contains(v) {
                out.push(*v)
            }
        }
        t => t.for_each_child(|c| collect_vars(c, out)),
    }
}

/// Substitutes type parameters and sizes (by name) in `t`, normalising arrays.
pub(crate) fn subst(
    t: &Type,
    tmap: &dyn Fn(&str) -> Option<Type>,
    smap: &dyn Fn(&str) -> Option<Size>,
) -> Type {
    match t {
        Type::Param(p) => tmap(p).unwrap_or_else(|| t.clone()),
        Type::Prim(_) | Type::Var(_) => t.clone(),
        Type::Array {
            elem,
            shape,
            unique,
        } => {
            let shape = shape.iter().map(|s| s.subst(smap)).collect();
            mk_array(subst(elem, tmap, smap), shape, *unique)
        }
        Type::Record(fs) => Type::Record(
            fs.iter()
                .map(|(n, t)| (n.clone(), subst(t, tmap, smap)))
                .collect(),
        ),
        Type::Sum(cs) => Type::Sum(
            cs.iter()
                .map(|(n, ts)| (n.clone(), ts.iter().map(|t| subst(t, tmap, smap)).collect()))
                .collect(),
        ),
        Type::Arrow {
            param_name,
            param,
            ret,
        } => {
            let p = subst(param, tmap, smap);
            let r = match param_name {
                // The named parameter shadows a size of the same name.
                Some(n) => subst(ret, tmap, &|s: &str| if s == n { None } else { smap(s) }),
                None => subst(ret, tmap, smap),
            };
            Type::Arrow {
                param_name: param_name.clone(),
                param: Box::new(p),
                ret: Box::new(r),
            }
        }
        Type::Acc { arr, unique } => Type::Acc {
            arr: Box::new(subst(arr, tmap, smap)),
            unique: *unique,
        },
    }
}

/// Whether a size in the parameter type of a function type in `t` (with
/// `in_parameter`: anywhere in `t`) mentions `n`.
pub(crate) fn parameter_mentions_size(t: &Type, n: &str, in_parameter: bool) -> bool {
    match t {
        Type::Arrow { param, ret, .. } => {
            parameter_mentions_size(param, n, true) || parameter_mentions_size(ret, n, in_parameter)
        }
        Type::Array { elem, shape, .. } => {
            (in_parameter && shape.iter().any(|s| s.mentions(n)))
                || parameter_mentions_size(elem, n, in_parameter)
        }
        Type::Record(fs) => fs
            .iter()
            .any(|(_, t)| parameter_mentions_size(t, n, in_parameter)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| parameter_mentions_size(t, n, in_parameter)),
        Type::Acc { arr, .. } => parameter_mentions_size(arr, n, in_parameter),
        Type::Prim(_) | Type::Param(_) | Type::Var(_) => false,
    }
}

/// Whether an array in `t` outside function types has the size `n` (so a
/// value of type `t` tells `n`).
fn witnesses_size(t: &Type, n: &str) -> bool {
    match t {
        Type::Arrow { .. } | Type::Prim(_) | Type::Param(_) | Type::Var(_) => false,
        Type::Array { elem, shape, .. } => {
            shape.iter().any(|s| *s == Size::Var(n.to_string())) || witnesses_size(elem, n)
        }
        Type::Record(fs) => fs.iter().any(|(_, t)| witnesses_size(t, n)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| witnesses_size(t, n)),
        Type::Acc { arr, .. } => witnesses_size(arr, n),
    }
}

/// Whether a size of `t` mentions the name `n`.
fn mentions_size_name(t: &Type, n: &str) -> bool {
    let mut names = vec![];
    collect_size_names(t, &mut names);
    names.iter().any(|m| m == n)
}

/// A size as Futhark's messages show it (inside double quotes): `n`, `3`,
/// `n * m`; an unbound flexible size is `?`.
pub(crate) fn show_size(s: &Size) -> String {
    match s {
        Size::Const(n) => n.to_string(),
        Size::Var(v) if v.starts_with('?') => "?".to_string(),
        Size::Var(v) => v.clone(),
        Size::Expr(e) => e.to_string(),
        Size::Any => "[]".to_string(),
    }
}

/// `t` with every array size `Size::Any` (and, with `vars_to_unit`, every
/// unification variable `()`): the types annotating the nodes of a size
/// expression, whose sizes never matter and could otherwise refer back to
/// the size itself (`loop ys … (iota (length ys / 2))`).
pub(crate) fn erase_sizes(t: &Type, vars_to_unit: bool) -> Type {
    match t {
        Type::Array {
            elem,
            shape,
            unique,
        } => Type::Array {
            elem: Box::new(erase_sizes(elem, vars_to_unit)),
            shape: vec![Size::Any; shape.len()],
            unique: *unique,
        },
        Type::Var(_) if vars_to_unit => Type::unit(),
        t => t.map_children(|c| erase_sizes(c, vars_to_unit)),
    }
}

/// The names in the sizes of `t` (each once).
pub(crate) fn collect_size_names(t: &Type, out: &mut Vec<Name>) {
    if let Type::Array { shape, .. } = t {
        for s in shape {
            s.names(out);
        }
    }
    t.for_each_child(|c| collect_size_names(c, out));
}

/// The prefix of the name of an existential size of a declared result type
/// (`?[n].[n]t` gives `∃n`, an anonymous `[]` `∃1`): no program can write
/// it. Such a size matches any size while the definition's body is
/// checked, and becomes a fresh unknown size at each call.
pub(crate) const EXISTENTIAL: &str = "∃";

/// Whether a size name is an existential size of a result type.
pub(crate) fn is_existential(n: &str) -> bool {
    n.starts_with(EXISTENTIAL)
}

/// `t` without the uniqueness markers (`*`) of its arrays and accumulators,
/// also inside tuples, records, sums and array elements; those of function
/// types' parameters and results are kept (there they mean something).
pub(crate) fn without_uniqueness(t: &Type) -> Type {
    match t {
        Type::Array { elem, shape, .. } => Type::Array {
            elem: Box::new(without_uniqueness(elem)),
            shape: shape.clone(),
            unique: false,
        },
        Type::Acc { arr, .. } => Type::Acc {
            arr: arr.clone(),
            unique: false,
        },
        Type::Arrow { .. } => t.clone(),
        t => t.map_children(without_uniqueness),
    }
}
