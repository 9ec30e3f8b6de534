//! Interprocedural constant propagation of arguments: a scalar parameter to
//! which every call of its function passes the same integer or boolean
//! constant becomes that constant in the function's body.
//!
//! ```text
//! let (y, dy) = f_jvp_batch(n, xs, 26i64, seeds)     -- every call passes 26
//! fun f_jvp_batch (n, xs, k: i64, seeds: [n][k]f64) = { … map(k, …) … [k]f64 … }
//!   becomes
//! fun f_jvp_batch (n, xs, k: i64, seeds: [n][k]f64) = { … map(26i64, …) … [26]f64 … }
//! ```
//!
//! Every use of the parameter in the body, and every dimension it names in
//! the types of the body's statements, lambdas and loops, is replaced; the
//! parameter itself, and the function's parameter and result types, stay
//! as they are, so the checks a call makes on entry (the argument's sizes
//! against the parameters) are those of the original. The simplifier can
//! then fold what the constant decides, and the C compiler sees constant
//! trip counts in every copy of the function: GCC propagates constant
//! arguments into a function's clones itself, but not into the functions
//! it outlines for OpenMP regions, whose values arrive through a struct
//! (ht's Jacobian: the seeds of a vector-mode `jvp`, 26, became a constant
//! in the rows of the parallel vertex map, and the fused, unrolled tangent
//! loops of the sequential code came back there).
//!
//! Entry points are never changed (their arguments come from outside), nor
//! functions with no call. Floating-point constants are left alone
//! (equality of floats is not identity: `0.0` and `-0.0`, NaNs).

use nabla_ir::rewrite::Substitution;
use nabla_ir::visit::for_each_stm;
use nabla_ir::{Atom, Exp, PrimValue, Program, Type};

/// What the calls seen so far pass for one parameter.
#[derive(Clone, Copy, PartialEq)]
enum Seen {
    /// No call yet.
    Nothing,
    /// Always this constant.
    Constant(PrimValue),
    /// Different constants, or a variable.
    Varies,
}

/// Whether a constant may replace a parameter: integers and booleans.
fn replaceable(v: &PrimValue) -> bool {
    v.prim_type().is_int() || matches!(v, PrimValue::Bool(_))
}

/// Runs the pass on every function of `prog`; returns whether a body
/// changed.
pub fn constant_args(prog: &mut Program) -> bool {
    let mut seen: Vec<Vec<Seen>> = prog
        .functions
        .iter()
        .map(|f| vec![Seen::Nothing; f.params.len()])
        .collect();
    for f in &prog.functions {
        for_each_stm(&f.body, &mut |s| {
            let Exp::Apply(g, args) = &s.exp else { return };
            let Some(params) = seen.get_mut(g.0 as usize) else {
                return;
            };
            for (slot, arg) in params.iter_mut().zip(args) {
                *slot = match (*slot, arg) {
                    (Seen::Varies, _) | (_, Atom::Var(_)) => Seen::Varies,
                    (Seen::Nothing, Atom::Const(c)) => Seen::Constant(*c),
                    (Seen::Constant(old), Atom::Const(c)) if old == *c => Seen::Constant(old),
                    (Seen::Constant(_), Atom::Const(_)) => Seen::Varies,
                };
            }
        });
    }
    for e in &prog.entries {
        if let Some(params) = seen.get_mut(e.fun.0 as usize) {
            params.fill(Seen::Varies);
        }
    }
    let mut changed = false;
    for (f, seen) in prog.functions.iter_mut().zip(&seen) {
        let mut substitution = Substitution::with_capacity(0);
        for (p, s) in f.params.iter().zip(seen) {
            if let (Type::Prim(t), Seen::Constant(c)) = (&p.ty, s) {
                if replaceable(c) && c.prim_type() == *t {
                    substitution.set(p.var, Atom::Const(*c));
                }
            }
        }
        changed |= substitution.apply(&mut f.body);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use nabla_ir::{Body, Var};

    #[test]
    fn only_integers_and_booleans_replace_parameters() {
        assert!(replaceable(&PrimValue::I64(26)));
        assert!(replaceable(&PrimValue::U8(3)));
        assert!(replaceable(&PrimValue::Bool(true)));
        assert!(!replaceable(&PrimValue::F64(0.0)));
    }

    #[test]
    fn the_substitution_replaces_the_parameter_and_says_so() {
        // The pass applies its substitution with Substitution::apply: a
        // use of the parameter becomes the constant, and a second
        // application changes nothing (the pass's fixpoint ends).
        let mut body = Body {
            stms: Vec::new(),
            result: vec![Atom::Var(Var(0))],
        };
        let mut s = Substitution::with_capacity(1);
        s.set(Var(0), Atom::Const(PrimValue::I64(4)));
        assert!(s.apply(&mut body));
        assert!(body.result[0] == Atom::Const(PrimValue::I64(4)));
        assert!(!s.apply(&mut body));
    }
}
