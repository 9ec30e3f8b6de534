//! The core IR.
//!
//! Typed, in A-normal form: every operand is an [`Atom`] (a variable or a
//! constant), every intermediate result is bound by a [`Stm`]. Tuples,
//! records and sum types do not exist here: the elaborator flattens them, so a
//! statement binds *several* variables, each a scalar or an array of scalars
//! (arrays of tuples become tuples of arrays). Higher-order functions are gone,
//! except the [`Lambda`]s that SOACs and AD constructs take. Sizes are explicit:
//! array types carry their dimensions as atoms.
//!
//! Variables are numbered per [`Function`]: `Var(i)` indexes the function's
//! `var_names`, and the interpreter uses the number as a frame slot. Lambdas
//! and nested bodies share their enclosing function's numbering.
//!
//! Every statement carries the source [`Span`] it came from, so run-time
//! errors (out of bounds, size mismatch, division by zero, failed assert) name
//! the user's source location.

pub use nabla_prim::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};
pub use nabla_syntax::Span;

mod analysis;
pub mod bounds;
pub mod builder;
pub mod callgraph;
pub mod derivatives;
mod error;
pub mod loops;
pub mod parse;
mod print;
pub mod rewrite;
pub mod seg;
#[cfg(test)]
mod test_util;
mod validate;
pub mod visit;
pub use analysis::{
    analyse_function, analyse_program, consumption_errors, infer_loop_uniqueness, use_counts,
    Analysis, FunctionAnalysis,
};
pub use error::{ParseError, ParseProblem, ValidationProblem};
pub use parse::{eq_modulo_spans, parse_program};
pub use print::print_program;
pub use validate::{validate_program, validate_program_with, ValidateOptions, ValidationError};
pub use visit::{free_vars_body, free_vars_lambda, free_vars_stm, Nested, Use};

/// A variable, local to one function (index into `Function::var_names`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// An operand: a variable or a primitive constant.
///
/// Equality and hashing are structural and *bitwise* on constants (`0.0`
/// and `-0.0` differ, a NaN equals the same NaN), so that equal atoms denote
/// the same value and expressions can be keys of a hash map (CSE).
#[derive(Clone, Copy, Debug)]
pub enum Atom {
    Var(Var),
    Const(PrimValue),
}

/// The bits of a constant, with its type, for [`Atom`]'s equality and hash.
fn const_key(c: &PrimValue) -> (PrimType, u64) {
    let bits = match *c {
        PrimValue::I8(x) => x as u8 as u64,
        PrimValue::I16(x) => x as u16 as u64,
        PrimValue::I32(x) => x as u32 as u64,
        PrimValue::I64(x) => x as u64,
        PrimValue::U8(x) => x as u64,
        PrimValue::U16(x) => x as u64,
        PrimValue::U32(x) => x as u64,
        PrimValue::U64(x) => x,
        PrimValue::F16(x) => x.to_bits() as u64,
        PrimValue::F32(x) => x.to_bits() as u64,
        PrimValue::F64(x) => x.to_bits(),
        PrimValue::Bool(b) => b as u64,
    };
    (c.prim_type(), bits)
}

impl Atom {
    /// The variable, if the atom is one (`None` for a constant).
    pub fn as_var(&self) -> Option<Var> {
        match self {
            Atom::Var(v) => Some(*v),
            Atom::Const(_) => None,
        }
    }
}

impl PartialEq for Atom {
    fn eq(&self, other: &Atom) -> bool {
        match (self, other) {
            (Atom::Var(a), Atom::Var(b)) => a == b,
            (Atom::Const(a), Atom::Const(b)) => const_key(a) == const_key(b),
            _ => false,
        }
    }
}

impl Eq for Atom {}

impl std::hash::Hash for Atom {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Atom::Var(v) => {
                0u8.hash(state);
                v.hash(state);
            }
            Atom::Const(c) => {
                1u8.hash(state);
                const_key(c).hash(state);
            }
        }
    }
}

/// Index of a function in `Program::functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunId(pub u32);

/// One dimension of an array type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A size known statically.
    Const(i64),
    /// The value of an `i64` variable in scope.
    Var(Var),
    /// Existential: known only at run time (a `filter` result, a loop result
    /// whose size changes, branches of different sizes, a function result not
    /// expressible in the parameters).
    Ext,
}

/// A type in the IR: a scalar, an array of scalars of rank ≥ 1, or an
/// accumulator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Prim(PrimType),
    Array(PrimType, Vec<Dim>),
    /// A write-only accumulator over an array of this element type and shape,
    /// made by [`Exp::WithAcc`] and updated by [`Exp::UpdateAcc`]. It is a
    /// linear value: every accumulator variable is used exactly once (by an
    /// `update_acc`, a `map` that threads it, a loop, a branch result or the
    /// `with_acc` lambda's result), and the use produces its successor.
    /// Accumulators have no rank: they cannot be indexed or stored in arrays.
    Acc(PrimType, Vec<Dim>),
}

impl Type {
    pub fn elem(&self) -> PrimType {
        match self {
            Type::Prim(p) | Type::Array(p, _) | Type::Acc(p, _) => *p,
        }
    }
    /// The number of dimensions of an array (0 for scalars and accumulators).
    pub fn rank(&self) -> usize {
        match self {
            Type::Prim(_) | Type::Acc(..) => 0,
            Type::Array(_, d) => d.len(),
        }
    }
    /// The same type with every dimension replaced by `f(dimension)`.
    pub fn map_dims(&self, mut f: impl FnMut(Dim) -> Dim) -> Type {
        match self {
            Type::Prim(p) => Type::Prim(*p),
            Type::Array(p, ds) => Type::Array(*p, ds.iter().map(|d| f(*d)).collect()),
            Type::Acc(p, ds) => Type::Acc(*p, ds.iter().map(|d| f(*d)).collect()),
        }
    }
    /// Whether this is an accumulator type.
    pub fn is_acc(&self) -> bool {
        matches!(self, Type::Acc(..))
    }
    /// The type of one element along the outer dimension (`[n][m]f64` → `[m]f64`).
    pub fn row(&self) -> Option<Type> {
        match self {
            Type::Prim(_) | Type::Acc(..) => None,
            Type::Array(p, d) if d.len() == 1 => Some(Type::Prim(*p)),
            Type::Array(p, d) => Some(Type::Array(*p, d[1..].to_vec())),
        }
    }
    /// `[w]self` (an accumulator has no array type: it stays as it is).
    pub fn array_of(&self, w: Dim) -> Type {
        match self {
            Type::Acc(..) => self.clone(),
            Type::Prim(p) => Type::Array(*p, vec![w]),
            Type::Array(p, d) => {
                let mut d2 = vec![w];
                d2.extend(d.iter().cloned());
                Type::Array(*p, d2)
            }
        }
    }
}

/// A variable binding with its type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub var: Var,
    pub ty: Type,
    /// Uniqueness (`*` in Futhark): on a function parameter, the callee may
    /// consume the argument (the caller must not use it, nor any alias of it,
    /// afterwards); on a loop parameter, the body may consume it. Always
    /// `false` on statement patterns and lambda parameters. Printed as `*`
    /// before the type.
    pub unique: bool,
}

impl Param {
    /// A non-unique binding of `var` with type `ty`.
    pub fn new(var: Var, ty: Type) -> Param {
        Param {
            var,
            ty,
            unique: false,
        }
    }
}

/// A sequence of statements followed by the result atoms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Body {
    pub stms: Vec<Stm>,
    pub result: Vec<Atom>,
}

/// `let pat = exp` — binds one variable per value the expression returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stm {
    pub pat: Vec<Param>,
    pub exp: Exp,
    pub span: Span,
}

/// An anonymous function taken by a SOAC or an AD construct. It may read the
/// enclosing function's variables (free variables); it may not call itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Body,
    pub ret: Vec<Type>,
}

/// One index in an [`Exp::Index`] or [`Exp::Update`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DimIndex {
    /// A single index: removes the dimension.
    Fix(Atom),
    /// `start`, `start + stride`, …, `len` elements: keeps the dimension (of size `len`).
    /// Futhark's `a[i:j:s]` is elaborated into start/len/stride with the checks
    /// that the slice is in bounds.
    Slice {
        start: Atom,
        len: Atom,
        stride: Atom,
    },
}

/// The iteration of a loop.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoopForm {
    /// `for i < bound`: `i` has the bound's integer type and counts 0, 1, …, bound-1.
    For { i: Var, bound: Atom },
    /// `while cond`: `cond` is evaluated on the loop parameters before each
    /// iteration; it returns one `bool`.
    While { cond: Box<Body> },
}

/// Second-order array combinators. `w` is the outer size of all input arrays
/// (checked at run time).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Soac {
    /// `map lam arrs`: the lambda takes one row of each array and returns k
    /// values; the result is k arrays of `w` rows.
    Map {
        w: Atom,
        lam: Lambda,
        arrs: Vec<Var>,
    },
    /// `reduce lam ne arrs` with an associative operator on k-tuples:
    /// `lam` takes 2k params (accumulator components, then element components).
    /// `commutative` is set by `reduce_comm`.
    Reduce {
        w: Atom,
        lam: Lambda,
        neutral: Vec<Atom>,
        arrs: Vec<Var>,
        commutative: bool,
    },
    /// Inclusive `scan lam ne arrs` (same conventions as `Reduce`).
    Scan {
        w: Atom,
        lam: Lambda,
        neutral: Vec<Atom>,
        arrs: Vec<Var>,
    },
    /// `reduce_by_index dest lam ne is vs` (also `hist`): for each j < w with
    /// 0 ≤ is[j] < len(dest), dest[is[j]] = lam(dest[is[j]], vs[j]); other
    /// indices are ignored. `dest` are consumed (updated in place). `lam` takes
    /// 2k params as in `Reduce`.
    Hist {
        w: Atom,
        dest: Vec<Var>,
        lam: Lambda,
        neutral: Vec<Atom>,
        indices: Var,
        values: Vec<Var>,
    },
    /// `scatter dest is vs` (rank-d destination: `indices` has one i64 array per
    /// dimension, for `scatter_2d`/`scatter_3d`); out-of-bounds indices are
    /// ignored; `dest` is consumed. Several destinations scatter with the same indices.
    Scatter {
        w: Atom,
        dest: Vec<Var>,
        indices: Vec<Var>,
        values: Vec<Var>,
    },
}

impl Soac {
    /// The width of the SOAC: its outermost number of rows (the `w` every
    /// form has).
    pub fn width(&self) -> &Atom {
        match self {
            Soac::Map { w, .. }
            | Soac::Reduce { w, .. }
            | Soac::Scan { w, .. }
            | Soac::Hist { w, .. }
            | Soac::Scatter { w, .. } => w,
        }
    }
}

/// How an accumulator combines an update with the value already in its cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AccOp {
    /// `cell + value` (numeric element types; the adjoint accumulators of
    /// reverse-mode AD).
    Add,
    /// `value` replaces the cell (scatter).
    Write,
    /// `lam(cell, value)` with an associative and commutative operator of two
    /// scalar parameters and its neutral element.
    Lambda(Box<Lambda>, Atom),
}

/// One accumulator of a [`Exp::WithAcc`]: the array it writes into (consumed)
/// and its operator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AccInput {
    pub array: Var,
    pub op: AccOp,
}

/// Expressions. Each returns as many values as its statement's pattern binds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Exp {
    /// Copy of atoms (one value each).
    Atoms(Vec<Atom>),
    BinOp(BinOp, Atom, Atom),
    CmpOp(CmpOp, Atom, Atom),
    UnOp(UnOp, Atom),
    TernOp(TernOp, Atom, Atom, Atom),
    Conv(ConvOp, Atom),
    /// Call of a first-order function.
    Apply(FunId, Vec<Atom>),
    /// `if c then … else …`; both bodies return the pattern's values.
    If {
        cond: Atom,
        then_: Body,
        else_: Body,
    },
    /// A loop with loop-variant parameters: `params` are initialised from
    /// `init`, the body returns their next values; the statement binds their
    /// final values.
    Loop {
        params: Vec<Param>,
        init: Vec<Atom>,
        form: LoopForm,
        body: Body,
    },
    /// `arr[indices]` (fewer indices than the rank leave trailing dimensions).
    Index(Var, Vec<DimIndex>),
    /// `arr with [indices] = value` (in place: `arr` is consumed). The value is
    /// a scalar or an array of the indexed slice's shape.
    Update(Var, Vec<DimIndex>, Atom),
    /// Array literal with rows of the given row type (`[]` allowed).
    ArrayLit(Vec<Atom>, Type),
    /// `iota n` with the given integer element type: `start, start+step, …` (n elements).
    Iota {
        n: Atom,
        start: Atom,
        step: Atom,
        ty: PrimType,
    },
    /// `replicate n v` (v scalar or array).
    Replicate(Atom, Atom),
    /// A fresh copy of an array (`copy`).
    Copy(Var),
    /// Size of dimension `dim` of an array, as an `i64`.
    Size(Var, usize),
    /// Reshape to the given shape (product must match, checked at run time);
    /// used for `flatten`, `unflatten`, size coercions.
    Reshape(Vec<Atom>, Var),
    /// Permute dimensions: result dimension k is input dimension `perm[k]`.
    Rearrange(Vec<usize>, Var),
    /// Concatenate along the outer dimension (`++`, `concat`).
    Concat(Vec<Var>),
    /// `rotate r a` along the outer dimension: result[i] = a[(i + r) mod n].
    Rotate(Atom, Var),
    /// Reverse along the outer dimension.
    Reverse(Var),
    /// Check that the atoms (sizes) are equal; a run-time size error
    /// naming the statement's span otherwise. Binds nothing. The message says what was compared.
    AssertEqSizes(Vec<Atom>, String),
    /// `assert c`: a run-time error with the message if `c` is false. Binds
    /// nothing. Each `{}` in the message is replaced by the value of the
    /// next of the atoms (scalars, integers printed without a type suffix),
    /// as Futhark's run-time errors show values (`Range 5...1 is invalid.`).
    Assert(Atom, String, Vec<Atom>),
    /// A second-order array combinator.
    Soac(Soac),
    /// `with_acc inputs lam`: turns each input array (consumed) into an
    /// accumulator of type `acc(elem, shape)` and calls `lam` with them (one
    /// parameter per input, in order). The lambda returns the final
    /// accumulators first (same order), then any other values; the statement
    /// binds the resulting arrays (the accumulated inputs) followed by those
    /// other values. Semantics: Schenck et al., SC22, §5.4 (accumulators for the free
    /// variables of `map`).
    WithAcc {
        inputs: Vec<AccInput>,
        lam: Lambda,
    },
    /// `update_acc acc indices value`: combines `value` into the cell (or the
    /// row, with fewer indices than the rank: then `value` is an array of the
    /// row's shape) of the accumulator `acc` at `indices` (each an `i64`),
    /// with the accumulator's operator; returns the updated accumulator and
    /// consumes `acc`. An index out of bounds makes the update do nothing.
    UpdateAcc {
        acc: Var,
        indices: Vec<Atom>,
        value: Atom,
    },
    /// `jvp`: evaluates `lam` at `primals` with tangents `tangents` (one per
    /// parameter, same types); returns the primal results (first `ret.len()`
    /// values) followed by the result tangents. (`jvp2` keeps both; `jvp` drops
    /// the primal results in the elaborator.)
    Jvp {
        lam: Lambda,
        primals: Vec<Atom>,
        tangents: Vec<Atom>,
    },
    /// `vjp`: evaluates `lam` at `primals` and pulls back `adjoints` (one per
    /// result); returns the primal results followed by one adjoint per parameter.
    Vjp {
        lam: Lambda,
        primals: Vec<Atom>,
        adjoints: Vec<Atom>,
    },
    /// `with_vjp f f' x` / `with_vjp_tape f f' x`: a custom reverse-mode
    /// derivative (Futhark's prelude; futhark-internals.md §2). Evaluates
    /// `lam` at `args`; `lam` returns `tape` saved values followed by the
    /// results, and the statement binds all of them (saved values first).
    /// Outside reverse-mode AD this is just `lam args`. Reverse mode keeps
    /// the statement in its forward sweep and, in the return sweep, calls
    /// `rule` with the saved values followed by one adjoint per result
    /// (same types as the results); `rule` returns one adjoint per argument
    /// (same types as `args`), which is added to the arguments' adjoints.
    /// The saved values and the free variables of `lam` get no adjoint.
    /// Forward mode ignores `rule` and differentiates `lam`. For `with_vjp`
    /// the elaborator makes the saved values the results themselves
    /// (`lam` returns its results twice), so `rule` sees (result, adjoint).
    WithVjp {
        lam: Lambda,
        rule: Lambda,
        args: Vec<Atom>,
        tape: usize,
    },
}

/// A first-order function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// The parameters. Size variables are bound explicitly: every variable in
    /// a dimension of a parameter's type is itself a parameter (of type
    /// `i64`, anywhere in the list), and on entry each such dimension is
    /// checked against the argument's shape.
    pub params: Vec<Param>,
    pub ret: Vec<Type>,
    /// One flag per result: the result is unique (`*` in Futhark), i.e. it
    /// aliases no parameter that is not consumed, so the caller may consume
    /// it. Same length as `ret`.
    pub unique_ret: Vec<bool>,
    pub body: Body,
    /// Names of this function's variables (for printing); `Var(i)` is `var_names[i]`.
    pub var_names: Vec<String>,
    pub span: Span,
}

/// How an entry point's flattened parameters and results map to the
/// user-visible values (for reading inputs and printing outputs).
#[derive(Clone, Debug, PartialEq)]
pub struct EntryPoint {
    /// The name users call (`-e NAME`).
    pub name: String,
    pub fun: FunId,
    /// One entry per source-level parameter: how many flat IR parameters it spans.
    pub param_arity: Vec<usize>,
    /// One entry per source-level result (a tuple result is several results).
    pub result_arity: Vec<usize>,
    /// The source-level signature (names, Futhark type names, uniqueness,
    /// opaque types), for the C library's API and manifest. `None` in
    /// programs written by hand or read from IR text without one.
    pub signature: Option<EntrySignature>,
}

/// An entry point's source-level signature: one [`EntryParam`] per
/// parameter (matching `param_arity`) and one [`EntryType`] per result
/// (matching `result_arity`; top-level tuple components are separate results).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EntrySignature {
    pub params: Vec<EntryParam>,
    pub results: Vec<EntryType>,
}

/// One entry parameter: its name (the pattern's variable, `_` for other
/// patterns) and type.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryParam {
    pub name: String,
    pub ty: EntryType,
}

/// The type of an entry parameter or result (or of a field of an opaque
/// record), as Futhark's manifest names it.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryType {
    /// The Futhark type without sizes (`f64`, `[]f64`, `[][]i32`, `bool`),
    /// or for an opaque type its name: the type alias in the source
    /// annotation if any, else the pretty-printed type (`(f64, []i32)`).
    pub name: String,
    /// Whether the type is unique (`*`): a parameter is consumed, a result
    /// aliases no input.
    pub unique: bool,
    /// `Some` when the value spans several flat IR values (record, tuple,
    /// sum, array of those) — or is otherwise not a primitive or an array
    /// of primitives.
    pub opaque: Option<OpaqueInfo>,
    /// For an array of primitives: its sizes as the source type names them,
    /// one per dimension: a size variable (`n`), a constant (`3`), or empty
    /// when anonymous. Empty otherwise. The C library checks that the
    /// arguments agree ("entry point arguments have invalid sizes").
    pub shape: Vec<String>,
}

/// What is known about an opaque type beyond its name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OpaqueInfo {
    /// How many flat IR values the opaque holds.
    pub flat: usize,
    /// For records and tuples (not arrays of them): the fields in the
    /// order of the flat values (alphabetical; numeric for tuples).
    /// `None` for sums and arrays of records/tuples.
    pub fields: Option<Vec<OpaqueField>>,
    /// For a sum type: its constructors in tag order. Flat value 0 is the
    /// tag (an `i8`, the index of the active constructor in this list);
    /// each constructor's payload values follow, in order, whichever is
    /// active. Payload fields are named `0`, `1`, … and their `start`s
    /// count from the opaque's first flat value.
    pub variants: Option<Vec<OpaqueVariant>>,
    /// For an array whose elements are records, tuples or sums: the number
    /// of outer (array) dimensions and the layout of one element. The
    /// element's flat value `i` is the array's flat value `i` without its
    /// outer dimensions.
    pub element: Option<(usize, Box<EntryType>)>,
}

/// One constructor of an opaque sum type.
#[derive(Clone, Debug, PartialEq)]
pub struct OpaqueVariant {
    /// The constructor's name without `#`.
    pub name: String,
    /// Its payload, one field per argument (`0`, `1`, …).
    pub payload: Vec<OpaqueField>,
}

/// One field of an opaque record or tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct OpaqueField {
    /// The field name (`0`, `1`, … for tuples).
    pub name: String,
    /// Its type (itself opaque for a nested record).
    pub ty: EntryType,
    /// The first of the opaque's flat values this field covers.
    pub start: usize,
    /// How many flat values the field covers.
    pub len: usize,
}

impl EntryType {
    /// A non-opaque type (primitive or array of primitives).
    pub fn transparent(name: impl Into<String>, unique: bool) -> EntryType {
        EntryType {
            name: name.into(),
            unique,
            opaque: None,
            shape: vec![],
        }
    }
}

/// A whole program.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub functions: Vec<Function>,
    pub entries: Vec<EntryPoint>,
    /// How each outermost SOAC statement runs (sequentially or in
    /// parallel), as the `lower` pass decided; empty before it (see
    /// [`seg`]).
    pub segments: seg::Segments,
}

impl Program {
    pub fn function(&self, id: FunId) -> &Function {
        &self.functions[id.0 as usize]
    }
    pub fn entry(&self, name: &str) -> Option<&EntryPoint> {
        self.entries.iter().find(|e| e.name == name)
    }
}
