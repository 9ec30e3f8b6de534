//! Small IR builders shared by the unit tests of the printer and validator.

use crate::{Atom, Exp, Param, Stm, Type, Var};
use nabla_syntax::Span;

/// Parameter `x{v}: ty`.
pub(crate) fn p(v: u32, ty: Type) -> Param {
    Param::new(Var(v), ty)
}

/// Variable atom `x{i}`.
pub(crate) fn v(i: u32) -> Atom {
    Atom::Var(Var(i))
}

/// Statement `let pat = exp` with a default span.
pub(crate) fn stm(pat: Vec<Param>, exp: Exp) -> Stm {
    Stm {
        pat,
        exp,
        span: Span::default(),
    }
}
