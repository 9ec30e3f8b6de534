//! Semantic types: what the type checker infers and writes into the AST's
//! `ty` slots. (Syntactic types, as written by the user, are
//! [`crate::ast::TypeExp`].)

pub use crate::size_expr::SizeExpr;
use nabla_prim::PrimType;
use std::fmt;

/// A name (identifier, field name, constructor name without `#`).
pub type Name = String;

/// The prefix of the constructor name that stands for an abstract type when
/// the module pass checks opaque ascription: the abstract type `M.t` of a
/// module ascribed to a module type becomes the one-constructor sum type
/// whose constructor is named `"abstract M.t"` (with the type's arguments
/// as payload). No program can write that constructor (its name has a
/// space), so the type equals no other type; [`Type`]'s `Display` shows it
/// as `M.t`.
pub const ABSTRACT_TYPE_CONSTRUCTOR: &str = "abstract ";

/// The size of one array dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// A literal size, `[3]`.
    Const(i64),
    /// A size variable in scope: a size parameter `[n]`, a local variable of
    /// type `i64`, or a size bound by a `let [n] ...` or an existential.
    Var(Name),
    /// A compound size expression such as `[n * m]`, `[n + 1]` or `[f x]`
    /// (see [`crate::size_expr`]).
    Expr(SizeExpr),
    /// A size the type checker does not track (e.g. the result of `filter`,
    /// or a complex size expression). Run-time checks still apply.
    Any,
}

/// A semantic type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Prim(PrimType),
    /// `[d0]…[dk]elem`. `elem` is never itself an `Array`. `unique` is the `*` marker.
    Array {
        elem: Box<Type>,
        shape: Vec<Size>,
        unique: bool,
    },
    /// Record; fields sorted by name. A tuple `(a, b)` is the record
    /// `{0: a, 1: b}` (see [`Type::tuple`]); the unit type `()` is the empty record.
    Record(Vec<(Name, Type)>),
    /// Sum type; constructors sorted by name (without the `#`).
    Sum(Vec<(Name, Vec<Type>)>),
    /// Function type `(name: param) -> ret`; `param_name` is set when the result
    /// type refers to the parameter (dependent sizes).
    Arrow {
        param_name: Option<Name>,
        param: Box<Type>,
        ret: Box<Type>,
    },
    /// An accumulator, Futhark's `intrinsics.acc t` (written `acc t` through
    /// the usual abbreviation): a write-only view of an array of type `arr`
    /// (normally `[k]t`), made by `intrinsics.scatter_stream` and
    /// `intrinsics.hist_stream` and updated by `intrinsics.acc_write`.
    /// `unique` is the `*` marker: a function consumes an accumulator passed
    /// for a unique parameter, as it does a unique array.
    Acc {
        arr: Box<Type>,
        unique: bool,
    },
    /// A rigid type parameter of the enclosing polymorphic definition (`'a`).
    Param(Name),
    /// A unification variable; only exists while the type checker runs and
    /// never remains in a checked AST.
    Var(u32),
}

/// The order of a record's fields in its type: numeric names (a tuple's
/// `0`, `1`, …, `10`) by their number and before the others, the others
/// alphabetically. A 14-element tuple and the record `{0 = …, …, 13 = …}`
/// are the same type.
pub fn field_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

impl Type {
    /// The tuple type `(t0, t1, …)` (a record with fields "0", "1", …).
    /// A one-element "tuple" is the element itself.
    pub fn tuple(ts: Vec<Type>) -> Type {
        if ts.len() == 1 {
            return ts.into_iter().next().unwrap();
        }
        Type::Record(
            ts.into_iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), t))
                .collect(),
        )
    }
    pub fn unit() -> Type {
        Type::Record(vec![])
    }
    /// Rebuilds this type with `f` applied to each immediate component type
    /// (array element, record fields, constructor payloads, arrow parameter
    /// and result); leaves (`Prim`, `Param`, `Var`) are returned as they are.
    /// The building block of substitutions over types.
    pub fn map_children(&self, mut f: impl FnMut(&Type) -> Type) -> Type {
        match self {
            Type::Prim(_) | Type::Param(_) | Type::Var(_) => self.clone(),
            Type::Array {
                elem,
                shape,
                unique,
            } => Type::Array {
                elem: Box::new(f(elem)),
                shape: shape.clone(),
                unique: *unique,
            },
            Type::Record(fs) => Type::Record(fs.iter().map(|(n, t)| (n.clone(), f(t))).collect()),
            Type::Sum(cs) => Type::Sum(
                cs.iter()
                    .map(|(n, ts)| (n.clone(), ts.iter().map(&mut f).collect()))
                    .collect(),
            ),
            Type::Arrow {
                param_name,
                param,
                ret,
            } => Type::Arrow {
                param_name: param_name.clone(),
                param: Box::new(f(param)),
                ret: Box::new(f(ret)),
            },
            Type::Acc { arr, unique } => Type::Acc {
                arr: Box::new(f(arr)),
                unique: *unique,
            },
        }
    }

    /// Calls `f` on each direct component type (an array's element, fields,
    /// payloads, a function's parameter and result, an accumulator's array).
    pub fn for_each_child(&self, mut f: impl FnMut(&Type)) {
        match self {
            Type::Prim(_) | Type::Param(_) | Type::Var(_) => {}
            Type::Array { elem, .. } => f(elem),
            Type::Record(fs) => fs.iter().for_each(|(_, t)| f(t)),
            Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).for_each(f),
            Type::Arrow { param, ret, .. } => {
                f(param);
                f(ret);
            }
            Type::Acc { arr, .. } => f(arr),
        }
    }

    /// If this record is a tuple (fields exactly "0".."n-1", n != 1), its components.
    pub fn as_tuple(&self) -> Option<Vec<&Type>> {
        match self {
            Type::Record(fs) => {
                let mut out: Vec<Option<&Type>> = vec![None; fs.len()];
                for (n, t) in fs {
                    let i: usize = n.parse().ok()?;
                    if i >= fs.len() || out[i].is_some() || n != &i.to_string() {
                        return None;
                    }
                    out[i] = Some(t);
                }
                out.into_iter().collect()
            }
            _ => None,
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Const(n) => write!(f, "[{n}]"),
            // `∃k`: the type checker's name for an existential size of a
            // result type, which a program writes `[]`.
            Size::Var(v) if v.starts_with('∃') => write!(f, "[]"),
            Size::Var(v) => write!(f, "[{v}]"),
            Size::Expr(e) => write!(f, "[{e}]"),
            Size::Any => write!(f, "[]"),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Prim(p) => write!(f, "{p}"),
            Type::Array {
                elem,
                shape,
                unique,
            } => {
                if *unique {
                    write!(f, "*")?;
                }
                for d in shape {
                    write!(f, "{d}")?;
                }
                write!(f, "{elem}")
            }
            Type::Record(fs) => {
                if let Some(ts) = self.as_tuple() {
                    write!(f, "(")?;
                    for (i, t) in ts.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    write!(f, ")")
                } else {
                    write!(f, "{{")?;
                    for (i, (n, t)) in fs.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{n}: {t}")?;
                    }
                    write!(f, "}}")
                }
            }
            Type::Sum(cs) => {
                if let [(c, ts)] = cs.as_slice() {
                    if let Some(name) = c.strip_prefix(ABSTRACT_TYPE_CONSTRUCTOR) {
                        // An abstract type of an opaquely ascribed module,
                        // shown by its name and arguments (a size argument
                        // is carried as an array of units).
                        write!(f, "{name}")?;
                        for t in ts {
                            match t {
                                Type::Array { elem, shape, .. } if **elem == Type::unit() => {
                                    for d in shape {
                                        write!(f, " {d}")?;
                                    }
                                }
                                _ => write!(f, " {t}")?,
                            }
                        }
                        return Ok(());
                    }
                }
                for (i, (c, ts)) in cs.iter().enumerate() {
                    if i > 0 {
                        write!(f, " | ")?;
                    }
                    write!(f, "#{c}")?;
                    for t in ts {
                        write!(f, " {t}")?;
                    }
                }
                Ok(())
            }
            Type::Arrow {
                param_name,
                param,
                ret,
            } => match param_name {
                Some(n) => write!(f, "({n}: {param}) -> {ret}"),
                None => write!(f, "({param}) -> {ret}"),
            },
            Type::Acc { arr, unique } => {
                if *unique {
                    write!(f, "*")?;
                }
                write!(f, "acc ({arr})")
            }
            Type::Param(n) => write!(f, "{n}"),
            Type::Var(v) => write!(f, "?t{v}"),
        }
    }
}
