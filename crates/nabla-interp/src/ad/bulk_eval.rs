//! The evaluator's entry points to the bulk AD rules of `bulk.rs`: a
//! `reduce` with a recognised operator ([`Interp::ad_bulk_reduce`]) and a
//! `map` of float scalar operations in reverse ([`Interp::ad_bulk_map`])
//! and forward ([`Interp::ad_bulk_map_fwd`]) mode. They read the operands
//! from the interpreter's slots, run the compiled kernels of `bulk.rs` and
//! record their one tape entry; the records and their backward rules stay
//! in `bulk.rs`, below the evaluator (see `lib.rs` on the module layering).

use super::bulk::{
    compile_rev, float_op, fwd_fold, map_forward, map_record, red_op, rev_fold, Loc, MOp, MapOut,
    MapProg, Red, Src,
};
use super::rules::AdOp;
use super::tape::Entry;
use super::value::V;
use super::{Level, NONE};
use crate::eval::{err, Interp, Res};
use nabla_ir::{Atom, Exp, Lambda};
use nabla_prim::{PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use std::rc::Rc;

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
                self.stats.bulk_reduces_fwd += 1;
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
                self.stats.bulk_reduces_rev += 1;
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

    /// A `map` in reverse mode over rank-1 arrays (tracked ones `f32`/`f64`)
    /// whose lambda is a sequence of scalar operations (float ones, and
    /// integer ones and comparisons on untracked values), reads of free
    /// rank-1 arrays (plain, or tracked of the map's float type) at integer
    /// indices computed in the lambda, and `if`s on untracked conditions
    /// whose branch results are constants or values computed in the branch
    /// ([`RevProg`], compiled once per lambda): runs the lambda natively on
    /// every element, keeps each float statement's partial derivatives, each
    /// read's position and each branch taken, and records **one**
    /// [`Entry::Map`] per output that depends on a tracked array for some
    /// element (instead of a slice entry per element, input and read, an
    /// entry per element and statement, and a stack of all elements per
    /// output). Its adjoint rule replays the per-element reverse pass over
    /// the record in the generic path's order (last element first; a read's
    /// adjoint added at its position of the free array's adjoint as that
    /// path's slice entry does), so results are bit-identical. `None` when
    /// this does not apply — including an out-of-bounds read or any other
    /// run-time error, which the generic path then reports with its
    /// location — and when a tracked free array is also a tracked input.
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
        if l > 0 {
            match self.ad.levels.get(l as usize - 1) {
                Some(Level::Fwd) => return self.ad_bulk_map_fwd(s, ad, lam, w, inputs, l),
                Some(Level::Rev(_)) => {}
                None => return None,
            }
        }
        if inputs.iter().any(|(_, row)| !row.is_empty()) {
            return None;
        }
        let key = lam as *const Lambda;
        let prog = match self.ad.rev_maps.get(&key) {
            Some(p) => p.clone()?,
            None => {
                let p = compile_rev(s, ad, lam).map(Rc::new);
                self.ad.rev_maps.insert(key, p.clone());
                p?
            }
        };
        // The plain scalar free variables (the program is compiled once
        // per lambda: they must be plain at this call too).
        let mut pv = Vec::with_capacity(prog.pfree.len());
        for v in &prog.pfree {
            let i = v.0 as usize;
            match (ad.get(i)?, s.get(i)?) {
                (None, Value::Prim(p)) => pv.push(*p),
                _ => return None,
            }
        }
        // The free arrays: plain, or reverse-mode values (of one level).
        let mut frees = Vec::with_capacity(prog.free.len());
        let mut free_nodes = Vec::with_capacity(prog.free.len());
        for v in &prog.free {
            let i = v.0 as usize;
            match (ad.get(i)?, s.get(i)?) {
                (None, Value::Array(a)) if a.rank() == 1 => {
                    frees.push(a);
                    free_nodes.push(NONE);
                }
                (Some(V::Rev(r)), _) => {
                    let V::Plain(Value::Array(a)) = &r.p else {
                        return None;
                    };
                    if l != 0 && r.lvl != l {
                        return None;
                    }
                    l = r.lvl;
                    frees.push(a);
                    free_nodes.push(r.node);
                }
                _ => return None,
            }
        }
        if l == 0 || !matches!(self.ad.levels.get(l as usize - 1), Some(Level::Rev(_))) {
            return None;
        }
        let mut arrs = Vec::with_capacity(inputs.len());
        let mut in_nodes = Vec::with_capacity(inputs.len());
        let mut elem = None;
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
                        elem.get_or_insert(a.elem_type());
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
        for (a, &nd) in frees.iter().zip(&free_nodes) {
            if nd != NONE {
                elem.get_or_insert(a.elem_type());
                // Contributions into one node from a free read and a
                // parameter would be summed in another order.
                if in_nodes.contains(&nd) {
                    return None;
                }
            }
        }
        let elem = elem?;
        let tracked_ok =
            |a: &ArrayValue, nd: u32| nd == NONE || (a.elem_type() == elem && a.rank() == 1);
        if arrs
            .iter()
            .zip(&in_nodes)
            .any(|(a, &nd)| a.rank() != 1 || !tracked_ok(a, nd))
            || frees
                .iter()
                .zip(&free_nodes)
                .any(|(a, &nd)| !tracked_ok(a, nd))
        {
            return None;
        }
        let (rec, outs) = match elem {
            PrimType::F64 => map_record::<f64>(prog, &pv, &arrs, in_nodes, &frees, free_nodes, w)?,
            PrimType::F32 => map_record::<f32>(prog, &pv, &arrs, in_nodes, &frees, free_nodes, w)?,
            _ => return None,
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
        self.stats.bulk_maps_rev += 1;
        Some(Ok(res))
    }

    /// A `map` in forward mode (level `l`) whose lambda is a sequence of
    /// float scalar operations on the elements of its inputs (rank 1), or
    /// on single elements of their rows read at constant indices: runs the
    /// lambda natively on every element's primal and tangent, with exactly
    /// the element-by-element path's rules (`fast.rs`: the partials of
    /// [`super::partials::partials_of`], the tangent `Σ ∂ᵢ·ṫᵢ` over the operands
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
        self.stats.bulk_maps_fwd += 1;
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
