//! Accumulators in forward mode: a `with_acc` gets a tangent accumulator beside
//! each accumulator whose array has a tangent (the tangent of a sum of updates
//! is the sum of their tangents; of writes, the written tangents).

use super::tangents::{Forward, Tangents};
use crate::{error, unsupported, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Exp, Lambda, Param, Stm};

impl Forward<'_> {
    /// `with_acc`: a tangent accumulator beside each accumulator whose array
    /// has a tangent (the same operator: the tangent of a sum of updates is
    /// the sum of their tangents; of writes, the written tangents).
    pub(super) fn with_acc(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        inputs: Vec<nabla_ir::AccInput>,
        lam: Lambda,
    ) -> Result<(), AdError> {
        let n = inputs.len();
        let mut all_inputs = inputs.clone();
        let mut with_tangent = Vec::with_capacity(n);
        // Every accumulator gets a tangent one (zeros where its array has
        // none): the updates' values may carry tangents either way.
        for input in &inputs {
            if matches!(input.op, nabla_ir::AccOp::Lambda(..)) {
                return unsupported(self.span, "accumulators with an operator lambda");
            }
            let t = self.fresh_tangent_array(b, tans, input.array)?;
            let t = self.with_primal_sizes(b, t, input.array)?;
            all_inputs.push(nabla_ir::AccInput {
                array: t,
                op: input.op.clone(),
            });
            with_tangent.push(true);
        }
        let mut inner = tans.clone();
        let mut params = lam.params[..n].to_vec();
        for (p, &w) in lam.params[..n].iter().zip(&with_tangent) {
            if w {
                let tp = self.tangent_param(b, p);
                inner.set(p.var, Some(Atom::Var(tp.var)));
                params.push(tp);
            } else {
                inner.set(p.var, None);
            }
        }
        params.extend(lam.params[n..].iter().cloned());
        let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
        let mut ret = lam.ret[..n].to_vec();
        let mut results = body.result[..n].to_vec();
        for i in 0..n {
            if with_tangent[i] {
                match rt[i] {
                    Some(t) => results.push(t),
                    None => {
                        return error(
                            self.span,
                            "internal error: a tangent accumulator was dropped",
                        )
                    }
                }
                ret.push(self.tangent_type(&lam.ret[i]));
            }
        }
        results.extend(body.result[n..].iter().copied());
        ret.extend(lam.ret[n..].iter().cloned());
        let mut extra_with = Vec::new();
        for (i, t) in rt.iter().enumerate().skip(n) {
            if let Some(t) = *t {
                results.push(t);
                ret.push(self.tangent_type(&lam.ret[i]));
                extra_with.push(true);
            } else {
                extra_with.push(false);
            }
        }
        body.result = results;
        // Pattern: arrays, tangent arrays, extra values, their tangents.
        let mut full: Vec<Param> = pat[..n].to_vec();
        let mut tangent_of = vec![None; pat.len()];
        for i in 0..n {
            if with_tangent[i] {
                let tp = self.tangent_param(b, &pat[i]);
                tangent_of[i] = Some(tp.var);
                full.push(tp);
            }
        }
        full.extend(pat[n..].iter().cloned());
        for (k, &w) in extra_with.iter().enumerate() {
            if w {
                let tp = self.tangent_param(b, &pat[n + k]);
                tangent_of[n + k] = Some(tp.var);
                full.push(tp);
            }
        }
        b.push(Stm {
            pat: full,
            exp: Exp::WithAcc {
                inputs: all_inputs,
                lam: Lambda { params, body, ret },
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }
}
