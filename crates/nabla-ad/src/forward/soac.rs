//! The tangent rules of the SOACs (Schenck, Rønning, Henriksen and Oancea, "AD
//! for an Array Language with Nested Parallelism" (SC22), §3): `map` with a
//! lambda that also computes the tangents; `reduce`, `scan` and
//! `reduce_by_index` with their operators lifted to (primal, tangent) pairs;
//! `scatter` writing the values' tangents into the destination's.

use super::tangents::{Forward, Tangents};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Exp, Lambda, Param, Soac, Stm, Type, Var};

impl Forward<'_> {
    /// Whether a lambda reads a free variable that has a tangent.
    fn free_tangents(&self, lam: &Lambda, tans: &Tangents) -> bool {
        nabla_ir::free_vars_lambda(lam)
            .into_iter()
            .any(|v| tans.has(v))
    }

    /// An associative operator lifted to (primal, tangent) pairs: params
    /// `(a₁…aₖ, ȧ₁…ȧₖ, x₁…xₖ, ẋ₁…ẋₖ)`, results `(r₁…rₖ, ṙ₁…ṙₖ)`.
    fn lift_operator(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        lam: Lambda,
    ) -> Result<Lambda, AdError> {
        let k = lam.ret.len();
        if lam.params.len() != 2 * k {
            return error(self.span, "internal error: operator arity");
        }
        let mut inner = tans.clone();
        let mut acc_t = Vec::with_capacity(k);
        let mut elem_t = Vec::with_capacity(k);
        for i in 0..k {
            let ta = self.tangent_param(b, &lam.params[i]);
            inner.set(lam.params[i].var, Some(Atom::Var(ta.var)));
            acc_t.push(ta);
            let tx = self.tangent_param(b, &lam.params[k + i]);
            inner.set(lam.params[k + i].var, Some(Atom::Var(tx.var)));
            elem_t.push(tx);
        }
        let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
        for (i, t) in rt.into_iter().enumerate() {
            let t = match t {
                Some(t) => t,
                None => {
                    let r = body.result[i];
                    self.zero_at_end(b, &mut body, &r)?
                }
            };
            body.result.push(t);
        }
        let mut params: Vec<Param> = lam.params[..k].to_vec();
        params.extend(acc_t);
        params.extend(lam.params[k..].iter().cloned());
        params.extend(elem_t);
        let mut ret = lam.ret.clone();
        ret.extend(lam.ret.iter().map(|t| self.tangent_type(t)));
        Ok(Lambda { params, body, ret })
    }

    /// Binds the SOAC with extra tangent results and records them.
    fn bind_soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        with_tangent: &[bool],
        soac: Soac,
    ) {
        let mut full = pat.clone();
        let mut tangent_of = Vec::with_capacity(pat.len());
        for (p, &t) in pat.iter().zip(with_tangent) {
            if t {
                let tp = self.tangent_param(b, p);
                tangent_of.push(Some(tp.var));
                full.push(tp);
            } else {
                tangent_of.push(None);
            }
        }
        b.push(Stm {
            pat: full,
            exp: Exp::Soac(soac),
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tangent_of) {
            tans.set(p.var, t.map(Atom::Var));
        }
    }

    /// The tangents of a SOAC's results, by the rule of its kind (see the
    /// module documentation).
    pub(super) fn soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        soac: Soac,
    ) -> Result<(), AdError> {
        match soac {
            Soac::Map { w, lam, arrs } => {
                let mut inner = tans.clone();
                let mut params = lam.params.clone();
                let mut all_arrs = arrs.clone();
                for (p, a) in lam.params.iter().zip(&arrs) {
                    match tans.get(&Atom::Var(*a)) {
                        Some(Atom::Var(t)) => {
                            let tp = self.tangent_param(b, p);
                            inner.set(p.var, Some(Atom::Var(tp.var)));
                            params.push(tp);
                            all_arrs.push(t);
                        }
                        _ => inner.set(p.var, None),
                    }
                }
                let (mut body, rt) = self.nested_body(b, lam.body, inner)?;
                let mut ret = lam.ret.clone();
                let with: Vec<bool> = rt.iter().map(|t| t.is_some()).collect();
                for (i, t) in rt.into_iter().enumerate() {
                    if let Some(t) = t {
                        body.result.push(t);
                        ret.push(self.tangent_type(&lam.ret[i]));
                    }
                }
                let soac = Soac::Map {
                    w,
                    lam: Lambda { params, body, ret },
                    arrs: all_arrs,
                };
                self.bind_soac(b, tans, pat, &with, soac);
            }
            // Reduce and scan: the operator lifted to (primal, tangent)
            // pairs, the inputs' tangents beside the inputs.
            mut soac @ (Soac::Reduce { .. } | Soac::Scan { .. }) => {
                let (Soac::Reduce {
                    lam, neutral, arrs, ..
                }
                | Soac::Scan {
                    lam, neutral, arrs, ..
                }) = &mut soac
                else {
                    return error(self.span, "internal error: not a reduce or scan");
                };
                if arrs.iter().all(|a| !tans.has(*a)) && !self.free_tangents(lam, tans) {
                    return self.plain_soac(b, tans, pat, soac);
                }
                let (all_neutral, all_arrs) =
                    self.lifted_inputs(b, tans, std::mem::take(neutral), std::mem::take(arrs))?;
                *lam = self.lift_operator(b, tans, lam.clone())?;
                *neutral = all_neutral;
                *arrs = all_arrs;
                let with = vec![true; pat.len()];
                self.bind_soac(b, tans, pat, &with, soac);
            }
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => {
                let active = dest.iter().chain(&values).any(|a| tans.has(*a))
                    || self.free_tangents(&lam, tans);
                if !active {
                    return self.plain_soac(
                        b,
                        tans,
                        pat,
                        Soac::Hist {
                            w,
                            dest,
                            lam,
                            neutral,
                            indices,
                            values,
                        },
                    );
                }
                // Tangent destinations are prepared before the primal ones
                // are consumed.
                let mut all_dest = dest.clone();
                for d in &dest {
                    all_dest.push(self.fresh_tangent_array(b, tans, *d)?);
                }
                let mut all_neutral = neutral.clone();
                for n in &neutral {
                    all_neutral.push(self.zero_of(b, n)?);
                }
                let mut all_values = values.clone();
                for v in &values {
                    all_values.push(self.materialize_var(b, tans, *v)?);
                }
                let lam = self.lift_operator(b, tans, lam)?;
                let with = vec![true; pat.len()];
                self.bind_soac(
                    b,
                    tans,
                    pat,
                    &with,
                    Soac::Hist {
                        w,
                        dest: all_dest,
                        lam,
                        neutral: all_neutral,
                        indices,
                        values: all_values,
                    },
                );
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                if dest.iter().chain(&values).all(|a| !tans.has(*a)) {
                    return self.plain_soac(
                        b,
                        tans,
                        pat,
                        Soac::Scatter {
                            w,
                            dest,
                            indices,
                            values,
                        },
                    );
                }
                let mut all_dest = dest.clone();
                for d in &dest {
                    all_dest.push(self.fresh_tangent_array(b, tans, *d)?);
                }
                let mut all_values = values.clone();
                for v in &values {
                    all_values.push(self.materialize_var(b, tans, *v)?);
                }
                let with = vec![true; pat.len()];
                self.bind_soac(
                    b,
                    tans,
                    pat,
                    &with,
                    Soac::Scatter {
                        w,
                        dest: all_dest,
                        indices,
                        values: all_values,
                    },
                );
            }
        }
        Ok(())
    }

    /// A SOAC without tangents: its results have zero tangents.
    fn plain_soac(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        soac: Soac,
    ) -> Result<(), AdError> {
        for p in &pat {
            tans.set(p.var, None);
        }
        b.push(Stm {
            pat,
            exp: Exp::Soac(soac),
            span: self.span,
        });
        Ok(())
    }

    /// The neutral elements and input arrays of a lifted reduce/scan:
    /// primal ones, then zeros and the inputs' tangents.
    fn lifted_inputs(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        neutral: Vec<Atom>,
        arrs: Vec<Var>,
    ) -> Result<(Vec<Atom>, Vec<Var>), AdError> {
        let mut all_neutral = neutral.clone();
        for n in &neutral {
            all_neutral.push(self.zero_of(b, n)?);
        }
        let mut all_arrs = arrs.clone();
        for a in &arrs {
            all_arrs.push(self.materialize_var(b, tans, *a)?);
        }
        Ok((all_neutral, all_arrs))
    }

    /// The tangent array `t` of the array `v` with the sizes of `v`'s
    /// tangent type (reshaped where its own type names other sizes, of
    /// equal values, as a tangent made elsewhere may): the tangent
    /// accumulators inside a `with_acc` are typed after the primal ones.
    pub(super) fn with_primal_sizes(
        &mut self,
        b: &mut FunctionBuilder,
        t: Var,
        v: Var,
    ) -> Result<Var, AdError> {
        let want = self.tangent_type(&self.type_of(b, v)?);
        let have = self.type_of(b, t)?;
        let (Type::Array(_, dims), Type::Array(..)) = (&want, &have) else {
            return Ok(t);
        };
        if want == have {
            return Ok(t);
        }
        let shape = dims
            .iter()
            .enumerate()
            .map(|(d, dim)| {
                Ok(match dim {
                    nabla_ir::Dim::Const(c) => Atom::Const(nabla_ir::PrimValue::I64(*c)),
                    nabla_ir::Dim::Var(x) => Atom::Var(*x),
                    nabla_ir::Dim::Ext => Atom::Var(b.let1("n", Exp::Size(t, d))?),
                })
            })
            .collect::<Result<_, AdError>>()?;
        Ok(b.let1("tan_sized", Exp::Reshape(shape, t))?)
    }

    /// A tangent array for a destination that the statement consumes: a
    /// copy of its tangent (which may be shared), or zeros.
    pub(super) fn fresh_tangent_array(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &Tangents,
        d: Var,
    ) -> Result<Var, AdError> {
        match tans.get(&Atom::Var(d)) {
            Some(Atom::Var(t)) => Ok(b.let1("tan_copy", Exp::Copy(t))?),
            _ => match self.zero_like(b, d)? {
                Atom::Var(z) => Ok(z),
                Atom::Const(_) => error(self.span, "internal error: scalar destination"),
            },
        }
    }
}
