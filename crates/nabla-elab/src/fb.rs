//! The elaborator's function builder: nabla-ir's [`FunctionBuilder`]
//! (fresh variables with their types, a stack of open bodies) plus the
//! elaborator's own conveniences: statements take the source span, integer
//! `x + 0`-style operations are simplified away, and `size` results are
//! shared.

use nabla_ir::builder::{FunctionBuilder, UnknownVariable};
use nabla_ir::{Atom, Body, Dim, Exp, Param, PrimType, PrimValue, Span, Stm, Type, Var};

/// Builds one IR function (see the module doc).
pub(crate) struct FunBuilder {
    pub ir: FunctionBuilder,
    /// `size(v, d)` results bound in the function's top-level body (in scope
    /// everywhere after their statement), reused by [`FunBuilder::size_of`].
    sizes: std::collections::HashMap<(Var, usize), Var>,
    /// The first lookup of a variable without a type: an internal error that
    /// [`FunBuilder::check`] reports once the function is built.
    unknown: std::cell::Cell<Option<UnknownVariable>>,
}

impl FunBuilder {
    pub fn new() -> FunBuilder {
        FunBuilder {
            ir: FunctionBuilder::new(),
            sizes: Default::default(),
            unknown: std::cell::Cell::new(None),
        }
    }

    /// A fresh variable with a (display) name and type.
    pub fn var(&mut self, name: &str, ty: Type) -> Var {
        self.ir.vars.fresh(name, ty)
    }

    /// The number of variables created so far (vars numbered at or above a
    /// mark were created after it, i.e. are local to a body opened there).
    pub fn mark(&self) -> u32 {
        self.ir.vars.len() as u32
    }

    /// Sets the type of an existing variable (parameters whose sizes are
    /// known only after all parameters are bound).
    pub fn set_type(&mut self, v: Var, ty: Type) {
        self.ir.vars.set_type(v, ty);
    }

    /// The names of the function's variables, for `Function::var_names`.
    pub fn into_names(self) -> Vec<String> {
        self.ir.vars.into_names()
    }

    /// Fails if a variable without a recorded type was looked up while
    /// building (a compiler bug: never a silently defaulted type).
    pub fn check(&self) -> Result<(), UnknownVariable> {
        match self.unknown.get() {
            Some(u) => Err(u),
            None => Ok(()),
        }
    }

    /// The type of `v`. A variable without a type is recorded as an internal
    /// error (reported by [`FunBuilder::check`]); the placeholder returned
    /// meanwhile is never used in a finished function.
    pub fn var_ty(&self, v: Var) -> Type {
        match self.ir.vars.type_of(v) {
            Ok(t) => t.clone(),
            Err(u) => {
                if self.unknown.get().is_none() {
                    self.unknown.set(Some(u));
                }
                Type::Prim(PrimType::Bool)
            }
        }
    }

    pub fn atom_ty(&self, a: Atom) -> Type {
        match a {
            Atom::Var(v) => self.var_ty(v),
            Atom::Const(c) => Type::Prim(c.prim_type()),
        }
    }

    pub fn push(&mut self, pat: Vec<Param>, exp: Exp, span: Span) {
        self.ir.push(Stm { pat, exp, span });
    }

    /// Binds the expression to fresh variables of the given types.
    pub fn bind(&mut self, name: &str, tys: Vec<Type>, exp: Exp, span: Span) -> Vec<Var> {
        let pat: Vec<Param> = tys
            .into_iter()
            .map(|ty| Param::new(self.var(name, ty.clone()), ty))
            .collect();
        let vs = pat.iter().map(|p| p.var).collect();
        self.push(pat, exp, span);
        vs
    }

    /// Binds a single-valued expression.
    pub fn bind1(&mut self, name: &str, ty: Type, exp: Exp, span: Span) -> Atom {
        Atom::Var(self.bind(name, vec![ty], exp, span)[0])
    }

    /// A statement binding nothing (assertions).
    pub fn effect(&mut self, exp: Exp, span: Span) {
        self.push(vec![], exp, span);
    }

    pub fn begin(&mut self) {
        self.ir.begin();
    }

    pub fn end(&mut self, result: Vec<Atom>) -> Body {
        self.ir.end(result)
    }

    // ---- scalar helpers -------------------------------------------------

    /// `a op b`; integer `x + 0`, `x - 0`, `x * 1` are simplified to `x`
    /// (keeps sizes such as the length of `xs[0:n]` recognisably `n`).
    pub fn binop(&mut self, op: nabla_ir::BinOp, a: Atom, b: Atom, span: Span) -> Atom {
        use nabla_ir::BinOp::{Add, Mul, Sub};
        if let Atom::Const(c) = b {
            let p = c.prim_type();
            if p.is_int() && self.atom_ty(a) == Type::Prim(p) {
                let z = c == int_value(p, 0);
                let o = c == int_value(p, 1);
                if (z && matches!(op, Add | Sub)) || (o && op == Mul) {
                    return a;
                }
            }
        }
        let t = self.atom_ty(a);
        self.bind1("b", Type::Prim(t.elem()), Exp::BinOp(op, a, b), span)
    }

    pub fn cmp(&mut self, op: nabla_ir::CmpOp, a: Atom, b: Atom, span: Span) -> Atom {
        self.bind1("c", Type::Prim(PrimType::Bool), Exp::CmpOp(op, a, b), span)
    }

    /// `a` (of type `from`) converted to `to`; a constant is converted here
    /// (an index literal defaulted to `i32` becomes an `i64` constant).
    pub fn conv(&mut self, from: PrimType, to: PrimType, a: Atom, span: Span) -> Atom {
        if from == to {
            return a;
        }
        if let Atom::Const(c) = a {
            if let Ok(v) = nabla_prim::eval_conv(nabla_ir::ConvOp::Convert(from, to), c) {
                return Atom::Const(v);
            }
        }
        self.bind1(
            "cv",
            Type::Prim(to),
            Exp::Conv(nabla_ir::ConvOp::Convert(from, to), a),
            span,
        )
    }

    /// Size of dimension `d` of an array variable, as an `i64` atom (uses the
    /// statically known dimension when there is one).
    pub fn size_of(&mut self, v: Var, d: usize, span: Span) -> Atom {
        match self.var_ty(v) {
            Type::Array(_, dims) => match dims.get(d) {
                Some(Dim::Const(c)) => Atom::Const(PrimValue::I64(*c)),
                Some(Dim::Var(x)) => Atom::Var(*x),
                _ => {
                    if let Some(x) = self.sizes.get(&(v, d)) {
                        return Atom::Var(*x);
                    }
                    let top = self.ir.depth() == 1;
                    let n = self.bind1("n", Type::Prim(PrimType::I64), Exp::Size(v, d), span);
                    if let (true, Atom::Var(x)) = (top, n) {
                        self.sizes.insert((v, d), x);
                    }
                    n
                }
            },
            Type::Prim(_) | Type::Acc(..) => {
                self.bind1("n", Type::Prim(PrimType::I64), Exp::Size(v, d), span)
            }
        }
    }

    /// `if c then a else b` on single atoms of type `t`.
    pub fn select(&mut self, c: Atom, a: Atom, b: Atom, span: Span) -> Atom {
        let t = self.atom_ty(a);
        let t = Type::Prim(t.elem());
        self.bind1(
            "sel",
            t,
            Exp::If {
                cond: c,
                then_: Body {
                    stms: vec![],
                    result: vec![a],
                },
                else_: Body {
                    stms: vec![],
                    result: vec![b],
                },
            },
            span,
        )
    }
}

/// The dimension an `i64` atom denotes.
pub(crate) fn atom_dim(a: Atom) -> Dim {
    match a {
        Atom::Var(v) => Dim::Var(v),
        // A negative constant (`replicate (-2) x`) is not a size: the
        // operation fails at run time, and the type stays existential.
        Atom::Const(PrimValue::I64(c)) if c >= 0 => Dim::Const(c),
        Atom::Const(_) => Dim::Ext,
    }
}

/// Replaces dimensions that name variables numbered at or above `mark`
/// (bound inside a body that is being closed) by `Dim::Ext`.
pub(crate) fn sanitize(t: Type, mark: u32) -> Type {
    t.map_dims(|d| match d {
        Dim::Var(v) if v.0 >= mark => Dim::Ext,
        d => d,
    })
}

/// Joins the types of two branches: dimensions that differ become `Ext`.
pub(crate) fn join_ty(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Array(p, da), Type::Array(_, db)) if da.len() == db.len() => Type::Array(
            *p,
            da.iter()
                .zip(db)
                .map(|(x, y)| if x == y { *x } else { Dim::Ext })
                .collect(),
        ),
        _ => a.clone(),
    }
}

/// Zero of a primitive type (`false` for bool).
pub(crate) fn zero(p: PrimType) -> PrimValue {
    int_value(p, 0)
}

/// An integer converted to a constant of primitive type `p` (wrapping for
/// integers; exact or rounded for floats; `!= 0` for bool).
pub(crate) fn int_value(p: PrimType, v: i128) -> PrimValue {
    match p {
        PrimType::I8 => PrimValue::I8(v as i8),
        PrimType::I16 => PrimValue::I16(v as i16),
        PrimType::I32 => PrimValue::I32(v as i32),
        PrimType::I64 => PrimValue::I64(v as i64),
        PrimType::U8 => PrimValue::U8(v as u8),
        PrimType::U16 => PrimValue::U16(v as u16),
        PrimType::U32 => PrimValue::U32(v as u32),
        PrimType::U64 => PrimValue::U64(v as u64),
        PrimType::F16 => PrimValue::F16(nabla_prim::f16::from_f64(v as f64)),
        PrimType::F32 => PrimValue::F32(v as f32),
        PrimType::F64 => PrimValue::F64(v as f64),
        PrimType::Bool => PrimValue::Bool(v != 0),
    }
}

/// A float converted to a constant of primitive type `p`.
pub(crate) fn float_value(p: PrimType, v: f64) -> PrimValue {
    match p {
        PrimType::F16 => PrimValue::F16(nabla_prim::f16::from_f64(v)),
        PrimType::F32 => PrimValue::F32(v as f32),
        PrimType::F64 => PrimValue::F64(v),
        p => int_value(p, v as i128),
    }
}

pub(crate) fn i64c(v: i64) -> Atom {
    Atom::Const(PrimValue::I64(v))
}

pub(crate) fn boolc(b: bool) -> Atom {
    Atom::Const(PrimValue::Bool(b))
}
