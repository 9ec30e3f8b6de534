//! Built-in (intrinsic) names and their type signatures.
//!
//! Signatures are written in a tiny Futhark-like type notation and parsed by
//! [`parse_sig`]: `(a -> b) -> [n]a -> *[n]b`, `(n: i64) -> [n]i64`, `(a, b)`.
//! Lower-case names that are not primitive types are type parameters; names in
//! `[...]` are size parameters (unless bound by a named arrow parameter).
//! The types follow Futhark's prelude documentation.

use nabla_prim::PrimType;
use nabla_syntax::size_expr::size_binop;
use nabla_syntax::types::{Name, Size, Type};
use nabla_syntax::Span;

/// A class constraint on a type variable (used for overloaded operators and
/// overloaded literals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Any type, functions included (a lifted type parameter `'^a`).
    Any,
    /// Any type that neither is nor contains a function (a type parameter
    /// `'a` or `'~a`: instantiating it with a function is an error, "found
    /// to be functional", as in Futhark).
    Unlifted,
    /// Any numeric primitive type (default `i32`).
    Num,
    /// Integer types (default `i32`).
    Int,
    /// Integer types and `bool` (for `!`).
    IntBool,
    /// Any primitive type (for ordering comparisons).
    Prim,
    /// Any non-functional type (for `==`, `!=`).
    Eq,
}

/// A type scheme: `tparams` (with classes) and `sparams` are instantiated
/// freshly at each use.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    pub tparams: Vec<(Name, Class)>,
    pub sparams: Vec<Name>,
    pub ty: Type,
}

impl Scheme {
    /// The scheme with every unconstrained type parameter unlifted (see
    /// [`Class::Unlifted`]).
    pub fn unlifted(mut self) -> Scheme {
        for (_, c) in self.tparams.iter_mut() {
            if *c == Class::Any {
                *c = Class::Unlifted;
            }
        }
        self
    }

    /// A scheme whose parameters are all `Type::Param`s and `Size::Var`s in
    /// `ty` (except sizes bound by named arrow parameters), in order of appearance.
    pub fn from_type(ty: Type, classes: &[(&str, Class)]) -> Scheme {
        let mut tparams: Vec<(Name, Class)> = Vec::new();
        let mut sparams: Vec<Name> = Vec::new();
        collect_params(&ty, &mut Vec::new(), &mut tparams, &mut sparams);
        for (n, c) in tparams.iter_mut() {
            if let Some((_, cl)) = classes.iter().find(|(m, _)| m == n) {
                *c = *cl;
            }
        }
        Scheme {
            tparams,
            sparams,
            ty,
        }
    }
}

fn collect_params(
    t: &Type,
    bound: &mut Vec<Name>,
    tps: &mut Vec<(Name, Class)>,
    sps: &mut Vec<Name>,
) {
    match t {
        Type::Prim(_) | Type::Var(_) => {}
        Type::Param(p) => {
            if !tps.iter().any(|(n, _)| n == p) {
                tps.push((p.clone(), Class::Any));
            }
        }
        Type::Array { elem, shape, .. } => {
            for s in shape {
                let mut names = vec![];
                s.names(&mut names);
                for v in names {
                    if !bound.contains(&v)
                        && !sps.contains(&v)
                        && !v.starts_with('?')
                        && !crate::unify::is_existential(&v)
                    {
                        sps.push(v);
                    }
                }
            }
            collect_params(elem, bound, tps, sps);
        }
        Type::Record(fs) => fs
            .iter()
            .for_each(|(_, t)| collect_params(t, bound, tps, sps)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .for_each(|t| collect_params(t, bound, tps, sps)),
        Type::Arrow {
            param_name,
            param,
            ret,
        } => {
            collect_params(param, bound, tps, sps);
            let pushed = if let Some(n) = param_name {
                bound.push(n.clone());
                true
            } else {
                false
            };
            collect_params(ret, bound, tps, sps);
            if pushed {
                bound.pop();
            }
        }
        Type::Acc { arr, .. } => collect_params(arr, bound, tps, sps),
    }
}

/// Builds an array type, merging nested arrays (`elem` is never an array).
pub(crate) fn mk_array(elem: Type, mut shape: Vec<Size>, unique: bool) -> Type {
    if shape.is_empty() {
        return elem;
    }
    match elem {
        Type::Array {
            elem,
            shape: inner,
            unique: u2,
        } => {
            shape.extend(inner);
            Type::Array {
                elem,
                shape,
                unique: unique || u2,
            }
        }
        e => Type::Array {
            elem: Box::new(e),
            shape,
            unique,
        },
    }
}

struct SigParser<'a> {
    toks: Vec<&'a str>,
    pos: usize,
}

fn tokenize(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'>') {
            out.push(&s[i..i + 2]);
            i += 2;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'\'' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'\'') {
                i += 1;
            }
            out.push(&s[st..i]);
        } else {
            out.push(&s[i..i + 1]);
            i += 1;
        }
    }
    out
}

impl<'a> SigParser<'a> {
    fn peek(&self, k: usize) -> Option<&'a str> {
        self.toks.get(self.pos + k).copied()
    }
    fn eat(&mut self, t: &str) -> Option<()> {
        if self.peek(0) == Some(t) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }
    fn ident(&mut self) -> Option<&'a str> {
        let t = self.peek(0)?;
        if t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'')
        {
            self.pos += 1;
            Some(t)
        } else {
            None
        }
    }
    fn ty(&mut self) -> Option<Type> {
        if self.peek(0) == Some("(") && self.peek(2) == Some(":") {
            self.pos += 1;
            let n = self.ident()?.to_string();
            self.eat(":")?;
            let p = self.ty()?;
            self.eat(")")?;
            self.eat("->")?;
            let r = self.ty()?;
            return Some(Type::Arrow {
                param_name: Some(n),
                param: Box::new(p),
                ret: Box::new(r),
            });
        }
        let a = self.atom()?;
        if self.eat("->").is_some() {
            let r = self.ty()?;
            return Some(Type::Arrow {
                param_name: None,
                param: Box::new(a),
                ret: Box::new(r),
            });
        }
        Some(a)
    }
    fn atom(&mut self) -> Option<Type> {
        if self.eat("*").is_some() {
            return match self.atom()? {
                Type::Array { elem, shape, .. } => Some(Type::Array {
                    elem,
                    shape,
                    unique: true,
                }),
                Type::Acc { arr, .. } => Some(Type::Acc { arr, unique: true }),
                t => Some(t),
            };
        }
        if self.peek(0) == Some("acc") && self.peek(1) == Some("(") {
            self.pos += 1;
            let arr = self.atom()?;
            return Some(Type::Acc {
                arr: Box::new(arr),
                unique: false,
            });
        }
        if self.eat("[").is_some() {
            let s = if self.eat("]").is_some() {
                Size::Any
            } else {
                // A name, or names joined by `*` or `+` (`[n*m]`, `[n+m]`).
                let mut s = Size::Var(self.ident()?.to_string());
                while let Some(op) = self.peek(0).filter(|t| *t == "*" || *t == "+") {
                    self.pos += 1;
                    let b = Size::Var(self.ident()?.to_string());
                    s = size_binop(op, &s, &b, Span::default())?;
                }
                self.eat("]")?;
                s
            };
            let e = self.atom()?;
            return Some(mk_array(e, vec![s], false));
        }
        if self.eat("(").is_some() {
            if self.eat(")").is_some() {
                return Some(Type::unit());
            }
            let mut ts = vec![self.ty()?];
            while self.eat(",").is_some() {
                ts.push(self.ty()?);
            }
            self.eat(")")?;
            return Some(Type::tuple(ts));
        }
        let n = self.ident()?;
        Some(match PrimType::from_name(n) {
            Some(p) => Type::Prim(p),
            None => Type::Param(n.to_string()),
        })
    }
}

/// Parses a signature in the notation described in the module docs.
pub(crate) fn parse_sig(s: &str) -> Option<Type> {
    let mut p = SigParser {
        toks: tokenize(s),
        pos: 0,
    };
    let t = p.ty()?;
    if p.pos == p.toks.len() {
        Some(t)
    } else {
        None
    }
}

/// Array and SOAC intrinsics (bare names), with Futhark prelude types.
const ARRAY_SIGS: &[(&str, &str)] = &[
    ("map", "(a -> b) -> [n]a -> *[n]b"),
    ("map1", "(a -> b) -> [n]a -> *[n]b"),
    ("map2", "(a -> b -> c) -> [n]a -> [n]b -> *[n]c"),
    (
        "map3",
        "(a -> b -> c -> d) -> [n]a -> [n]b -> [n]c -> *[n]d",
    ),
    (
        "map4",
        "(a -> b -> c -> d -> e) -> [n]a -> [n]b -> [n]c -> [n]d -> *[n]e",
    ),
    (
        "map5",
        "(a -> b -> c -> d -> e -> f) -> [n]a -> [n]b -> [n]c -> [n]d -> [n]e -> *[n]f",
    ),
    ("reduce", "(a -> a -> a) -> a -> [n]a -> a"),
    ("reduce_comm", "(a -> a -> a) -> a -> [n]a -> a"),
    ("scan", "(a -> a -> a) -> a -> [n]a -> *[n]a"),
    (
        "reduce_by_index",
        "*[m]a -> (a -> a -> a) -> a -> [n]i64 -> [n]a -> *[m]a",
    ),
    (
        "hist",
        "(a -> a -> a) -> a -> (m: i64) -> [n]i64 -> [n]a -> *[m]a",
    ),
    ("scatter", "*[k]a -> [n]i64 -> [n]a -> *[k]a"),
    (
        "scatter_2d",
        "*[k][l]a -> [n](i64, i64) -> [n]a -> *[k][l]a",
    ),
    (
        "scatter_3d",
        "*[k][l][p]a -> [n](i64, i64, i64) -> [n]a -> *[k][l][p]a",
    ),
    ("iota", "(n: i64) -> *[n]i64"),
    ("replicate", "(n: i64) -> a -> *[n]a"),
    ("zip", "[n]a -> [n]b -> *[n](a, b)"),
    ("zip2", "[n]a -> [n]b -> *[n](a, b)"),
    ("zip3", "[n]a -> [n]b -> [n]c -> *[n](a, b, c)"),
    ("zip4", "[n]a -> [n]b -> [n]c -> [n]d -> *[n](a, b, c, d)"),
    (
        "zip5",
        "[n]a -> [n]b -> [n]c -> [n]d -> [n]e -> *[n](a, b, c, d, e)",
    ),
    ("unzip", "[n](a, b) -> ([n]a, [n]b)"),
    ("unzip2", "[n](a, b) -> ([n]a, [n]b)"),
    ("unzip3", "[n](a, b, c) -> ([n]a, [n]b, [n]c)"),
    ("unzip4", "[n](a, b, c, d) -> ([n]a, [n]b, [n]c, [n]d)"),
    (
        "unzip5",
        "[n](a, b, c, d, e) -> ([n]a, [n]b, [n]c, [n]d, [n]e)",
    ),
    ("transpose", "[n][m]a -> *[m][n]a"),
    ("flatten", "[n][m]a -> *[n*m]a"),
    ("flatten_3d", "[n][m][l]a -> *[n*m*l]a"),
    // Current prelude: the result sizes are the factors of the argument's
    // size expression, found by unification (`[n * m]` against the
    // argument's `[a * b]`), usually after a size coercion of the argument.
    ("unflatten", "[n*m]a -> *[n][m]a"),
    ("unflatten_3d", "[n*m*l]a -> *[n][m][l]a"),
    ("concat", "[n]a -> [m]a -> *[n+m]a"),
    ("++", "[n]a -> [m]a -> *[n+m]a"),
    ("rotate", "i64 -> [n]a -> [n]a"),
    // `???`, a typed hole (the parser's call `??? ()`).
    ("???", "() -> a"),
    ("reverse", "[n]a -> [n]a"),
    ("length", "[n]a -> i64"),
    ("copy", "a -> *a"),
    ("jvp", "(a -> b) -> a -> a -> b"),
    ("vjp", "(a -> b) -> a -> b -> a"),
    ("jvp2", "(a -> b) -> a -> a -> (b, b)"),
    ("vjp2", "(a -> b) -> a -> b -> (b, a)"),
    // Custom reverse-mode derivatives (Futhark's prelude, 0.26.2+): the
    // rule gets the primal result and its adjoint, or the saved values and
    // the result's adjoint, and returns the argument's adjoint.
    ("with_vjp", "(a -> b) -> (b -> b -> a) -> a -> b"),
    ("with_vjp_tape", "(a -> (c, b)) -> ((c, b) -> a) -> a -> b"),
    ("assert", "bool -> a -> a"),
    ("sized", "(n: i64) -> [m]a -> [n]a"),
];

/// The members of Futhark's built-in module `intrinsics` that no other name
/// reaches (canonical name `intrinsics.NAME`; `acc(t)` is the accumulator
/// type `intrinsics.acc t`). The module also holds every array/SOAC
/// intrinsic of [`ARRAY_SIGS`] (`intrinsics.map` is `map`). Types from
/// Futhark's `Language.Futhark.Prop.intrinsics`: the flat index intrinsics
/// view a one-dimensional array through an offset and a (count, stride)
/// per dimension; the result sizes are existential.
const INTRINSICS_MODULE_SIGS: &[(&str, &str)] = &[
    ("acc_write", "*acc([k]a) -> i64 -> a -> *acc([k]a)"),
    (
        "scatter_stream",
        "*[k]a -> (*acc([k]a) -> b -> acc([k]a)) -> [n]b -> *[k]a",
    ),
    (
        "hist_stream",
        "*[k]a -> (a -> a -> a) -> a -> (*acc([k]a) -> b -> acc([k]a)) -> [n]b -> *[k]a",
    ),
    (
        "flat_index_2d",
        "[n]a -> i64 -> i64 -> i64 -> i64 -> i64 -> *[][]a",
    ),
    (
        "flat_update_2d",
        "*[n]a -> i64 -> i64 -> i64 -> [k][l]a -> *[n]a",
    ),
    (
        "flat_index_3d",
        "[n]a -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> *[][][]a",
    ),
    (
        "flat_update_3d",
        "*[n]a -> i64 -> i64 -> i64 -> i64 -> [k][l][p]a -> *[n]a",
    ),
    (
        "flat_index_4d",
        "[n]a -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> i64 -> *[][][][]a",
    ),
    (
        "flat_update_4d",
        "*[n]a -> i64 -> i64 -> i64 -> i64 -> i64 -> [k][l][p][q]a -> *[n]a",
    ),
];

/// The name of Futhark's built-in module of intrinsics.
pub(crate) const INTRINSICS_MODULE: &str = "intrinsics";

/// The canonical intrinsic that `intrinsics.NAME` stands for, if any: one
/// of [`INTRINSICS_MODULE_SIGS`] (`intrinsics.NAME` itself) or an
/// array/SOAC intrinsic (its bare name).
pub(crate) fn intrinsics_module_member(name: &str) -> Option<String> {
    if INTRINSICS_MODULE_SIGS.iter().any(|(n, _)| *n == name) {
        Some(format!("{INTRINSICS_MODULE}.{name}"))
    } else if ARRAY_SIGS.iter().any(|(n, _)| *n == name) && name != "???" {
        Some(name.to_string())
    } else {
        None
    }
}

/// Overloaded operators (bare names) with the class of their type parameter `t`.
const OVERLOADED: &[(&str, &str, Class)] = &[
    ("+", "t -> t -> t", Class::Num),
    ("-", "t -> t -> t", Class::Num),
    ("*", "t -> t -> t", Class::Num),
    ("/", "t -> t -> t", Class::Num),
    ("%", "t -> t -> t", Class::Num),
    ("//", "t -> t -> t", Class::Num),
    ("%%", "t -> t -> t", Class::Num),
    ("**", "t -> t -> t", Class::Num),
    ("==", "t -> t -> bool", Class::Eq),
    ("!=", "t -> t -> bool", Class::Eq),
    ("<", "t -> t -> bool", Class::Prim),
    ("<=", "t -> t -> bool", Class::Prim),
    (">", "t -> t -> bool", Class::Prim),
    (">=", "t -> t -> bool", Class::Prim),
    ("&", "t -> t -> t", Class::Int),
    ("|", "t -> t -> t", Class::Int),
    ("^", "t -> t -> t", Class::Int),
    ("<<", "t -> t -> t", Class::Int),
    (">>", "t -> t -> t", Class::Int),
    (">>>", "t -> t -> t", Class::Int),
    ("&&", "bool -> bool -> bool", Class::Any),
    ("||", "bool -> bool -> bool", Class::Any),
    ("neg", "t -> t", Class::Num),
    ("!", "t -> t", Class::IntBool),
];

/// The numeric module names (and `bool`).
pub(crate) const MODULES: &[&str] = &[
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool",
];

const CONV_TARGETS: &[&str] = &[
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool",
];

/// Members of the module `m` as `(member name, signature)`; `T` in the
/// signatures stands for the module's type.
fn module_members(m: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    let mut add = |names: &str, sig: &str| {
        for n in names.split_whitespace() {
            v.push((n.to_string(), sig.replace('T', m)));
        }
    };
    for c in CONV_TARGETS {
        add(c, &format!("{c} -> T"));
    }
    add("== != < <= > >=", "T -> T -> bool");
    if m == "bool" {
        add("&& ||", "T -> T -> T");
        add("!", "T -> T");
        return v;
    }
    let p = PrimType::from_name(m).unwrap_or(PrimType::I32);
    add("+ - * / % ** min max", "T -> T -> T");
    add("neg abs sgn", "T -> T");
    add("sum product maximum minimum", "[n]T -> T");
    add("highest lowest", "T");
    add("num_bits", "i32");
    add("to_i64", "T -> i64");
    add("get_bit", "i32 -> T -> i32");
    add("set_bit", "i32 -> T -> i32 -> T");
    if p.is_int() {
        add("// %% rem quot & | ^ << >> >>> mul_hi", "T -> T -> T");
        add("mad_hi", "T -> T -> T -> T");
        // `not` is the older name of the bitwise complement in `integral`.
        add("! not", "T -> T");
        add("clz ctz popc", "T -> i32");
    } else {
        add(
            "sqrt rsqrt recip cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh \
             asinh acosh atanh gamma lgamma erf erfc floor ceil round trunc \
             sinpi cospi tanpi asinpi acospi atanpi",
            "T -> T",
        );
        add("frexp", "T -> (T, i32)");
        add("isnan isinf", "T -> bool");
        add("atan2 atan2pi hypot pow copysign nextafter", "T -> T -> T");
        add("fma mad lerp", "T -> T -> T -> T");
        add("inf nan pi e epsilon", "T");
        add("from_fraction", "i64 -> i64 -> T");
        add("ldexp", "T -> i32 -> T");
        add("to_f64", "T -> f64");
        let bits = match p {
            PrimType::F16 => "u16",
            PrimType::F32 => "u32",
            _ => "u64",
        };
        add("to_bits", &format!("T -> {bits}"));
        add("from_bits", &format!("{bits} -> T"));
    }
    v
}

/// Whether `name` is an operator (not an identifier).
pub(crate) fn is_operator(name: &str) -> bool {
    !name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Every intrinsic: `(canonical name, signature text)`.
/// Bare names for array/SOAC intrinsics and overloaded operators (their
/// signatures use `t` for the overloaded operand type), `T.name` for the
/// numeric modules' members.
pub fn intrinsic_signatures() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, s) in ARRAY_SIGS {
        out.push((n.to_string(), s.to_string()));
    }
    for (n, s, _) in OVERLOADED {
        out.push((n.to_string(), s.to_string()));
    }
    for (n, s) in INTRINSICS_MODULE_SIGS {
        out.push((format!("{INTRINSICS_MODULE}.{n}"), s.to_string()));
    }
    for m in MODULES {
        for (n, s) in module_members(m) {
            out.push((format!("{m}.{n}"), s));
        }
    }
    out
}

/// `(canonical name, scheme)` for every intrinsic; plus, for each module,
/// the list of its member names.
pub(crate) fn intrinsic_schemes() -> Vec<(String, Scheme)> {
    let mut out = Vec::new();
    for (n, s) in ARRAY_SIGS {
        if let Some(t) = parse_sig(s) {
            // As in Futhark's prelude, the type parameters of the array
            // functions and of AD are not lifted (no arrays of functions);
            // a typed hole may have any type, and `assert` may guard a
            // function.
            let scheme = Scheme::from_type(t, &[]);
            let lifted = matches!(*n, "???" | "assert");
            let scheme = if lifted { scheme } else { scheme.unlifted() };
            out.push((n.to_string(), scheme));
        }
    }
    for (n, s, c) in OVERLOADED {
        if let Some(t) = parse_sig(s) {
            out.push((n.to_string(), Scheme::from_type(t, &[("t", *c)])));
        }
    }
    for (n, s) in INTRINSICS_MODULE_SIGS {
        if let Some(t) = parse_sig(s) {
            out.push((
                format!("{INTRINSICS_MODULE}.{n}"),
                Scheme::from_type(t, &[]),
            ));
        }
    }
    for m in MODULES {
        for (n, s) in module_members(m) {
            if let Some(t) = parse_sig(&s) {
                out.push((format!("{m}.{n}"), Scheme::from_type(t, &[])));
            }
        }
    }
    out
}

/// Member names of a module (`None` if `m` is not a built-in module).
pub(crate) fn module_member_names(m: &str) -> Option<Vec<String>> {
    if MODULES.contains(&m) {
        Some(module_members(m).into_iter().map(|(n, _)| n).collect())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_signatures_parse() {
        for (n, s) in intrinsic_signatures() {
            assert!(
                parse_sig(&s).is_some(),
                "signature of {n} does not parse: {s}"
            );
        }
    }

    #[test]
    fn intrinsics_module_members() {
        assert_eq!(intrinsics_module_member("map").as_deref(), Some("map"));
        assert_eq!(
            intrinsics_module_member("acc_write").as_deref(),
            Some("intrinsics.acc_write")
        );
        assert_eq!(
            intrinsics_module_member("flat_update_3d").as_deref(),
            Some("intrinsics.flat_update_3d")
        );
        assert_eq!(intrinsics_module_member("sqrt"), None);
        assert_eq!(intrinsics_module_member("???"), None);
        // An accumulator parameter is consumed (`*`), its result is not.
        let t = parse_sig("*acc([k]a) -> i64 -> a -> acc([k]a)").unwrap();
        assert_eq!(t.to_string(), "(*acc ([k]a)) -> (i64) -> (a) -> acc ([k]a)");
        let s = Scheme::from_type(t, &[]);
        assert_eq!(s.sparams, vec!["k".to_string()]);
    }

    #[test]
    fn map_scheme() {
        let s = Scheme::from_type(parse_sig("(a -> b) -> [n]a -> *[n]b").unwrap(), &[]);
        assert_eq!(
            s.tparams.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        assert_eq!(s.sparams, vec!["n".to_string()]);
        let s = Scheme::from_type(parse_sig("(n: i64) -> *[n]i64").unwrap(), &[]);
        assert!(s.sparams.is_empty());
        assert_eq!(s.ty.to_string(), "(n: i64) -> *[n]i64");
    }
}
