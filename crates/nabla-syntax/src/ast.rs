//! The abstract syntax tree of nabla's Futhark subset.
//!
//! Produced by the parser, annotated in place by the type checker
//! (`Expr::ty`, `Pat::ty`, `ExprKind::Var::res`, `ExprKind::Var::inst`), read by
//! the elaborator. Every node has a [`Span`]. Declarations get a [`NodeId`]
//! so that resolved references can point at them.

// The AST is built once per program and walked a few times; boxing its large
// variants would only add noise to every pattern match on it.
#![allow(clippy::large_enum_variant)]

use crate::span::Span;
pub use crate::types::{Name, Size, Type};
use nabla_prim::PrimType;

/// Unique id of a value declaration (`def`/`entry`/top-level `let`) across
/// all files of a program. Assigned by the parser (`next_node_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// An identifier with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// A possibly qualified name: `x`, `f64.sqrt`, `f64.+` (quals = ["f64"]).
/// Operators are names too: `+`, `|>`, `+^` (user-defined).
#[derive(Clone, Debug, PartialEq)]
pub struct QualName {
    pub quals: Vec<Name>,
    pub name: Name,
    pub span: Span,
}

impl std::fmt::Display for QualName {
    /// The name as written, qualifiers joined by dots: `f64.sqrt`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for q in &self.quals {
            write!(f, "{q}.")?;
        }
        f.write_str(&self.name)
    }
}

/// One parsed source file.
#[derive(Clone, Debug)]
pub struct Program {
    pub file: crate::span::FileId,
    pub decs: Vec<Dec>,
}

/// An attribute `#[name]`, `#[name(args)]`; kept, mostly ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// The attribute's text as written between `#[` and `]`.
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Dec {
    /// `def`, `entry`, or top-level `let`.
    Val(ValBind),
    /// `type name params = t`.
    Type(TypeBind),
    /// `open m` where `m` is a module name (user module or built-in numeric module).
    Open(QualName, Span),
    /// `open mod_exp` for any other module expression (`open (mk f64)`).
    OpenModule(ModExp, Span),
    /// `include mod_exp`: like `open`, and the names become members of the enclosing module.
    Include(ModExp, Span),
    /// `module name params [: sig] = mod_exp`.
    Module(ModBind),
    /// `module type name = mod_type_exp`.
    ModType(ModTypeBind),
    /// `import "path"` (relative to the importing file, without `.fut`).
    Import(String, Span),
    /// `local dec`.
    Local(Box<Dec>, Span),
}

/// `module name (p1: S1) (p2: S2) : S = body`; with parameters it is a functor.
#[derive(Clone, Debug)]
pub struct ModBind {
    pub name: Ident,
    pub params: Vec<ModParam>,
    /// The ascribed module type, if any.
    pub sig: Option<ModTypeExp>,
    pub body: ModExp,
    pub span: Span,
}

/// A functor parameter `(name: S)`.
#[derive(Clone, Debug)]
pub struct ModParam {
    pub name: Ident,
    pub sig: ModTypeExp,
    pub span: Span,
}

/// A module expression.
#[derive(Clone, Debug)]
pub enum ModExp {
    /// A (possibly qualified) module name: `M`, `A.B`, `f64`.
    Var(QualName),
    /// `{ decs }`
    Struct(Vec<Dec>, Span),
    /// Functor application `f arg`.
    Apply(Box<ModExp>, Box<ModExp>, Span),
    /// `m : S`
    Ascribe(Box<ModExp>, ModTypeExp, Span),
    /// `\(p: S) [: R] -> m`, an anonymous functor.
    Lambda(Box<ModParam>, Option<ModTypeExp>, Box<ModExp>, Span),
    /// `import "path"`: the top-level declarations of that file as a module.
    Import(String, Span),
}

impl ModExp {
    /// The source span of the whole module expression.
    pub fn span(&self) -> Span {
        match self {
            ModExp::Var(q) => q.span,
            ModExp::Struct(_, s)
            | ModExp::Apply(_, _, s)
            | ModExp::Ascribe(_, _, s)
            | ModExp::Lambda(_, _, _, s)
            | ModExp::Import(_, s) => *s,
        }
    }
}

/// `module type name = def`.
#[derive(Clone, Debug)]
pub struct ModTypeBind {
    pub name: Ident,
    pub def: ModTypeExp,
    pub span: Span,
}

/// A module type expression.
#[derive(Clone, Debug)]
pub enum ModTypeExp {
    /// A (possibly qualified) module type name.
    Var(QualName),
    /// `{ specs }`
    Specs(Vec<Spec>, Span),
    /// `S with t 'a = u` (refinement of the type `t`, possibly qualified).
    With(Box<ModTypeExp>, QualName, Vec<TypeParam>, TypeExp, Span),
    /// `(p: S) -> R` or `S -> R`, the type of a functor.
    Arrow(Option<Ident>, Box<ModTypeExp>, Box<ModTypeExp>, Span),
}

impl ModTypeExp {
    /// The source span of the whole module type expression.
    pub fn span(&self) -> Span {
        match self {
            ModTypeExp::Var(q) => q.span,
            ModTypeExp::Specs(_, s)
            | ModTypeExp::With(_, _, _, _, s)
            | ModTypeExp::Arrow(_, _, _, s) => *s,
        }
    }
}

/// One specification inside a module type.
#[derive(Clone, Debug)]
pub enum Spec {
    /// `val name 'a [n]: t` (also operators: `val (+): t -> t -> t`).
    Val(Ident, Vec<TypeParam>, TypeExp, Span),
    /// `type name params` (abstract, `def` is `None`) or `type name params = t`.
    Type {
        name: Ident,
        params: Vec<TypeParam>,
        liftedness: Liftedness,
        def: Option<TypeExp>,
        span: Span,
    },
    /// `module name: S`
    Module(Ident, ModTypeExp, Span),
    /// `include S`
    Include(ModTypeExp, Span),
}

/// A value or function declaration.
#[derive(Clone, Debug)]
pub struct ValBind {
    pub id: NodeId,
    /// True for `entry`.
    pub entry: bool,
    /// The name; an operator name for `def (+^) x y = …`.
    pub name: Ident,
    /// Type parameters `'a`, `'^a`, `'~a` and size parameters `[n]`, in order.
    pub type_params: Vec<TypeParam>,
    /// Parameters (patterns), in order. Empty for a constant.
    pub params: Vec<Pat>,
    /// Declared return type, if any.
    pub ret: Option<TypeExp>,
    pub body: Expr,
    pub attrs: Vec<Attr>,
    pub span: Span,
    /// Filled by the type checker: the full type of the definition (an
    /// `Arrow` chain for functions), with `Type::Param` for type parameters.
    pub ty: Option<Type>,
}

/// How a type parameter may be instantiated; ordered from the least
/// (`Unlifted`) to the most lifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Liftedness {
    /// `'a`: non-functional, non-existential-sized types.
    Unlifted,
    /// `'~a`: may have anonymous sizes.
    SizeLifted,
    /// `'^a`: may be a function type.
    Lifted,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeParam {
    /// `[n]`
    Size(Ident),
    /// `'a`, `'^a`, `'~a`
    Type(Ident, Liftedness),
}

/// `type name params = def` (also `type^`, `type~`).
#[derive(Clone, Debug)]
pub struct TypeBind {
    pub name: Ident,
    pub params: Vec<TypeParam>,
    pub liftedness: Liftedness,
    pub def: TypeExp,
    pub span: Span,
}

/// A size written in a type: `[n]`, `[3]`, `[n*m]` or `[]`.
#[derive(Clone, Debug)]
pub enum SizeExp {
    /// `[]`
    Any(Span),
    /// Any expression of type `i64` (usually a name or a literal).
    Expr(Box<Expr>),
}

/// An argument of a type constructor: `vec [n]`, `pair f64`.
#[derive(Clone, Debug)]
pub enum TypeArg {
    Size(SizeExp),
    Type(TypeExp),
}

/// A type as written by the user.
#[derive(Clone, Debug)]
pub enum TypeExp {
    /// A primitive type name.
    Prim(PrimType, Span),
    /// A named type, possibly applied: `t`, `pair f64`, `vec [n]`, `m.t`.
    Named(QualName, Vec<TypeArg>, Span),
    /// `(t1, t2)`; `()` is the unit type. One element in parens is just grouping.
    Tuple(Vec<TypeExp>, Span),
    /// `{a: t, b: u}`
    Record(Vec<(Ident, TypeExp)>, Span),
    /// `[d]t`
    Array(SizeExp, Box<TypeExp>, Span),
    /// `*t`
    Unique(Box<TypeExp>, Span),
    /// `t1 -> t2` or `(x: t1) -> t2`.
    Arrow(Option<Ident>, Box<TypeExp>, Box<TypeExp>, Span),
    /// `#a t | #b`
    Sum(Vec<(Ident, Vec<TypeExp>)>, Span),
    /// `?[n][m].t` existential sizes.
    Exists(Vec<Ident>, Box<TypeExp>, Span),
}

impl TypeExp {
    pub fn span(&self) -> Span {
        match self {
            TypeExp::Prim(_, s)
            | TypeExp::Named(_, _, s)
            | TypeExp::Tuple(_, s)
            | TypeExp::Record(_, s)
            | TypeExp::Array(_, _, s)
            | TypeExp::Unique(_, s)
            | TypeExp::Arrow(_, _, _, s)
            | TypeExp::Sum(_, s)
            | TypeExp::Exists(_, _, s) => *s,
        }
    }
}

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer literal. `suffix` is the explicit type suffix, if any
    /// (`1i8`). Without one the literal is overloaded over all numeric types
    /// (default `i32`). The value is kept wide; range is checked once the type is known.
    Int {
        value: i128,
        suffix: Option<PrimType>,
    },
    /// A decimal literal (`1.5`, `1e3`, `2f32`): overloaded over float types,
    /// default `f64`. `text` is the source text without suffix (for exact parsing at f16/f32).
    Float {
        value: f64,
        text: String,
        suffix: Option<PrimType>,
    },
    Bool(bool),
}

/// A pattern.
#[derive(Clone, Debug)]
pub struct Pat {
    pub kind: PatKind,
    pub span: Span,
    /// Filled by the type checker.
    pub ty: Option<Type>,
    /// The attributes written before it (`#[attr] p`), outermost first;
    /// kept for `nabla fmt`, ignored by the compiler (the span is the
    /// pattern's without them).
    pub attrs: Vec<Attr>,
}

#[derive(Clone, Debug)]
pub enum PatKind {
    /// A variable binding.
    Id(Ident),
    /// `_`
    Wildcard,
    /// `(p1, p2, …)`; `()` is the unit pattern.
    Tuple(Vec<Pat>),
    /// `{a = p, b}` (a field without `= p` binds a variable of the field's name).
    Record(Vec<(Ident, Pat)>),
    /// `p : t`
    Ascribe(Box<Pat>, TypeExp),
    /// A literal pattern in `match` (also negative numbers).
    Lit(Literal),
    /// `#c p1 p2` in `match`.
    Constr(Ident, Vec<Pat>),
}

/// A field in a record expression.
#[derive(Clone, Debug)]
pub enum RecordField {
    /// `a = e`
    Named(Ident, Expr),
    /// `a` (punning: the variable `a`)
    Pun(Ident),
}

/// One index in `a[…]`.
#[derive(Clone, Debug)]
pub enum DimIndex {
    /// `a[i]`
    Fix(Expr),
    /// `a[i:j:s]` with each part optional (`a[:]`, `a[::2]`).
    Slice {
        start: Option<Expr>,
        end: Option<Expr>,
        stride: Option<Expr>,
    },
}

/// The three forms of `loop`.
#[derive(Clone, Debug)]
pub enum LoopForm {
    /// `for i < n`
    For(Ident, Box<Expr>),
    /// `for p in xs`
    ForIn(Pat, Box<Expr>),
    /// `while cond`
    While(Box<Expr>),
}

/// Kinds of range expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    /// `a..<b`
    UpToExclusive,
    /// `a...b` and `a..b...c`
    ToInclusive,
    /// `a..>b`
    DownToExclusive,
}

/// One `case p -> e` of a `match`.
#[derive(Clone, Debug)]
pub struct Case {
    pub pat: Pat,
    pub body: Expr,
    pub span: Span,
}

/// How a name reference was resolved; filled by the type checker.
#[derive(Clone, Debug, PartialEq)]
pub enum Res {
    /// A variable bound by an enclosing pattern, parameter, loop or `let`
    /// (looked up lexically by name).
    Local,
    /// A size parameter of an enclosing definition, or a size bound by a
    /// pattern's type, used as an `i64` value.
    Size,
    /// A top-level value declaration.
    Global(NodeId),
    /// A built-in: the canonical name, e.g. `"map"`, `"f64.sqrt"`, `"+"`
    /// (overloaded operators keep the bare operator name; their operand type is
    /// in the `ty` slot), `"i32.+"`.
    Intrinsic(String),
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Filled by the type checker: the expression's type, with every
    /// unification variable resolved (overloaded literals defaulted).
    pub ty: Option<Type>,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Literal),
    /// A name. `res` and `inst` are filled by the type checker: `inst` gives,
    /// for a reference to a polymorphic global or intrinsic, the type chosen
    /// for each of its type parameters (by name), in the caller's terms.
    Var {
        name: QualName,
        res: Option<Res>,
        inst: Vec<(Name, Type)>,
    },
    /// `(e)` kept for spans/sections; semantically `e`.
    Parens(Box<Expr>),
    /// `(a, b, …)`; `()` is unit.
    Tuple(Vec<Expr>),
    Record(Vec<RecordField>),
    /// `[a, b, c]`
    ArrayLit(Vec<Expr>),
    /// `start..<end`, `start...end`, `start..step...end` (step is the second element), `start..>end`.
    Range {
        start: Box<Expr>,
        second: Option<Box<Expr>>,
        end: Box<Expr>,
        kind: RangeKind,
    },
    /// `e.field` / `e.0`
    Project(Box<Expr>, Ident),
    /// `a[i, j:k]`
    Index(Box<Expr>, Vec<DimIndex>),
    /// Function application `f a b c` (curried, flattened).
    Apply(Box<Expr>, Vec<Expr>),
    /// Prefix `-e`.
    Negate(Box<Expr>),
    /// Prefix `!e`.
    Not(Box<Expr>),
    /// Binary operator application, including backtick infix (`x \`f\` y`)
    /// and pipes: `op` is the operator name (`+`, `|>`, `f`).
    BinOp {
        op: QualName,
        op_res: Option<Res>,
        op_inst: Vec<(Name, Type)>,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `(+)`: the operator as a function.
    OpSection {
        op: QualName,
        op_res: Option<Res>,
        op_inst: Vec<(Name, Type)>,
    },
    /// `(2-)`: `\y -> 2 - y`.
    OpSectionLeft {
        op: QualName,
        op_res: Option<Res>,
        op_inst: Vec<(Name, Type)>,
        lhs: Box<Expr>,
    },
    /// `(*2)`: `\x -> x * 2`.
    OpSectionRight {
        op: QualName,
        op_res: Option<Res>,
        op_inst: Vec<(Name, Type)>,
        rhs: Box<Expr>,
    },
    /// `(.a.b)`, `(.0)`: `\r -> r.a.b`.
    ProjSection(Vec<Ident>),
    /// `\p1 p2 : t -> e`
    Lambda {
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        body: Box<Expr>,
    },
    /// `let [n] p = e in body` (size names bound from the value's shape).
    LetPat {
        sizes: Vec<Ident>,
        pat: Pat,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `let f 'a [n] (x: t) : r = e in body` (a local function).
    LetFun {
        name: Ident,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `let a[i, j] = v in body` (in-place update of the variable `a`).
    LetWith {
        dest: Ident,
        indices: Vec<DimIndex>,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    If {
        cond: Box<Expr>,
        then_: Box<Expr>,
        else_: Box<Expr>,
    },
    Match {
        scrutinee: Box<Expr>,
        cases: Vec<Case>,
    },
    /// `loop pat = init for/while … do body`; `init` is `None` when omitted
    /// (the pattern's variables are then taken from the enclosing scope).
    Loop {
        sizes: Vec<Ident>,
        pat: Pat,
        init: Option<Box<Expr>>,
        form: LoopForm,
        body: Box<Expr>,
        attrs: Vec<Attr>,
    },
    /// `src with [i, j] = v`, or `src with a.b[i, j] = v` (the array in
    /// field `a.b` of the record `src` updated in place; `path` is empty
    /// for the first form).
    Update {
        src: Box<Expr>,
        path: Vec<Ident>,
        indices: Vec<DimIndex>,
        value: Box<Expr>,
    },
    /// `src with a.b = v`
    RecordUpdate {
        src: Box<Expr>,
        path: Vec<Ident>,
        value: Box<Expr>,
    },
    /// `e : t`
    Ascribe(Box<Expr>, TypeExp),
    /// `e :> t`
    Coerce(Box<Expr>, TypeExp),
    /// `#c e1 e2`
    Constr(Ident, Vec<Expr>),
    /// `m.(e)` local open.
    LocalOpen(QualName, Box<Expr>),
    /// `#[attr] e`
    Attr(Attr, Box<Expr>),
}
