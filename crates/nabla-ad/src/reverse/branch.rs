//! The rule of `if` (Schenck, Rønning, Henriksen and Oancea, "AD for an Array
//! Language with Nested Parallelism" (SC22), §4.2): the return sweep is an `if`
//! on the same condition whose branches rerun their primal code and then return
//! the adjoints of the variables free in either branch.

use super::adjoints::{bound_vars, prune_recomputed, Adjoints, Reverse};
use crate::util::{type_of, zero_like};
use crate::AdError;
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Body, Exp, Param, Stm, Var};
use std::collections::{HashMap, HashSet};

impl Reverse<'_> {
    /// `if`: each branch run again (on fresh variables) followed by its
    /// return sweep; the branches return the adjoint contributions of the
    /// free variables.
    pub(super) fn branch(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        ybar: &[Option<Atom>],
        cond: Atom,
        then_: &Body,
        else_: &Body,
    ) -> Result<(), AdError> {
        let mut free = nabla_ir::free_vars_body(then_);
        free.extend(nabla_ir::free_vars_body(else_));
        let all = self.candidates(b, free, &[])?;
        // Free arrays whose adjoints go to accumulators (inside a map): each
        // branch takes the accumulator and returns its successor.
        let (accumulated, fvs): (Vec<Var>, Vec<Var>) =
            all.into_iter().partition(|v| self.redirect.contains_key(v));
        let saved = self.redirect.clone();
        let mut recomputed = HashSet::new();
        let mut sides = Vec::with_capacity(2);
        let mut acc_results = Vec::with_capacity(2);
        for branch in [then_, else_] {
            b.begin();
            let r = self.branch_side(b, branch, ybar, &fvs, &mut recomputed);
            let body = b.end(vec![]);
            let finals: Vec<Atom> = accumulated
                .iter()
                .map(|v| Atom::Var(self.redirect[v]))
                .collect();
            self.redirect = saved.clone();
            let contributions = r?;
            sides.push((body, contributions));
            acc_results.push(finals);
        }
        let mut keep = Vec::new();
        for (k, _) in fvs.iter().enumerate() {
            if sides[0].1[k].is_some() || sides[1].1[k].is_some() {
                keep.push(k);
            }
        }
        if keep.is_empty() && accumulated.is_empty() {
            return Ok(());
        }
        let mut bodies = Vec::with_capacity(2);
        for ((mut body, contributions), finals) in sides.into_iter().zip(acc_results) {
            body.result.extend(finals);
            for &k in &keep {
                let a = match contributions[k] {
                    Some(a) => a,
                    None => {
                        b.begin();
                        let z = zero_like(b, self.span, fvs[k]);
                        body.stms.extend(b.end(vec![]).stms);
                        z?
                    }
                };
                body.result.push(a);
            }
            // The branch's primal code that its return sweep does not read
            // is not recomputed.
            prune_recomputed(&mut body, &recomputed);
            bodies.push(body);
        }
        let mut accs_out = Vec::with_capacity(accumulated.len());
        for v in &accumulated {
            let t = type_of(b, self.span, self.redirect[v])?;
            accs_out.push(Param::new(b.vars.fresh("acc", t.clone()), t));
        }
        let mut out = Vec::with_capacity(keep.len());
        for &k in &keep {
            let t = type_of(b, self.span, fvs[k])?;
            out.push(Param::new(b.vars.fresh("adj", t.clone()), t));
        }
        let else_b = bodies.pop().unwrap_or_default();
        let then_b = bodies.pop().unwrap_or_default();
        let mut pattern = accs_out.clone();
        pattern.extend(out.iter().cloned());
        for (v, p) in accumulated.iter().zip(&accs_out) {
            self.redirect.insert(*v, p.var);
        }
        b.push(Stm {
            pat: pattern,
            exp: Exp::If {
                cond,
                then_: then_b,
                else_: else_b,
            },
            span: self.span,
        });
        for (&k, p) in keep.iter().zip(&out) {
            self.add(b, adj, fvs[k], Atom::Var(p.var), true)?;
        }
        Ok(())
    }

    /// One side of [`Reverse::branch`]: emits the branch's code again and
    /// its return sweep into the open body; the contribution to each free
    /// variable. The variables the copy of the branch binds go into
    /// `recomputed`.
    fn branch_side(
        &mut self,
        b: &mut FunctionBuilder,
        branch: &Body,
        ybar: &[Option<Atom>],
        fvs: &[Var],
        recomputed: &mut HashSet<Var>,
    ) -> Result<Vec<Option<Atom>>, AdError> {
        let copy = self.fresh_copy(b, branch, HashMap::new())?;
        recomputed.extend(bound_vars(&copy.stms));
        let cks = self.forward_sweep(b, &copy.stms)?;
        let mut inner = Adjoints::default();
        for (r, y) in copy.result.iter().zip(ybar) {
            if let (Atom::Var(r), Some(y)) = (r, y) {
                self.add_shared(b, &mut inner, *r, *y)?;
            }
        }
        self.return_sweep(b, &copy.stms, &cks, &mut inner)?;
        Ok(fvs.iter().map(|v| inner.get(*v)).collect())
    }
}
