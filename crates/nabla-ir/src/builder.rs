//! Building IR: the variables of a function (fresh names with their types)
//! and a builder that collects statements into bodies and returns typed
//! variables.
//!
//! Every crate that creates IR uses these: the elaborator (through a thin
//! wrapper that adds its own simplifications), the optimiser's inliner
//! (fresh copies of callee variables), static AD and the tests. The types of
//! variables are recorded when they are made, so asking for the type of a
//! variable that was never made is an error ([`UnknownVariable`]), never a
//! default.
//!
//! ```
//! use nabla_ir::builder::FunctionBuilder;
//! use nabla_ir::{Atom, BinOp, PrimType, Type};
//! let mut b = FunctionBuilder::new();
//! let x = b.param("x", Type::Prim(PrimType::F64));
//! let y = b.binop(BinOp::Mul, Atom::Var(x.var), Atom::Var(x.var)).unwrap();
//! let f = b.finish_function("square", vec![x], vec![y]).unwrap();
//! assert_eq!(f.ret, vec![Type::Prim(PrimType::F64)]);
//! ```

use crate::{
    visit, Atom, BinOp, Body, CmpOp, ConvOp, Dim, DimIndex, Exp, Function, Lambda, Param, PrimType,
    Soac, Span, Stm, TernOp, Type, UnOp, Var,
};
use std::collections::HashSet;
use std::fmt;

/// Asked for the type of a variable that this table never made: a compiler
/// bug (the IR refers to a variable from another function, or to one
/// created without a type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownVariable(pub Var);

impl fmt::Display for UnknownVariable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "internal error: variable #{} has no recorded type in this function",
            self.0 .0
        )
    }
}

impl std::error::Error for UnknownVariable {}

/// Why [`FunctionBuilder::let_`] could not bind an expression: an operand
/// without a recorded type, or an expression whose result type cannot be
/// read off its operands (the caller writes the types with
/// [`FunctionBuilder::bind`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    /// An operand was never made by this function's variable table.
    #[error(transparent)]
    UnknownVariable(#[from] UnknownVariable),
    /// A call (the callee's result types are the program's, not the
    /// builder's), or a malformed expression (a rearrangement that is not
    /// a permutation, a concatenation of no arrays): the caller knows the
    /// types.
    #[error("internal error: the result type of {construct} is not inferred; give it")]
    NotInferred {
        /// The construct (`a call`, `a loop`, …).
        construct: &'static str,
    },
}

/// The type of a variable with its size variables made existential
/// (`Dim::Var` becomes `Dim::Ext`; constant sizes stay), so that it can be
/// used where the size variables may not be in scope.
pub fn existential(t: &Type) -> Type {
    t.map_dims(|d| match d {
        Dim::Var(_) => Dim::Ext,
        d => d,
    })
}

/// The variables of one function: display names and types, indexed by
/// [`Var`] number, and the supply of fresh variables.
#[derive(Clone, Debug, Default)]
pub struct VarTable {
    names: Vec<String>,
    types: Vec<Option<Type>>,
}

impl VarTable {
    /// An empty table (the first fresh variable is `Var(0)`).
    pub fn new() -> VarTable {
        VarTable::default()
    }

    /// The table of an existing function: its names, and the type of every
    /// variable it binds (parameters, patterns, lambda and loop parameters,
    /// `for` counters). Fresh variables continue after its last one.
    pub fn of_function(f: &Function) -> VarTable {
        let mut t = VarTable {
            names: f.var_names.clone(),
            types: vec![None; f.var_names.len()],
        };
        for p in &f.params {
            t.set_type(p.var, p.ty.clone());
        }
        t.record_body(&f.body);
        t
    }

    /// Records the types of every variable bound in `body` (recursively).
    pub fn record_body(&mut self, body: &Body) {
        let mut stack = vec![body];
        while let Some(b) = stack.pop() {
            for s in &b.stms {
                for p in &s.pat {
                    self.set_type(p.var, p.ty.clone());
                }
                for p in s.exp.loop_params() {
                    self.set_type(p.var, p.ty.clone());
                }
                if let Exp::Loop {
                    form: crate::LoopForm::For { i, bound },
                    ..
                } = &s.exp
                {
                    if let Ok(t) = self.atom_type(bound) {
                        self.set_type(*i, t);
                    }
                }
                s.exp.for_each_nested(|n| match n {
                    visit::Nested::Body(nb) => stack.push(nb),
                    visit::Nested::Lambda(l) => {
                        for p in &l.params {
                            self.set_type(p.var, p.ty.clone());
                        }
                        stack.push(&l.body);
                    }
                });
            }
        }
    }

    /// A fresh variable named `name_N` (N its number; `t_N` for an empty
    /// name) with type `ty`.
    pub fn fresh(&mut self, name: &str, ty: Type) -> Var {
        let v = Var(self.names.len() as u32);
        let base = if name.is_empty() { "t" } else { name };
        self.names.push(format!("{base}_{}", v.0));
        self.types.push(Some(ty));
        v
    }

    /// A fresh variable with the same base name and type as `v` (for
    /// copying code: renaming a lambda's or callee's variables).
    pub fn fresh_like(&mut self, v: Var) -> Result<Var, UnknownVariable> {
        let ty = self.type_of(v)?.clone();
        let base = base_name(self.name(v)).to_string();
        Ok(self.fresh(&base, ty))
    }

    /// Sets (or refines) the type of `v`, growing the table if needed.
    pub fn set_type(&mut self, v: Var, ty: Type) {
        let i = v.0 as usize;
        if i >= self.types.len() {
            self.types.resize(i + 1, None);
        }
        if i >= self.names.len() {
            self.names.resize(i + 1, String::new());
        }
        self.types[i] = Some(ty);
    }

    /// The type of every variable, indexed by variable number (`None` for
    /// numbers never bound): for a valid function, the same table as
    /// [`crate::FunctionAnalysis::types`]. A pass that has changed a function
    /// since it received its analysis retypes it with
    /// `VarTable::of_function(f).into_types()`.
    pub fn into_types(mut self) -> Vec<Option<Type>> {
        self.types.resize(self.names.len(), None);
        self.types
    }

    /// The type of `v`.
    pub fn type_of(&self, v: Var) -> Result<&Type, UnknownVariable> {
        self.types
            .get(v.0 as usize)
            .and_then(|t| t.as_ref())
            .ok_or(UnknownVariable(v))
    }

    /// The type of an atom (a constant's is its primitive type).
    pub fn atom_type(&self, a: &Atom) -> Result<Type, UnknownVariable> {
        match a {
            Atom::Var(v) => self.type_of(*v).cloned(),
            Atom::Const(c) => Ok(Type::Prim(c.prim_type())),
        }
    }

    /// The display name of `v` (empty if it has none).
    pub fn name(&self, v: Var) -> &str {
        self.names.get(v.0 as usize).map_or("", |s| s.as_str())
    }

    /// The number of variables (the next fresh one is `Var(len)`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no variable was made yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names, for [`Function::var_names`].
    pub fn into_names(self) -> Vec<String> {
        self.names
    }

    /// The names so far.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// `name_12` → `name`; names without a numeric suffix are returned whole.
pub fn base_name(n: &str) -> &str {
    match n.rsplit_once('_') {
        Some((b, k)) if !b.is_empty() && k.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => n,
    }
}

/// The result type of a scalar operation on operands of type `t`.
pub fn unop_result(op: UnOp, t: PrimType) -> PrimType {
    match op {
        UnOp::IsNan | UnOp::IsInf => PrimType::Bool,
        UnOp::Clz | UnOp::Ctz | UnOp::Popc => PrimType::I32,
        _ => t,
    }
}

/// The one type of an expression bound by `let1`.
fn single(types: Vec<Type>) -> Result<Type, InferError> {
    match <[Type; 1]>::try_from(types) {
        Ok([ty]) => Ok(ty),
        Err(_) => Err(InferError::NotInferred {
            construct: "an expression without exactly one result (let1)",
        }),
    }
}

/// The dimension an `i64` atom denotes (as the validator reads sizes).
fn size_dim(a: &Atom) -> Dim {
    match a {
        Atom::Const(crate::PrimValue::I64(n)) => Dim::Const(*n),
        Atom::Const(_) => Dim::Ext,
        Atom::Var(v) => Dim::Var(*v),
    }
}

/// The type of `arr[idx]` for an array of type `t`: fixed indices remove
/// their dimension, a slice's dimension is its length.
fn index_result(t: &Type, idx: &[DimIndex]) -> Type {
    let dims = match t {
        Type::Array(_, ds) => &ds[..],
        _ => &[],
    };
    let mut kept: Vec<Dim> = idx
        .iter()
        .filter_map(|i| match i {
            DimIndex::Slice { len, .. } => Some(size_dim(len)),
            DimIndex::Fix(_) => None,
        })
        .collect();
    kept.extend(dims.iter().skip(idx.len()).cloned());
    if kept.is_empty() {
        Type::Prim(t.elem())
    } else {
        Type::Array(t.elem(), kept)
    }
}

/// `t` with the sizes bound by `inner` made existential.
fn forget(t: &Type, inner: &HashSet<Var>) -> Type {
    t.map_dims(|d| match d {
        Dim::Var(v) if inner.contains(&v) => Dim::Ext,
        d => d,
    })
}

/// The type of the results of an `if` whose branches give `a` and `b`:
/// the sizes they agree on, existential elsewhere.
fn agreed_sizes(a: &Type, b: &Type) -> Type {
    let mut other = match b {
        Type::Array(_, ds) | Type::Acc(_, ds) => ds.iter(),
        Type::Prim(_) => [].iter(),
    };
    a.map_dims(|d| match other.next() {
        Some(e) if *e == d => d,
        _ => Dim::Ext,
    })
}

/// Builds the statements of one function: a [`VarTable`] and a stack of
/// open bodies (the innermost receives new statements). Each statement
/// gets the current span ([`FunctionBuilder::set_span`]).
#[derive(Debug)]
pub struct FunctionBuilder {
    /// The function's variables.
    pub vars: VarTable,
    stack: Vec<Vec<Stm>>,
    span: Span,
}

impl Default for FunctionBuilder {
    fn default() -> Self {
        FunctionBuilder::new()
    }
}

impl FunctionBuilder {
    /// A builder for a new function, with one open (top-level) body.
    pub fn new() -> FunctionBuilder {
        FunctionBuilder::with_vars(VarTable::new())
    }

    /// A builder that continues numbering after `vars` (e.g.
    /// [`VarTable::of_function`] to add code to an existing function).
    pub fn with_vars(vars: VarTable) -> FunctionBuilder {
        FunctionBuilder {
            vars,
            stack: vec![vec![]],
            span: Span::default(),
        }
    }

    /// The span given to the statements built from now on.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    /// The current span.
    pub fn span(&self) -> Span {
        self.span
    }

    /// A fresh parameter (not unique).
    pub fn param(&mut self, name: &str, ty: Type) -> Param {
        let v = self.vars.fresh(name, ty.clone());
        Param::new(v, ty)
    }

    /// The type of a variable (see [`VarTable::type_of`]).
    pub fn type_of(&self, v: Var) -> Result<Type, UnknownVariable> {
        self.vars.type_of(v).cloned()
    }

    /// The type of an atom.
    pub fn atom_type(&self, a: &Atom) -> Result<Type, UnknownVariable> {
        self.vars.atom_type(a)
    }

    /// Appends a statement to the innermost open body.
    pub fn push(&mut self, stm: Stm) {
        if self.stack.is_empty() {
            self.stack.push(vec![]);
        }
        if let Some(top) = self.stack.last_mut() {
            top.push(stm);
        }
    }

    /// `let (v1: t1, …) = exp` with fresh variables named after `name`.
    pub fn bind(&mut self, name: &str, types: Vec<Type>, exp: Exp) -> Vec<Var> {
        let pat: Vec<Param> = types
            .into_iter()
            .map(|ty| Param::new(self.vars.fresh(name, ty.clone()), ty))
            .collect();
        let vars = pat.iter().map(|p| p.var).collect();
        let span = self.span;
        self.push(Stm { pat, exp, span });
        vars
    }

    /// `let (v1, …) = exp` with the types of the results inferred from the
    /// operands (see [`FunctionBuilder::infer`]), and fresh variables named
    /// after `name_hint`.
    pub fn let_(&mut self, name_hint: &str, exp: Exp) -> Result<Vec<Var>, InferError> {
        let types = self.infer(&exp)?;
        Ok(self.bind(name_hint, types, exp))
    }

    /// `let v = exp` for an expression with one result (see
    /// [`FunctionBuilder::let_`]).
    pub fn let1(&mut self, name_hint: &str, exp: Exp) -> Result<Var, InferError> {
        let ty = single(self.infer(&exp)?)?;
        Ok(self.bind1(name_hint, ty, exp))
    }

    /// [`FunctionBuilder::let_`] with the size variables of the inferred
    /// types made existential ([`existential`]; constant sizes stay): for
    /// values that must fit wherever a value of their shape is expected,
    /// whatever sizes that place names (static AD's adjoints and tangents,
    /// which stand for the primal values' derivatives).
    pub fn let_existential(&mut self, name_hint: &str, exp: Exp) -> Result<Vec<Var>, InferError> {
        let types = self.infer(&exp)?.iter().map(existential).collect();
        Ok(self.bind(name_hint, types, exp))
    }

    /// [`FunctionBuilder::let1`] with the size variables of the inferred
    /// type made existential (see [`FunctionBuilder::let_existential`]).
    pub fn let1_existential(&mut self, name_hint: &str, exp: Exp) -> Result<Var, InferError> {
        let ty = existential(&single(self.infer(&exp)?)?);
        Ok(self.bind1(name_hint, ty, exp))
    }

    /// The result types of `exp`, read off the types of its operands as the
    /// validator computes them (`validate.rs`), so they are exact: a size
    /// given by an atom is that size (`Dim::Var` of a variable, `Dim::Const`
    /// of a constant: `iota n` has type `[n]i64`, a `map` of width `w` has
    /// the outer dimension `w`), an operand's dimensions are kept, and only
    /// sizes the operands do not determine are existential (`Dim::Ext`: the
    /// outer size of a concatenation). Sizes bound inside a nested body (a
    /// branch's statements, a loop's parameters) are existential in the
    /// results; an `if` keeps the sizes both branches agree on. Callers who
    /// want sizes forgotten use [`existential`]. A `map`/`scan` has its
    /// lambda's results as arrays, a `reduce` its lambda's results,
    /// `reduce_by_index` and `scatter` their destinations' types, a loop its
    /// parameters' types, a `with_acc` its arrays' types then the lambda's
    /// other results, an `update_acc` its accumulator's type, `jvp`/`vjp`
    /// the lambda's results then their tangents/the parameters' adjoints.
    /// Errors: see [`InferError`] (a call is never inferred).
    pub fn infer(&self, exp: &Exp) -> Result<Vec<Type>, InferError> {
        let var = |v: &Var| -> Result<Type, InferError> { Ok(self.type_of(*v)?) };
        let atom = |a: &Atom| -> Result<Type, InferError> { Ok(self.atom_type(a)?) };
        let prim =
            |a: &Atom| -> Result<Type, InferError> { Ok(Type::Prim(self.atom_type(a)?.elem())) };
        let one = |t: Type| Ok(vec![t]);
        let not_inferred = |construct| Err(InferError::NotInferred { construct });
        match exp {
            Exp::Atoms(xs) => xs.iter().map(atom).collect(),
            Exp::BinOp(_, a, _) | Exp::TernOp(_, a, _, _) => one(prim(a)?),
            Exp::CmpOp(..) => one(Type::Prim(PrimType::Bool)),
            Exp::UnOp(op, a) => one(Type::Prim(unop_result(*op, self.atom_type(a)?.elem()))),
            Exp::Conv(ConvOp::Convert(_, to) | ConvOp::BitCast(_, to), _) => one(Type::Prim(*to)),
            Exp::Index(v, idx) => one(index_result(&var(v)?, idx)),
            Exp::Update(v, ..) | Exp::Copy(v) | Exp::Rotate(_, v) | Exp::Reverse(v) => one(var(v)?),
            Exp::Rearrange(perm, v) => match var(v)? {
                Type::Array(p, dims) if perm.iter().all(|&k| k < dims.len()) => {
                    one(Type::Array(p, perm.iter().map(|&k| dims[k]).collect()))
                }
                _ => not_inferred(
                    "a rearrangement that is not a permutation of an array's dimensions",
                ),
            },
            Exp::Concat(vs) => match vs.first().map(var).transpose()?.and_then(|t| t.row()) {
                Some(row) => one(row.array_of(Dim::Ext)),
                None => not_inferred("a concatenation of no arrays or of scalars"),
            },
            Exp::ArrayLit(xs, row) => one(row.array_of(Dim::Const(xs.len() as i64))),
            Exp::Iota { n, ty, .. } => one(Type::Array(*ty, vec![size_dim(n)])),
            Exp::Replicate(n, x) => one(atom(x)?.array_of(size_dim(n))),
            Exp::Size(..) => one(Type::Prim(PrimType::I64)),
            Exp::Reshape(shape, v) => one(Type::Array(
                var(v)?.elem(),
                shape.iter().map(size_dim).collect(),
            )),
            Exp::AssertEqSizes(..) | Exp::Assert(..) => Ok(Vec::new()),
            Exp::If { then_, else_, .. } => {
                let then_types = self.body_result_types(then_)?;
                let else_types = self.body_result_types(else_)?;
                Ok(then_types
                    .iter()
                    .zip(&else_types)
                    .map(|(t, e)| agreed_sizes(t, e))
                    .collect())
            }
            Exp::Soac(Soac::Map { w, lam, .. } | Soac::Scan { w, lam, .. }) => {
                Ok(lam.ret.iter().map(|t| t.array_of(size_dim(w))).collect())
            }
            Exp::Soac(Soac::Reduce { lam, .. }) => Ok(lam.ret.clone()),
            Exp::Soac(Soac::Hist { dest, .. } | Soac::Scatter { dest, .. }) => {
                dest.iter().map(var).collect()
            }
            Exp::Loop { params, form, .. } => {
                let mut inner: HashSet<Var> = params.iter().map(|p| p.var).collect();
                if let crate::LoopForm::For { i, .. } = form {
                    inner.insert(*i);
                }
                Ok(params.iter().map(|p| forget(&p.ty, &inner)).collect())
            }
            Exp::WithAcc { inputs, lam } => {
                let mut types = inputs
                    .iter()
                    .map(|input| var(&input.array))
                    .collect::<Result<Vec<_>, _>>()?;
                types.extend(lam.ret.iter().skip(inputs.len()).cloned());
                Ok(types)
            }
            Exp::UpdateAcc { acc, .. } => one(var(acc)?),
            Exp::Jvp { lam, .. } => Ok(lam.ret.iter().chain(&lam.ret).cloned().collect()),
            Exp::Vjp { lam, .. } => Ok(lam
                .ret
                .iter()
                .cloned()
                .chain(lam.params.iter().map(|p| p.ty.clone()))
                .collect()),
            Exp::WithVjp { lam, .. } => Ok(lam.ret.clone()),
            Exp::Apply(..) => not_inferred("a call"),
        }
    }

    /// The types of a body's results outside it: sizes bound inside the
    /// body are existential.
    fn body_result_types(&self, body: &Body) -> Result<Vec<Type>, InferError> {
        let mut inner = HashSet::new();
        visit::for_each_var(
            body,
            |_, _| {},
            |v| {
                inner.insert(v);
            },
        );
        body.result
            .iter()
            .map(|a| Ok(forget(&self.atom_type(a)?, &inner)))
            .collect()
    }

    /// `let v: ty = exp`.
    pub fn bind1(&mut self, name: &str, ty: Type, exp: Exp) -> Var {
        self.bind(name, vec![ty], exp)[0]
    }

    /// A statement that binds nothing (an assertion).
    pub fn effect(&mut self, exp: Exp) {
        let span = self.span;
        self.push(Stm {
            pat: vec![],
            exp,
            span,
        });
    }

    /// Opens a nested body (an `if` branch, a loop body, a lambda body).
    pub fn begin(&mut self) {
        self.stack.push(vec![]);
    }

    /// Closes the innermost body with its result atoms.
    pub fn end(&mut self, result: Vec<Atom>) -> Body {
        let stms = self.stack.pop().unwrap_or_default();
        if self.stack.is_empty() {
            self.stack.push(vec![]);
        }
        Body { stms, result }
    }

    /// Depth of open bodies (1 at the top level of the function).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    // ---- typed scalar operations ---------------------------------------

    /// `a op b` (the result has the operands' type).
    pub fn binop(&mut self, op: BinOp, a: Atom, b: Atom) -> Result<Atom, UnknownVariable> {
        let t = self.atom_type(&a)?.elem();
        Ok(Atom::Var(self.bind1(
            "b",
            Type::Prim(t),
            Exp::BinOp(op, a, b),
        )))
    }

    /// `a op b` for a comparison (a `bool`).
    pub fn cmp(&mut self, op: CmpOp, a: Atom, b: Atom) -> Atom {
        Atom::Var(self.bind1("c", Type::Prim(PrimType::Bool), Exp::CmpOp(op, a, b)))
    }

    /// `op a`.
    pub fn unop(&mut self, op: UnOp, a: Atom) -> Result<Atom, UnknownVariable> {
        let t = unop_result(op, self.atom_type(&a)?.elem());
        Ok(Atom::Var(self.bind1("u", Type::Prim(t), Exp::UnOp(op, a))))
    }

    /// `op(a, b, c)`.
    pub fn ternop(
        &mut self,
        op: TernOp,
        a: Atom,
        b: Atom,
        c: Atom,
    ) -> Result<Atom, UnknownVariable> {
        let t = self.atom_type(&a)?.elem();
        Ok(Atom::Var(self.bind1(
            "t",
            Type::Prim(t),
            Exp::TernOp(op, a, b, c),
        )))
    }

    /// A conversion (nothing is bound when it converts a type to itself).
    pub fn conv(&mut self, op: ConvOp, a: Atom) -> Atom {
        let (from, to) = match op {
            ConvOp::Convert(f, t) | ConvOp::BitCast(f, t) => (f, t),
        };
        if from == to {
            return a;
        }
        Atom::Var(self.bind1("cv", Type::Prim(to), Exp::Conv(op, a)))
    }

    /// `if c then a else b` on two scalar atoms of one type.
    pub fn select(&mut self, c: Atom, a: Atom, b: Atom) -> Result<Atom, UnknownVariable> {
        let t = Type::Prim(self.atom_type(&a)?.elem());
        let exp = Exp::If {
            cond: c,
            then_: Body {
                stms: vec![],
                result: vec![a],
            },
            else_: Body {
                stms: vec![],
                result: vec![b],
            },
        };
        Ok(Atom::Var(self.bind1("sel", t, exp)))
    }

    /// Builds a lambda: fresh parameters of the given types (named after
    /// `name`), a body built by `f` from them, and the result types taken
    /// from the atoms `f` returns.
    pub fn lambda<E: From<UnknownVariable>>(
        &mut self,
        name: &str,
        param_types: Vec<Type>,
        f: impl FnOnce(&mut FunctionBuilder, &[Var]) -> Result<Vec<Atom>, E>,
    ) -> Result<Lambda, E> {
        let params: Vec<Param> = param_types
            .into_iter()
            .map(|t| self.param(name, t))
            .collect();
        let vars: Vec<Var> = params.iter().map(|p| p.var).collect();
        self.begin();
        let result = match f(self, &vars) {
            Ok(r) => r,
            Err(e) => {
                self.end(vec![]);
                return Err(e);
            }
        };
        let ret = result
            .iter()
            .map(|a| self.atom_type(a))
            .collect::<Result<Vec<_>, _>>();
        let body = self.end(result);
        // Sizes bound inside the lambda are unknown outside it: `?`.
        let inner: std::collections::HashSet<Var> = params
            .iter()
            .map(|p| p.var)
            .chain(body.stms.iter().flat_map(|s| s.pat.iter().map(|p| p.var)))
            .collect();
        let ret = ret?
            .into_iter()
            .map(|t| {
                t.map_dims(|d| match d {
                    crate::Dim::Var(v) if inner.contains(&v) => crate::Dim::Ext,
                    d => d,
                })
            })
            .collect();
        Ok(Lambda { params, body, ret })
    }

    /// Closes the top-level body and makes a function of it (results not
    /// unique; set [`Function::unique_ret`] afterwards if they are).
    pub fn finish_function(
        mut self,
        name: &str,
        params: Vec<Param>,
        result: Vec<Atom>,
    ) -> Result<Function, UnknownVariable> {
        while self.stack.len() > 1 {
            self.end(vec![]);
        }
        let ret = result
            .iter()
            .map(|a| self.atom_type(a))
            .collect::<Result<Vec<_>, _>>()?;
        let span = self.span;
        let body = self.end(result);
        Ok(Function {
            name: name.to_string(),
            params,
            unique_ret: vec![false; ret.len()],
            ret,
            body,
            var_names: self.vars.into_names(),
            span,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{validate_program, EntryPoint, FunId, Program};

    #[test]
    fn let_infers_result_types_from_operands() {
        let mut b = FunctionBuilder::new();
        let n = b.param("n", Type::Prim(PrimType::I64));
        let xs = b.param(
            "xs",
            Type::Array(PrimType::F32, vec![Dim::Var(n.var), Dim::Const(3)]),
        );
        let x = Atom::Var(xs.var);
        let ty = |b: &FunctionBuilder, v: Var| b.type_of(v).unwrap();
        // Scalars: exact.
        let s = b.let1("s", Exp::Size(xs.var, 0)).unwrap();
        assert_eq!(ty(&b, s), Type::Prim(PrimType::I64));
        let c = b
            .let1("c", Exp::CmpOp(CmpOp::Lt, Atom::Var(s), Atom::Var(n.var)))
            .unwrap();
        assert_eq!(ty(&b, c), Type::Prim(PrimType::Bool));
        // A row keeps its sizes; so does a copy.
        let row = b
            .let1("row", Exp::Index(xs.var, vec![DimIndex::Fix(Atom::Var(s))]))
            .unwrap();
        assert_eq!(ty(&b, row), Type::Array(PrimType::F32, vec![Dim::Const(3)]));
        let copy = b.let1("copy", Exp::Copy(xs.var)).unwrap();
        assert_eq!(
            ty(&b, copy),
            Type::Array(PrimType::F32, vec![Dim::Var(n.var), Dim::Const(3)])
        );
        let slice = DimIndex::Slice {
            start: Atom::Var(s),
            len: Atom::Var(s),
            stride: Atom::Var(s),
        };
        let sliced = b
            .let1(
                "sl",
                Exp::Index(xs.var, vec![slice, DimIndex::Fix(Atom::Var(s))]),
            )
            .unwrap();
        // A slice's dimension is its length.
        assert_eq!(
            ty(&b, sliced),
            Type::Array(PrimType::F32, vec![Dim::Var(s)])
        );
        let rep = b.let1("rep", Exp::Replicate(Atom::Var(n.var), x)).unwrap();
        assert_eq!(
            ty(&b, rep),
            Type::Array(
                PrimType::F32,
                vec![Dim::Var(n.var), Dim::Var(n.var), Dim::Const(3)]
            )
        );
        let three = Atom::Const(crate::PrimValue::I64(3));
        let iota = b
            .let1(
                "iota",
                Exp::Iota {
                    n: three,
                    start: Atom::Const(crate::PrimValue::I64(0)),
                    step: Atom::Const(crate::PrimValue::I64(1)),
                    ty: PrimType::I64,
                },
            )
            .unwrap();
        assert_eq!(
            ty(&b, iota),
            Type::Array(PrimType::I64, vec![Dim::Const(3)])
        );
        // A rearrangement permutes the dimensions.
        let columns = b
            .let1("columns", Exp::Rearrange(vec![1, 0], xs.var))
            .unwrap();
        assert_eq!(
            ty(&b, columns),
            Type::Array(PrimType::F32, vec![Dim::Const(3), Dim::Var(n.var)])
        );
        assert!(matches!(
            b.let1("bad", Exp::Rearrange(vec![2, 0], xs.var)),
            Err(InferError::NotInferred { .. })
        ));
        // An `if` keeps the sizes its branches agree on; sizes bound inside
        // a branch are existential.
        b.begin();
        let inner = b.let1("k", Exp::Size(xs.var, 0)).unwrap();
        let fresh = b
            .let1("fresh", Exp::Replicate(Atom::Var(inner), Atom::Var(row)))
            .unwrap();
        let then_ = b.end(vec![Atom::Var(fresh)]);
        b.begin();
        let else_ = b.end(vec![x]);
        let branch = b
            .let1(
                "branch",
                Exp::If {
                    cond: Atom::Var(c),
                    then_,
                    else_,
                },
            )
            .unwrap();
        assert_eq!(
            ty(&b, branch),
            Type::Array(PrimType::F32, vec![Dim::Ext, Dim::Const(3)])
        );
        // Several results, and expressions the builder cannot type.
        let both = b.let_("a", Exp::Atoms(vec![Atom::Var(s), x])).unwrap();
        assert_eq!(both.len(), 2);
        assert!(matches!(
            b.let1("f", Exp::Apply(FunId(0), vec![])),
            Err(InferError::NotInferred {
                construct: "a call"
            })
        ));
        assert_eq!(
            b.let1("bad", Exp::Copy(Var(99))),
            Err(InferError::UnknownVariable(UnknownVariable(Var(99))))
        );
    }

    #[test]
    fn let_existential_forgets_size_variables_only() {
        let mut b = FunctionBuilder::new();
        let n = b.param("n", Type::Prim(PrimType::I64));
        let xs = b.param(
            "xs",
            Type::Array(PrimType::F64, vec![Dim::Var(n.var), Dim::Const(2)]),
        );
        let copy = b.let1_existential("copy", Exp::Copy(xs.var)).unwrap();
        assert_eq!(
            b.type_of(copy).unwrap(),
            Type::Array(PrimType::F64, vec![Dim::Ext, Dim::Const(2)])
        );
        let both = b
            .let_existential(
                "both",
                Exp::Atoms(vec![Atom::Var(xs.var), Atom::Var(n.var)]),
            )
            .unwrap();
        assert_eq!(
            b.type_of(both[0]).unwrap(),
            Type::Array(PrimType::F64, vec![Dim::Ext, Dim::Const(2)])
        );
        assert_eq!(b.type_of(both[1]).unwrap(), Type::Prim(PrimType::I64));
        assert!(matches!(
            b.let1_existential("two", Exp::Atoms(vec![Atom::Var(n.var), Atom::Var(n.var)])),
            Err(InferError::NotInferred { .. })
        ));
    }

    #[test]
    fn unknown_variable_is_an_error() {
        let t = VarTable::new();
        assert_eq!(t.type_of(Var(3)), Err(UnknownVariable(Var(3))));
    }

    #[test]
    fn table_of_function_knows_every_binder() {
        let mut b = FunctionBuilder::new();
        let xs = b.param("xs", Type::Array(PrimType::F64, vec![crate::Dim::Const(4)]));
        let lam = b
            .lambda::<UnknownVariable>("x", vec![Type::Prim(PrimType::F64)], |b, ps| {
                let y = b.binop(BinOp::Add, Atom::Var(ps[0]), Atom::Var(ps[0]))?;
                Ok(vec![y])
            })
            .unwrap();
        let lam_param = lam.params[0].var;
        let ys = b.bind1(
            "ys",
            Type::Array(PrimType::F64, vec![crate::Dim::Const(4)]),
            Exp::Soac(crate::Soac::Map {
                w: Atom::Const(crate::PrimValue::I64(4)),
                lam,
                arrs: vec![xs.var],
            }),
        );
        let f = b
            .finish_function("double", vec![xs], vec![Atom::Var(ys)])
            .unwrap();
        let prog = Program {
            functions: vec![f],
            entries: vec![EntryPoint {
                name: "double".into(),
                fun: FunId(0),
                param_arity: vec![1],
                result_arity: vec![1],
                signature: None,
            }],
            ..Default::default()
        };
        validate_program(&prog).unwrap();
        let t = VarTable::of_function(&prog.functions[0]);
        assert_eq!(t.type_of(lam_param).unwrap(), &Type::Prim(PrimType::F64));
        assert_eq!(t.type_of(ys).unwrap().rank(), 1);
        let mut t = t;
        let fresh = t.fresh_like(lam_param).unwrap();
        assert_eq!(fresh.0 as usize, prog.functions[0].var_names.len());
        assert_eq!(t.name(fresh), format!("x_{}", fresh.0));
    }

    #[test]
    fn typed_operations_give_result_types() {
        let mut b = FunctionBuilder::new();
        let x = b.param("x", Type::Prim(PrimType::F32));
        let n = b.unop(UnOp::IsNan, Atom::Var(x.var)).unwrap();
        assert_eq!(b.atom_type(&n).unwrap(), Type::Prim(PrimType::Bool));
        let c = b.conv(
            ConvOp::Convert(PrimType::F32, PrimType::F64),
            Atom::Var(x.var),
        );
        assert_eq!(b.atom_type(&c).unwrap(), Type::Prim(PrimType::F64));
        let same = b.conv(
            ConvOp::Convert(PrimType::F32, PrimType::F32),
            Atom::Var(x.var),
        );
        assert_eq!(same, Atom::Var(x.var));
        assert!(b
            .binop(BinOp::Add, Atom::Var(Var(99)), Atom::Var(x.var))
            .is_err());
    }
}
