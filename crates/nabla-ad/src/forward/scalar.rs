//! The tangent rules of scalar operations (Σ ∂op/∂xᵢ · ẋᵢ, the partials from
//! the rule table shared with reverse mode; Schenck, Rønning, Henriksen and
//! Oancea, "AD for an Array Language with Nested Parallelism" (SC22), §3) and
//! of the array operations that are linear in their array (`copy`, `reshape`,
//! `rearrange`, `reverse`, `rotate`: the same operation on the tangent).

use super::tangents::{Forward, Tangents};
use crate::util::{Emit, EmitError};
use crate::{error, unsupported, AdError};
use nabla_ir::builder::{base_name, FunctionBuilder};
use nabla_ir::derivatives::{eval_partials, Derivative, ScalarOp};
use nabla_ir::{Atom, BinOp, Exp, Param, Stm, Var};

impl Forward<'_> {
    /// An operation on one array whose tangent is the same operation on the
    /// array's tangent (`copy`, `reshape`, `rearrange`, `reverse`, `rotate`).
    pub(super) fn unary_array(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: &[Param],
        v: Var,
        exp: Exp,
        on_tangent: impl Fn(Var) -> Exp,
    ) -> Result<(), AdError> {
        let t = tans.get(&Atom::Var(v));
        b.push(Stm {
            pat: pat.to_vec(),
            exp,
            span: self.span,
        });
        match t {
            // `copy`, `reverse` and `rotate` keep their operand's type: the
            // tangent's, whose sizes may be other variables (of equal
            // values) than the primal's.
            Some(Atom::Var(t)) => match on_tangent(t) {
                e @ (Exp::Copy(_) | Exp::Reverse(_) | Exp::Rotate(..)) => {
                    let name = format!("{}_tan", base_name(b.vars.name(pat[0].var)));
                    let tp = b.param(&name, self.type_of(b, t)?);
                    b.push(Stm {
                        pat: vec![tp.clone()],
                        exp: e,
                        span: self.span,
                    });
                    tans.set(pat[0].var, Some(Atom::Var(tp.var)));
                }
                e => self.bind_tangent(b, tans, &pat[0], e),
            },
            _ => tans.set(pat[0].var, None),
        }
        Ok(())
    }

    /// The tangent of a scalar operation: Σ ∂op/∂xᵢ · ẋᵢ over the operands
    /// with non-zero tangents, the partials from the shared rule table.
    pub(super) fn scalar(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: &[Param],
        op: ScalarOp,
        operands: &[Atom],
    ) -> Result<(), AdError> {
        let out = pat[0].var;
        let ts: Vec<Option<Atom>> = operands.iter().map(|x| tans.get(x)).collect();
        if ts.iter().all(|t| t.is_none()) {
            tans.set(out, None);
            return Ok(());
        }
        let t = b
            .atom_type(&operands[0])
            .map_err(|u| self.unknown(u))?
            .elem();
        let result = Atom::Var(out);
        let mut alg = Emit { b };
        let derivative = eval_partials(&mut alg, op, t, operands, Some(&result));
        let derivative = match derivative {
            Ok(d) => d,
            Err(EmitError::Unsupported(m)) => return unsupported(self.span, m),
            Err(EmitError::Unknown(u)) => return Err(self.unknown(u)),
            Err(EmitError::Rule(e)) => return error(self.span, e.to_string()),
        };
        if self.batch.is_some() {
            // Vector mode: the partials are computed once; a map over the
            // seeds combines them with each seed's tangents.
            let tangent = match derivative {
                Derivative::Constant => None,
                Derivative::Conversion { forward, .. } => match ts[0] {
                    Some(t0) => Some(self.map_over_seeds(b, vec![t0], vec![t], |b, xs| {
                        Ok(b.conv(forward, Atom::Var(xs[0])))
                    })?),
                    None => None,
                },
                Derivative::Partials(partials) => {
                    let mut inputs = Vec::new();
                    let mut factors = Vec::new();
                    for (p, dt) in partials.iter().zip(&ts) {
                        if let (Some(p), Some(dt)) = (p, dt) {
                            factors.push(*p);
                            inputs.push(*dt);
                        }
                    }
                    if inputs.is_empty() {
                        None
                    } else {
                        let types = vec![t; inputs.len()];
                        Some(self.map_over_seeds(b, inputs, types, |b, xs| {
                            let mut sum: Option<Atom> = None;
                            for (p, x) in factors.iter().zip(xs) {
                                let term = b.binop(BinOp::Mul, *p, Atom::Var(*x))?;
                                sum = Some(match sum {
                                    None => term,
                                    Some(s) => b.binop(BinOp::Add, s, term)?,
                                });
                            }
                            Ok(sum.unwrap_or(Atom::Const(nabla_ir::PrimValue::zero(t))))
                        })?)
                    }
                }
            };
            tans.set(out, tangent);
            return Ok(());
        }
        let tangent = match derivative {
            Derivative::Constant => None,
            Derivative::Conversion { forward, .. } => ts[0].map(|t0| b.conv(forward, t0)),
            Derivative::Partials(partials) => {
                let mut sum: Option<Atom> = None;
                for (p, dt) in partials.iter().zip(&ts) {
                    let (Some(p), Some(dt)) = (p, dt) else {
                        continue;
                    };
                    let term = b.binop(BinOp::Mul, *p, *dt).map_err(|u| self.unknown(u))?;
                    sum = Some(match sum {
                        None => term,
                        Some(s) => b.binop(BinOp::Add, s, term).map_err(|u| self.unknown(u))?,
                    });
                }
                sum
            }
        };
        tans.set(out, tangent);
        Ok(())
    }
}
