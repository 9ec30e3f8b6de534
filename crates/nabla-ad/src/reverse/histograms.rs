//! Histograms rewritten before a `vjp`'s sweeps into histograms that the
//! reverse rules take (Bruun and Larsen's special cases are rules on scalar
//! operators):
//! - a histogram of rows whose operator is a scalar operator mapped over
//!   the rows (`reduce_by_index dest (map2 op) ne is vss`) becomes a map,
//!   over the columns, of scalar histograms (Bruun and Larsen, vectorised
//!   operators);
//! - a histogram of tuples whose operator works on each component apart
//!   (`\(a, b) (c, d) -> (a + c, b * d)`) becomes one histogram per
//!   component.
//!
//! Both compute the same values as the original, so the forward sweep and
//! the return sweep both run the rewritten code.

use super::adjoints::Reverse;
use super::operators::vectorised_operator;
use crate::AdError;
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Body, Dim, Exp, Lambda, Soac, Stm, Type, Var};
use std::collections::{HashMap, HashSet};

impl Reverse<'_> {
    /// `body` with every histogram of rows or of separable tuples in it
    /// (nested bodies too) rewritten as described in the module's
    /// documentation.
    pub(super) fn lower_histograms(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
    ) -> Result<Body, AdError> {
        // Deeply nested programs recurse deeply: grow the stack as the
        // other walks of this crate do.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            let mut stms = Vec::with_capacity(body.stms.len());
            for mut stm in body.stms {
                for nested in stm.exp.nested_bodies_mut() {
                    let taken = std::mem::take(nested);
                    *nested = self.lower_histograms(b, taken)?;
                }
                self.lower_histogram(b, stm, &mut stms)?;
            }
            Ok(Body {
                stms,
                result: body.result,
            })
        })
    }

    /// Pushes `stm` onto `out`, rewritten where it is a histogram of rows
    /// or of separable tuples.
    fn lower_histogram(
        &mut self,
        b: &mut FunctionBuilder,
        stm: Stm,
        out: &mut Vec<Stm>,
    ) -> Result<(), AdError> {
        let Exp::Soac(Soac::Hist {
            w,
            dest,
            lam,
            neutral,
            indices,
            values,
        }) = &stm.exp
        else {
            out.push(stm);
            return Ok(());
        };
        if dest.len() > 1 {
            let Some(ops) = self.separate_components(b, lam)? else {
                out.push(stm);
                return Ok(());
            };
            for (k, op) in ops.into_iter().enumerate() {
                let one = Stm {
                    pat: vec![stm.pat[k].clone()],
                    exp: Exp::Soac(Soac::Hist {
                        w: *w,
                        dest: vec![dest[k]],
                        lam: op,
                        neutral: vec![neutral[k]],
                        indices: *indices,
                        values: vec![values[k]],
                    }),
                    span: stm.span,
                };
                self.lower_histogram(b, one, out)?;
            }
            return Ok(());
        }
        let (Some(op), Atom::Var(ne)) = (vectorised_operator(lam), neutral[0]) else {
            out.push(stm);
            return Ok(());
        };
        let elem = match b.type_of(dest[0]) {
            Ok(t @ Type::Array(_, _)) if t.rank() == 2 => t.elem(),
            _ => {
                out.push(stm);
                return Ok(());
            }
        };
        let (w, dest, indices, values, span) = (*w, dest[0], *indices, values[0], stm.span);
        let column = Type::Array(elem, vec![Dim::Ext]);
        b.begin();
        let r = (|| -> Result<(), AdError> {
            let dest_columns =
                b.let1_existential("dest_columns", Exp::Rearrange(vec![1, 0], dest))?;
            let value_columns =
                b.let1_existential("value_columns", Exp::Rearrange(vec![1, 0], values))?;
            let m = b.let1("m", Exp::Size(ne, 0))?;
            let lam = b.lambda::<AdError>(
                "column",
                vec![column.clone(), Type::Prim(elem), column.clone()],
                |b, ps| {
                    // The histogram consumes its destination: a copy of
                    // the column, not a view of the map's input.
                    let d = b.let1("dest_column", Exp::Copy(ps[0]))?;
                    Ok(vec![Atom::Var(b.let1(
                        "hist",
                        Exp::Soac(Soac::Hist {
                            w,
                            dest: vec![d],
                            lam: op,
                            neutral: vec![Atom::Var(ps[1])],
                            indices,
                            values: vec![ps[2]],
                        }),
                    )?)])
                },
            )?;
            let result_columns = b.let1_existential(
                "hist_columns",
                Exp::Soac(Soac::Map {
                    w: Atom::Var(m),
                    lam,
                    arrs: vec![dest_columns, ne, value_columns],
                }),
            )?;
            b.push(Stm {
                pat: stm.pat.clone(),
                exp: Exp::Rearrange(vec![1, 0], result_columns),
                span,
            });
            Ok(())
        })();
        let emitted = b.end(vec![]);
        r?;
        out.extend(emitted.stms);
        Ok(())
    }

    /// The operator of a histogram of `k`-tuples split into `k` operators on
    /// one component each, if each component of its result depends only on
    /// that component of its two arguments (and on variables bound outside
    /// it). Each operator is a fresh copy of the statements its component
    /// needs.
    fn separate_components(
        &mut self,
        b: &mut FunctionBuilder,
        lam: &Lambda,
    ) -> Result<Option<Vec<Lambda>>, AdError> {
        let k = lam.body.result.len();
        if lam.params.len() != 2 * k {
            return Ok(None);
        }
        let params: HashMap<Var, usize> = lam
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.var, i % k))
            .collect();
        let mut ops = Vec::with_capacity(k);
        for (j, r) in lam.body.result.iter().enumerate() {
            // The statements result `j` needs, by a backward walk.
            let mut needed: HashSet<Var> = HashSet::new();
            if let Atom::Var(v) = r {
                needed.insert(*v);
            }
            let mut slice = Vec::new();
            for s in lam.body.stms.iter().rev() {
                if s.pat.iter().any(|p| needed.contains(&p.var)) {
                    needed.extend(nabla_ir::free_vars_stm(s));
                    slice.push(s.clone());
                }
            }
            if needed
                .iter()
                .any(|v| params.get(v).is_some_and(|c| *c != j))
            {
                return Ok(None);
            }
            slice.reverse();
            let one = Lambda {
                params: vec![lam.params[j].clone(), lam.params[k + j].clone()],
                body: Body {
                    stms: slice,
                    result: vec![*r],
                },
                ret: vec![lam.ret[j].clone()],
            };
            ops.push(self.fresh_lambda(b, &one)?);
        }
        Ok(Some(ops))
    }
}
