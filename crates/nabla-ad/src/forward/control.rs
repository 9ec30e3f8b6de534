//! The tangent rules of `if` (both branches with their tangents) and loops
//! (tangent loop parameters, found by iterating to a fixpoint) (Schenck,
//! Rønning, Henriksen and Oancea, "AD for an Array Language with Nested
//! Parallelism" (SC22), §3).

use super::tangents::{Forward, Tangents};
use crate::AdError;
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Body, Exp, LoopForm, Param, Stm};

impl Forward<'_> {
    /// `if`: both branches with their tangents; a result gets a tangent if
    /// either branch gives it one (the other returns zeros).
    pub(super) fn branch(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        cond: Atom,
        then_: Body,
        else_: Body,
    ) -> Result<(), AdError> {
        let (mut then_b, then_t) = self.nested_body(b, then_, tans.clone())?;
        let (mut else_b, else_t) = self.nested_body(b, else_, tans.clone())?;
        let mut full = pat.clone();
        let mut tangent_of = Vec::new();
        for i in 0..pat.len() {
            if then_t[i].is_none() && else_t[i].is_none() {
                tangent_of.push(None);
                continue;
            }
            let tt = match then_t[i] {
                Some(t) => t,
                None => {
                    let r = then_b.result[i];
                    self.zero_at_end(b, &mut then_b, &r)?
                }
            };
            let et = match else_t[i] {
                Some(t) => t,
                None => {
                    let r = else_b.result[i];
                    self.zero_at_end(b, &mut else_b, &r)?
                }
            };
            then_b.result.push(tt);
            else_b.result.push(et);
            let tp = self.tangent_param(b, &pat[i]);
            tangent_of.push(Some(tp.var));
            full.push(tp);
        }
        b.push(Stm {
            pat: full,
            exp: Exp::If {
                cond,
                then_: then_b,
                else_: else_b,
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }

    /// A loop: tangent loop parameters for every parameter whose tangent can
    /// be non-zero (found by iterating until the set is stable: a parameter
    /// with a zero initial tangent may get one from the body).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn loop_(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        params: Vec<Param>,
        init: Vec<Atom>,
        form: LoopForm,
        body: Body,
    ) -> Result<(), AdError> {
        let n = params.len();
        let mut active: Vec<bool> = init.iter().map(|a| tans.get(a).is_some()).collect();
        let (new_body, tangent_params) = loop {
            let mut inner = tans.clone();
            let mut tps: Vec<Option<Param>> = Vec::with_capacity(n);
            for (i, p) in params.iter().enumerate() {
                if active[i] {
                    let mut tp = self.tangent_param(b, p);
                    tp.unique = p.unique;
                    inner.set(p.var, Some(Atom::Var(tp.var)));
                    tps.push(Some(tp));
                } else {
                    inner.set(p.var, None);
                    tps.push(None);
                }
            }
            if let LoopForm::For { i, .. } = &form {
                inner.set(*i, None);
            }
            let (nb, rt) = self.nested_body(b, body.clone(), inner)?;
            let mut grew = false;
            for i in 0..n {
                if rt[i].is_some() && !active[i] {
                    active[i] = true;
                    grew = true;
                }
            }
            if !grew {
                break ((nb, rt), tps);
            }
        };
        let (mut new_body, result_tangents) = new_body;
        let mut all_params = params.clone();
        let mut all_init = init.clone();
        let mut full = pat.clone();
        let mut tangent_of = vec![None; n];
        for i in 0..n {
            let Some(tp) = &tangent_params[i] else {
                continue;
            };
            let rt = match result_tangents[i] {
                Some(t) => t,
                None => {
                    let r = new_body.result[i];
                    self.zero_at_end(b, &mut new_body, &r)?
                }
            };
            new_body.result.push(rt);
            all_params.push(tp.clone());
            let it = match tans.get(&init[i]) {
                Some(Atom::Var(t)) if tp.unique => {
                    // A unique loop parameter may be consumed by the body:
                    // give it its own copy of the tangent.
                    Atom::Var(b.let1("tan_copy", Exp::Copy(t))?)
                }
                Some(t) => t,
                None => self.zero_of(b, &init[i])?,
            };
            all_init.push(it);
            let out = self.tangent_param(b, &pat[i]);
            tangent_of[i] = Some(out.var);
            full.push(out);
        }
        b.push(Stm {
            pat: full,
            exp: Exp::Loop {
                params: all_params,
                init: all_init,
                form,
                body: new_body,
            },
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
        Ok(())
    }
}
