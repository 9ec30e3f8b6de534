//! The first-order scalar fast path of AD mode.
//!
//! Jensen 2024, §4.2, measures the cost of AD on a loop of scalar primitives
//! (×2.6 for `jvp`, ×2.1 for `vjp` over the primal in the Futhark
//! interpreter). In nabla the generic path ([`AdState::prim`]) clones the
//! operands' AD values out of their slots, finds their level, evaluates the
//! derivative rule on boxed [`PrimValue`]s and moves the result back — a
//! few hundred nanoseconds per statement. This module handles the common
//! case directly on the slots:
//!
//! * every operand is a constant, a plain scalar, or an *inline* first-order
//!   scalar of one level `l` ([`V::DualS`]: an unboxed `(primal, tangent)`
//!   pair; [`V::RevS`]: an unboxed `(primal, node)` pair), read in place
//!   without cloning;
//! * the primal is computed with the plain evaluator's scalar operations
//!   (`scalar.rs`, so results are bit-identical to the primal path);
//! * for `f32`/`f64` operands the partial derivatives of the common
//!   operators are evaluated natively ([`super::partials::float_partials`], with exactly the
//!   formulas of nabla-ir's derivative table, which reuse the primal
//!   result: `exp' = exp a`, `sqrt' = 1/(2·sqrt a)`, `tanh' = 1 − tanh² a`);
//!   all other operators take their partials from the generic rules
//!   evaluated on plain scalars (`rules::deriv_plain`: nabla-ir's table);
//! * forward mode stores `Σ ∂ᵢ·ṫᵢ` inline; reverse mode records one
//!   [`Entry::Partials`] — the partials themselves (as `f64`, exact for
//!   `f32`) and the operand nodes — so the sweep is a multiply-add per
//!   operand with no rule re-evaluation (Jensen 2024, §3.2 stores the operation
//!   and its operands; storing the partials is the usual tape design of
//!   operator-overloading AD tools).
//!
//! Nested AD (operands whose primals are themselves AD values, or operands of
//! different levels) and non-float types other than comparisons fall back to
//! the generic path, which differentiates the rules themselves.

use super::partials::{partials_as, Ds, Fl};
use super::rules::AdOp;
use super::tape::Entry;
use super::value::V;
use super::Level;
use super::NONE;
use crate::eval::{err, Interp, Res};
use crate::scalar;
use nabla_ir::{Atom, Exp, Stm};
use nabla_prim::PrimValue;
use nabla_values::Value;

/// A scalar operand read in place: plain, or inline AD of a level.
#[derive(Clone, Copy)]
enum Sc {
    Plain(PrimValue),
    Fwd(u32, PrimValue, PrimValue),
    Rev(u32, PrimValue, u32),
}

impl Sc {
    #[inline(always)]
    fn primal(self) -> PrimValue {
        match self {
            Sc::Plain(p) | Sc::Fwd(_, p, _) | Sc::Rev(_, p, _) => p,
        }
    }
    #[inline(always)]
    fn level(self) -> u32 {
        match self {
            Sc::Plain(_) => 0,
            Sc::Fwd(l, ..) | Sc::Rev(l, ..) => l,
        }
    }
    fn to_v(self) -> V {
        match self {
            Sc::Plain(p) => V::prim(p),
            Sc::Fwd(lvl, p, t) => V::DualS { lvl, p, t },
            Sc::Rev(lvl, p, node) => V::RevS { lvl, p, node },
        }
    }
}

/// Reads a scalar operand without cloning (`None`: an array or a nested AD value).
#[inline(always)]
fn peek(s: &[Value], ad: &[Option<V>], a: &Atom) -> Option<Sc> {
    match a {
        Atom::Const(c) => Some(Sc::Plain(*c)),
        Atom::Var(v) => {
            let i = v.0 as usize;
            match ad.get(i)? {
                None => match s.get(i)? {
                    Value::Prim(p) => Some(Sc::Plain(*p)),
                    Value::Array(_) => None,
                },
                Some(V::DualS { lvl, p, t }) => Some(Sc::Fwd(*lvl, *p, *t)),
                Some(V::RevS { lvl, p, node }) => Some(Sc::Rev(*lvl, *p, *node)),
                Some(_) => None,
            }
        }
    }
}

impl<'p> Interp<'p> {
    /// Evaluates a scalar statement (`BinOp`, `UnOp`, `CmpOp`, `Conv`) in AD
    /// mode when its operands are plain or inline first-order scalars of one
    /// level. `None`: not applicable (the caller takes the generic path).
    #[inline]
    pub(crate) fn ad_fast_scalar(
        &mut self,
        s: &mut [Value],
        ad: &mut [Option<V>],
        stm: &Stm,
    ) -> Option<Res<()>> {
        let [pat] = stm.pat.as_slice() else {
            return None;
        };
        let out = pat.var.0 as usize;
        let (op, xs, n) = match &stm.exp {
            Exp::BinOp(o, a, b) => (AdOp::Bin(*o), [peek(s, ad, a)?, peek(s, ad, b)?], 2),
            Exp::UnOp(o, a) => {
                let x = peek(s, ad, a)?;
                (AdOp::Un(*o), [x, x], 1)
            }
            Exp::Conv(o, a) => {
                let x = peek(s, ad, a)?;
                (AdOp::Conv(*o), [x, x], 1)
            }
            Exp::If { cond, then_, else_ } => {
                let c = match peek(s, ad, cond)? {
                    Sc::Plain(PrimValue::Bool(c)) => c,
                    _ => return None,
                };
                let body = if c { then_ } else { else_ };
                let [res] = body.result.as_slice() else {
                    return None;
                };
                return Some(self.fast_if(s, ad, out, body, res));
            }
            Exp::CmpOp(o, a, b) => {
                // Comparisons are not differentiated: a plain bool.
                let (x, y) = (peek(s, ad, a)?.primal(), peek(s, ad, b)?.primal());
                let r = match scalar::cmpop(*o, x, y) {
                    Ok(r) => r,
                    Err(e) => return Some(err(e)),
                };
                return Some(self.fast_put(s, ad, out, V::prim(r)));
            }
            _ => return None,
        };
        let xs = &xs[..n];
        if self.is_primal_only(out) {
            self.stats.primal_only_scalars += 1;
            return Some(self.primal_scalar(s, ad, out, op, xs));
        }
        let mut l = 0;
        for x in xs {
            l = l.max(x.level());
        }
        if l == 0 {
            return None;
        }
        let mut ps = [PrimValue::Bool(false); 2];
        for (p, x) in ps.iter_mut().zip(xs) {
            if x.level() != 0 && x.level() != l {
                return None;
            }
            *p = x.primal();
        }
        let ps = &ps[..n];
        let r = match op {
            AdOp::Bin(o) => match scalar::fast_binop(o, ps[0], ps[1]) {
                Some(r) => r,
                None => match scalar::binop(o, ps[0], ps[1]) {
                    Ok(r) => r,
                    Err(e) => return Some(err(e)),
                },
            },
            AdOp::Un(o) => match scalar::unop(o, ps[0]) {
                Ok(r) => r,
                Err(e) => return Some(err(e)),
            },
            _ => return Some(self.fast_generic(s, ad, out, op, xs, ps, l)),
        };
        let d = match r {
            PrimValue::F64(_) => partials_as::<f64>(op, ps, r),
            PrimValue::F32(_) => partials_as::<f32>(op, ps, r),
            _ => None,
        };
        let d = match d {
            Some(Ok(Some(d))) => d,
            Some(Ok(None)) => return Some(self.fast_put(s, ad, out, V::prim(r))),
            Some(Err(e)) => return Some(err(e)),
            None => return Some(self.fast_generic(s, ad, out, op, xs, ps, l)),
        };
        let x = if xs.iter().any(|x| matches!(x, Sc::Rev(..))) {
            let mut nodes = [NONE; 2];
            for ((nd, x), has) in nodes.iter_mut().zip(xs).zip(d.has) {
                if let (Sc::Rev(_, _, node), true) = (x, has) {
                    *nd = *node;
                }
            }
            let Level::Rev(tape) = &mut self.ad.levels[l as usize - 1] else {
                return Some(err("internal error: reverse value of a forward level"));
            };
            let node = match tape.push(Entry::Partials {
                f32: matches!(r, PrimValue::F32(_)),
                d: d.d,
                nodes,
            }) {
                Ok(n) => n,
                Err(e) => return Some(err(e)),
            };
            V::RevS { lvl: l, p: r, node }
        } else {
            // Forward mode: Σ ∂ᵢ·ṫᵢ over the operands of level `l`.
            let t = match r {
                PrimValue::F64(_) => tangent::<f64>(xs, &d),
                _ => tangent::<f32>(xs, &d),
            };
            V::DualS { lvl: l, p: r, t }
        };
        Some(self.fast_put(s, ad, out, x))
    }

    /// An `if` with one result: runs the branch in AD mode and moves its
    /// result into slot `out` (both the plain and the AD slot, no
    /// intermediate value) when the branch bound it, as the plain
    /// evaluator's `result1` does.
    fn fast_if(
        &mut self,
        s: &mut [Value],
        ad: &mut [Option<V>],
        out: usize,
        body: &nabla_ir::Body,
        res: &Atom,
    ) -> Res<()> {
        stacker::maybe_grow(crate::RED_ZONE, crate::STACK_SEGMENT, || {
            self.ad_body(s, ad, body)
        })?;
        match res {
            Atom::Const(c) => self.fast_put(s, ad, out, V::prim(*c)),
            Atom::Var(v) => {
                let i = v.0 as usize;
                if i >= s.len() || i >= ad.len() || out >= s.len() || out >= ad.len() {
                    return err("internal error: variable out of frame");
                }
                let bound_here = |st: &Stm| st.pat.iter().any(|p| p.var == *v);
                if body.stms.last().is_some_and(bound_here) || body.stms.iter().any(bound_here) {
                    let x = ad[i].take();
                    let y = std::mem::replace(&mut s[i], crate::eval::DEAD);
                    s[out] = y;
                    ad[out] = x;
                } else {
                    let x = ad[i].clone();
                    let y = match &x {
                        None => s[i].clone(),
                        Some(_) => crate::eval::DEAD,
                    };
                    s[out] = y;
                    ad[out] = x;
                }
                Ok(())
            }
        }
    }

    /// The operation through [`super::AdState::prim`]'s first-order path.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn fast_generic(
        &mut self,
        s: &mut [Value],
        ad: &mut [Option<V>],
        out: usize,
        op: AdOp,
        xs: &[Sc],
        ps: &[PrimValue],
        l: u32,
    ) -> Res<()> {
        let vs = [xs[0].to_v(), xs[xs.len() - 1].to_v()];
        let x = self
            .ad
            .prim_inline(op, &vs[..xs.len()], ps, l)
            .map_err(|m| Box::new(crate::RuntimeError::new(m)))?;
        self.fast_put(s, ad, out, x)
    }

    /// Whether slot `out` of the current function holds a scalar whose
    /// derivative is never used (`usage.rs`).
    #[inline(always)]
    fn is_primal_only(&self, out: usize) -> bool {
        self.ad
            .primal_only
            .get(self.cur)
            .and_then(|f| f.get(out))
            .copied()
            .unwrap_or(false)
    }

    /// Evaluates a scalar operation on the operands' primals alone and
    /// stores the plain result (its derivative is never used).
    #[inline(always)]
    fn primal_scalar(
        &mut self,
        s: &mut [Value],
        ad: &mut [Option<V>],
        out: usize,
        op: AdOp,
        xs: &[Sc],
    ) -> Res<()> {
        let (a, b) = (xs[0].primal(), xs[xs.len() - 1].primal());
        let r = match op {
            AdOp::Bin(o) => match scalar::fast_binop(o, a, b) {
                Some(r) => Ok(r),
                None => scalar::binop(o, a, b),
            },
            AdOp::Un(o) => scalar::unop(o, a),
            AdOp::Conv(o) => scalar::conv(o, a),
            _ => return err("internal error: not a unary or binary scalar operation"),
        };
        match r {
            Ok(r) => self.fast_put(s, ad, out, V::prim(r)),
            Err(e) => err(e),
        }
    }

    /// Stores a scalar result in slot `i`.
    #[inline(always)]
    fn fast_put(&self, s: &mut [Value], ad: &mut [Option<V>], i: usize, x: V) -> Res<()> {
        let (Some(sl), Some(al)) = (s.get_mut(i), ad.get_mut(i)) else {
            return err("internal error: variable out of frame");
        };
        match x {
            V::Plain(v) => {
                *sl = v;
                *al = None;
            }
            x => *al = Some(x),
        }
        Ok(())
    }
}

/// `Σ ∂ᵢ·ṫᵢ` over the forward-mode operands, in the order of the generic
/// path (so the result is bit-identical).
#[inline(always)]
fn tangent<F: Fl>(xs: &[Sc], d: &Ds) -> PrimValue {
    let mut acc: Option<F> = None;
    for ((x, d), has) in xs.iter().zip(&d.d).zip(d.has) {
        if let (Sc::Fwd(_, _, t), true) = (x, has) {
            let Some(t) = F::of(*t) else { continue };
            let c = F::from_f64(*d) * t;
            acc = Some(match acc {
                None => c,
                Some(a) => a + c,
            });
        }
    }
    acc.unwrap_or(F::ZERO).wrap()
}
