//! Types as the module pass compares them: Futhark's printing of type
//! expressions (for messages), a normal form in which type abbreviations
//! are expanded (to check that a module defines a type as its module type
//! says), and the facts about sizes that the rules on liftedness need.

use crate::env::TypeInfo;
use nabla_prim::PrimType;
use nabla_syntax::ast::{
    Expr, ExprKind, Liftedness, Literal, SizeExp, TypeArg, TypeExp, TypeParam,
};
use nabla_syntax::parser::dump;
use std::collections::HashMap;
use std::rc::Rc;

/// `type`, `type~` or `type^`, as Futhark writes them.
pub(crate) fn type_keyword(l: Liftedness) -> &'static str {
    match l {
        Liftedness::Unlifted => "type",
        Liftedness::SizeLifted => "type~",
        Liftedness::Lifted => "type^",
    }
}

/// A type parameter as written: `'a`, `'~a`, `'^a` or `[n]`.
pub(crate) fn show_type_param(p: &TypeParam) -> String {
    match p {
        TypeParam::Size(n) => format!("[{}]", n.name),
        TypeParam::Type(a, Liftedness::Unlifted) => format!("'{}", a.name),
        TypeParam::Type(a, Liftedness::SizeLifted) => format!("'~{}", a.name),
        TypeParam::Type(a, Liftedness::Lifted) => format!("'^{}", a.name),
    }
}

/// Type parameters as written, each preceded by a space.
pub(crate) fn show_type_params(ps: &[TypeParam]) -> String {
    ps.iter()
        .map(|p| format!(" {}", show_type_param(p)))
        .collect()
}

/// A size expression as written inside `[…]`.
fn show_size_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Var { name, .. } => name.to_string(),
        ExprKind::Lit(Literal::Int { value, .. }) => value.to_string(),
        ExprKind::Parens(x) => format!("({})", show_size_expr(x)),
        ExprKind::BinOp { op, lhs, rhs, .. } => {
            format!("{} {op} {}", show_size_expr(lhs), show_size_expr(rhs))
        }
        _ => dump::expr(e),
    }
}

fn show_size(s: &SizeExp) -> String {
    match s {
        SizeExp::Any(_) => "[]".to_string(),
        SizeExp::Expr(e) => format!("[{}]", show_size_expr(e)),
    }
}

/// A type expression in Futhark's syntax (`[n]i32 -> ?[d].*[d]i32`).
pub(crate) fn show_type_exp(t: &TypeExp) -> String {
    show_te(t, 0)
}

/// `prec`: 0 anywhere, 1 as the parameter of an arrow, 2 as an argument
/// or array element.
fn show_te(t: &TypeExp, prec: u8) -> String {
    let paren = |s: String, need: bool| if need { format!("({s})") } else { s };
    match t {
        TypeExp::Prim(p, _) => p.to_string(),
        TypeExp::Named(q, args, _) => {
            let mut s = q.to_string();
            for a in args {
                s.push(' ');
                match a {
                    TypeArg::Size(d) => s.push_str(&show_size(d)),
                    TypeArg::Type(t) => s.push_str(&show_te(t, 2)),
                }
            }
            paren(s, !args.is_empty() && prec >= 2)
        }
        TypeExp::Tuple(ts, _) => format!(
            "({})",
            ts.iter()
                .map(|t| show_te(t, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeExp::Record(fs, _) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, t)| format!("{}: {}", n.name, show_te(t, 0)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeExp::Array(d, t, _) => format!("{}{}", show_size(d), show_te(t, 2)),
        TypeExp::Unique(t, _) => format!("*{}", show_te(t, 2)),
        TypeExp::Arrow(n, a, b, _) => {
            let s = match n {
                Some(n) => format!("({}: {}) -> {}", n.name, show_te(a, 0), show_te(b, 0)),
                None => format!("{} -> {}", show_te(a, 1), show_te(b, 0)),
            };
            paren(s, prec >= 1)
        }
        TypeExp::Sum(cs, _) => {
            let s = cs
                .iter()
                .map(|(c, ts)| {
                    let mut s = format!("#{}", c.name);
                    for t in ts {
                        s.push(' ');
                        s.push_str(&show_te(t, 2));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join(" | ");
            paren(s, prec >= 1)
        }
        TypeExp::Exists(ns, t, _) => {
            let dims: String = ns.iter().map(|n| format!("[{}]", n.name)).collect();
            paren(format!("?{dims}.{}", show_te(t, 0)), prec >= 1)
        }
    }
}

/// A size in a normal form: `Any` for `[]` (and sizes the comparison
/// cannot see), otherwise the size expression as written after the
/// parameters' substitution.
#[derive(Clone, Debug)]
pub(crate) enum NSize {
    Any,
    Known(String),
}

impl NSize {
    /// Equal, where an anonymous size matches any size.
    fn matches(&self, other: &NSize) -> bool {
        match (self, other) {
            (NSize::Known(a), NSize::Known(b)) => a == b,
            _ => true,
        }
    }
}

/// A type with every type abbreviation expanded: what two definitions of a
/// type are compared by.
#[derive(Clone, Debug)]
pub(crate) enum Norm {
    Prim(PrimType),
    /// A type parameter, or an abstract (or unknown) type applied to its
    /// arguments.
    Named(String, Vec<NArg>),
    /// Dimensions (outermost first), element, uniqueness.
    Array(Vec<NSize>, Box<Norm>, bool),
    /// Fields sorted by name (a tuple's are "0", "1", …).
    Record(Vec<(String, Norm)>),
    /// Constructors sorted by name.
    Sum(Vec<(String, Vec<Norm>)>),
    Arrow(Option<String>, Box<Norm>, Box<Norm>),
}

/// An argument of an abstract type in [`Norm`].
#[derive(Clone, Debug)]
pub(crate) enum NArg {
    Type(Norm),
    Size(NSize),
}

/// How deeply abbreviations may refer to abbreviations (a cycle is a type
/// error the type checker reports; this only stops the expansion).
const MAX_EXPANSION_DEPTH: usize = 200;

/// Normalises resolved type expressions: the flat type declarations by
/// name, and the substitution of the parameters in scope.
pub(crate) struct Normaliser<'a> {
    pub table: &'a HashMap<String, Rc<TypeInfo>>,
}

impl Normaliser<'_> {
    /// The normal form of `t`, with the names in `subst` (type and size
    /// parameters) replaced.
    pub fn norm(&self, t: &TypeExp, subst: &HashMap<String, NArg>) -> Norm {
        self.go(t, subst, 0)
    }

    fn size(&self, s: &SizeExp, subst: &HashMap<String, NArg>) -> NSize {
        match s {
            SizeExp::Any(_) => NSize::Any,
            SizeExp::Expr(e) => {
                let text = show_size_expr(e);
                match subst.get(&text) {
                    Some(NArg::Size(s)) => s.clone(),
                    _ => NSize::Known(text),
                }
            }
        }
    }

    fn go(&self, t: &TypeExp, subst: &HashMap<String, NArg>, depth: usize) -> Norm {
        match t {
            TypeExp::Prim(p, _) => Norm::Prim(*p),
            TypeExp::Named(q, args, _) => {
                let name = q.to_string();
                let nargs: Vec<NArg> = args
                    .iter()
                    .map(|a| match a {
                        TypeArg::Size(s) => NArg::Size(self.size(s, subst)),
                        TypeArg::Type(t) => NArg::Type(self.go(t, subst, depth + 1)),
                    })
                    .collect();
                if args.is_empty() {
                    if let Some(NArg::Type(t)) = subst.get(&name) {
                        return t.clone();
                    }
                }
                match self.table.get(&name) {
                    Some(info) if depth < MAX_EXPANSION_DEPTH && !subst.contains_key(&name) => {
                        match &info.def {
                            Some(def) if info.params.len() == nargs.len() => {
                                let inner: HashMap<String, NArg> = info
                                    .params
                                    .iter()
                                    .map(|p| match p {
                                        TypeParam::Size(n) | TypeParam::Type(n, _) => {
                                            n.name.clone()
                                        }
                                    })
                                    .zip(nargs)
                                    .collect();
                                self.go(def, &inner, depth + 1)
                            }
                            _ => Norm::Named(name, nargs),
                        }
                    }
                    _ => Norm::Named(name, nargs),
                }
            }
            TypeExp::Tuple(ts, _) if ts.len() == 1 => self.go(&ts[0], subst, depth),
            TypeExp::Tuple(ts, _) => Norm::Record(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| (i.to_string(), self.go(t, subst, depth)))
                    .collect(),
            ),
            TypeExp::Record(fs, _) => {
                let mut fs: Vec<(String, Norm)> = fs
                    .iter()
                    .map(|(n, t)| (n.name.clone(), self.go(t, subst, depth)))
                    .collect();
                fs.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Norm::Record(fs)
            }
            TypeExp::Array(d, elem, _) => {
                let d = self.size(d, subst);
                match self.go(elem, subst, depth) {
                    Norm::Array(mut ds, e, u) => {
                        ds.insert(0, d);
                        Norm::Array(ds, e, u)
                    }
                    e => Norm::Array(vec![d], Box::new(e), false),
                }
            }
            TypeExp::Unique(t, _) => match self.go(t, subst, depth) {
                Norm::Array(ds, e, _) => Norm::Array(ds, e, true),
                other => other,
            },
            TypeExp::Arrow(n, a, b, _) => Norm::Arrow(
                n.as_ref().map(|n| n.name.clone()),
                Box::new(self.go(a, subst, depth)),
                Box::new(self.go(b, subst, depth)),
            ),
            TypeExp::Sum(cs, _) => {
                let mut cs: Vec<(String, Vec<Norm>)> = cs
                    .iter()
                    .map(|(c, ts)| {
                        (
                            c.name.clone(),
                            ts.iter().map(|t| self.go(t, subst, depth)).collect(),
                        )
                    })
                    .collect();
                cs.sort_by(|a, b| a.0.cmp(&b.0));
                Norm::Sum(cs)
            }
            TypeExp::Exists(ns, t, _) => {
                let mut inner = subst.clone();
                for n in ns {
                    inner.insert(n.name.clone(), NArg::Size(NSize::Any));
                }
                self.go(t, &inner, depth)
            }
        }
    }
}

impl Norm {
    /// Whether two normal forms are the same type (anonymous sizes match
    /// any size; a named parameter of an arrow may be renamed).
    pub fn same(&self, other: &Norm) -> bool {
        match (self, other) {
            (Norm::Prim(a), Norm::Prim(b)) => a == b,
            (Norm::Named(a, xs), Norm::Named(b, ys)) => {
                a == b
                    && xs.len() == ys.len()
                    && xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                        (NArg::Type(x), NArg::Type(y)) => x.same(y),
                        (NArg::Size(x), NArg::Size(y)) => x.matches(y),
                        _ => false,
                    })
            }
            (Norm::Array(ds, e, u), Norm::Array(es, f, v)) => {
                u == v
                    && ds.len() == es.len()
                    && ds.iter().zip(es).all(|(a, b)| a.matches(b))
                    && e.same(f)
            }
            (Norm::Record(xs), Norm::Record(ys)) => {
                xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(ys)
                        .all(|((n, x), (m, y))| n == m && x.same(y))
            }
            (Norm::Sum(xs), Norm::Sum(ys)) => {
                xs.len() == ys.len()
                    && xs.iter().zip(ys).all(|((n, x), (m, y))| {
                        n == m && x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.same(b))
                    })
            }
            (Norm::Arrow(_, a, b), Norm::Arrow(_, c, d)) => a.same(c) && b.same(d),
            _ => false,
        }
    }

    /// The size parameters among `names` that this type uses directly as
    /// the size of an array outside any function type: a value of the type
    /// carries them (Futhark's "size witnesses").
    pub fn witnessed(&self, out: &mut Vec<String>) {
        match self {
            Norm::Prim(_) | Norm::Arrow(..) => {}
            Norm::Named(_, args) => {
                for a in args {
                    match a {
                        NArg::Type(t) => t.witnessed(out),
                        NArg::Size(NSize::Known(n)) => out.push(n.clone()),
                        NArg::Size(NSize::Any) => {}
                    }
                }
            }
            Norm::Array(ds, e, _) => {
                for d in ds {
                    if let NSize::Known(n) = d {
                        out.push(n.clone());
                    }
                }
                e.witnessed(out);
            }
            Norm::Record(fs) => fs.iter().for_each(|(_, t)| t.witnessed(out)),
            Norm::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .for_each(|t| t.witnessed(out)),
        }
    }

    /// Whether the type has an anonymous size outside function types.
    pub fn has_anonymous_size(&self) -> bool {
        match self {
            Norm::Prim(_) | Norm::Arrow(..) => false,
            Norm::Named(_, args) => args.iter().any(|a| match a {
                NArg::Type(t) => t.has_anonymous_size(),
                NArg::Size(s) => matches!(s, NSize::Any),
            }),
            Norm::Array(ds, e, _) => {
                ds.iter().any(|d| matches!(d, NSize::Any)) || e.has_anonymous_size()
            }
            Norm::Record(fs) => fs.iter().any(|(_, t)| t.has_anonymous_size()),
            Norm::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .any(|t| t.has_anonymous_size()),
        }
    }

    /// The type in Futhark's syntax; `prec` as in [`show_type_exp`].
    pub fn show(&self, prec: u8) -> String {
        let paren = |s: String, need: bool| if need { format!("({s})") } else { s };
        match self {
            Norm::Prim(p) => p.to_string(),
            Norm::Named(n, args) => {
                let mut s = n.clone();
                for a in args {
                    s.push(' ');
                    match a {
                        NArg::Type(t) => s.push_str(&t.show(2)),
                        NArg::Size(d) => s.push_str(&d.show()),
                    }
                }
                paren(s, !args.is_empty() && prec >= 2)
            }
            Norm::Array(ds, e, u) => {
                let mut s = if *u { "*".to_string() } else { String::new() };
                for d in ds {
                    s.push_str(&d.show());
                }
                s.push_str(&e.show(2));
                s
            }
            Norm::Record(fs) => {
                let tuple =
                    fs.len() != 1 && fs.iter().enumerate().all(|(i, (n, _))| *n == i.to_string());
                if tuple {
                    format!(
                        "({})",
                        fs.iter()
                            .map(|(_, t)| t.show(0))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    format!(
                        "{{{}}}",
                        fs.iter()
                            .map(|(n, t)| format!("{n}: {}", t.show(0)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            }
            Norm::Sum(cs) => paren(
                cs.iter()
                    .map(|(c, ts)| {
                        let mut s = format!("#{c}");
                        for t in ts {
                            s.push(' ');
                            s.push_str(&t.show(2));
                        }
                        s
                    })
                    .collect::<Vec<_>>()
                    .join(" | "),
                prec >= 1,
            ),
            Norm::Arrow(n, a, b) => paren(
                match n {
                    Some(n) => format!("({n}: {}) -> {}", a.show(0), b.show(0)),
                    None => format!("{} -> {}", a.show(1), b.show(0)),
                },
                prec >= 1,
            ),
        }
    }
}

impl NSize {
    fn show(&self) -> String {
        match self {
            NSize::Any => "[]".to_string(),
            NSize::Known(s) => format!("[{s}]"),
        }
    }
}

/// The name a type parameter binds.
pub(crate) fn param_name(p: &TypeParam) -> &str {
    match p {
        TypeParam::Size(n) | TypeParam::Type(n, _) => &n.name,
    }
}

/// Whether `t` has an anonymous size (`[]`, or an existential `?[n].`)
/// that is not in the result of a function type: Futhark's "existential
/// sizes" of a type abbreviation, and the anonymous sizes a `val`
/// specification may not have in its parameters.
pub(crate) fn anonymous_size_outside_results(t: &TypeExp) -> bool {
    match t {
        TypeExp::Prim(..) => false,
        TypeExp::Named(_, args, _) => args.iter().any(|a| match a {
            TypeArg::Size(SizeExp::Any(_)) => true,
            TypeArg::Size(SizeExp::Expr(_)) => false,
            TypeArg::Type(t) => anonymous_size_outside_results(t),
        }),
        TypeExp::Tuple(ts, _) => ts.iter().any(anonymous_size_outside_results),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| anonymous_size_outside_results(t)),
        TypeExp::Array(d, t, _) => {
            matches!(d, SizeExp::Any(_)) || anonymous_size_outside_results(t)
        }
        TypeExp::Unique(t, _) => anonymous_size_outside_results(t),
        // The result of a function may have existential sizes.
        TypeExp::Arrow(_, a, b, _) => {
            anonymous_size_outside_results(a) || arrow_params_anonymous(b)
        }
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(anonymous_size_outside_results),
        TypeExp::Exists(..) => true,
    }
}

/// The parameters of the curried arrows in a function's result.
fn arrow_params_anonymous(t: &TypeExp) -> bool {
    match t {
        TypeExp::Arrow(_, a, b, _) => {
            anonymous_size_outside_results(a) || arrow_params_anonymous(b)
        }
        _ => false,
    }
}

/// Whether the size parameter `n` occurs anywhere in `t` (in a size, in an
/// argument, or in a size expression).
pub(crate) fn mentions_size(t: &TypeExp, n: &str) -> bool {
    let size = |s: &SizeExp| match s {
        SizeExp::Any(_) => false,
        SizeExp::Expr(e) => dump::expr(e)
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
            .any(|w| w == n),
    };
    match t {
        TypeExp::Prim(..) => false,
        TypeExp::Named(_, args, _) => args.iter().any(|a| match a {
            TypeArg::Size(s) => size(s),
            TypeArg::Type(t) => mentions_size(t, n),
        }),
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| mentions_size(t, n)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| mentions_size(t, n)),
        TypeExp::Array(d, t, _) => size(d) || mentions_size(t, n),
        TypeExp::Unique(t, _) => mentions_size(t, n),
        TypeExp::Arrow(_, a, b, _) => mentions_size(a, n) || mentions_size(b, n),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| mentions_size(t, n)),
        TypeExp::Exists(_, t, _) => mentions_size(t, n),
    }
}
