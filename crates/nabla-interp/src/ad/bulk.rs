//! Bulk AD rules for `reduce` with a recognised operator and for `map` of
//! float scalar operations — in reverse mode also with reads of free arrays
//! at computed indices and `if`s (see [`Interp::ad_bulk_map`](crate::eval::Interp::ad_bulk_map)).
//!
//! The generic path differentiates a `reduce` by running its operator
//! lambda once per element in AD mode: in reverse mode that records, per
//! element, a slice entry for the row and an entry for the operator — about
//! a hundred bytes of tape and a few hundred nanoseconds per element. When
//! the operator is one of `+`, `*`, `min`, `max` on `f32`/`f64` (a lambda
//! `\a b -> a op b`), the input a rank-1 array whose primal (and tangent)
//! are plain, and the neutral element plain, the whole `reduce` is instead
//! one operation (Schenck et al., SC22, §5 treats `reduce` with these operators as
//! special cases for the same reason):
//!
//! * forward mode folds primal and tangent together in one native loop;
//! * reverse mode records **one** [`Entry::Reduce`](super::tape::Entry::Reduce); its adjoint rule is a
//!   broadcast for `+`, the product of the other elements for `*` (from
//!   prefix products and a suffix product accumulated backwards, so zeros
//!   need no division), and a single position — the arg-extremum — for
//!   `min`/`max`.
//!
//! Every result is computed in the same order and with the same rules as the
//! element-by-element path (a left fold; ties of `min`/`max` go to the
//! accumulator, as nabla-ir's derivative table), so both paths give bit-identical primals,
//! tangents and adjoints.

use super::lin::Lin;
use super::rules::AdOp;
use super::value::V;
use super::{AdState, NONE};
use crate::scalar;
use nabla_ir::{Atom, Exp, Lambda};
use nabla_prim::{BinOp, CmpOp, PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use std::rc::Rc;

use super::partials::Fl;

/// The adjoint rule of a bulk `reduce` (see [`Entry::Reduce`](super::tape::Entry::Reduce)).
pub(crate) struct Red {
    /// The reduced array's node.
    pub src: u32,
    pub n: usize,
    pub elem: PrimType,
    pub how: RedBack,
}

/// Per operator, what the reverse rule needs.
pub(crate) enum RedBack {
    /// `+`: every element gets the output adjoint.
    Add,
    /// `*`: the primal elements and the neutral element.
    Mul { xs: ArrayValue, ne: PrimValue },
    /// `min`/`max`: the position whose element is the result (`None`: the
    /// neutral element won).
    Sel(Option<usize>),
}

/// The operator of a `reduce` lambda `\a b -> a op b` (or `b op a` for the
/// commutative `+` and `*`).
pub(super) fn red_op(lam: &Lambda) -> Option<BinOp> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    let [stm] = lam.body.stms.as_slice() else {
        return None;
    };
    let ([p], [Atom::Var(r)]) = (stm.pat.as_slice(), lam.body.result.as_slice()) else {
        return None;
    };
    let Exp::BinOp(o, Atom::Var(x), Atom::Var(y)) = &stm.exp else {
        return None;
    };
    if p.var != *r {
        return None;
    }
    let direct = *x == a.var && *y == b.var;
    let swapped = *x == b.var && *y == a.var;
    match o {
        BinOp::Add | BinOp::Mul if direct || swapped => Some(*o),
        BinOp::Min | BinOp::Max if direct => Some(*o),
        _ => None,
    }
}

/// `min`/`max` of accumulator `a` and element `b`: whether the accumulator
/// is selected (the rule of `nabla_ir::derivatives` for `Min`/`Max`).
#[inline]
pub(super) fn keeps_acc(o: BinOp, a: PrimValue, b: PrimValue) -> bool {
    let (na, nb) = (a.as_f64().is_nan(), b.as_f64().is_nan());
    if na || nb {
        return nb;
    }
    let c = if o == BinOp::Min {
        CmpOp::Le
    } else {
        CmpOp::Ge
    };
    nabla_prim::eval_cmpop(c, a, b).unwrap_or(true)
}

pub(super) fn slice_of<F: Fl + nabla_values::Elem>(a: &ArrayValue) -> Option<&[F]> {
    if a.rank() != 1 {
        return None;
    }
    a.as_slice::<F>()
}

/// Forward mode: primal and tangent of the fold.
pub(super) fn fwd_fold<F: Fl + nabla_values::Elem>(
    o: BinOp,
    ne: PrimValue,
    p: &ArrayValue,
    t: &ArrayValue,
) -> Option<Result<(PrimValue, PrimValue), String>> {
    let (xs, ts) = (slice_of::<F>(p)?, slice_of::<F>(t)?);
    let mut acc = F::of(ne)?;
    let zero = F::ZERO;
    let mut ta: Option<F> = None;
    match o {
        BinOp::Add | BinOp::Mul => {
            for (&x, &tx) in xs.iter().zip(ts) {
                if o == BinOp::Add {
                    ta = Some(match ta {
                        None => tx,
                        Some(a) => a + tx,
                    });
                    acc = acc + x;
                } else {
                    // acc·x: tangent ṫa·x + acc·ṫx (the generic fast path).
                    ta = Some(match ta {
                        None => acc * tx,
                        Some(a) => a * x + acc * tx,
                    });
                    acc = acc * x;
                }
            }
            Some(Ok((acc.wrap(), ta.unwrap_or(zero).wrap())))
        }
        _ => {
            let mut accp = ne;
            for (&x, &tx) in xs.iter().zip(ts) {
                let xp = x.wrap();
                if !keeps_acc(o, accp, xp) {
                    ta = Some(tx);
                }
                accp = match scalar::binop(o, accp, xp) {
                    Ok(r) => r,
                    Err(e) => return Some(Err(e)),
                };
            }
            Some(Ok((accp, ta.unwrap_or(zero).wrap())))
        }
    }
}

/// Reverse mode: the primal of the fold and its adjoint rule.
pub(super) fn rev_fold<F: Fl + nabla_values::Elem>(
    o: BinOp,
    ne: PrimValue,
    p: &ArrayValue,
) -> Option<Result<(PrimValue, RedBack), String>> {
    let xs = slice_of::<F>(p)?;
    let mut acc = F::of(ne)?;
    Some(Ok(match o {
        BinOp::Add => {
            for &x in xs {
                acc = acc + x;
            }
            (acc.wrap(), RedBack::Add)
        }
        BinOp::Mul => {
            for &x in xs {
                acc = acc * x;
            }
            (acc.wrap(), RedBack::Mul { xs: p.clone(), ne })
        }
        _ => {
            let mut accp = ne;
            let mut sel = None;
            for (j, &x) in xs.iter().enumerate() {
                let xp = x.wrap();
                if !keeps_acc(o, accp, xp) {
                    sel = Some(j);
                }
                accp = match scalar::binop(o, accp, xp) {
                    Ok(r) => r,
                    Err(e) => return Some(Err(e)),
                };
            }
            (accp, RedBack::Sel(sel))
        }
    }))
}

/// The contribution of a bulk `reduce`'s output adjoint `a` to its input's
/// adjoint (an array of the input's shape) for `+` and `*`; `None` for
/// `min`/`max`, whose single position the sweep adds itself.
pub(crate) fn reduce_back(st: &mut AdState, red: &Red, a: V) -> Result<Option<V>, String> {
    if red.src == NONE {
        return Ok(None);
    }
    let n = red.n;
    match &red.how {
        RedBack::Add => Ok(Some(match a {
            V::Plain(Value::Prim(x)) => V::Plain(Value::Array(ArrayValue::filled(x, &[n as i64]))),
            a => st.lin(&Rc::new(Lin::Replicate { n }), vec![a])?,
        })),
        RedBack::Sel(_) => Ok(None),
        RedBack::Mul { xs, ne } => {
            // Adjoint of xⱼ in accⱼ = accⱼ₋₁·xⱼ: accⱼ₋₁·āⱼ, with āⱼ₋₁ = xⱼ·āⱼ
            // going backwards from ā (the generic rule, element by element).
            let plain = match (&a, red.elem) {
                (V::Plain(Value::Prim(PrimValue::F64(a))), PrimType::F64) => {
                    Some(mul_back::<f64>(xs, *ne, *a))
                }
                (V::Plain(Value::Prim(PrimValue::F32(a))), PrimType::F32) => {
                    Some(mul_back::<f32>(xs, *ne, *a))
                }
                _ => None,
            };
            if let Some(c) = plain {
                return Ok(Some(V::Plain(Value::Array(
                    c.ok_or("internal error: reduce adjoint of the wrong type")?,
                ))));
            }
            // Nested AD: the same recurrence with AD-aware operations.
            let mut pre = Vec::with_capacity(n);
            let mut acc = *ne;
            for j in 0..n {
                pre.push(acc);
                acc = scalar::binop(BinOp::Mul, acc, xs.get_flat(j))?;
            }
            let mut cs = vec![V::prim(PrimValue::Bool(false)); n];
            let mut ac = a;
            for j in (0..n).rev() {
                cs[j] = st.prim(AdOp::Bin(BinOp::Mul), &[V::prim(pre[j]), ac.clone()])?;
                ac = st.prim(AdOp::Bin(BinOp::Mul), &[V::prim(xs.get_flat(j)), ac])?;
            }
            let op = Rc::new(Lin::Stack {
                n,
                row: Rc::from([]),
                elem: red.elem,
            });
            Ok(Some(st.lin(&op, cs)?))
        }
    }
}

/// [`reduce_back`] for `*` on plain scalars: prefix products forwards, the
/// adjoint backwards.
pub(super) fn mul_back<F: Fl + nabla_values::Elem>(
    xs: &ArrayValue,
    ne: PrimValue,
    a: F,
) -> Option<ArrayValue> {
    let x = xs.as_slice::<F>()?;
    let mut c = Vec::with_capacity(x.len());
    let mut acc = F::of(ne)?;
    for &v in x {
        c.push(acc);
        acc = acc * v;
    }
    let mut ac = a;
    for (cj, &v) in c.iter_mut().zip(x).rev() {
        *cj = *cj * ac;
        ac = v * ac;
    }
    Some(ArrayValue::from_vec(&[x.len() as i64], c))
}

// ----- map ----------------------------------------------------------------------

/// An operand of a compiled map lambda: a local (parameter or statement
/// result), a constant (a literal or a plain free variable), or a gathered
/// element of an input row (`G(g)`: `MapProg::gathers[g]`, forward mode
/// only).
#[derive(Clone, Copy)]
pub(super) enum Src {
    L(usize),
    K(PrimValue),
    G(usize),
}

/// What a variable of a compiled map lambda stands for: a scalar operand,
/// or a part of a parameter's row (input `k`, flat offset `off` in the row,
/// shape `shape`) read by `Index`.
pub(super) enum Loc {
    S(Src),
    View {
        k: usize,
        off: usize,
        shape: Vec<i64>,
    },
}

/// One scalar statement of a compiled map lambda; its result is local
/// `np + index`.
#[derive(Clone, Copy)]
pub(super) struct MOp {
    pub(super) op: AdOp,
    pub(super) args: [Src; 2],
    pub(super) n: usize,
}

/// A map lambda of float scalar statements, compiled to locals (see
/// [`Interp::ad_bulk_map`](crate::eval::Interp::ad_bulk_map)).
pub(crate) struct MapProg {
    pub(super) np: usize,
    pub(super) ops: Vec<MOp>,
    pub(super) outs: Vec<Src>,
    /// Elements read from the rows of array parameters with constant
    /// indices: (input, flat offset in the row).
    pub(super) gathers: Vec<(usize, usize)>,
}

/// The record of one bulk `map` in reverse mode, shared by its outputs'
/// entries: per element and slot (see [`RevProg`]) the two partials of a
/// float statement (`d`, `f64`, exact for `f32`) and whether the rule gave
/// them (`has`, bits 0 and 1), the position read by a free-array read
/// (`d[0]`), whether an `if` result's move ran (`has`, bit 2); the node of
/// each parameter's array and of each free array (`NONE`: constant).
pub(crate) struct MapRec {
    pub(super) prog: Rc<RevProg>,
    pub n: usize,
    pub elem: PrimType,
    pub(super) d: Vec<f64>,
    pub(super) has: Vec<u8>,
    pub(super) in_nodes: Vec<u32>,
    pub(super) free_nodes: Vec<u32>,
    /// Which locals may depend on a tracked array.
    pub(super) live: Vec<bool>,
    /// The outputs that do for some element (in order), each recorded as
    /// one entry.
    pub tracked: Vec<usize>,
}

/// One output of a bulk `map` (see [`Entry::Map`](super::tape::Entry::Map)): the `k`-th of the
/// outputs that depend on a tracked input, whose nodes are `first`,
/// `first + 1`, … (recorded consecutively).
pub(crate) struct MapOut {
    pub rec: Rc<MapRec>,
    pub k: usize,
    pub first: u32,
}

/// Operators whose float result has the operands' type (no comparisons,
/// no classification functions).
pub(super) fn float_op(op: AdOp) -> bool {
    use nabla_prim::UnOp as U;
    match op {
        AdOp::Bin(b) => matches!(
            b,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Pow
                | BinOp::Min
                | BinOp::Max
                | BinOp::Atan2
                | BinOp::Hypot
        ),
        AdOp::Un(u) => matches!(
            u,
            U::Neg
                | U::Abs
                | U::Sqrt
                | U::Cbrt
                | U::Exp
                | U::Exp2
                | U::Expm1
                | U::Log
                | U::Log2
                | U::Log10
                | U::Log1p
                | U::Sin
                | U::Cos
                | U::Tan
                | U::Asin
                | U::Acos
                | U::Atan
                | U::Sinh
                | U::Cosh
                | U::Tanh
                | U::Asinh
                | U::Acosh
                | U::Atanh
                | U::Erf
                | U::Erfc
        ),
        _ => false,
    }
}

/// Runs a compiled map lambda on the primals and tangents (`None`: a
/// constant input) of every element (see [`Interp::ad_bulk_map_fwd`](crate::eval::Interp::ad_bulk_map_fwd));
/// `rs[k]`: the number of elements of a row of input `k`. Per output, the
/// primal array and the tangent array (`None`: no element has a tangent).
#[allow(clippy::type_complexity)]
pub(super) fn map_forward<F: Fl + nabla_values::Elem>(
    prog: &MapProg,
    ps: &[&ArrayValue],
    ts: &[Option<&ArrayValue>],
    rs: &[usize],
    w: usize,
) -> Option<Result<Vec<(ArrayValue, Option<ArrayValue>)>, String>> {
    let xs = ps
        .iter()
        .map(|a| a.as_slice::<F>())
        .collect::<Option<Vec<_>>>()?;
    let xt = ts
        .iter()
        .map(|t| match t {
            Some(a) => a.as_slice::<F>().map(Some),
            None => Some(None),
        })
        .collect::<Option<Vec<_>>>()?;
    for ((x, t), &r) in xs.iter().zip(&xt).zip(rs) {
        let n = w.checked_mul(r)?;
        if x.len() != n || t.is_some_and(|t| t.len() != n) {
            return None;
        }
    }
    let np = prog.np;
    let nops = prog.ops.len();
    let ng = prog.gathers.len();
    let mut vals = vec![PrimValue::Bool(false); np + nops];
    let mut tans: Vec<Option<F>> = vec![None; np + nops];
    let mut gv = vec![PrimValue::Bool(false); ng];
    let mut gt: Vec<Option<F>> = vec![None; ng];
    let no = prog.outs.len();
    let mut op_: Vec<Vec<F>> = (0..no).map(|_| Vec::with_capacity(w)).collect();
    let mut ot: Vec<Vec<F>> = (0..no).map(|_| Vec::with_capacity(w)).collect();
    let mut any_t = vec![false; no];
    for j in 0..w {
        for k in 0..np {
            // Scalar parameters (rows of one element: reading an array
            // parameter's only element here is harmless, it is never used).
            if rs[k] == 1 {
                vals[k] = xs[k][j].wrap();
                tans[k] = xt[k].map(|t| t[j]);
            }
        }
        for (g, &(k, off)) in prog.gathers.iter().enumerate() {
            let i = j * rs[k] + off;
            gv[g] = xs[k][i].wrap();
            gt[g] = xt[k].map(|t| t[i]);
        }
        for (i, op) in prog.ops.iter().enumerate() {
            let get = |a: Src| match a {
                Src::L(k) => (vals[k], tans[k]),
                Src::K(p) => (p, None),
                Src::G(g) => (gv[g], gt[g]),
            };
            let (a0, t0) = get(op.args[0]);
            let (a1, t1) = get(op.args[1]);
            let pv = [a0, a1];
            let tv = [t0, t1];
            let n = op.n;
            let r = match prim_of(op.op, &pv[..n]) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            vals[np + i] = r;
            if tv[..n].iter().all(|t| t.is_none()) {
                tans[np + i] = None;
                continue;
            }
            tans[np + i] = match super::partials::partials_of::<F>(op.op, &pv[..n], r)? {
                Ok(Some((d, has))) => {
                    let mut acc: Option<F> = None;
                    for k in 0..n {
                        if let (Some(t), true) = (tv[k], has[k]) {
                            let c = F::from_f64(d[k]) * t;
                            acc = Some(match acc {
                                None => c,
                                Some(a) => a + c,
                            });
                        }
                    }
                    Some(acc.unwrap_or(F::ZERO))
                }
                Ok(None) => None,
                Err(e) => return Some(Err(e)),
            };
        }
        for (o, src) in prog.outs.iter().enumerate() {
            let (p, t) = match *src {
                Src::L(k) => (vals[k], tans[k]),
                Src::K(p) => (p, None),
                Src::G(g) => (gv[g], gt[g]),
            };
            op_[o].push(F::of(p)?);
            match t {
                Some(t) => {
                    ot[o].push(t);
                    any_t[o] = true;
                }
                None => ot[o].push(F::ZERO),
            }
        }
    }
    let shape = [w as i64];
    Some(Ok(op_
        .into_iter()
        .zip(ot)
        .zip(any_t)
        .map(|((p, t), a)| {
            (
                ArrayValue::from_vec(&shape, p),
                a.then(|| ArrayValue::from_vec(&shape, t)),
            )
        })
        .collect()))
}

/// The primal of one float operation (the plain evaluator's semantics).
#[inline(always)]
pub(super) fn prim_of(op: AdOp, ps: &[PrimValue]) -> Result<PrimValue, String> {
    match op {
        AdOp::Bin(o) => match scalar::fast_binop(o, ps[0], ps[1]) {
            Some(r) => Ok(r),
            None => scalar::binop(o, ps[0], ps[1]),
        },
        AdOp::Un(o) => scalar::unop(o, ps[0]),
        _ => Err("internal error: unexpected operation in a bulk map".into()),
    }
}

// ----- reverse-mode map programs --------------------------------------------------

/// An operand of a reverse-mode map program: a local, a constant, or a
/// plain scalar free variable (`RevProg::pfree[k]`, read at each call).
#[derive(Clone, Copy)]
pub(super) enum RS {
    L(usize),
    K(PrimValue),
    P(usize),
}

/// No partials slot (a statement whose result is never tracked).
pub(super) const NO_SLOT: usize = usize::MAX;

/// Nesting limit of `if`s compiled into one map program.
pub(super) const MAX_IF_DEPTH: usize = 8;

/// One instruction of a [`RevProg`]; `dst` is the local it writes, `slot`
/// its per-element flags and `doff` the offset of its recorded `f64`s in an
/// element's part of [`MapRec`]'s `d`.
#[derive(Clone, Copy)]
pub(super) enum Ins {
    /// A scalar operation (float ones have a slot; others, on integers,
    /// must not depend on a tracked array).
    Op {
        op: AdOp,
        args: [RS; 2],
        n: usize,
        dst: usize,
        slot: usize,
        doff: usize,
    },
    /// A comparison (its result is never tracked, as on the generic path).
    Cmp {
        op: CmpOp,
        args: [RS; 2],
        dst: usize,
    },
    /// `free[f][idx]` (bounds-checked).
    Read {
        f: usize,
        idx: RS,
        dst: usize,
        doff: usize,
    },
    /// Continue at `to` when `cond` is false.
    Branch {
        cond: RS,
        to: usize,
    },
    Jump {
        to: usize,
    },
    /// An `if`'s result taken from the branch that ran.
    Move {
        src: RS,
        dst: usize,
        slot: usize,
    },
}

/// A map lambda compiled for reverse mode: scalar parameters (locals
/// `0..np`), scalar statements, reads of free rank-1 arrays at computed
/// indices, and `if`s whose branch results are constants or locals of the
/// branch (so an `if` result is, per element, the value and the node of
/// the branch's result, as on the generic path).
pub(crate) struct RevProg {
    pub(super) nl: usize,
    pub(super) nslots: usize,
    /// Per element, the number of `f64`s recorded (partials of float
    /// statements, positions of reads; at `doff` in an element's part).
    pub(super) nd: usize,
    /// The plain scalar free variables read.
    pub(super) pfree: Vec<nabla_ir::Var>,
    pub(super) ins: Vec<Ins>,
    pub(super) outs: Vec<RS>,
    /// The free arrays read (variables of the enclosing scope).
    pub(super) free: Vec<nabla_ir::Var>,
}

/// The compiler state of [`RevProg`].
pub(super) struct RevC<'a> {
    pub(super) s: &'a [Value],
    pub(super) ad: &'a [Option<V>],
    pub(super) locals: Vec<(nabla_ir::Var, RS)>,
    pub(super) ins: Vec<Ins>,
    pub(super) nl: usize,
    pub(super) nslots: usize,
    pub(super) nd: usize,
    pub(super) free: Vec<nabla_ir::Var>,
    pub(super) pfree: Vec<nabla_ir::Var>,
}

impl RevC<'_> {
    fn find(&self, v: nabla_ir::Var) -> Option<RS> {
        self.locals.iter().rev().find(|(x, _)| *x == v).map(|x| x.1)
    }
    fn src(&mut self, a: &Atom) -> Option<RS> {
        match a {
            Atom::Const(c) => Some(RS::K(*c)),
            Atom::Var(v) => match self.find(*v) {
                Some(x) => Some(x),
                None => {
                    let i = v.0 as usize;
                    match (self.ad.get(i)?, self.s.get(i)?) {
                        (None, Value::Prim(_)) => {}
                        _ => return None,
                    }
                    Some(RS::P(match self.pfree.iter().position(|x| x == v) {
                        Some(k) => k,
                        None => {
                            self.pfree.push(*v);
                            self.pfree.len() - 1
                        }
                    }))
                }
            },
        }
    }
    fn doff(&mut self, n: usize) -> usize {
        self.nd += n;
        self.nd - n
    }
    fn local(&mut self) -> usize {
        self.nl += 1;
        self.nl - 1
    }
    fn slot(&mut self) -> usize {
        self.nslots += 1;
        self.nslots - 1
    }
    /// A free rank-1 array (plain, or reverse-mode with a plain primal).
    fn free_arr(&mut self, v: nabla_ir::Var) -> Option<usize> {
        if self.find(v).is_some() {
            return None;
        }
        let i = v.0 as usize;
        let ok = match (self.ad.get(i)?, self.s.get(i)?) {
            (None, Value::Array(a)) => a.rank() == 1,
            (Some(V::Rev(r)), _) => matches!(&r.p, V::Plain(Value::Array(a)) if a.rank() == 1),
            _ => false,
        };
        if !ok {
            return None;
        }
        Some(match self.free.iter().position(|x| *x == v) {
            Some(f) => f,
            None => {
                self.free.push(v);
                self.free.len() - 1
            }
        })
    }
    fn body(&mut self, b: &nabla_ir::Body, depth: usize) -> Option<Vec<RS>> {
        for stm in &b.stms {
            self.stm(stm, depth)?;
        }
        b.result.iter().map(|a| self.src(a)).collect()
    }
    fn stm(&mut self, stm: &nabla_ir::Stm, depth: usize) -> Option<()> {
        if let Exp::If { cond, then_, else_ } = &stm.exp {
            if depth >= MAX_IF_DEPTH {
                return None;
            }
            let c = self.src(cond)?;
            let dsts: Vec<usize> = stm.pat.iter().map(|_| self.local()).collect();
            let mark = self.locals.len();
            let br = self.ins.len();
            self.ins.push(Ins::Branch { cond: c, to: 0 });
            let mut jmp = 0;
            for (bi, body) in [then_, else_].into_iter().enumerate() {
                let base = self.nl;
                let rs = self.body(body, depth + 1)?;
                self.locals.truncate(mark);
                if rs.len() != dsts.len() {
                    return None;
                }
                for (&dst, r) in dsts.iter().zip(rs) {
                    // A branch result from outside the branch would share its
                    // node with other uses: not handled.
                    if matches!(r, RS::L(x) if x < base) {
                        return None;
                    }
                    let slot = self.slot();
                    self.ins.push(Ins::Move { src: r, dst, slot });
                }
                if bi == 0 {
                    jmp = self.ins.len();
                    self.ins.push(Ins::Jump { to: 0 });
                    self.ins[br] = Ins::Branch {
                        cond: c,
                        to: self.ins.len(),
                    };
                }
            }
            self.ins[jmp] = Ins::Jump { to: self.ins.len() };
            for (p, d) in stm.pat.iter().zip(dsts) {
                self.locals.push((p.var, RS::L(d)));
            }
            return Some(());
        }
        let [p] = stm.pat.as_slice() else {
            return None;
        };
        // Integer arithmetic has no partials (and is never tracked).
        let is_float = matches!(p.ty, nabla_ir::Type::Prim(PrimType::F32 | PrimType::F64));
        let ins = match &stm.exp {
            Exp::BinOp(o, a, b) => {
                let op = AdOp::Bin(*o);
                let args = [self.src(a)?, self.src(b)?];
                let (slot, doff) = if float_op(op) && is_float {
                    (self.slot(), self.doff(2))
                } else {
                    (NO_SLOT, 0)
                };
                let dst = self.local();
                Ins::Op {
                    op,
                    args,
                    n: 2,
                    dst,
                    slot,
                    doff,
                }
            }
            Exp::UnOp(o, a) => {
                let op = AdOp::Un(*o);
                let x = self.src(a)?;
                let (slot, doff) = if float_op(op) && is_float {
                    (self.slot(), self.doff(1))
                } else {
                    (NO_SLOT, 0)
                };
                let dst = self.local();
                Ins::Op {
                    op,
                    args: [x, x],
                    n: 1,
                    dst,
                    slot,
                    doff,
                }
            }
            Exp::CmpOp(o, a, b) => {
                let args = [self.src(a)?, self.src(b)?];
                let dst = self.local();
                Ins::Cmp { op: *o, args, dst }
            }
            Exp::Index(v, idx) => {
                let [nabla_ir::DimIndex::Fix(a)] = idx.as_slice() else {
                    return None;
                };
                let idx = self.src(a)?;
                let f = self.free_arr(*v)?;
                let doff = self.doff(1);
                let dst = self.local();
                Ins::Read { f, idx, dst, doff }
            }
            _ => return None,
        };
        let dst = match ins {
            Ins::Op { dst, .. } | Ins::Cmp { dst, .. } | Ins::Read { dst, .. } => dst,
            _ => return None,
        };
        self.ins.push(ins);
        self.locals.push((p.var, RS::L(dst)));
        Some(())
    }
}

/// Compiles a map lambda for [`Interp::ad_bulk_map`](crate::eval::Interp::ad_bulk_map)'s reverse mode
/// (`None`: it has other statements).
pub(super) fn compile_rev(s: &[Value], ad: &[Option<V>], lam: &Lambda) -> Option<RevProg> {
    let np = lam.params.len();
    let mut c = RevC {
        s,
        ad,
        locals: lam
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| (p.var, RS::L(k)))
            .collect(),
        ins: Vec::new(),
        nl: np,
        nslots: 0,
        nd: 0,
        free: Vec::new(),
        pfree: Vec::new(),
    };
    let outs = c.body(&lam.body, 0)?;
    Some(RevProg {
        nl: c.nl,
        nslots: c.nslots,
        nd: c.nd,
        pfree: c.pfree,
        ins: c.ins,
        outs,
        free: c.free,
    })
}

/// An input or free array: its `F` elements, or any array read element by
/// element.
pub(super) enum Arr<'a, F> {
    S(&'a [F]),
    A(&'a ArrayValue),
}

impl<F: Fl + nabla_values::Elem> Arr<'_, F> {
    fn of(a: &ArrayValue) -> Arr<'_, F> {
        match a.as_slice::<F>() {
            Some(x) => Arr::S(x),
            None => Arr::A(a),
        }
    }
    #[inline]
    fn len(&self) -> usize {
        match self {
            Arr::S(x) => x.len(),
            Arr::A(a) => a.num_elems(),
        }
    }
    #[inline]
    fn get(&self, i: usize) -> PrimValue {
        match self {
            Arr::S(x) => x[i].wrap(),
            Arr::A(a) => a.get_flat(i),
        }
    }
}

/// Runs a compiled map program on every element, keeping the partials,
/// read positions and branches taken. `None` (the generic path then runs
/// the map and reports any error with its location) on an error, an
/// out-of-bounds read, or a case not handled.
#[allow(clippy::type_complexity)]
pub(super) fn map_record<F: Fl + nabla_values::Elem>(
    prog: Rc<RevProg>,
    pv: &[PrimValue],
    arrs: &[&ArrayValue],
    in_nodes: Vec<u32>,
    frees: &[&ArrayValue],
    free_nodes: Vec<u32>,
    w: usize,
) -> Option<(MapRec, Vec<ArrayValue>)> {
    let elem = F::ZERO.wrap().prim_type();
    let xs: Vec<Arr<F>> = arrs.iter().map(|a| Arr::of(a)).collect();
    let fs: Vec<Arr<F>> = frees.iter().map(|a| Arr::of(a)).collect();
    if xs.iter().any(|x| x.len() != w) {
        return None;
    }
    let np = arrs.len();
    let nl = prog.nl;
    let ns = prog.nslots;
    let nd = prog.nd;
    let mut live = vec![false; nl];
    for (k, &nd) in in_nodes.iter().enumerate() {
        live[k] = nd != NONE;
    }
    let lv = |live: &[bool], a: RS| matches!(a, RS::L(k) if live[k]);
    for ins in &prog.ins {
        match *ins {
            Ins::Op {
                args, n, dst, slot, ..
            } => {
                let l = args[..n].iter().any(|&a| lv(&live, a));
                if l && slot == NO_SLOT {
                    return None;
                }
                live[dst] = l;
            }
            Ins::Cmp { dst, .. } => live[dst] = false,
            Ins::Read { f, idx, dst, .. } => {
                if lv(&live, idx) {
                    return None;
                }
                live[dst] = free_nodes[f] != NONE;
            }
            Ins::Branch { cond, .. } => {
                if lv(&live, cond) {
                    return None;
                }
            }
            Ins::Jump { .. } => {}
            Ins::Move { src, dst, .. } => live[dst] |= lv(&live, src),
        }
    }
    let mut d = vec![0.0f64; w * nd];
    let mut has = vec![0u8; w * ns];
    let mut outs: Vec<Vec<F>> = prog.outs.iter().map(|_| Vec::with_capacity(w)).collect();
    let mut out_live = vec![false; prog.outs.len()];
    let mut vals = vec![PrimValue::Bool(false); nl];
    let mut dl = vec![false; nl];
    dl[..np].copy_from_slice(&live[..np]);
    let ni = prog.ins.len();
    for j in 0..w {
        for (v, x) in vals.iter_mut().zip(&xs) {
            *v = x.get(j);
        }
        let mut pc = 0;
        while pc < ni {
            let get = |a: RS| match a {
                RS::L(k) => vals[k],
                RS::K(p) => p,
                RS::P(k) => pv[k],
            };
            let dget = |a: RS| matches!(a, RS::L(k) if dl[k]);
            match prog.ins[pc] {
                Ins::Op {
                    op,
                    args,
                    n,
                    dst,
                    slot,
                    doff,
                } => {
                    let ps = [get(args[0]), get(args[1])];
                    let r = prim_of(op, &ps[..n]).ok()?;
                    let l = args[..n].iter().any(|&a| dget(a));
                    vals[dst] = r;
                    dl[dst] = l;
                    if slot != NO_SLOT && live[dst] {
                        if let Some((dd, hh)) =
                            super::partials::partials_of::<F>(op, &ps[..n], r)?.ok()?
                        {
                            let b = j * nd + doff;
                            d[b..b + n].copy_from_slice(&dd[..n]);
                            has[j * ns + slot] = hh[0] as u8 | (hh[1] as u8) << 1;
                        }
                    }
                }
                Ins::Cmp { op, args, dst } => {
                    vals[dst] = scalar::cmpop(op, get(args[0]), get(args[1])).ok()?;
                    dl[dst] = false;
                }
                Ins::Read { f, idx, dst, doff } => {
                    let i = crate::array::int_of(get(idx))?;
                    if i < 0 || i >= fs[f].len() as i128 {
                        return None;
                    }
                    let i = i as usize;
                    vals[dst] = fs[f].get(i);
                    dl[dst] = free_nodes[f] != NONE;
                    d[j * nd + doff] = i as f64;
                }
                Ins::Branch { cond, to } => {
                    let PrimValue::Bool(c) = get(cond) else {
                        return None;
                    };
                    if !c {
                        pc = to;
                        continue;
                    }
                }
                Ins::Jump { to } => {
                    pc = to;
                    continue;
                }
                Ins::Move { src, dst, slot } => {
                    vals[dst] = get(src);
                    dl[dst] = dget(src);
                    has[j * ns + slot] = 4;
                }
            }
            pc += 1;
        }
        for ((o, src), ol) in outs.iter_mut().zip(&prog.outs).zip(&mut out_live) {
            let p = match *src {
                RS::L(k) => {
                    *ol |= dl[k];
                    vals[k]
                }
                RS::K(p) => p,
                RS::P(k) => pv[k],
            };
            o.push(F::of(p)?);
        }
    }
    let outs = outs
        .into_iter()
        .map(|o| ArrayValue::from_vec(&[w as i64], o))
        .collect();
    let tracked = (0..prog.outs.len()).filter(|&o| out_live[o]).collect();
    Some((
        MapRec {
            prog,
            n: w,
            elem,
            d,
            has,
            in_nodes,
            free_nodes,
            live,
            tracked,
        },
        outs,
    ))
}

/// What a bulk map's adjoint rule contributes: `(node, array)` per tracked
/// parameter (last parameter first), and `(node, position, scalar)` per
/// read of a tracked free array, in the element-by-element sweep's order.
pub(crate) type MapBack = (Vec<(u32, V)>, Vec<(u32, usize, V)>);

/// The contributions of bulk map outputs' adjoints `roots` (output index,
/// adjoint) to the inputs' and free arrays' adjoints (see [`MapBack`]).
/// The per-element reverse pass (last element first) seeds every root
/// (last output first), visits the executed instructions backwards and
/// adds `∂·ā` into each live operand — one joint pass for all outputs, as
/// the generic sweep does element by element; an `if` result's adjoint
/// goes to the result of the branch that ran, a read's to its position.
pub(crate) fn map_back(
    st: &mut AdState,
    rec: &MapRec,
    roots: Vec<(usize, V)>,
) -> Result<MapBack, String> {
    let plain = roots.iter().all(|(_, a)| match a {
        V::Plain(Value::Array(x)) => x.elem_type() == rec.elem && x.rank() == 1,
        _ => false,
    });
    if plain {
        let avs: Vec<(usize, &ArrayValue)> = roots
            .iter()
            .filter_map(|(o, a)| match a {
                V::Plain(Value::Array(x)) => Some((*o, x)),
                _ => None,
            })
            .collect();
        let r = match rec.elem {
            PrimType::F64 => map_back_plain::<f64>(rec, &avs),
            PrimType::F32 => map_back_plain::<f32>(rec, &avs),
            _ => None,
        };
        if let Some(r) = r {
            return Ok(r);
        }
    }
    map_back_nested(st, rec, roots)
}

/// The per-element reverse pass of [`map_back`] over adjoints of type `A`:
/// `add(s, c)`, `mul(∂, ā)`; `emit(node, position, ā)` for reads.
pub(super) fn elem_back<A: Clone, E>(
    rec: &MapRec,
    j: usize,
    adj: &mut [Option<A>],
    add: &mut dyn FnMut(A, A) -> Result<A, E>,
    mul: &mut dyn FnMut(f64, &A) -> Result<A, E>,
    emit: &mut dyn FnMut(u32, usize, A),
) -> Result<(), E> {
    let ns = rec.prog.nslots;
    let nd = rec.prog.nd;
    for ins in rec.prog.ins.iter().rev() {
        match *ins {
            Ins::Op {
                args,
                n,
                dst,
                slot,
                doff,
                ..
            } if slot != NO_SLOT => {
                let Some(ai) = adj[dst].take() else { continue };
                let h = rec.has[j * ns + slot];
                let b = j * nd + doff;
                for (k, &arg) in args.iter().enumerate().take(n) {
                    let RS::L(t) = arg else { continue };
                    if h & (1 << k) == 0 || !rec.live[t] {
                        continue;
                    }
                    let c = mul(rec.d[b + k], &ai)?;
                    adj[t] = Some(match adj[t].take() {
                        None => c,
                        Some(s) => add(s, c)?,
                    });
                }
            }
            Ins::Read { f, dst, doff, .. } => {
                let Some(ai) = adj[dst].take() else { continue };
                if rec.free_nodes[f] != NONE {
                    emit(rec.free_nodes[f], rec.d[j * nd + doff] as usize, ai);
                }
            }
            Ins::Move { src, dst, slot } => {
                if rec.has[j * ns + slot] & 4 == 0 {
                    continue;
                }
                let Some(ai) = adj[dst].take() else { continue };
                if let RS::L(t) = src {
                    if rec.live[t] {
                        adj[t] = Some(match adj[t].take() {
                            None => ai,
                            Some(s) => add(s, ai)?,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn map_back_plain<F: Fl + nabla_values::Elem>(
    rec: &MapRec,
    roots: &[(usize, &ArrayValue)],
) -> Option<MapBack> {
    let mut rs = Vec::with_capacity(roots.len());
    for (o, a) in roots.iter().rev() {
        if let RS::L(l) = rec.prog.outs[*o] {
            rs.push((l, a.as_slice::<F>()?));
        }
    }
    let np = rec.in_nodes.len();
    let zero = F::ZERO;
    let mut cs: Vec<Vec<F>> = (0..np)
        .map(|k| {
            if rec.in_nodes[k] != NONE {
                vec![zero; rec.n]
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut frees = Vec::new();
    let mut adj: Vec<Option<F>> = vec![None; rec.prog.nl];
    let mut add = |s: F, c: F| Ok::<F, ()>(s + c);
    // Zero adjoints are symbolic: never multiplied by a partial (which may
    // be infinite or NaN).
    let mut mul = |d: f64, a: &F| {
        Ok::<F, ()>(if *a == zero {
            zero
        } else {
            F::from_f64(d) * *a
        })
    };
    for j in (0..rec.n).rev() {
        adj.iter_mut().for_each(|x| *x = None);
        for (l, av) in &rs {
            if av[j] == zero {
                continue;
            }
            adj[*l] = Some(match adj[*l] {
                None => av[j],
                Some(s) => s + av[j],
            });
        }
        let mut emit = |nd: u32, pos: usize, a: F| frees.push((nd, pos, V::prim(a.wrap())));
        elem_back(rec, j, &mut adj, &mut add, &mut mul, &mut emit).ok()?;
        for (k, c) in cs.iter_mut().enumerate() {
            if let (Some(x), false) = (adj[k], c.is_empty()) {
                c[j] = x;
            }
        }
    }
    Some((
        cs.into_iter()
            .enumerate()
            .rev()
            .filter(|(k, _)| rec.in_nodes[*k] != NONE)
            .map(|(k, c)| {
                (
                    rec.in_nodes[k],
                    V::Plain(Value::Array(ArrayValue::from_vec(&[rec.n as i64], c))),
                )
            })
            .collect(),
        frees,
    ))
}

/// [`map_back`] when an adjoint is itself an AD value (nested AD): the same
/// pass with AD-aware operations, element by element.
pub(super) fn map_back_nested(
    st: &mut AdState,
    rec: &MapRec,
    roots: Vec<(usize, V)>,
) -> Result<MapBack, String> {
    let np = rec.in_nodes.len();
    let elem = rec.elem;
    let konst = move |x: f64| {
        V::prim(if elem == PrimType::F32 {
            PrimValue::F32(x as f32)
        } else {
            PrimValue::F64(x)
        })
    };
    let mut cs: Vec<Vec<Option<V>>> = (0..np).map(|_| vec![None; rec.n]).collect();
    let mut frees = Vec::new();
    for j in (0..rec.n).rev() {
        let pick = Rc::new(Lin::Move {
            from: super::lin::Reg::Contig { start: j, len: 1 },
            to: super::lin::Reg::whole(1),
            shape: Rc::from([]),
            elem: rec.elem,
        });
        let mut adj: Vec<Option<V>> = vec![None; rec.prog.nl];
        for (o, a) in roots.iter().rev() {
            let RS::L(l) = rec.prog.outs[*o] else {
                continue;
            };
            let aj = st.lin(&pick, vec![a.clone()])?;
            adj[l] = Some(match adj[l].take() {
                None => aj,
                Some(s) => st.prim(AdOp::Bin(BinOp::Add), &[s, aj])?,
            });
        }
        {
            let st = std::cell::RefCell::new(&mut *st);
            let mut add = |s: V, c: V| st.borrow_mut().prim(AdOp::Bin(BinOp::Add), &[s, c]);
            let mut mul = |d: f64, a: &V| {
                st.borrow_mut()
                    .prim(AdOp::Bin(BinOp::Mul), &[konst(d), a.clone()])
            };
            let mut emit = |nd: u32, pos: usize, a: V| frees.push((nd, pos, a));
            elem_back(rec, j, &mut adj, &mut add, &mut mul, &mut emit)?;
        }
        for (k, c) in cs.iter_mut().enumerate() {
            c[j] = adj[k].take();
        }
    }
    let mut res = Vec::new();
    for (k, c) in cs.into_iter().enumerate().rev() {
        if rec.in_nodes[k] == NONE {
            continue;
        }
        let op = Rc::new(Lin::Stack {
            n: rec.n,
            row: Rc::from([]),
            elem: rec.elem,
        });
        let c = c
            .into_iter()
            .map(|x| x.unwrap_or_else(|| konst(0.0)))
            .collect();
        res.push((rec.in_nodes[k], st.lin(&op, c)?));
    }
    Ok((res, frees))
}
