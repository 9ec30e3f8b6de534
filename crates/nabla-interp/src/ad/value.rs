//! AD values: the interpreter's values while a `jvp`/`vjp` is running.
//!
//! Following Jensen 2024, §3.3, a value is either a plain value (a constant for
//! every active AD call), a *dual* value of forward mode (primal and tangent)
//! or a *reverse* value (primal and the tape node that produced it), and each
//! AD value carries the **level** of the `jvp`/`vjp` call that introduced it
//! (1 for the outermost active call, 2 for one nested inside it, …). A primal
//! or tangent of a level-`l` value is itself a value of a level `< l`, so
//! nesting to any depth is a tower of wrappers; a value of a lower level meets
//! one of a higher level as a constant, which rules out perturbation
//! confusion (Jensen 2024, §3.3 Example 5, Shaikhha et al., ICFP19, §4.3 Example 4).
//!
//! Arrays stay flat: a dual array is a primal array and a tangent array of the
//! same shape; a reverse array is a primal array and *one* tape node whose
//! adjoint is an array of the same shape. Scalars whose primal (and tangent)
//! are plain are stored inline ([`V::DualS`], [`V::RevS`]) so that the common
//! first-order case allocates nothing per operation.

use nabla_prim::{PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use std::rc::Rc;

/// A value in AD mode. See the module documentation.
#[derive(Clone, Debug)]
pub(crate) enum V {
    /// A value no active AD call depends on (level 0).
    Plain(Value),
    /// A forward-mode scalar whose primal and tangent are plain.
    DualS {
        lvl: u32,
        p: PrimValue,
        t: PrimValue,
    },
    /// A reverse-mode scalar whose primal is plain.
    RevS { lvl: u32, p: PrimValue, node: u32 },
    /// Any other forward-mode value (arrays, or nested primals/tangents).
    Dual(Rc<DualV>),
    /// Any other reverse-mode value.
    Rev(Rc<RevV>),
}

/// A forward-mode value of level `lvl`: primal and tangent have the same
/// shape and element type, and levels below `lvl`.
#[derive(Clone, Debug)]
pub(crate) struct DualV {
    pub lvl: u32,
    pub p: V,
    pub t: V,
}

/// A reverse-mode value of level `lvl`: its primal (level below `lvl`) and the
/// node of the level-`lvl` tape that computed it.
#[derive(Clone, Debug)]
pub(crate) struct RevV {
    pub lvl: u32,
    pub p: V,
    pub node: u32,
}

impl V {
    /// A plain scalar.
    #[inline]
    pub fn prim(p: PrimValue) -> V {
        V::Plain(Value::Prim(p))
    }

    /// The level of the AD call this value belongs to (0 for plain values).
    #[inline]
    pub fn level(&self) -> u32 {
        match self {
            V::Plain(_) => 0,
            V::DualS { lvl, .. } | V::RevS { lvl, .. } => *lvl,
            V::Dual(d) => d.lvl,
            V::Rev(r) => r.lvl,
        }
    }

    /// A forward-mode value of level `lvl` (inline when both parts are plain scalars).
    #[inline]
    pub fn dual(lvl: u32, p: V, t: V) -> V {
        match (&p, &t) {
            (V::Plain(Value::Prim(a)), V::Plain(Value::Prim(b))) => V::DualS { lvl, p: *a, t: *b },
            _ => V::Dual(Rc::new(DualV { lvl, p, t })),
        }
    }

    /// A reverse-mode value of level `lvl` computed by tape node `node`.
    #[inline]
    pub fn rev(lvl: u32, p: V, node: u32) -> V {
        match &p {
            V::Plain(Value::Prim(a)) => V::RevS { lvl, p: *a, node },
            _ => V::Rev(Rc::new(RevV { lvl, p, node })),
        }
    }

    /// The value one level down: the primal if this value is of level `l`,
    /// the value itself (a constant for level `l`) otherwise.
    #[inline]
    pub fn primal_at(&self, l: u32) -> V {
        if self.level() != l {
            return self.clone();
        }
        match self {
            V::DualS { p, .. } | V::RevS { p, .. } => V::prim(*p),
            V::Dual(d) => d.p.clone(),
            V::Rev(r) => r.p.clone(),
            V::Plain(_) => self.clone(),
        }
    }

    /// Splits a forward-mode value into primal and tangent, without copying
    /// the arrays when this is their only reference.
    pub fn into_dual_parts(self) -> (V, V) {
        match self {
            V::DualS { p, t, .. } => (V::prim(p), V::prim(t)),
            V::Dual(d) => match Rc::try_unwrap(d) {
                Ok(d) => (d.p, d.t),
                Err(d) => (d.p.clone(), d.t.clone()),
            },
            other => unreachable!("into_dual_parts of {other:?}"),
        }
    }

    /// Splits a reverse-mode value into primal and node (see [`V::into_dual_parts`]).
    pub fn into_rev_parts(self) -> (V, u32) {
        match self {
            V::RevS { p, node, .. } => (V::prim(p), node),
            V::Rev(r) => match Rc::try_unwrap(r) {
                Ok(r) => (r.p, r.node),
                Err(r) => (r.p.clone(), r.node),
            },
            other => unreachable!("into_rev_parts of {other:?}"),
        }
    }

    /// The tangent of a forward-mode value.
    pub fn tangent(&self) -> V {
        match self {
            V::DualS { t, .. } => V::prim(*t),
            V::Dual(d) => d.t.clone(),
            other => unreachable!("tangent of {other:?}"),
        }
    }

    /// The tape node of a reverse-mode value.
    #[inline]
    pub fn node(&self) -> u32 {
        match self {
            V::RevS { node, .. } => *node,
            V::Rev(r) => r.node,
            other => unreachable!("node of {other:?}"),
        }
    }

    /// The plain value under every AD layer (Jensen 2024's `getScalarPrimal`):
    /// what non-differentiable operations (conditions, indices, sizes) see.
    pub fn strip(&self) -> Value {
        match self {
            V::Plain(v) => v.clone(),
            V::DualS { p, .. } | V::RevS { p, .. } => Value::Prim(*p),
            V::Dual(d) => d.p.strip(),
            V::Rev(r) => r.p.strip(),
        }
    }

    /// The scalar under every AD layer, if this is a scalar.
    #[inline]
    pub fn strip_prim(&self) -> Option<PrimValue> {
        match self {
            V::Plain(Value::Prim(p)) => Some(*p),
            V::Plain(Value::Array(_)) => None,
            V::DualS { p, .. } | V::RevS { p, .. } => Some(*p),
            V::Dual(d) => d.p.strip_prim(),
            V::Rev(r) => r.p.strip_prim(),
        }
    }

    /// The shape (empty for scalars).
    pub fn shape(&self) -> &[i64] {
        match self {
            V::Plain(v) => v.shape(),
            V::DualS { .. } | V::RevS { .. } => &[],
            V::Dual(d) => d.p.shape(),
            V::Rev(r) => r.p.shape(),
        }
    }

    /// The element type.
    pub fn elem(&self) -> PrimType {
        match self {
            V::Plain(v) => v.elem_type(),
            V::DualS { p, .. } | V::RevS { p, .. } => p.prim_type(),
            V::Dual(d) => d.p.elem(),
            V::Rev(r) => r.p.elem(),
        }
    }

    /// A plain zero of this value's shape and element type (`false` for
    /// `bool`): the tangent or adjoint of a constant.
    pub fn zeros_like(&self) -> V {
        zeros(self.elem(), self.shape())
    }
}

/// A plain zero value of the given element type and shape.
pub(crate) fn zeros(t: PrimType, shape: &[i64]) -> V {
    if shape.is_empty() {
        V::prim(PrimValue::zero(t))
    } else {
        V::Plain(Value::Array(ArrayValue::zeros(t, shape)))
    }
}
