//! The evaluator in AD mode: the IR executed on [`V`] values while a
//! `jvp`/`vjp` is active (Jensen 2024, §3.4, "bringing the algorithm to the
//! interpreter").
//!
//! A frame in AD mode is the plain frame (`&mut [Value]`) plus a parallel
//! slot vector of AD values: variable `v` holds `ad[v]` when that is `Some`,
//! else the plain `s[v]`. A statement whose free variables are all plain is
//! handed to the plain evaluator unchanged (so constant work inside a `jvp`
//! runs at full speed); only the others are evaluated here, with scalar
//! primitives through [`AdState::prim`] and array operations through
//! [`AdState::lin`]. Control flow (`if`, loops, `while` conditions), indices,
//! sizes and SOAC index arrays use the values stripped of every AD layer:
//! they are not differentiated (Jensen 2024, §3.1: non-differentiable operations
//! see primal values and produce constants).

use super::lin::{Lin, Reg};
use super::rules::AdOp;
use super::tape::{self, CustomOp, CustomOut, Entry, Tape};
use super::value::V;
use super::{Level, MAX_AD_DEPTH};
use crate::array::{self, int_of, int_to, Ix};
use crate::eval::{
    check_assert, check_eq_sizes, err, fill_message, soac_lambda_params, Interp, Res, SizeBind,
    DEAD,
};
use crate::scalar;
use crate::{RuntimeError, RED_ZONE, STACK_SEGMENT};
use nabla_ir::{Atom, Body, DimIndex, Exp, FunId, Lambda, LoopForm, Param, Soac, Stm, Var};
use nabla_prim::{PrimType, PrimValue};
use nabla_values::{shape_elems, ArrayValue, Value};
use std::rc::Rc;

/// The AD slots of a frame.
type AdSlots = [Option<V>];

fn lift<T>(r: Result<T, String>) -> Res<T> {
    r.map_err(|m| Box::new(RuntimeError::new(m)))
}

/// The inputs of a SOAC on AD values: each array with its row shape.
type AdInputs = Vec<(V, Rc<[i64]>)>;

impl<'p> Interp<'p> {
    /// Runs a `jvp`/`vjp` statement met by the plain evaluator: the frame
    /// gets AD slots for the duration of the call; the results are plain.
    /// (Cold and out of line: the plain evaluator's code stays as it was.)
    #[cold]
    #[inline(never)]
    pub(crate) fn exec_ad_stm(&mut self, s: &mut [Value], stm: &Stm) -> Res<()> {
        self.stats.ad_entries += 1;
        if self.ad.primal_only.is_empty() {
            self.ad.primal_only = super::usage::primal_only(self.prog, &self.frame_size);
        }
        let mut ad = self.new_ad_frame(s.len());
        let r = self.ad_exp(s, &mut ad, stm);
        let escaped = stm
            .pat
            .iter()
            .any(|p| ad.get(p.var.0 as usize).is_some_and(|x| x.is_some()));
        self.free_ad_frame(ad);
        r?;
        if escaped {
            return err("internal error: an AD value escaped its jvp/vjp");
        }
        Ok(())
    }

    // ----- slots ------------------------------------------------------------

    #[inline]
    fn ad_get(&self, s: &[Value], ad: &AdSlots, a: &Atom) -> Res<V> {
        match a {
            Atom::Const(c) => Ok(V::prim(*c)),
            Atom::Var(v) => self.ad_var(s, ad, *v),
        }
    }

    #[inline]
    fn ad_var(&self, s: &[Value], ad: &AdSlots, v: Var) -> Res<V> {
        let i = v.0 as usize;
        match ad.get(i) {
            Some(Some(x)) => Ok(x.clone()),
            Some(None) => Ok(V::Plain(s[i].clone())),
            None => err(format!("internal error: variable {} out of frame", v.0)),
        }
    }

    /// Takes a consumed variable's value out of its slot.
    fn ad_take(&self, s: &mut [Value], ad: &mut AdSlots, v: Var) -> Res<V> {
        let i = v.0 as usize;
        match ad.get_mut(i) {
            Some(slot @ Some(_)) => Ok(slot.take().expect("checked")),
            Some(None) => Ok(V::Plain(std::mem::replace(&mut s[i], DEAD))),
            None => err(format!("internal error: variable {} out of frame", v.0)),
        }
    }

    #[inline]
    fn ad_put(&self, s: &mut [Value], ad: &mut AdSlots, v: Var, x: V) -> Res<()> {
        let i = v.0 as usize;
        if i >= s.len() || i >= ad.len() {
            return err(format!("internal error: variable {} out of frame", v.0));
        }
        match x {
            V::Plain(val) => {
                s[i] = val;
                ad[i] = None;
            }
            other => {
                s[i] = DEAD;
                ad[i] = Some(other);
            }
        }
        Ok(())
    }

    #[inline]
    fn ad_bind1(&self, s: &mut [Value], ad: &mut AdSlots, pat: &[Param], x: V) -> Res<()> {
        match pat {
            [p] => self.ad_put(s, ad, p.var, x),
            _ => err(format!(
                "internal error: expression returns 1 value, pattern binds {}",
                pat.len()
            )),
        }
    }

    fn ad_bind(&self, s: &mut [Value], ad: &mut AdSlots, pat: &[Param], xs: Vec<V>) -> Res<()> {
        if pat.len() != xs.len() {
            return err(format!(
                "internal error: expression returns {} values, pattern binds {}",
                xs.len(),
                pat.len()
            ));
        }
        for (p, x) in pat.iter().zip(xs) {
            self.ad_put(s, ad, p.var, x)?;
        }
        Ok(())
    }

    fn ad_int(&self, s: &[Value], ad: &AdSlots, a: &Atom) -> Res<i64> {
        let v = self.ad_get(s, ad, a)?;
        match v.strip_prim().and_then(int_of) {
            Some(x) => Ok(x.clamp(i64::MIN as i128, i64::MAX as i128) as i64),
            None => err("internal error: expected an integer"),
        }
    }

    fn ad_bool(&self, s: &[Value], ad: &AdSlots, a: &Atom) -> Res<bool> {
        match self.ad_get(s, ad, a)?.strip_prim() {
            Some(PrimValue::Bool(b)) => Ok(b),
            _ => err("internal error: condition is not a bool"),
        }
    }

    // ----- statements -------------------------------------------------------

    /// Whether every free variable of `stm` is plain (then the plain evaluator runs it).
    fn ad_is_plain(&mut self, ad: &AdSlots, stm: &Stm) -> bool {
        let ok = |a: &Atom| match a {
            Atom::Var(v) => matches!(ad.get(v.0 as usize), Some(None)),
            Atom::Const(_) => true,
        };
        match &stm.exp {
            // An `if` runs its branch in AD mode, where each statement is
            // checked on its own: the same work as the plain evaluator for
            // plain branches, without looking up the free variables.
            Exp::If { .. } => false,
            Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => ok(a) && ok(b),
            Exp::UnOp(_, a) | Exp::Conv(_, a) => ok(a),
            Exp::TernOp(_, a, b, c) => ok(a) && ok(b) && ok(c),
            Exp::Atoms(xs) | Exp::Apply(_, xs) => xs.iter().all(ok),
            _ => {
                let key = stm as *const Stm;
                let fv = match self.ad.free_vars.get(&key) {
                    Some(fv) => fv.clone(),
                    None => {
                        let fv: Rc<[Var]> = nabla_ir::free_vars_stm(stm).into();
                        self.ad.free_vars.insert(key, fv.clone());
                        fv
                    }
                };
                fv.iter()
                    .all(|v| matches!(ad.get(v.0 as usize), Some(None)))
            }
        }
    }

    pub(crate) fn ad_body(&mut self, s: &mut [Value], ad: &mut AdSlots, body: &Body) -> Res<()> {
        for stm in &body.stms {
            if let Some(r) = self.ad_fast_scalar(s, ad, stm) {
                self.stats.fast_scalars += 1;
                if let Err(mut e) = r {
                    if e.span.is_none() {
                        e.span = Some(stm.span);
                    }
                    return Err(e);
                }
                continue;
            }
            if self.ad_is_plain(ad, stm) {
                self.exec_stm(s, stm)?;
                for p in &stm.pat {
                    if let Some(slot) = ad.get_mut(p.var.0 as usize) {
                        *slot = None;
                    }
                }
                continue;
            }
            if let Err(mut e) = self.ad_exp(s, ad, stm) {
                if e.span.is_none() {
                    e.span = Some(stm.span);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// A body's results; variables bound in the body (and not repeated among
    /// the results) are moved out of their slots, so arrays stay unshared.
    fn ad_results(&mut self, s: &mut [Value], ad: &mut AdSlots, body: &Body) -> Res<Vec<V>> {
        let key = body as *const Body;
        let mv = match self.ad.movable.get(&key) {
            Some(m) => m.clone(),
            None => {
                let m: Rc<[bool]> = body
                    .result
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match a {
                        Atom::Var(v) => {
                            !body.result[i + 1..].contains(a)
                                && body
                                    .stms
                                    .iter()
                                    .any(|st| st.pat.iter().any(|p| p.var == *v))
                        }
                        Atom::Const(_) => false,
                    })
                    .collect();
                self.ad.movable.insert(key, m.clone());
                m
            }
        };
        let mut out = Vec::with_capacity(body.result.len());
        for (a, &m) in body.result.iter().zip(mv.iter()) {
            out.push(match a {
                Atom::Var(v) if m => self.ad_take(s, ad, *v)?,
                a => self.ad_get(s, ad, a)?,
            });
        }
        Ok(out)
    }

    fn ad_prim(&mut self, op: AdOp, xs: &[V]) -> Res<V> {
        lift(self.ad.prim(op, xs))
    }

    fn ad_lin(&mut self, op: Lin, xs: Vec<V>) -> Res<V> {
        lift(self.ad.lin(&Rc::new(op), xs))
    }

    fn ad_indices(&self, s: &[Value], ad: &AdSlots, idx: &[DimIndex]) -> Res<Vec<Ix>> {
        idx.iter()
            .map(|d| match d {
                DimIndex::Fix(a) => Ok(Ix::Fix(self.ad_int(s, ad, a)?)),
                DimIndex::Slice { start, len, stride } => Ok(Ix::Slice {
                    start: self.ad_int(s, ad, start)?,
                    len: self.ad_int(s, ad, len)?,
                    stride: self.ad_int(s, ad, stride)?,
                }),
            })
            .collect()
    }

    /// Evaluates one statement in AD mode.
    pub(crate) fn ad_exp(&mut self, s: &mut [Value], ad: &mut AdSlots, stm: &Stm) -> Res<()> {
        let pat = &stm.pat;
        match &stm.exp {
            Exp::WithAcc { .. } | Exp::UpdateAcc { .. } => {
                err("accumulators (with_acc/update_acc) are not supported inside jvp/vjp by the dynamic AD")
            }
            Exp::BinOp(op, a, b) => {
                let xs = [self.ad_get(s, ad, a)?, self.ad_get(s, ad, b)?];
                let r = self.ad_prim(AdOp::Bin(*op), &xs)?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::CmpOp(op, a, b) => {
                let (x, y) = (self.ad_get(s, ad, a)?, self.ad_get(s, ad, b)?);
                let (Some(x), Some(y)) = (x.strip_prim(), y.strip_prim()) else {
                    return err("internal error: comparison of arrays");
                };
                let r = scalar::cmpop(*op, x, y).or_else(err)?;
                self.ad_bind1(s, ad, pat, V::prim(r))
            }
            Exp::UnOp(op, a) => {
                let xs = [self.ad_get(s, ad, a)?];
                let r = self.ad_prim(AdOp::Un(*op), &xs)?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::TernOp(op, a, b, c) => {
                let xs = [
                    self.ad_get(s, ad, a)?,
                    self.ad_get(s, ad, b)?,
                    self.ad_get(s, ad, c)?,
                ];
                let r = self.ad_prim(AdOp::Tern(*op), &xs)?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Conv(op, a) => {
                let xs = [self.ad_get(s, ad, a)?];
                let r = self.ad_prim(AdOp::Conv(*op), &xs)?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Atoms(atoms) => {
                let xs = atoms
                    .iter()
                    .map(|a| self.ad_get(s, ad, a))
                    .collect::<Res<Vec<_>>>()?;
                self.ad_bind(s, ad, pat, xs)
            }
            Exp::Apply(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.ad_get(s, ad, a))
                    .collect::<Res<Vec<_>>>()?;
                let rs = self.ad_call(*f, xs)?;
                self.ad_bind(s, ad, pat, rs)
            }
            Exp::If { cond, then_, else_ } => {
                let body = if self.ad_bool(s, ad, cond)? {
                    then_
                } else {
                    else_
                };
                stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.ad_body(s, ad, body))?;
                if let ([p], [a]) = (pat.as_slice(), body.result.as_slice()) {
                    // One result: no temporary vector.
                    let x = match a {
                        Atom::Var(v)
                            if body
                                .stms
                                .last()
                                .is_some_and(|st| st.pat.iter().any(|q| q.var == *v)) =>
                        {
                            self.ad_take(s, ad, *v)?
                        }
                        a => self.ad_get(s, ad, a)?,
                    };
                    return self.ad_put(s, ad, p.var, x);
                }
                let xs = self.ad_results(s, ad, body)?;
                self.ad_bind(s, ad, pat, xs)
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                self.ad_loop(s, ad, pat, params, init, form, body)
            }),
            Exp::Index(v, idx) => {
                let x = self.ad_var(s, ad, *v)?;
                if idx.is_empty() {
                    return self.ad_bind1(s, ad, pat, x);
                }
                let ix = self.ad_indices(s, ad, idx)?;
                let (shape, reg) = array::region(x.shape(), &ix).or_else(err)?;
                if let array::Region::Contiguous { start, .. } = reg {
                    if let Some(r) = self.ad_slice(&x, start, &shape)? {
                        return self.ad_bind1(s, ad, pat, r);
                    }
                }
                let reg = Reg::from_region(reg);
                let n = shape_elems(&shape).unwrap_or(0);
                let elem = x.elem();
                let r = self.ad_lin(
                    Lin::Move {
                        from: reg,
                        to: Reg::whole(n),
                        shape: shape.into(),
                        elem,
                    },
                    vec![x],
                )?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Update(v, idx, x) => {
                let ix = self.ad_indices(s, ad, idx)?;
                let xv = self.ad_get(s, ad, x)?;
                let arr = self.ad_take(s, ad, *v)?;
                let (shape, reg) = array::region(arr.shape(), &ix).or_else(err)?;
                if xv.shape() != shape.as_slice() {
                    return err(format!(
                        "size error: cannot write a value of shape {} into a slice of shape {}",
                        array::show_shape(xv.shape()),
                        array::show_shape(&shape)
                    ));
                }
                if xv.elem() != arr.elem() {
                    return err("internal error: update with a value of another type");
                }
                let n = shape_elems(&shape).unwrap_or(0);
                let r = self.ad_lin(
                    Lin::Update {
                        dst: Reg::from_region(reg),
                        src: Reg::whole(n),
                    },
                    vec![arr, xv],
                )?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::ArrayLit(atoms, row_ty) => {
                let rows = atoms
                    .iter()
                    .map(|a| self.ad_get(s, ad, a))
                    .collect::<Res<Vec<_>>>()?;
                let row: Rc<[i64]> = match rows.first() {
                    Some(r) => r.shape().into(),
                    None => self.type_shape(s, row_ty).into(),
                };
                let r = self.ad_stack(rows, row, row_ty.elem())?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Iota { .. }
            | Exp::Replicate(..)
            | Exp::Copy(_)
            | Exp::Size(..)
            | Exp::Reshape(..)
            | Exp::Rearrange(..)
            | Exp::Concat(_)
            | Exp::Rotate(..)
            | Exp::Reverse(_) => self.ad_array_exp(s, ad, stm),
            Exp::AssertEqSizes(atoms, msg) => {
                let ns = atoms
                    .iter()
                    .map(|a| self.ad_int(s, ad, a))
                    .collect::<Res<Vec<_>>>()?;
                check_eq_sizes(&ns, msg)
            }
            Exp::Assert(c, msg, xs) => {
                let ok = self.ad_bool(s, ad, c)?;
                if ok || xs.is_empty() {
                    check_assert(ok, msg)
                } else {
                    let vals = xs
                        .iter()
                        .map(|x| match self.ad_get(s, ad, x)?.strip_prim() {
                            Some(p) => Ok(p),
                            None => err("internal error: expected a scalar"),
                        })
                        .collect::<Res<Vec<_>>>()?;
                    check_assert(false, &fill_message(msg, &vals))
                }
            }
            Exp::Soac(soac) => {
                let r =
                    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.ad_soac(s, ad, pat, soac));
                for p in soac_lambda_params(soac) {
                    let i = p.var.0 as usize;
                    if i < s.len() {
                        s[i] = DEAD;
                        ad[i] = None;
                    }
                }
                r
            }
            Exp::Jvp {
                lam,
                primals,
                tangents,
            } => self.ad_jvp(s, ad, pat, lam, primals, tangents),
            Exp::Vjp {
                lam,
                primals,
                adjoints,
            } => self.ad_vjp(s, ad, pat, lam, primals, adjoints),
            Exp::WithVjp {
                lam,
                rule,
                args,
                tape,
            } => self.ad_with_vjp(s, ad, stm, lam, rule, args, *tape),
        }
    }

    /// [`Self::ad_exp`] of an array construct: `iota`, `replicate`, `copy`,
    /// `size`, and the shape changes (`reshape`, `rearrange`, `concat`,
    /// `rotate`, `reverse`).
    fn ad_array_exp(&mut self, s: &mut [Value], ad: &mut AdSlots, stm: &Stm) -> Res<()> {
        let pat = &stm.pat;
        match &stm.exp {
            Exp::Iota { n, start, step, ty } => {
                let n0 = self.ad_int(s, ad, n)?;
                if n0 < 0 {
                    return err(format!("iota: negative size {n0}"));
                }
                let st = self.ad_int(s, ad, start)? as i128;
                let sp = self.ad_int(s, ad, step)? as i128;
                let Some(buf) = crate::eval::alloc_res(array::iota(*ty, n0 as usize, st, sp))?
                else {
                    return err(format!("internal error: iota of non-integer type {ty}"));
                };
                let a = ArrayValue {
                    shape: Rc::from([n0]),
                    offset: 0,
                    buffer: buf,
                };
                self.ad_bind1(s, ad, pat, V::Plain(Value::Array(a)))
            }
            Exp::Replicate(n, x) => {
                let n0 = self.ad_int(s, ad, n)?;
                if n0 < 0 {
                    return err(format!("replicate: negative size {n0}"));
                }
                let x = self.ad_get(s, ad, x)?;
                let mut shape = vec![n0];
                shape.extend_from_slice(x.shape());
                if shape_elems(&shape).is_none() {
                    return err("replicate: array too large");
                }
                let r = self.ad_lin(Lin::Replicate { n: n0 as usize }, vec![x])?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Copy(v) => {
                let x = self.ad_var(s, ad, *v)?;
                let r = if x.shape().is_empty() {
                    x
                } else {
                    let sh: Rc<[i64]> = x.shape().into();
                    self.ad_lin(
                        Lin::Reshape {
                            shape: sh.clone(),
                            in_shape: sh,
                            copy: true,
                        },
                        vec![x],
                    )?
                };
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Size(v, d) => {
                let x = self.ad_var(s, ad, *v)?;
                let Some(&n) = x.shape().get(*d) else {
                    return err("internal error: size of a missing dimension");
                };
                self.ad_bind1(s, ad, pat, V::prim(PrimValue::I64(n)))
            }
            Exp::Reshape(dims, v) => {
                let shape = dims
                    .iter()
                    .map(|d| self.ad_int(s, ad, d))
                    .collect::<Res<Vec<i64>>>()?;
                let x = self.ad_var(s, ad, *v)?;
                let n = shape_elems(x.shape());
                if shape_elems(&shape) != n || shape.is_empty() || x.shape().is_empty() {
                    return err(format!(
                        "size error: cannot reshape an array of shape {} to shape {}",
                        array::show_shape(x.shape()),
                        array::show_shape(&shape)
                    ));
                }
                let in_shape: Rc<[i64]> = x.shape().into();
                let r = self.ad_lin(
                    Lin::Reshape {
                        shape: shape.into(),
                        in_shape,
                        copy: false,
                    },
                    vec![x],
                )?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Rearrange(perm, v) => {
                let x = self.ad_var(s, ad, *v)?;
                let rank = x.shape().len();
                let mut seen = vec![false; rank];
                let valid = perm.len() == rank
                    && perm
                        .iter()
                        .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
                if !valid {
                    return err("internal error: invalid permutation");
                }
                let in_shape: Rc<[i64]> = x.shape().into();
                let (out, pos) = array::rearrange_positions(&in_shape, perm);
                let n = pos.len();
                let elem = x.elem();
                let r = self.ad_lin(
                    Lin::Move {
                        from: Reg::Pos(pos.into()),
                        to: Reg::whole(n),
                        shape: out.into(),
                        elem,
                    },
                    vec![x],
                )?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Concat(vs) => {
                let xs = vs
                    .iter()
                    .map(|v| self.ad_var(s, ad, *v))
                    .collect::<Res<Vec<_>>>()?;
                let Some(first) = xs.first() else {
                    return err("internal error: concatenation of no arrays");
                };
                if first.shape().is_empty() {
                    return err("internal error: concatenation of scalars");
                }
                let row: Vec<i64> = first.shape()[1..].to_vec();
                let elem = first.elem();
                let mut parts = Vec::with_capacity(xs.len());
                let mut off = 0usize;
                let mut n = 0i64;
                for x in &xs {
                    if x.shape().len() != row.len() + 1 || x.shape()[1..] != row[..] {
                        return err(format!(
                            "size error: cannot concatenate arrays of shapes {} and {}",
                            array::show_shape(first.shape()),
                            array::show_shape(x.shape())
                        ));
                    }
                    let len = shape_elems(x.shape()).unwrap_or(0);
                    parts.push((Reg::Contig { start: off, len }, Rc::from(x.shape())));
                    off += len;
                    n += x.shape()[0];
                }
                let mut shape = vec![n];
                shape.extend_from_slice(&row);
                let r = self.ad_lin(
                    Lin::Embed {
                        shape: shape.into(),
                        elem,
                        parts: parts.into(),
                    },
                    xs,
                )?;
                self.ad_bind1(s, ad, pat, r)
            }
            Exp::Rotate(r, v) => {
                let r = self.ad_int(s, ad, r)?;
                let x = self.ad_var(s, ad, *v)?;
                let n = x.shape().first().copied().unwrap_or(0);
                let r = if n == 0 { 0 } else { r.rem_euclid(n) as usize };
                let n = n as usize;
                let y = self.ad_permute_rows(x, |i| (i + r) % n)?;
                self.ad_bind1(s, ad, pat, y)
            }
            Exp::Reverse(v) => {
                let x = self.ad_var(s, ad, *v)?;
                let n = x.shape().first().copied().unwrap_or(0) as usize;
                let y = self.ad_permute_rows(x, |i| n - 1 - i)?;
                self.ad_bind1(s, ad, pat, y)
            }
            _ => unreachable!("ad_exp passes only array constructs to ad_array_exp"),
        }
    }

    /// `with_vjp` in AD mode (Futhark's `with_vjp`, futhark-internals.md
    /// §2), as static AD does it: the innermost active `jvp`/`vjp` handles
    /// it. A `jvp` differentiates `lam` as usual. A `vjp` (level `l`) peels
    /// its level off the arguments and off the free variables of `lam`
    /// (which get no adjoint), runs `lam` on the rest (outer levels
    /// differentiate it as usual, as they differentiate the inlined primal
    /// of static AD), and records an [`Entry::Custom`] (the rule, the saved
    /// values, the rule's free variables) and one [`Entry::CustomOut`] per
    /// float result, which the results name.
    #[allow(clippy::too_many_arguments)]
    fn ad_with_vjp(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        stm: &Stm,
        lam: &Lambda,
        rule: &Lambda,
        args: &[Atom],
        tape: usize,
    ) -> Res<()> {
        let pat = &stm.pat;
        if lam.params.len() != args.len() || lam.body.result.len() < tape {
            return err("internal error: with_vjp with mismatched parameters and arguments");
        }
        let mut xs = args
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect::<Res<Vec<_>>>()?;
        let lam_fv = self.lambda_free_vars(lam);
        let slot_level = |ad: &AdSlots, v: Var| match ad.get(v.0 as usize) {
            Some(Some(x)) => x.level(),
            _ => 0,
        };
        // (level, the arguments' nodes on its tape): none or one.
        let mut records: Vec<(u32, Vec<u32>)> = Vec::new();
        // The free variables of `lam` whose slots were peeled, as they were.
        let mut restore: Vec<(Var, V)> = Vec::new();
        let top = self.ad.levels.len() as u32;
        if top > 0 && !self.ad.is_fwd(top) {
            for &v in lam_fv.iter() {
                if slot_level(ad, v) == top {
                    let x = self.ad_var(s, ad, v)?;
                    self.ad_put(s, ad, v, x.primal_at(top))?;
                    restore.push((v, x));
                }
            }
            let mut nodes = Vec::with_capacity(xs.len());
            for x in xs.iter_mut() {
                if x.level() == top {
                    let (p, node) =
                        std::mem::replace(x, V::prim(PrimValue::Bool(false))).into_rev_parts();
                    *x = p;
                    nodes.push(node);
                } else {
                    nodes.push(super::NONE);
                }
            }
            if nodes.iter().any(|n| *n != super::NONE) {
                records.push((top, nodes));
            }
        }
        let r = (|| {
            for (p, x) in lam.params.iter().zip(xs) {
                self.ad_put(s, ad, p.var, x)?;
            }
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.ad_body(s, ad, &lam.body))?;
            self.ad_results(s, ad, &lam.body)
        })();
        for (v, x) in restore.into_iter().rev() {
            self.ad_put(s, ad, v, x)?;
        }
        let mut rs = r?;
        if records.is_empty() {
            return self.ad_bind(s, ad, pat, rs);
        }
        let saved: Rc<[V]> = rs[..tape].into();
        let rule_rc = self
            .ad
            .custom_rules
            .entry(rule as *const Lambda)
            .or_insert_with(|| Rc::new(rule.clone()))
            .clone();
        let rule_fv = self.lambda_free_vars(rule);
        for (l, nodes) in records {
            // The rule runs in the sweep of level `l`: its free variables
            // are constants there.
            let env = rule_fv
                .iter()
                .map(|v| {
                    let mut x = self.ad_var(s, ad, *v)?;
                    while x.level() >= l && x.level() > 0 {
                        x = x.primal_at(x.level());
                    }
                    Ok((*v, x))
                })
                .collect::<Res<Vec<_>>>()?;
            let outs = rs[tape..]
                .iter()
                .map(|r| (Rc::from(r.shape()), r.elem()))
                .collect();
            let head = lift(self.ad.tape(l).push(Entry::Custom(Box::new(CustomOp {
                rule: rule_rc.clone(),
                frame: s.len(),
                fun: self.cur,
                saved: saved.iter().cloned().collect(),
                env: env.into(),
                inputs: nodes.into(),
                outs,
                span: stm.span,
            }))))?;
            for (j, r) in rs[tape..].iter_mut().enumerate() {
                let elem = r.elem();
                if !elem.is_float() {
                    continue;
                }
                let node = lift(self.ad.tape(l).push(Entry::CustomOut(Box::new(CustomOut {
                    head,
                    j: j as u32,
                    shape: r.shape().into(),
                    elem,
                }))))?;
                let p = std::mem::replace(r, V::prim(PrimValue::Bool(false)));
                *r = V::rev(l, p, node);
            }
        }
        self.ad_bind(s, ad, pat, rs)
    }

    /// The free variables of a `with_vjp`'s function or rule (cached).
    fn lambda_free_vars(&mut self, lam: &Lambda) -> Rc<[Var]> {
        self.ad
            .custom_free
            .entry(lam as *const Lambda)
            .or_insert_with(|| nabla_ir::free_vars_lambda(lam).into())
            .clone()
    }

    /// Runs the rule of a `with_vjp` in a sweep: on a fresh frame of the
    /// function it came from, with its free variables, the saved values and
    /// the results' adjoints (zero where `None` or missing); returns the
    /// arguments' adjoints.
    fn ad_custom_rule(&mut self, op: &CustomOp, mut outs: Vec<Option<V>>) -> Res<Vec<V>> {
        outs.resize(op.outs.len(), None);
        let n = op.frame;
        let mut s2 = self.new_frame(n);
        let mut ad2 = self.new_ad_frame(n);
        let saved_cur = self.cur;
        self.cur = op.fun;
        let r = (|| {
            for (v, x) in op.env.iter() {
                self.ad_put(&mut s2, &mut ad2, *v, x.clone())?;
            }
            let adjs = outs
                .into_iter()
                .zip(op.outs.iter())
                .map(|(o, (shape, elem))| o.unwrap_or_else(|| super::value::zeros(*elem, shape)));
            let vals: Vec<V> = op.saved.iter().cloned().chain(adjs).collect();
            if vals.len() != op.rule.params.len() {
                return err("internal error: with_vjp rule with the wrong number of parameters");
            }
            for (p, x) in op.rule.params.iter().zip(vals) {
                self.ad_put(&mut s2, &mut ad2, p.var, x)?;
            }
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                self.ad_body(&mut s2, &mut ad2, &op.rule.body)
            })?;
            self.ad_results(&mut s2, &mut ad2, &op.rule.body)
        })();
        self.cur = saved_cur;
        self.free_frame(s2);
        self.free_ad_frame(ad2);
        r
    }

    /// The contiguous part `start..start + |shape|` of a first-order AD
    /// array (an element or a row read by `Index`), as [`Interp::ad_row`]
    /// reads SOAC rows: a view of the primal (and tangent), and in reverse
    /// mode one [`Entry::Slice`] — no linear-operation record. `None`: not
    /// a first-order AD array (the caller takes the general path).
    fn ad_slice(&mut self, x: &V, start: usize, shape: &[i64]) -> Res<Option<V>> {
        let part = |v: &V| match v {
            V::Plain(Value::Array(a)) => Some(if shape.is_empty() {
                Value::Prim(array::get_prim(&a.buffer, a.offset + start))
            } else {
                Value::Array(ArrayValue {
                    shape: shape.into(),
                    offset: a.offset + start,
                    buffer: a.buffer.clone(),
                })
            }),
            _ => None,
        };
        match x {
            V::Dual(d) => {
                let (Some(p), Some(t)) = (part(&d.p), part(&d.t)) else {
                    return Ok(None);
                };
                Ok(Some(V::dual(d.lvl, V::Plain(p), V::Plain(t))))
            }
            V::Rev(r) => {
                let Some(p) = part(&r.p) else {
                    return Ok(None);
                };
                let shape: Rc<[i64]> = if shape.is_empty() {
                    self.ad.scalar_shape.clone()
                } else {
                    shape.into()
                };
                let node = lift(self.ad.tape(r.lvl).push(Entry::Slice {
                    src: r.node,
                    start,
                    shape,
                    elem: p.elem_type(),
                }))?;
                Ok(Some(V::rev(r.lvl, V::Plain(p), node)))
            }
            _ => Ok(None),
        }
    }

    /// Rows of `x` reordered: row `k` of the result is row `src(k)` of `x`.
    fn ad_permute_rows(&mut self, x: V, src: impl Fn(usize) -> usize) -> Res<V> {
        let in_shape: Rc<[i64]> = x.shape().into();
        let n = in_shape.first().copied().unwrap_or(0) as usize;
        let total = shape_elems(&in_shape).unwrap_or(0);
        let rs = total.checked_div(n).unwrap_or(0);
        let mut pos = Vec::with_capacity(total);
        for k in 0..n {
            let b = src(k) * rs;
            pos.extend(b..b + rs);
        }
        let elem = x.elem();
        self.ad_lin(
            Lin::Move {
                from: Reg::Pos(pos.into()),
                to: Reg::whole(total),
                shape: in_shape.clone(),
                elem,
            },
            vec![x],
        )
    }

    /// The array of `rows` (each of shape `row`).
    fn ad_stack(&mut self, rows: Vec<V>, row: Rc<[i64]>, elem: PrimType) -> Res<V> {
        let n = rows.len();
        self.ad_lin(Lin::Stack { n, row, elem }, rows)
    }

    /// Row `j` of array `x`, whose rows have shape `row` (a scalar for rank 1).
    fn ad_row(&mut self, x: &V, j: usize, row: &Rc<[i64]>) -> Res<V> {
        match x {
            V::Plain(Value::Array(a)) => {
                let rs = shape_elems(row).unwrap_or(0);
                Ok(V::Plain(if row.is_empty() {
                    Value::Prim(array::get_prim(&a.buffer, a.offset + j))
                } else {
                    Value::Array(ArrayValue {
                        shape: row.clone(),
                        offset: a.offset + j * rs,
                        buffer: a.buffer.clone(),
                    })
                }))
            }
            V::Dual(d) => {
                let p = self.ad_row(&d.p, j, row)?;
                let t = self.ad_row(&d.t, j, row)?;
                Ok(V::dual(d.lvl, p, t))
            }
            V::Rev(r) => {
                let p = self.ad_row(&r.p, j, row)?;
                let rs = shape_elems(row).unwrap_or(0);
                let node = lift(self.ad.tape(r.lvl).push(Entry::Slice {
                    src: r.node,
                    start: j * rs,
                    shape: row.clone(),
                    elem: p.elem(),
                }))?;
                Ok(V::rev(r.lvl, p, node))
            }
            _ => err("internal error: a row of a scalar"),
        }
    }

    /// The common start of `reduce` and `scan` on AD values: the width, the
    /// inputs (checked against it), the operator's arity check, and the
    /// accumulator initialised to the neutral element.
    #[allow(clippy::too_many_arguments)]
    fn ad_operator_setup(
        &self,
        s: &[Value],
        ad: &AdSlots,
        w: &Atom,
        lam: &Lambda,
        neutral: &[Atom],
        arrs: &[Var],
        what: &str,
    ) -> Res<(usize, AdInputs, Vec<V>)> {
        let w = self.ad_size(s, ad, w, what)?;
        let inputs = self.ad_inputs(s, ad, arrs, w, what)?;
        self.check_op_lambda(lam, neutral.len(), inputs.len(), what)?;
        let acc = neutral
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect::<Res<Vec<_>>>()?;
        Ok((w, inputs, acc))
    }

    /// The input arrays of a SOAC, checked to have outer size `w`, with their row shapes.
    fn ad_inputs(
        &self,
        s: &[Value],
        ad: &AdSlots,
        arrs: &[Var],
        w: usize,
        what: &str,
    ) -> Res<AdInputs> {
        arrs.iter()
            .map(|v| {
                let x = self.ad_var(s, ad, *v)?;
                let sh = x.shape();
                if sh.first().copied() != Some(w as i64) {
                    return err(format!(
                        "size error: {what}: input array {} has outer size {}, but the width is {w}",
                        self.var_name(*v),
                        sh.first().copied().unwrap_or(0)
                    ));
                }
                let row: Rc<[i64]> = sh[1..].into();
                Ok((x, row))
            })
            .collect()
    }

    // ----- calls and loops --------------------------------------------------

    /// Calls function `f` on AD arguments (plainly when all are plain).
    fn ad_call(&mut self, f: FunId, args: Vec<V>) -> Res<Vec<V>> {
        if args.iter().all(|a| matches!(a, V::Plain(_))) {
            let vs = args
                .into_iter()
                .map(|a| match a {
                    V::Plain(v) => v,
                    _ => unreachable!(),
                })
                .collect();
            return Ok(self.call(f, vs, false)?.into_iter().map(V::Plain).collect());
        }
        let prog = self.prog;
        let fi = f.0 as usize;
        let Some(fun) = prog.functions.get(fi) else {
            return err(format!("internal error: call of unknown function #{}", f.0));
        };
        if args.len() != fun.params.len() {
            return err("internal error: function called with the wrong number of arguments");
        }
        if self.depth >= crate::MAX_CALL_DEPTH {
            return err(format!(
                "call depth limit ({}) exceeded in function {} (unbounded recursion?)",
                crate::MAX_CALL_DEPTH,
                fun.name
            ));
        }
        let n = self.frame_size[fi];
        let mut s2 = self.new_frame(n);
        let mut ad2 = self.new_ad_frame(n);
        for (p, a) in fun.params.iter().zip(args) {
            self.ad_put(&mut s2, &mut ad2, p.var, a)?;
        }
        // Bind or check the parameters' sizes (as `Interp::bind_sizes`).
        for sb in &self.size_binds[fi] {
            let (param, dim) = match *sb {
                SizeBind::Var { param, dim, .. } | SizeBind::Const { param, dim, .. } => {
                    (param, dim)
                }
            };
            let pv = fun.params[param].var;
            let x = self.ad_var(&s2, &ad2, pv)?;
            let Some(&actual) = x.shape().get(dim) else {
                return err(format!(
                    "function {}: argument {} has rank {}, expected {}",
                    fun.name,
                    param + 1,
                    x.shape().len(),
                    fun.params[param].ty.rank()
                ));
            };
            let expected = match *sb {
                SizeBind::Const { size, .. } => Some(size),
                SizeBind::Var { var, .. } => match (&s2[var.0 as usize], &ad2[var.0 as usize]) {
                    (Value::Prim(PrimValue::I64(x)), None) => Some(*x),
                    _ => {
                        self.ad_put(&mut s2, &mut ad2, var, V::prim(PrimValue::I64(actual)))?;
                        None
                    }
                },
            };
            if let Some(e) = expected {
                if e != actual {
                    return err(format!(
                        "function {}: argument {} has size {} in dimension {}, but size {} was expected",
                        fun.name,
                        param + 1,
                        actual,
                        dim + 1,
                        e
                    ));
                }
            }
        }
        let saved = self.cur;
        self.cur = fi;
        self.depth += 1;
        let r = stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            self.ad_body(&mut s2, &mut ad2, &fun.body)
        });
        self.depth -= 1;
        self.cur = saved;
        let r = r
            .map_err(|mut e| {
                if e.span.is_none() {
                    e.span = Some(fun.span);
                }
                e
            })
            .and_then(|()| {
                fun.body
                    .result
                    .iter()
                    .map(|a| self.ad_get(&s2, &ad2, a))
                    .collect()
            });
        self.free_frame(s2);
        self.free_ad_frame(ad2);
        r
    }

    /// AD slots for a frame of `n` variables (reused when available).
    fn new_ad_frame(&mut self, n: usize) -> Vec<Option<V>> {
        let mut f = self.ad.frames.pop().unwrap_or_default();
        f.resize(n, None);
        f
    }

    /// Empties AD slots and keeps them for reuse.
    fn free_ad_frame(&mut self, mut f: Vec<Option<V>>) {
        f.clear();
        if self.ad.frames.len() < 64 {
            self.ad.frames.push(f);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ad_loop(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        pat: &[Param],
        params: &[Param],
        init: &[Atom],
        form: &LoopForm,
        body: &Body,
    ) -> Res<()> {
        if init.len() != params.len() || body.result.len() != params.len() {
            return err(
                "internal error: loop parameters, initial values and body results differ in number",
            );
        }
        let xs = init
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect::<Res<Vec<_>>>()?;
        for (p, x) in params.iter().zip(xs) {
            self.ad_put(s, ad, p.var, x)?;
        }
        match form {
            LoopForm::For { i, bound } => {
                let b = self.ad_get(s, ad, bound)?.strip_prim();
                let Some(b) = b else {
                    return err("internal error: loop bound is not a scalar");
                };
                let t = b.prim_type();
                let Some(n) = int_of(b) else {
                    return err("internal error: loop bound is not an integer");
                };
                let mut j: i128 = 0;
                while j < n {
                    self.check_cancel()?;
                    let iv = int_to(t, j).unwrap_or(PrimValue::I64(j as i64));
                    self.ad_put(s, ad, *i, V::prim(iv))?;
                    self.ad_body(s, ad, body)?;
                    if let ([p], [Atom::Var(v)]) = (params, body.result.as_slice()) {
                        if body
                            .stms
                            .last()
                            .is_some_and(|st| st.pat.iter().any(|q| q.var == *v))
                        {
                            let x = self.ad_take(s, ad, *v)?;
                            self.ad_put(s, ad, p.var, x)?;
                            j += 1;
                            continue;
                        }
                    }
                    let xs = self.ad_results(s, ad, body)?;
                    for (p, x) in params.iter().zip(xs) {
                        self.ad_put(s, ad, p.var, x)?;
                    }
                    j += 1;
                }
            }
            LoopForm::While { cond } => loop {
                self.check_cancel()?;
                self.ad_body(s, ad, cond)?;
                let c = match cond.result.as_slice() {
                    [a] => self.ad_bool(s, ad, a)?,
                    _ => return err("internal error: while condition must return one bool"),
                };
                if !c {
                    break;
                }
                self.ad_body(s, ad, body)?;
                let xs = self.ad_results(s, ad, body)?;
                for (p, x) in params.iter().zip(xs) {
                    self.ad_put(s, ad, p.var, x)?;
                }
            },
        }
        if pat.len() != params.len() {
            return err("internal error: loop pattern and parameters differ in number");
        }
        for (p, q) in pat.iter().zip(params) {
            let x = self.ad_take(s, ad, q.var)?;
            self.ad_put(s, ad, p.var, x)?;
        }
        Ok(())
    }

    // ----- SOACs --------------------------------------------------------------

    /// Runs an operator lambda on `acc` and the rows `j` of `inputs`.
    fn ad_apply_op(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        lam: &Lambda,
        acc: Vec<V>,
        inputs: &[(V, Rc<[i64]>)],
        j: usize,
    ) -> Res<Vec<V>> {
        let k = acc.len();
        for (p, x) in lam.params[..k].iter().zip(acc) {
            self.ad_put(s, ad, p.var, x)?;
        }
        for (p, (x, row)) in lam.params[k..].iter().zip(inputs) {
            let r = self.ad_row(x, j, row)?;
            self.ad_put(s, ad, p.var, r)?;
        }
        self.ad_body(s, ad, &lam.body)?;
        lam.body
            .result
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect()
    }

    fn ad_soac(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        pat: &[Param],
        soac: &Soac,
    ) -> Res<()> {
        match soac {
            Soac::Map { w, lam, arrs } => {
                let w = self.ad_size(s, ad, w, "map")?;
                let inputs = self.ad_inputs(s, ad, arrs, w, "map")?;
                if lam.params.len() != inputs.len() || lam.body.result.len() != lam.ret.len() {
                    return err("internal error: map lambda of the wrong arity");
                }
                if let Some(r) = self.ad_bulk_map(s, ad, lam, w, &inputs) {
                    let xs = r?;
                    return self.ad_bind(s, ad, pat, xs);
                }
                self.stats.generic_maps += 1;
                let mut outs: Vec<Vec<V>> = lam.ret.iter().map(|_| Vec::with_capacity(w)).collect();
                for j in 0..w {
                    self.check_cancel()?;
                    for (p, (x, row)) in lam.params.iter().zip(&inputs) {
                        let r = self.ad_row(x, j, row)?;
                        self.ad_put(s, ad, p.var, r)?;
                    }
                    self.ad_body(s, ad, &lam.body)?;
                    for (o, a) in outs.iter_mut().zip(&lam.body.result) {
                        o.push(self.ad_get(s, ad, a)?);
                    }
                }
                let mut xs = Vec::with_capacity(outs.len());
                for (rows, t) in outs.into_iter().zip(&lam.ret) {
                    let row: Rc<[i64]> = match rows.first() {
                        Some(r) => r.shape().into(),
                        None => self.type_shape(s, t).into(),
                    };
                    xs.push(self.ad_stack(rows, row, t.elem())?);
                }
                self.ad_bind(s, ad, pat, xs)
            }
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            } => {
                let (w, inputs, mut acc) =
                    self.ad_operator_setup(s, ad, w, lam, neutral, arrs, "reduce")?;
                if let ([ne], [(x, _)]) = (acc.as_slice(), inputs.as_slice()) {
                    if let Some(r) = self.ad_bulk_reduce(lam, ne, x) {
                        return self.ad_bind1(s, ad, pat, r?);
                    }
                }
                self.stats.generic_reduces += 1;
                for j in 0..w {
                    self.check_cancel()?;
                    acc = self.ad_apply_op(s, ad, lam, acc, &inputs, j)?;
                }
                self.ad_bind(s, ad, pat, acc)
            }
            Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => {
                let (w, inputs, mut acc) =
                    self.ad_operator_setup(s, ad, w, lam, neutral, arrs, "scan")?;
                let row_shapes: Vec<Rc<[i64]>> = acc.iter().map(|x| x.shape().into()).collect();
                let mut outs: Vec<Vec<V>> = acc.iter().map(|_| Vec::with_capacity(w)).collect();
                for j in 0..w {
                    self.check_cancel()?;
                    acc = self.ad_apply_op(s, ad, lam, acc, &inputs, j)?;
                    for (o, x) in outs.iter_mut().zip(&acc) {
                        o.push(x.clone());
                    }
                }
                let mut xs = Vec::with_capacity(outs.len());
                for ((rows, row), t) in outs.into_iter().zip(row_shapes).zip(&lam.ret) {
                    xs.push(self.ad_stack(rows, row, t.elem())?);
                }
                self.ad_bind(s, ad, pat, xs)
            }
            Soac::Hist {
                w,
                dest,
                lam,
                indices,
                values,
                ..
            } => {
                let w = self.ad_size(s, ad, w, "reduce_by_index")?;
                let inputs = self.ad_inputs(s, ad, values, w, "reduce_by_index")?;
                let is = self.ad_var(s, ad, *indices)?.strip();
                let is: Vec<i64> = match is.as_array().and_then(|a| a.as_slice::<i64>()) {
                    Some(x) if x.len() == w => x.to_vec(),
                    _ => return err("internal error: reduce_by_index indices must be a one-dimensional i64 array of the width"),
                };
                self.check_op_lambda(lam, dest.len(), inputs.len(), "reduce_by_index")?;
                let mut dsts = Vec::with_capacity(dest.len());
                for d in dest {
                    dsts.push(self.ad_take(s, ad, *d)?);
                }
                let Some(m) = dsts.first().and_then(|d| d.shape().first().copied()) else {
                    return err("internal error: reduce_by_index without destination arrays");
                };
                let mut rows: Vec<Rc<[i64]>> = Vec::with_capacity(dsts.len());
                for (d, (_, vrow)) in dsts.iter().zip(&inputs) {
                    if d.shape().first() != Some(&m) || d.shape()[1..] != vrow[..] {
                        return err(format!(
                            "size error: reduce_by_index: destination of shape {} and values with rows of shape {} do not fit",
                            array::show_shape(d.shape()),
                            array::show_shape(vrow)
                        ));
                    }
                    rows.push(vrow.clone());
                }
                let k = dsts.len();
                for (j, &ix) in is.iter().enumerate() {
                    if ix < 0 || ix >= m {
                        continue;
                    }
                    let ix = ix as usize;
                    let mut old = Vec::with_capacity(k);
                    for (d, row) in dsts.iter().zip(&rows) {
                        old.push(self.ad_row(d, ix, row)?);
                    }
                    let new = self.ad_apply_op(s, ad, lam, old, &inputs, j)?;
                    // Drop the parameters' views of the destinations so the
                    // updates below can be in place.
                    for p in &lam.params {
                        let i = p.var.0 as usize;
                        s[i] = DEAD;
                        ad[i] = None;
                    }
                    let mut next = Vec::with_capacity(k);
                    for ((d, x), row) in dsts.into_iter().zip(new).zip(&rows) {
                        if x.shape() != &row[..] {
                            return err("size error: reduce_by_index operator returned a value of the wrong shape");
                        }
                        let rs = shape_elems(row).unwrap_or(0);
                        next.push(self.ad_lin(
                            Lin::Update {
                                dst: Reg::Contig {
                                    start: ix * rs,
                                    len: rs,
                                },
                                src: Reg::whole(rs),
                            },
                            vec![d, x],
                        )?);
                    }
                    dsts = next;
                }
                self.ad_bind(s, ad, pat, dsts)
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                let w = self.ad_size(s, ad, w, "scatter")?;
                let vals = self.ad_inputs(s, ad, values, w, "scatter")?;
                let mut iss: Vec<Vec<i64>> = Vec::with_capacity(indices.len());
                for v in indices {
                    let a = self.ad_var(s, ad, *v)?.strip();
                    match a.as_array().and_then(|a| a.as_slice::<i64>()) {
                        Some(x) if x.len() == w => iss.push(x.to_vec()),
                        _ => return err("internal error: scatter indices must be one-dimensional i64 arrays of the width"),
                    }
                }
                if dest.len() != vals.len() || iss.is_empty() {
                    return err(
                        "internal error: scatter with mismatched destinations, indices and values",
                    );
                }
                let d_rank = iss.len();
                let mut out = Vec::with_capacity(dest.len());
                for (d, (v, vrow)) in dest.iter().zip(vals) {
                    let d = self.ad_take(s, ad, *d)?;
                    let shape: Vec<i64> = d.shape().to_vec();
                    if shape.len() < d_rank || shape[d_rank..] != vrow[..] {
                        return err(format!(
                            "size error: scatter: destination of shape {} and values of shape {} do not fit",
                            array::show_shape(&shape),
                            array::show_shape(v.shape())
                        ));
                    }
                    let row = shape_elems(&shape[d_rank..]).unwrap_or(0);
                    // The last write to each position wins (as the plain evaluator).
                    let mut winner: std::collections::HashMap<usize, usize> =
                        std::collections::HashMap::new();
                    for j in 0..w {
                        self.check_cancel()?;
                        let mut pos = 0usize;
                        let mut inb = true;
                        for (t, ist) in iss.iter().enumerate() {
                            let i = ist[j];
                            if i < 0 || i >= shape[t] {
                                inb = false;
                                break;
                            }
                            pos = pos * shape[t] as usize + i as usize;
                        }
                        if inb {
                            winner.insert(pos, j);
                        }
                    }
                    let mut pairs: Vec<(usize, usize)> = winner.into_iter().collect();
                    pairs.sort_unstable();
                    let mut dpos = Vec::with_capacity(pairs.len() * row);
                    let mut spos = Vec::with_capacity(pairs.len() * row);
                    for (p, j) in pairs {
                        dpos.extend(p * row..(p + 1) * row);
                        spos.extend(j * row..(j + 1) * row);
                    }
                    out.push(self.ad_lin(
                        Lin::Update {
                            dst: Reg::Pos(dpos.into()),
                            src: Reg::Pos(spos.into()),
                        },
                        vec![d, v],
                    )?);
                }
                self.ad_bind(s, ad, pat, out)
            }
        }
    }

    fn ad_size(&self, s: &[Value], ad: &AdSlots, a: &Atom, what: &str) -> Res<usize> {
        let n = self.ad_int(s, ad, a)?;
        if n < 0 {
            return err(format!("{what}: negative size {n}"));
        }
        Ok(n as usize)
    }

    // ----- jvp and vjp ----------------------------------------------------------

    fn push_level(&mut self, l: Level) -> Res<u32> {
        if self.ad.levels.len() >= MAX_AD_DEPTH {
            return err(format!("jvp/vjp nested deeper than {MAX_AD_DEPTH} levels"));
        }
        self.ad.levels.push(l);
        Ok(self.ad.levels.len() as u32)
    }

    /// `jvp`: runs `lam` on dual values of a new level; binds the primal
    /// results, then the tangents (zero for results that do not depend on
    /// the parameters).
    #[allow(clippy::too_many_arguments)]
    fn ad_jvp(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        pat: &[Param],
        lam: &Lambda,
        primals: &[Atom],
        tangents: &[Atom],
    ) -> Res<()> {
        if lam.params.len() != primals.len() || primals.len() != tangents.len() {
            return err("internal error: jvp with mismatched parameters, primals and tangents");
        }
        let mut xs = Vec::with_capacity(primals.len());
        for (p, t) in primals.iter().zip(tangents) {
            let (p, t) = (self.ad_get(s, ad, p)?, self.ad_get(s, ad, t)?);
            if p.shape() != t.shape() || p.elem() != t.elem() {
                return err(format!(
                    "jvp: tangent of shape {} does not match the argument of shape {}",
                    array::show_shape(t.shape()),
                    array::show_shape(p.shape())
                ));
            }
            xs.push((p, t));
        }
        let l = self.push_level(Level::Fwd)?;
        self.stats.jvps += 1;
        let r = (|| {
            for (q, (p, t)) in lam.params.iter().zip(xs) {
                self.ad_put(s, ad, q.var, V::dual(l, p, t))?;
            }
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.ad_body(s, ad, &lam.body))?;
            self.ad_results(s, ad, &lam.body)
        })();
        self.ad.levels.truncate(l as usize - 1);
        let rs = r?;
        let mut ps = Vec::with_capacity(2 * rs.len());
        let mut ts = Vec::with_capacity(rs.len());
        for x in rs {
            if x.level() == l {
                let (p, t) = x.into_dual_parts();
                ps.push(p);
                ts.push(t);
            } else {
                ts.push(x.zeros_like());
                ps.push(x);
            }
        }
        ps.extend(ts);
        self.ad_bind(s, ad, pat, ps)
    }

    /// `vjp`: runs `lam` on values of a new level that record a tape, then
    /// sweeps it from the given result adjoints; binds the primal results,
    /// then one adjoint per parameter.
    #[allow(clippy::too_many_arguments)]
    fn ad_vjp(
        &mut self,
        s: &mut [Value],
        ad: &mut AdSlots,
        pat: &[Param],
        lam: &Lambda,
        primals: &[Atom],
        adjoints: &[Atom],
    ) -> Res<()> {
        if lam.params.len() != primals.len() || lam.body.result.len() != adjoints.len() {
            return err("internal error: vjp with mismatched parameters, primals and adjoints");
        }
        let xs = primals
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect::<Res<Vec<_>>>()?;
        let seeds_in = adjoints
            .iter()
            .map(|a| self.ad_get(s, ad, a))
            .collect::<Res<Vec<_>>>()?;
        let zs: Vec<V> = xs.iter().map(|x| x.zeros_like()).collect();
        let l = self.push_level(Level::Rev(Tape::default()))?;
        self.stats.vjps += 1;
        let n_in = xs.len();
        let r = (|| {
            for (q, p) in lam.params.iter().zip(xs) {
                let node = lift(self.ad.tape(l).push(Entry::Input {
                    shape: p.shape().into(),
                    elem: p.elem(),
                }))?;
                self.ad_put(s, ad, q.var, V::rev(l, p, node))?;
            }
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.ad_body(s, ad, &lam.body))?;
            self.ad_results(s, ad, &lam.body)
        })();
        self.ad.levels.truncate(l as usize);
        let level = self.ad.levels.pop();
        let rs = r?;
        let Some(Level::Rev(tape)) = level else {
            return err("internal error: vjp level lost");
        };
        let mut seeds = Vec::new();
        let mut ps = Vec::with_capacity(rs.len() + n_in);
        for (x, y) in rs.into_iter().zip(seeds_in) {
            if x.level() == l {
                if x.shape() != y.shape() || x.elem() != y.elem() {
                    return err(format!(
                        "vjp: adjoint of shape {} does not match the result of shape {}",
                        array::show_shape(y.shape()),
                        array::show_shape(x.shape())
                    ));
                }
                let (p, node) = x.into_rev_parts();
                seeds.push((node, y));
                ps.push(p);
            } else {
                ps.push(x);
            }
        }
        self.stats.tape_entries += tape.entries.len() as u64;
        let mut sweep = lift(tape::Sweep::new(&mut self.ad, tape, n_in, seeds))?;
        let adjs = loop {
            match lift(sweep.run(&mut self.ad))? {
                tape::Step::Done(adjs) => break adjs,
                tape::Step::Custom(op, outs) => {
                    let cs = self.ad_custom_rule(&op, outs)?;
                    lift(sweep.add_custom(&mut self.ad, &op, cs)).map_err(|mut e| {
                        e.span = Some(op.span);
                        e
                    })?;
                }
            }
        };
        for (a, z) in adjs.into_iter().zip(zs) {
            ps.push(a.unwrap_or(z));
        }
        self.ad_bind(s, ad, pat, ps)
    }
}
