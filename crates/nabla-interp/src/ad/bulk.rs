//! Bulk AD rules for `reduce` with a recognised operator and for `map` of
//! float scalar operations (see [`Interp::ad_bulk_map`]).
//!
//! The generic path differentiates a `reduce` by running its operator
//! lambda once per element in AD mode: in reverse mode that records, per
//! element, a slice entry for the row and an entry for the operator — about
//! a hundred bytes of tape and a few hundred nanoseconds per element. When
//! the operator is one of `+`, `*`, `min`, `max` on `f32`/`f64` (a lambda
//! `\a b -> a op b`), the input a rank-1 array whose primal (and tangent)
//! are plain, and the neutral element plain, the whole `reduce` is instead
//! one operation (seed 003 §5 treats `reduce` with these operators as
//! special cases for the same reason):
//!
//! * forward mode folds primal and tangent together in one native loop;
//! * reverse mode records **one** [`Entry::Reduce`]; its adjoint rule is a
//!   broadcast for `+`, the product of the other elements for `*` (from
//!   prefix products and a suffix product accumulated backwards, so zeros
//!   need no division), and a single position — the arg-extremum — for
//!   `min`/`max`.
//!
//! Every result is computed in the same order and with the same rules as the
//! element-by-element path (a left fold; ties of `min`/`max` go to the
//! accumulator, as `rules.rs`), so both paths give bit-identical primals,
//! tangents and adjoints.

use super::lin::Lin;
use super::rules::AdOp;
use super::tape::{Entry, NONE};
use super::value::V;
use super::{AdState, Level};
use crate::eval::{err, Interp, Res};
use crate::scalar;
use nabla_ir::{Atom, Exp, Lambda};
use nabla_prim::{BinOp, CmpOp, PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use std::rc::Rc;

use super::fast::Fl;

/// The adjoint rule of a bulk `reduce` (see [`Entry::Reduce`]).
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
fn red_op(lam: &Lambda) -> Option<BinOp> {
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
/// is selected (the rule of `rules::deriv` for `Min`/`Max`).
#[inline]
fn keeps_acc(o: BinOp, a: PrimValue, b: PrimValue) -> bool {
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

fn slice_of<F: Fl + nabla_values::Elem>(a: &ArrayValue) -> Option<&[F]> {
    if a.rank() != 1 {
        return None;
    }
    a.as_slice::<F>()
}

/// Forward mode: primal and tangent of the fold.
fn fwd_fold<F: Fl + nabla_values::Elem>(
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
fn rev_fold<F: Fl + nabla_values::Elem>(
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

impl<'p> Interp<'p> {
    /// A `reduce` with one operand through the bulk rules, when they apply
    /// (see the module documentation); `None` otherwise.
    pub(crate) fn ad_bulk_reduce(&mut self, lam: &Lambda, ne: &V, x: &V) -> Option<Res<V>> {
        let o = red_op(lam)?;
        let V::Plain(Value::Prim(ne)) = ne else {
            return None;
        };
        let ne = *ne;
        match x {
            V::Dual(d) => {
                let (V::Plain(Value::Array(p)), V::Plain(Value::Array(t))) = (&d.p, &d.t) else {
                    return None;
                };
                let r = match ne {
                    PrimValue::F64(_) => fwd_fold::<f64>(o, ne, p, t)?,
                    PrimValue::F32(_) => fwd_fold::<f32>(o, ne, p, t)?,
                    _ => return None,
                };
                Some(match r {
                    Ok((p, t)) => Ok(V::DualS { lvl: d.lvl, p, t }),
                    Err(e) => err(e),
                })
            }
            V::Rev(r) => {
                let V::Plain(Value::Array(p)) = &r.p else {
                    return None;
                };
                let res = match ne {
                    PrimValue::F64(_) => rev_fold::<f64>(o, ne, p)?,
                    PrimValue::F32(_) => rev_fold::<f32>(o, ne, p)?,
                    _ => return None,
                };
                let (prim, how) = match res {
                    Ok(x) => x,
                    Err(e) => return Some(err(e)),
                };
                let Level::Rev(tape) = &mut self.ad.levels[r.lvl as usize - 1] else {
                    return Some(err("internal error: reverse value of a forward level"));
                };
                let node = match tape.push(Entry::Reduce(Box::new(Red {
                    src: r.node,
                    n: p.num_elems(),
                    elem: ne.prim_type(),
                    how,
                }))) {
                    Ok(n) => n,
                    Err(e) => return Some(err(e)),
                };
                Some(Ok(V::RevS {
                    lvl: r.lvl,
                    p: prim,
                    node,
                }))
            }
            _ => None,
        }
    }
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
fn mul_back<F: Fl + nabla_values::Elem>(
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
enum Src {
    L(usize),
    K(PrimValue),
    G(usize),
}

/// What a variable of a compiled map lambda stands for: a scalar operand,
/// or a part of a parameter's row (input `k`, flat offset `off` in the row,
/// shape `shape`) read by `Index`.
enum Loc {
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
struct MOp {
    op: AdOp,
    args: [Src; 2],
    n: usize,
}

/// A map lambda of float scalar statements, compiled to locals (see
/// [`Interp::ad_bulk_map`]).
pub(crate) struct MapProg {
    np: usize,
    ops: Vec<MOp>,
    outs: Vec<Src>,
    /// Elements read from the rows of array parameters with constant
    /// indices: (input, flat offset in the row).
    gathers: Vec<(usize, usize)>,
}

/// The record of one bulk `map` in reverse mode, shared by its outputs'
/// entries: per element and statement the two partials (`d`, `f64`, exact
/// for `f32`) and whether the rule gave them (`has`, two bits), and the
/// node of each parameter's array (`NONE`: constant).
pub(crate) struct MapRec {
    prog: MapProg,
    pub n: usize,
    pub elem: PrimType,
    d: Vec<f64>,
    has: Vec<u8>,
    in_nodes: Vec<u32>,
    /// Which locals depend on a tracked parameter.
    live: Vec<bool>,
    /// The outputs that do (in order), each recorded as one entry.
    pub tracked: Vec<usize>,
}

/// One output of a bulk `map` (see [`Entry::Map`]): the `k`-th of the
/// outputs that depend on a tracked input, whose nodes are `first`,
/// `first + 1`, … (recorded consecutively).
pub(crate) struct MapOut {
    pub rec: Rc<MapRec>,
    pub k: usize,
    pub first: u32,
}

/// Operators whose float result has the operands' type (no comparisons,
/// no classification functions).
fn float_op(op: AdOp) -> bool {
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

impl<'p> Interp<'p> {
    /// Compiles a map lambda whose body is float scalar operations on its
    /// parameters, literals and plain scalar free variables of type `elem`,
    /// and reads of single elements of its array parameters (whose rows have
    /// shapes `rows`) at constant in-bounds indices (literals or plain free
    /// variables).
    fn compile_map(
        &self,
        s: &[Value],
        ad: &[Option<V>],
        lam: &Lambda,
        elem: PrimType,
        rows: &[&[i64]],
    ) -> Option<MapProg> {
        let np = lam.params.len();
        if rows.len() != np {
            return None;
        }
        let mut locals: Vec<(nabla_ir::Var, Loc)> = lam
            .params
            .iter()
            .zip(rows)
            .enumerate()
            .map(|(k, (p, row))| {
                let loc = if row.is_empty() {
                    Loc::S(Src::L(k))
                } else {
                    Loc::View {
                        k,
                        off: 0,
                        shape: row.to_vec(),
                    }
                };
                (p.var, loc)
            })
            .collect();
        let find = |locals: &[(nabla_ir::Var, Loc)], v: nabla_ir::Var| -> Option<usize> {
            locals.iter().rposition(|(x, _)| *x == v)
        };
        let plain = |v: nabla_ir::Var| -> Option<PrimValue> {
            let i = v.0 as usize;
            match (ad.get(i)?, s.get(i)?) {
                (None, Value::Prim(p)) => Some(*p),
                _ => None,
            }
        };
        let src = |locals: &[(nabla_ir::Var, Loc)], a: &Atom| -> Option<Src> {
            match a {
                Atom::Const(c) if c.prim_type() == elem => Some(Src::K(*c)),
                Atom::Const(_) => None,
                Atom::Var(v) => match find(locals, *v) {
                    Some(i) => match &locals[i].1 {
                        Loc::S(x) => Some(*x),
                        Loc::View { .. } => None,
                    },
                    None => plain(*v).filter(|p| p.prim_type() == elem).map(Src::K),
                },
            }
        };
        let mut ops = Vec::with_capacity(lam.body.stms.len());
        let mut gathers = Vec::new();
        for stm in &lam.body.stms {
            let [p] = stm.pat.as_slice() else {
                return None;
            };
            let (op, args, n) = match &stm.exp {
                Exp::BinOp(o, a, b) => (AdOp::Bin(*o), [src(&locals, a)?, src(&locals, b)?], 2),
                Exp::UnOp(o, a) => {
                    let x = src(&locals, a)?;
                    (AdOp::Un(*o), [x, x], 1)
                }
                Exp::Index(v, idx) => {
                    let i = find(&locals, *v)?;
                    let Loc::View { k, off, shape } = &locals[i].1 else {
                        return None;
                    };
                    if idx.len() > shape.len() {
                        return None;
                    }
                    let mut off = *off;
                    for (d, ix) in idx.iter().enumerate() {
                        let nabla_ir::DimIndex::Fix(a) = ix else {
                            return None;
                        };
                        let x = match a {
                            Atom::Const(c) => *c,
                            Atom::Var(v) if find(&locals, *v).is_none() => plain(*v)?,
                            Atom::Var(_) => return None,
                        };
                        let x = crate::array::int_of(x)?;
                        if x < 0 || x >= shape[d] as i128 {
                            return None;
                        }
                        let stride: i64 = shape[d + 1..].iter().product();
                        off += x as usize * stride as usize;
                    }
                    let rest = shape[idx.len()..].to_vec();
                    let k = *k;
                    let loc = if rest.is_empty() {
                        gathers.push((k, off));
                        Loc::S(Src::G(gathers.len() - 1))
                    } else {
                        Loc::View {
                            k,
                            off,
                            shape: rest,
                        }
                    };
                    locals.push((p.var, loc));
                    continue;
                }
                _ => return None,
            };
            if !float_op(op) {
                return None;
            }
            ops.push(MOp { op, args, n });
            locals.push((p.var, Loc::S(Src::L(np + ops.len() - 1))));
        }
        let outs = lam
            .body
            .result
            .iter()
            .map(|a| src(&locals, a))
            .collect::<Option<Vec<_>>>()?;
        Some(MapProg {
            np,
            ops,
            outs,
            gathers,
        })
    }

    /// A `map` in reverse mode over rank-1 `f32`/`f64` arrays whose lambda
    /// is a sequence of float scalar operations: runs the lambda natively on
    /// every element, keeps each statement's partial derivatives, and
    /// records **one** [`Entry::Map`] per output that depends on a tracked
    /// input (instead of a slice entry per element and input, an entry per
    /// element and statement, and a stack of all elements per output). Its
    /// adjoint rule replays the per-element reverse pass over the stored
    /// partials, in the generic path's order. `None` when this does not
    /// apply.
    pub(crate) fn ad_bulk_map(
        &mut self,
        s: &[Value],
        ad: &[Option<V>],
        lam: &Lambda,
        w: usize,
        inputs: &[(V, Rc<[i64]>)],
    ) -> Option<Res<Vec<V>>> {
        if inputs.is_empty() {
            return None;
        }
        let mut l = 0;
        for (x, _) in inputs {
            l = l.max(x.level());
        }
        if l == 0 {
            return None;
        }
        match self.ad.levels.get(l as usize - 1) {
            Some(Level::Fwd) => return self.ad_bulk_map_fwd(s, ad, lam, w, inputs, l),
            Some(Level::Rev(_)) => {}
            None => return None,
        }
        if inputs.iter().any(|(_, row)| !row.is_empty()) {
            return None;
        }
        let mut arrs = Vec::with_capacity(inputs.len());
        let mut in_nodes = Vec::with_capacity(inputs.len());
        for (x, _) in inputs {
            match x {
                V::Plain(Value::Array(a)) => {
                    arrs.push(a);
                    in_nodes.push(NONE);
                }
                V::Rev(r) if r.lvl == l => match &r.p {
                    V::Plain(Value::Array(a)) => {
                        arrs.push(a);
                        in_nodes.push(r.node);
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
        let elem = arrs[0].elem_type();
        if arrs.iter().any(|a| a.elem_type() != elem || a.rank() != 1) {
            return None;
        }
        let rows = vec![&[][..]; inputs.len()];
        let prog = self.compile_map(s, ad, lam, elem, &rows)?;
        if !prog.gathers.is_empty() {
            return None;
        }
        let r = match elem {
            PrimType::F64 => map_record::<f64>(prog, &arrs, in_nodes, w)?,
            PrimType::F32 => map_record::<f32>(prog, &arrs, in_nodes, w)?,
            _ => return None,
        };
        let (rec, outs) = match r {
            Ok(x) => x,
            Err(e) => return Some(err(e)),
        };
        let rec = Rc::new(rec);
        let mut res = Vec::with_capacity(outs.len());
        let Level::Rev(tape) = &mut self.ad.levels[l as usize - 1] else {
            return Some(err("internal error: reverse value of a forward level"));
        };
        let first = tape.entries.len() as u32;
        let mut k = 0;
        for (o, arr) in outs.into_iter().enumerate() {
            if !rec.tracked.contains(&o) {
                res.push(V::Plain(Value::Array(arr)));
                continue;
            }
            let node = match tape.push(Entry::Map(Box::new(MapOut {
                rec: rec.clone(),
                k,
                first,
            }))) {
                Ok(n) => n,
                Err(e) => return Some(err(e)),
            };
            k += 1;
            res.push(V::rev(l, V::Plain(Value::Array(arr)), node));
        }
        Some(Ok(res))
    }

    /// A `map` in forward mode (level `l`) whose lambda is a sequence of
    /// float scalar operations on the elements of its inputs (rank 1), or
    /// on single elements of their rows read at constant indices: runs the
    /// lambda natively on every element's primal and tangent, with exactly
    /// the element-by-element path's rules (`fast.rs`: the partials of
    /// [`super::fast::partials_of`], the tangent `Σ ∂ᵢ·ṫᵢ` over the operands
    /// that have one, in operand order; a result without tangent where all
    /// operands are constants or the rule says the result is constant), and
    /// builds each output's primal and tangent arrays directly (constant
    /// elements get a `+0` tangent, as when the generic path stacks them),
    /// instead of boxing a dual value per element, row and statement.
    /// Results are bit-identical to that path. `None` when this does not
    /// apply (nested AD values, other element types, other statements).
    fn ad_bulk_map_fwd(
        &mut self,
        s: &[Value],
        ad: &[Option<V>],
        lam: &Lambda,
        w: usize,
        inputs: &[(V, Rc<[i64]>)],
        l: u32,
    ) -> Option<Res<Vec<V>>> {
        let mut ps = Vec::with_capacity(inputs.len());
        let mut ts = Vec::with_capacity(inputs.len());
        let mut rows: Vec<&[i64]> = Vec::with_capacity(inputs.len());
        for (x, row) in inputs {
            match x {
                V::Plain(Value::Array(a)) => {
                    ps.push(a);
                    ts.push(None);
                }
                V::Dual(d) if d.lvl == l => match (&d.p, &d.t) {
                    (V::Plain(Value::Array(p)), V::Plain(Value::Array(t))) => {
                        ps.push(p);
                        ts.push(Some(t));
                    }
                    _ => return None,
                },
                _ => return None,
            }
            rows.push(row);
        }
        let elem = ps[0].elem_type();
        if ps.iter().any(|a| a.elem_type() != elem) {
            return None;
        }
        let prog = self.compile_map(s, ad, lam, elem, &rows)?;
        let rs: Vec<usize> = rows
            .iter()
            .map(|r| r.iter().product::<i64>() as usize)
            .collect();
        let r = match elem {
            PrimType::F64 => map_forward::<f64>(&prog, &ps, &ts, &rs, w)?,
            PrimType::F32 => map_forward::<f32>(&prog, &ps, &ts, &rs, w)?,
            _ => return None,
        };
        Some(match r {
            Ok(outs) => Ok(outs
                .into_iter()
                .map(|(p, t)| match t {
                    Some(t) => V::dual(l, V::Plain(Value::Array(p)), V::Plain(Value::Array(t))),
                    None => V::Plain(Value::Array(p)),
                })
                .collect()),
            Err(e) => err(e),
        })
    }
}

/// Runs a compiled map lambda on the primals and tangents (`None`: a
/// constant input) of every element (see [`Interp::ad_bulk_map_fwd`]);
/// `rs[k]`: the number of elements of a row of input `k`. Per output, the
/// primal array and the tangent array (`None`: no element has a tangent).
#[allow(clippy::type_complexity)]
fn map_forward<F: Fl + nabla_values::Elem>(
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
            tans[np + i] = match super::fast::partials_of::<F>(op.op, &pv[..n], r)? {
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
fn prim_of(op: AdOp, ps: &[PrimValue]) -> Result<PrimValue, String> {
    match op {
        AdOp::Bin(o) => match scalar::fast_binop(o, ps[0], ps[1]) {
            Some(r) => Ok(r),
            None => scalar::binop(o, ps[0], ps[1]),
        },
        AdOp::Un(o) => scalar::unop(o, ps[0]),
        _ => Err("internal error: unexpected operation in a bulk map".into()),
    }
}

/// Runs a compiled map lambda on every element, keeping the partials.
#[allow(clippy::type_complexity)]
fn map_record<F: Fl + nabla_values::Elem>(
    prog: MapProg,
    arrs: &[&ArrayValue],
    in_nodes: Vec<u32>,
    w: usize,
) -> Option<Result<(MapRec, Vec<ArrayValue>), String>> {
    let xs = arrs
        .iter()
        .map(|a| a.as_slice::<F>())
        .collect::<Option<Vec<_>>>()?;
    let np = prog.np;
    let nops = prog.ops.len();
    let mut live = vec![false; np + nops];
    for (k, &nd) in in_nodes.iter().enumerate() {
        live[k] = nd != NONE;
    }
    for (i, op) in prog.ops.iter().enumerate() {
        live[np + i] = op.args[..op.n]
            .iter()
            .any(|a| matches!(a, Src::L(j) if live[*j]));
    }
    let mut d = vec![0.0f64; w * 2 * nops];
    let mut has = vec![0u8; w * nops];
    let mut outs: Vec<Vec<F>> = prog.outs.iter().map(|_| Vec::with_capacity(w)).collect();
    let mut vals = vec![PrimValue::Bool(false); np + nops];
    for j in 0..w {
        for (v, x) in vals.iter_mut().zip(&xs) {
            *v = x[j].wrap();
        }
        for (i, op) in prog.ops.iter().enumerate() {
            let get = |a: Src| match a {
                Src::L(k) => vals[k],
                Src::K(p) => p,
                Src::G(_) => PrimValue::Bool(false),
            };
            let ps = [get(op.args[0]), get(op.args[1])];
            let r = match prim_of(op.op, &ps[..op.n]) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            vals[np + i] = r;
            if !live[np + i] {
                continue;
            }
            match super::fast::partials_of::<F>(op.op, &ps[..op.n], r)? {
                Ok(Some((dd, hh))) => {
                    let b = (j * nops + i) * 2;
                    d[b] = dd[0];
                    d[b + 1] = dd[1];
                    has[j * nops + i] = hh[0] as u8 | (hh[1] as u8) << 1;
                }
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
        for (o, src) in outs.iter_mut().zip(&prog.outs) {
            let p = match *src {
                Src::L(k) => vals[k],
                Src::K(p) => p,
                Src::G(_) => PrimValue::Bool(false),
            };
            o.push(F::of(p)?);
        }
    }
    let outs = outs
        .into_iter()
        .map(|o| ArrayValue::from_vec(&[w as i64], o))
        .collect();
    let tracked = (0..prog.outs.len())
        .filter(|&o| matches!(prog.outs[o], Src::L(i) if live[i]))
        .collect();
    Some(Ok((
        MapRec {
            prog,
            n: w,
            elem: arrs[0].elem_type(),
            d,
            has,
            in_nodes,
            live,
            tracked,
        },
        outs,
    )))
}

/// The contributions of bulk map outputs' adjoints `roots` (output index,
/// adjoint) to the inputs' adjoints: `(node, array)` pairs, in the order the
/// element-by-element sweep adds them (last parameter first). The
/// per-element reverse pass seeds every root (last output first), visits
/// the statements backwards and adds `∂·ā` into each live operand — one
/// joint pass for all outputs, as the generic sweep does element by element.
pub(crate) fn map_back(
    st: &mut AdState,
    rec: &MapRec,
    roots: Vec<(usize, V)>,
) -> Result<Vec<(u32, V)>, String> {
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

fn map_back_plain<F: Fl + nabla_values::Elem>(
    rec: &MapRec,
    roots: &[(usize, &ArrayValue)],
) -> Option<Vec<(u32, V)>> {
    let mut rs = Vec::with_capacity(roots.len());
    for (o, a) in roots.iter().rev() {
        if let Src::L(l) = rec.prog.outs[*o] {
            rs.push((l, a.as_slice::<F>()?));
        }
    }
    let np = rec.prog.np;
    let nops = rec.prog.ops.len();
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
    let mut adj: Vec<Option<F>> = vec![None; np + nops];
    for j in 0..rec.n {
        adj.iter_mut().for_each(|x| *x = None);
        for (l, av) in &rs {
            adj[*l] = Some(match adj[*l] {
                None => av[j],
                Some(s) => s + av[j],
            });
        }
        for i in (0..nops).rev() {
            let Some(ai) = adj[np + i] else { continue };
            let op = &rec.prog.ops[i];
            let h = rec.has[j * nops + i];
            let b = (j * nops + i) * 2;
            for k in 0..op.n {
                let Src::L(t) = op.args[k] else { continue };
                if h & (1 << k) == 0 || !rec.live[t] {
                    continue;
                }
                let c = F::from_f64(rec.d[b + k]) * ai;
                adj[t] = Some(match adj[t] {
                    None => c,
                    Some(s) => s + c,
                });
            }
        }
        for (k, c) in cs.iter_mut().enumerate() {
            if let (Some(x), false) = (adj[k], c.is_empty()) {
                c[j] = x;
            }
        }
    }
    Some(
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
    )
}

/// [`map_back`] when an adjoint is itself an AD value (nested AD): the same
/// pass with AD-aware operations, element by element.
fn map_back_nested(
    st: &mut AdState,
    rec: &MapRec,
    roots: Vec<(usize, V)>,
) -> Result<Vec<(u32, V)>, String> {
    let np = rec.prog.np;
    let nops = rec.prog.ops.len();
    let konst = |x: f64| {
        V::prim(if rec.elem == PrimType::F32 {
            PrimValue::F32(x as f32)
        } else {
            PrimValue::F64(x)
        })
    };
    let mut cs: Vec<Vec<V>> = (0..np).map(|_| Vec::with_capacity(rec.n)).collect();
    for j in 0..rec.n {
        let pick = Rc::new(Lin::Move {
            from: super::lin::Reg::Contig { start: j, len: 1 },
            to: super::lin::Reg::whole(1),
            shape: Rc::from([]),
            elem: rec.elem,
        });
        let mut adj: Vec<Option<V>> = vec![None; np + nops];
        for (o, a) in roots.iter().rev() {
            let Src::L(l) = rec.prog.outs[*o] else {
                continue;
            };
            let aj = st.lin(&pick, vec![a.clone()])?;
            adj[l] = Some(match adj[l].take() {
                None => aj,
                Some(s) => st.prim(AdOp::Bin(BinOp::Add), &[s, aj])?,
            });
        }
        for i in (0..nops).rev() {
            let Some(ai) = adj[np + i].take() else {
                continue;
            };
            let op = &rec.prog.ops[i];
            let h = rec.has[j * nops + i];
            let b = (j * nops + i) * 2;
            for k in 0..op.n {
                let Src::L(t) = op.args[k] else { continue };
                if h & (1 << k) == 0 || !rec.live[t] {
                    continue;
                }
                let c = st.prim(AdOp::Bin(BinOp::Mul), &[konst(rec.d[b + k]), ai.clone()])?;
                adj[t] = Some(match adj[t].take() {
                    None => c,
                    Some(s) => st.prim(AdOp::Bin(BinOp::Add), &[s, c])?,
                });
            }
        }
        for (k, c) in cs.iter_mut().enumerate() {
            c.push(adj[k].take().unwrap_or_else(|| konst(0.0)));
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
        res.push((rec.in_nodes[k], st.lin(&op, c)?));
    }
    Ok(res)
}
