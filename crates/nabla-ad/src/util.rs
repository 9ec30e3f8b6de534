//! Helpers shared by forward and reverse mode: types and zeros.

use crate::{unsupported, AdError};
use nabla_ir::builder::{FunctionBuilder, UnknownVariable};
use nabla_ir::derivatives::{RuleAlgebra, RuleError};
use nabla_ir::{Atom, BinOp, CmpOp, ConvOp, Dim, Exp, PrimValue, Span, TernOp, Type, UnOp, Var};

/// The type of `v` (an internal error if it has none).
pub(crate) fn type_of(b: &FunctionBuilder, span: Span, v: Var) -> Result<Type, AdError> {
    b.type_of(v).map_err(|u| AdError::unknown_variable(span, u))
}

/// The type of an atom.
pub(crate) fn atom_type(b: &FunctionBuilder, span: Span, a: &Atom) -> Result<Type, AdError> {
    match a {
        Atom::Var(v) => type_of(b, span, *v),
        Atom::Const(c) => Ok(Type::Prim(c.prim_type())),
    }
}

/// The sizes of `v`'s dimensions as atoms (constants where known, `size`
/// statements otherwise) and as dimensions.
pub(crate) fn shape_of(
    b: &mut FunctionBuilder,
    span: Span,
    v: Var,
) -> Result<Vec<(Atom, Dim)>, AdError> {
    let dims = match type_of(b, span, v)? {
        Type::Array(_, dims) => dims,
        _ => return Ok(vec![]),
    };
    let mut sizes = Vec::with_capacity(dims.len());
    for (d, dim) in dims.iter().enumerate() {
        sizes.push(match dim {
            Dim::Const(c) => (Atom::Const(PrimValue::I64(*c)), Dim::Const(*c)),
            // A size variable in scope: no need to ask the array (which a
            // later statement may have consumed).
            Dim::Var(n) => (Atom::Var(*n), Dim::Ext),
            // Adjoint and tangent arrays made here get existential
            // dimensions: they fit the primal's type wherever it is used.
            _ => {
                let n = b.let1("n", Exp::Size(v, d))?;
                (Atom::Var(n), Dim::Ext)
            }
        });
    }
    Ok(sizes)
}

/// A variable holding zeros shaped like `v` (a scalar zero constant for a
/// scalar).
pub(crate) fn zero_like(b: &mut FunctionBuilder, span: Span, v: Var) -> Result<Atom, AdError> {
    match type_of(b, span, v)? {
        Type::Prim(p) => Ok(Atom::Const(PrimValue::zero(p))),
        Type::Acc(..) => unsupported(span, "static AD does not differentiate accumulators yet"),
        Type::Array(p, _) => {
            let sizes = shape_of(b, span, v)?;
            let zero = Atom::Const(PrimValue::zero(p));
            Ok(replicated(b, "zeros", &sizes, zero, Type::Prim(p)))
        }
    }
}

/// `x` (of type `ty`) replicated over the given outer dimensions, the last
/// innermost: `replicate n₀ (… (replicate nₖ x))`, bound to variables
/// named `name`; `x` itself for none.
pub(crate) fn replicated(
    b: &mut FunctionBuilder,
    name: &str,
    sizes: &[(Atom, Dim)],
    x: Atom,
    ty: Type,
) -> Atom {
    let mut acc = x;
    let mut ty = ty;
    for (n, dim) in sizes.iter().rev() {
        ty = ty.array_of(*dim);
        acc = Atom::Var(b.bind1(name, ty.clone(), Exp::Replicate(*n, acc)));
    }
    acc
}

/// A zero shaped like the value of `a`.
pub(crate) fn zero_of(b: &mut FunctionBuilder, span: Span, a: &Atom) -> Result<Atom, AdError> {
    match a {
        Atom::Const(c) => Ok(Atom::Const(PrimValue::zero(c.prim_type()))),
        Atom::Var(v) => zero_like(b, span, *v),
    }
}

/// `t` with every variable dimension made existential (the type of a new
/// array that has the shape of a value of type `t`).
pub(crate) fn existential(t: &Type) -> Type {
    t.map_dims(|d| match d {
        Dim::Var(_) => Dim::Ext,
        d => d,
    })
}

/// Emits scalar operations as IR statements (the rule table's algebra).
pub(crate) struct Emit<'a> {
    pub(crate) b: &'a mut FunctionBuilder,
}

pub(crate) enum EmitError {
    Rule(RuleError),
    Unknown(UnknownVariable),
    Unsupported(&'static str),
}

impl From<RuleError> for EmitError {
    fn from(e: RuleError) -> EmitError {
        EmitError::Rule(e)
    }
}

impl From<UnknownVariable> for EmitError {
    fn from(e: UnknownVariable) -> EmitError {
        EmitError::Unknown(e)
    }
}

impl RuleAlgebra for Emit<'_> {
    type Value = Atom;
    type Error = EmitError;
    fn constant(&mut self, value: PrimValue) -> Result<Atom, EmitError> {
        Ok(Atom::Const(value))
    }
    fn binop(&mut self, op: BinOp, a: &Atom, b: &Atom) -> Result<Atom, EmitError> {
        Ok(self.b.binop(op, *a, *b)?)
    }
    fn unop(&mut self, op: UnOp, a: &Atom) -> Result<Atom, EmitError> {
        Ok(self.b.unop(op, *a)?)
    }
    fn ternop(&mut self, op: TernOp, a: &Atom, b: &Atom, c: &Atom) -> Result<Atom, EmitError> {
        Ok(self.b.ternop(op, *a, *b, *c)?)
    }
    fn conv(&mut self, op: ConvOp, a: &Atom) -> Result<Atom, EmitError> {
        Ok(self.b.conv(op, *a))
    }
    fn cmp(&mut self, op: CmpOp, a: &Atom, b: &Atom) -> Result<Atom, EmitError> {
        Ok(self.b.cmp(op, *a, *b))
    }
    fn polygamma(&mut self, order: u32, x: &Atom) -> Result<Atom, EmitError> {
        let op = match order {
            0 => UnOp::Digamma,
            1 => UnOp::Trigamma,
            _ => {
                return Err(EmitError::Unsupported(
                    "static AD emits polygamma functions up to trigamma (third derivatives of lgamma are left to the dynamic AD)",
                ))
            }
        };
        Ok(self.b.unop(op, *x)?)
    }
    fn decide(&self, cond: &Atom) -> Option<bool> {
        match cond {
            Atom::Const(PrimValue::Bool(x)) => Some(*x),
            _ => None,
        }
    }
    fn select(&mut self, cond: &Atom, then: &Atom, otherwise: &Atom) -> Result<Atom, EmitError> {
        if then == otherwise {
            return Ok(*then);
        }
        Ok(self.b.select(*cond, *then, *otherwise)?)
    }
}
