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
    /// The variable may not become a function type, nor a type containing
    /// one (Futhark's unlifted type variables: an instance of a type
    /// parameter `'a` that is not lifted, an array element). Passed on to
    /// the variables of the type it is bound to.
    pub unlifted: bool,
}

/// The unifier's state.
#[derive(Default)]
pub(crate) struct Tcx {
    pub vars: Vec<VarInfo>,
    pub sizes: Vec<Option<Size>>,
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
        self.sizes.push(None);
        Size::Var(format!("?{}", self.sizes.len() - 1))
    }

    fn size_var_index(s: &Size) -> Option<usize> {
        match s {
            Size::Var(v) if v.starts_with('?') => v[1..].parse().ok(),
            _ => None,
        }
    }

    pub fn resolve_size(&self, s: &Size) -> Size {
        let mut s = s.clone();
        for _ in 0..10_000 {
            match Self::size_var_index(&s)
                .and_then(|i| self.sizes.get(i))
                .and_then(|b| b.clone())
            {
                Some(b) => s = b,
                None => return s,
            }
        }
        s
    }

    /// Unifies two sizes: an unknown one (`?k`) is bound to the other;
    /// `Size::Any` unifies with anything; two different known sizes are an
    /// error ("the sizes … differ") unless [`Tcx::lenient_sizes`] is set.
    pub fn unify_size(&mut self, a: &Size, b: &Size) -> Result<(), String> {
        let a = self.resolve_size(a);
        let b = self.resolve_size(b);
        if a == b {
            return Ok(());
        }
        if let Some(i) = Self::size_var_index(&a) {
            self.sizes[i] = Some(b);
        } else if let Some(i) = Self::size_var_index(&b) {
            self.sizes[i] = Some(a);
        } else if a != Size::Any && b != Size::Any && !self.lenient_sizes {
            let show = |s: &Size| match s {
                Size::Const(n) => n.to_string(),
                Size::Var(v) => format!("`{v}`"),
                Size::Any => "unknown".to_string(),
            };
            return Err(format!("the sizes {} and {} differ", show(&a), show(&b)));
        }
        Ok(())
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

    /// Like `zonk`, and unknown sizes become `Size::Any`.
    pub fn finalize(&self, t: &Type) -> Type {
        fn go(t: &Type) -> Type {
            match t {
                Type::Array {
                    elem,
                    shape,
                    unique,
                } => Type::Array {
                    elem: Box::new(go(elem)),
                    shape: shape
                        .iter()
                        .map(|s| match s {
                            Size::Var(v) if v.starts_with('?') => Size::Any,
                            s => s.clone(),
                        })
                        .collect(),
                    unique: *unique,
                },
                t => t.map_children(go),
            }
        }
        go(&self.zonk(t))
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
                        self.zonk(&a),
                        self.zonk(&b)
                    ));
                }
                self.unify_d(&r1, &r2, d + 1)
            }
            (Type::Record(f1), Type::Record(f2)) => {
                let n1: Vec<&Name> = f1.iter().map(|f| &f.0).collect();
                let n2: Vec<&Name> = f2.iter().map(|f| &f.0).collect();
                if n1 != n2 {
                    return Err(format!(
                        "{} and {} have different fields",
                        self.zonk(&a),
                        self.zonk(&b)
                    ));
                }
                for ((_, t1), (_, t2)) in f1.iter().zip(f2.iter()) {
                    self.unify_d(t1, t2, d + 1)?;
                }
                Ok(())
            }
            (Type::Sum(c1), Type::Sum(c2)) => {
                let n1: Vec<(&Name, usize)> = c1.iter().map(|c| (&c.0, c.1.len())).collect();
                let n2: Vec<(&Name, usize)> = c2.iter().map(|c| (&c.0, c.1.len())).collect();
                if n1 != n2 {
                    return Err(format!(
                        "{} and {} have different constructors",
                        self.zonk(&a),
                        self.zonk(&b)
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
                // A size named by a dependent parameter is unknown outside it.
                let r1 = forget_size(r1, n1.as_deref());
                let r2 = forget_size(r2, n2.as_deref());
                self.unify_d(&r1, &r2, d + 1)
            }
            (Type::Acc { arr: a1, .. }, Type::Acc { arr: a2, .. }) => self.unify_d(a1, a2, d + 1),
            _ => Err(format!("{} is not {}", self.zonk(&b), self.zonk(&a))),
        }
    }

    fn set(&mut self, v: u32, t: Type) {
        self.vars[v as usize].binding = Some(t);
    }

    /// Binds the unbound variable `v` to `t` (already `head`ed), checking
    /// `v`'s constraint.
    fn bind(&mut self, v: u32, t: &Type, d: usize) -> Result<(), String> {
        if self.occurs(v, t) {
            return Err("infinite type: a type would have to contain itself".to_string());
        }
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
                        return Err(format!(
                            "{} and {} are incompatible",
                            describe(&c1),
                            describe(&c2)
                        ));
                    }
                };
                self.vars[w as usize].constraint = merged;
                Ok(())
            }
            (Constraint::Prims { set, what, .. }, t) => match t {
                Type::Prim(p) if set & prim_bit(*p) != 0 => {
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!("{} is not {what}", self.zonk(t))),
            },
            (Constraint::Eq, t) => {
                if let Type::Arrow { .. } = t {
                    return Err("values of function type cannot be compared".to_string());
                }
                self.set(v, t.clone());
                Ok(())
            }
            (Constraint::Fields(fs), t) => match t {
                Type::Record(have) => {
                    for (n, ft) in &fs {
                        match have.iter().find(|(m, _)| m == n) {
                            Some((_, ht)) => self.unify_d(ht, ft, d + 1)?,
                            None => return Err(format!("{} has no field {n}", self.zonk(t))),
                        }
                    }
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!(
                    "{} is not a record (has no field {})",
                    self.zonk(t),
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
                            Some(_) => {
                                self.blame = Some((n.clone(), self.vars[v as usize].span));
                                return Err(format!(
                                    "constructor #{n} of {} has a different number of payloads",
                                    self.zonk(t)
                                ));
                            }
                            None => {
                                self.blame = Some((n.clone(), self.vars[v as usize].span));
                                return Err(format!("{} has no constructor #{n}", self.zonk(t)));
                            }
                        }
                    }
                    self.set(v, t.clone());
                    Ok(())
                }
                _ => Err(format!(
                    "{} is not a sum type (with constructor #{})",
                    self.zonk(t),
                    cs.keys().next().map(|s| s.as_str()).unwrap_or("")
                )),
            },
        }
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
    match t {
        Type::Arrow { .. } => true,
        Type::Prim(_) | Type::Param(_) | Type::Var(_) => false,
        Type::Array { elem, .. } => contains_arrow(elem),
        Type::Record(fs) => fs.iter().any(|(_, t)| contains_arrow(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(contains_arrow),
        Type::Acc { arr, .. } => contains_arrow(arr),
    }
}

/// Unbound variables of an already-zonked type, in order of first appearance.
pub(crate) fn collect_vars(t: &Type, out: &mut Vec<u32>) {
    match t {
        Type::Var(v) => {
            if !out.contains(v) {
                out.push(*v)
            }
        }
        Type::Prim(_) | Type::Param(_) => {}
        Type::Array { elem, .. } => collect_vars(elem, out),
        Type::Record(fs) => fs.iter().for_each(|(_, t)| collect_vars(t, out)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .for_each(|t| collect_vars(t, out)),
        Type::Arrow { param, ret, .. } => {
            collect_vars(param, out);
            collect_vars(ret, out);
        }
        Type::Acc { arr, .. } => collect_vars(arr, out),
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
            let shape = shape
                .iter()
                .map(|s| match s {
                    Size::Var(v) => smap(v).unwrap_or_else(|| s.clone()),
                    s => s.clone(),
                })
                .collect();
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

/// Replaces the size named `n` (if any) by `Size::Any`.
fn forget_size(t: &Type, n: Option<&str>) -> Type {
    match n {
        Some(n) => subst(t, &|_| None, &|s: &str| {
            if s == n {
                Some(Size::Any)
            } else {
                None
            }
        }),
        None => t.clone(),
    }
}
