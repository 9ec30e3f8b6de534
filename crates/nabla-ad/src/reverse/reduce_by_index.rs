//! The rules of `reduce_by_index` (Bruun and Larsen, "Reverse Automatic
//! Differentiation in Futhark" (master's thesis, 2022), §6; Schenck, Rønning,
//! Henriksen and Oancea, "AD for an Array Language with Nested Parallelism"
//! (SC22), §5.1, multi-reduce): the special cases of `+` (§6.2: each value gets
//! the adjoint of its bucket) and `min`/`max` (§6.4), and the generic rule,
//! computed sequentially per bucket. The histograms are first lowered to these
//! forms by `histograms.rs`.

use super::adjoints::{iota, sequence, Adjoints, Results, Reverse};
use super::operators::{is_min_or_max, is_plus, push_for_loop};
use crate::util::{type_of, zero_like};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, Lambda, Param, PrimType, PrimValue, Soac, Stm,
    Type, UnOp, Var,
};

/// A histogram `reduce_by_index dest op neutral indices values` of `w`
/// values, one array per component of the operator.
#[derive(Clone, Copy)]
struct Histogram<'a> {
    w: Atom,
    op: &'a Lambda,
    neutral: &'a [Atom],
    dest: &'a [Var],
    indices: Var,
    values: &'a [Var],
}

impl Reverse<'_> {
    /// `pat = reduce_by_index dest lam neutral indices values`: the special
    /// cases of `+` and `min`/`max` (Bruun and Larsen §6.2, §6.4), else
    /// the generic rule.
    pub(super) fn reduce_by_index(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        soac: &Soac,
    ) -> Result<(), AdError> {
        let Soac::Hist {
            w,
            dest,
            lam,
            neutral,
            indices,
            values,
        } = soac
        else {
            return error(self.span, "internal error: not a histogram");
        };
        let (pat, ybar, g) = (res.pat, res.ybar, res.ybar[0]);
        let h = Histogram {
            w: *w,
            op: lam,
            neutral,
            dest,
            indices: *indices,
            values,
        };
        if dest.len() == 1 && is_plus(lam) {
            // `+` histogram (Bruun and Larsen): the destination's adjoint passes
            // through; each value gets the adjoint of its bucket.
            let Some(Atom::Var(g)) = g else { return Ok(()) };
            if type_of(b, self.span, g)?.rank() != 1 {
                return self.unsupported("reduce_by_index into arrays of rank > 1");
            }
            self.add_shared(b, adj, dest[0], Atom::Var(g))?;
            if self.active.contains(&values[0]) {
                let gathered = self.gather(b, g, &[*indices], *w, false)?;
                self.add(b, adj, values[0], Atom::Var(gathered), true)?;
            }
        } else if dest.len() == 1 && is_min_or_max(lam) {
            let Some(Atom::Var(g)) = g else { return Ok(()) };
            if type_of(b, self.span, g)?.rank() != 1 {
                return self.unsupported("reduce_by_index into arrays of rank > 1");
            }
            self.hist_min_max(b, adj, h, pat[0].var, g)?;
        } else if dest.len() == lam.ret.len() {
            if ybar.iter().all(|a| a.is_none()) {
                return Ok(());
            }
            // Components without an adjoint get zeros.
            let mut gs = Vec::with_capacity(dest.len());
            for (k, p) in pat.iter().enumerate() {
                let g = match ybar[k] {
                    Some(Atom::Var(g)) => g,
                    _ => match zero_like(b, self.span, p.var)? {
                        Atom::Var(z) => z,
                        Atom::Const(_) => {
                            return error(self.span, "internal error: a scalar histogram")
                        }
                    },
                };
                if type_of(b, self.span, g)?.rank() != 1 + lam.ret[k].rank() {
                    return error(self.span, "internal error: a histogram's adjoint");
                }
                gs.push(g);
            }
            self.hist_generic(b, adj, h, &gs)?;
        } else {
            return error(self.span, "internal error: a histogram of the wrong arity");
        }
        Ok(())
    }

    /// `reduce_by_index` with any associative operator on scalars or on
    /// tuples of `k` scalars (Bruun and Larsen's generic rule, computed sequentially
    /// instead of by sorting): a loop over the values in order gives each
    /// value `l[i]`, the reduction of the earlier values of its bucket, and
    /// each bucket its total `t`; a loop in reverse order gives `r[i]`, the
    /// reduction of the later ones. A bucket's result is
    /// `op(dest[b], op(op(l[i], vs[i]), r[i]))` for each of its values, so
    /// `v̄s[i]` is the vjp of that function of `vs[i]` with the bucket's
    /// adjoint as seed, and `d̄est[b]` the vjp of `op(d, t[b])` in `d`.
    /// Out-of-bounds values go to an extra bucket (index `n`) and get a zero
    /// adjoint. One array per component throughout: `dest`, `neutral`,
    /// `values` and the result adjoints `g` (`[n]` each) have `k` entries.
    fn hist_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        h: Histogram,
        g: &[Var],
    ) -> Result<(), AdError> {
        let Histogram {
            w,
            op,
            neutral,
            dest,
            indices,
            values,
        } = h;
        let k = dest.len();
        if op.params.len() != 2 * k || neutral.len() != k || values.len() != k || g.len() != k {
            return error(
                self.span,
                "internal error: malformed reduce_by_index operator",
            );
        }
        let span = self.span;
        let dest_active = dest.iter().any(|d| self.active.contains(d));
        let values_active = values.iter().any(|v| self.active.contains(v));
        if !dest_active && !values_active {
            return Ok(());
        }
        // A bucket's type: a scalar, or a row for an operator on arrays.
        let mut ts = Vec::with_capacity(k);
        for v in g {
            let gt = type_of(b, span, *v)?;
            ts.push(crate::util::existential(
                &gt.row().unwrap_or(Type::Prim(gt.elem())),
            ));
        }
        let ats: Vec<Type> = ts.iter().map(|t| t.array_of(Dim::Ext)).collect();
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        let n = Atom::Var(b.let1("n", Exp::Size(g[0], 0))?);
        let n1 = b.binop(BinOp::Add, n, one)?;
        // The bucket of value i, n where out of bounds.
        let bucket = |b: &mut FunctionBuilder, i: Atom| -> Result<(Atom, Atom), AdError> {
            let idx = Atom::Var(b.let1("bucket", Exp::Index(indices, vec![DimIndex::Fix(i)]))?);
            let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), idx);
            let hi = b.cmp(CmpOp::Lt, idx, n);
            let inside = b.binop(BinOp::LogAnd, lo, hi)?;
            Ok((b.select(inside, idx, n)?, inside))
        };
        // Each component of element `i` of `arrays`.
        let elements = |b: &mut FunctionBuilder, name: &str, arrays: &[Var], i: Atom| {
            arrays
                .iter()
                .map(|a| {
                    Ok(Atom::Var(
                        b.let1(name, Exp::Index(*a, vec![DimIndex::Fix(i)]))?,
                    ))
                })
                .collect::<Result<Vec<Atom>, AdError>>()
        };
        // One pass over the values, forwards or backwards: `partial` per
        // bucket, and each value's exclusive reduction within its bucket
        // (`k` arrays each).
        let pass = |this: &mut Self,
                    b: &mut FunctionBuilder,
                    backwards: bool|
         -> Result<(Vec<Var>, Vec<Var>), AdError> {
            let mut init = Vec::with_capacity(2 * k);
            for ne in neutral {
                init.push(Atom::Var(
                    b.let1_existential("partial", Exp::Replicate(n1, *ne))?,
                ));
            }
            for ne in neutral {
                init.push(Atom::Var(
                    b.let1_existential("excl", Exp::Replicate(w, *ne))?,
                ));
            }
            let mut params = Vec::with_capacity(2 * k);
            for (name, at) in ats
                .iter()
                .map(|t| ("partial", t))
                .chain(ats.iter().map(|t| ("excl", t)))
            {
                let mut p = b.param(name, at.clone());
                p.unique = true;
                params.push(p);
            }
            let partial: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
            let excl: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
            let j = b.vars.fresh("j", i64t.clone());
            b.begin();
            let i = if backwards {
                let last = b.binop(BinOp::Sub, w, one)?;
                b.binop(BinOp::Sub, last, Atom::Var(j))?
            } else {
                Atom::Var(j)
            };
            let (bk, _) = bucket(b, i)?;
            let v = elements(b, "value", values, i)?;
            let mut old = elements(b, "partial_elem", &partial, bk)?;
            // A row read from `partial` is copied: `partial` is updated in
            // place below, while the row lives on in `excl`.
            for (o, t) in old.iter_mut().zip(&ts) {
                if let (Atom::Var(row), true) = (*o, t.rank() > 0) {
                    *o = Atom::Var(b.let1("partial_elem", Exp::Copy(row))?);
                }
            }
            let args: Vec<Atom> = if backwards {
                v.iter().chain(&old).copied().collect()
            } else {
                old.iter().chain(&v).copied().collect()
            };
            let new = this.apply_op(b, op, &args)?;
            let mut result = Vec::with_capacity(2 * k);
            for c in 0..k {
                result.push(Atom::Var(b.let1(
                    "partial",
                    Exp::Update(partial[c], vec![DimIndex::Fix(bk)], new[c]),
                )?));
            }
            for c in 0..k {
                result.push(Atom::Var(b.let1(
                    "excl",
                    Exp::Update(excl[c], vec![DimIndex::Fix(i)], old[c]),
                )?));
            }
            let body = b.end(result);
            let names = |c: usize| if c < k { "partial" } else { "excl" };
            let vars = push_for_loop(b, params, init, (j, w), body, span, names);
            Ok((vars[..k].to_vec(), vars[k..].to_vec()))
        };
        let (totals, before) = pass(self, b, false)?;
        if dest_active {
            let iota_n = iota(b, n)?;
            let mut param_types = ts.clone();
            param_types.extend(ts.iter().cloned());
            param_types.push(i64t.clone());
            let lam = b.lambda::<AdError>("d", param_types, |b, ps| {
                // vjp (\d -> op(d, t[b])) dest[b] g[b]
                let total = elements(b, "total", &totals, Atom::Var(ps[2 * k]))?;
                let primals = ps[..k].iter().map(|v| Atom::Var(*v)).collect();
                let seeds = ps[k..2 * k].iter().map(|v| Atom::Var(*v)).collect();
                self.local_vjp(b, &ts, &ts, primals, seeds, |this, b, d| {
                    this.applied(b, op, &[d, &total[..]].concat())
                })
            })?;
            let pat: Vec<Param> = ats.iter().map(|t| b.param("adj_dest", t.clone())).collect();
            let mut arrs = dest.to_vec();
            arrs.extend(g.iter().copied());
            arrs.push(iota_n);
            let dbars: Vec<Var> = pat.iter().map(|p| p.var).collect();
            b.push(Stm {
                pat,
                exp: Exp::Soac(Soac::Map { w: n, lam, arrs }),
                span,
            });
            for (d, dbar) in dest.iter().zip(dbars) {
                self.add(b, adj, *d, Atom::Var(dbar), true)?;
            }
        }
        if !values_active {
            return Ok(());
        }
        let (_, after) = pass(self, b, true)?;
        let iota_w = iota(b, w)?;
        let mut param_types = Vec::with_capacity(3 * k + 1);
        for _ in 0..3 {
            param_types.extend(ts.iter().cloned());
        }
        param_types.push(i64t.clone());
        let lam = b.lambda::<AdError>("x", param_types, |b, ps| {
            let (x, l, r, i) = (
                &ps[..k],
                &ps[k..2 * k],
                &ps[2 * k..3 * k],
                Atom::Var(ps[3 * k]),
            );
            let (bk, inside) = bucket(b, i)?;
            b.begin();
            let gb = elements(b, "adj_elem", g, bk)?;
            let db = elements(b, "d", dest, bk)?;
            // vjp (\x -> op(dest[b], op(op(l, x), r))) x g[b]
            let l: Vec<Atom> = l.iter().map(|v| Atom::Var(*v)).collect();
            let r: Vec<Atom> = r.iter().map(|v| Atom::Var(*v)).collect();
            let primals = x.iter().map(|v| Atom::Var(*v)).collect();
            let adjoints = self.local_vjp(b, &ts, &ts, primals, gb, |this, b, x| {
                let first = this.applied(b, op, &[&l[..], x].concat())?;
                let second = this.applied(b, op, &[&first.result[..], &r[..]].concat())?;
                let third = this.applied(b, op, &[&db[..], &second.result[..]].concat())?;
                Ok(sequence(vec![first, second, third]))
            })?;
            let then_ = b.end(adjoints);
            // A value outside the buckets: zeros shaped like it.
            b.begin();
            let mut zeros = Vec::with_capacity(k);
            for v in x {
                zeros.push(zero_like(b, span, *v)?);
            }
            let else_ = b.end(zeros);
            let pat: Vec<Param> = ts.iter().map(|t| b.param("adj_value", t.clone())).collect();
            let results = pat.iter().map(|p| Atom::Var(p.var)).collect();
            b.push(Stm {
                pat,
                exp: Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
                span,
            });
            Ok(results)
        })?;
        let pat: Vec<Param> = ats.iter().map(|t| b.param("adj_hist", t.clone())).collect();
        let vbars: Vec<Var> = pat.iter().map(|p| p.var).collect();
        let mut arrs = values.to_vec();
        arrs.extend(before);
        arrs.extend(after);
        arrs.push(iota_w);
        b.push(Stm {
            pat,
            exp: Exp::Soac(Soac::Map { w, lam, arrs }),
            span,
        });
        for (v, vbar) in values.iter().zip(vbars) {
            self.add(b, adj, *v, Atom::Var(vbar), true)?;
        }
        Ok(())
    }

    /// `reduce_by_index` with `min` or `max`: in each bucket the adjoint of
    /// the result goes to the first contributor equal to it — the old
    /// destination element, else the first value in order (Bruun and Larsen, the
    /// min/max special case; ties like the reduce rule).
    fn hist_min_max(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        h: Histogram,
        result: Var,
        g: Var,
    ) -> Result<(), AdError> {
        let (w, dest, indices, values) = (h.w, h.dest[0], h.indices, h.values[0]);
        let span = self.span;
        let elem = type_of(b, span, g)?.elem();
        let t = Type::Prim(elem);
        let i64t = Type::Prim(PrimType::I64);
        let zero = Atom::Const(PrimValue::zero(elem));
        let nb = Atom::Var(b.let1("n", Exp::Size(g, 0))?);
        // The old destination keeps the adjoint where it equals the result.
        let dest_adj =
            b.lambda::<AdError>("d", vec![t.clone(), t.clone(), t.clone()], |b, ps| {
                let keep = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(ps[1]));
                Ok(vec![b.select(keep, Atom::Var(ps[2]), zero)?])
            })?;
        let dbar = b.let1_existential(
            "adj_dest",
            Exp::Soac(Soac::Map {
                w: nb,
                lam: dest_adj,
                arrs: vec![dest, result, g],
            }),
        )?;
        self.add(b, adj, dest, Atom::Var(dbar), true)?;
        if !self.active.contains(&values) {
            return Ok(());
        }
        let iota = iota(b, w)?;
        // `in bounds and equal to its bucket's result, and the old
        // destination did not win` for value j, as a bool.
        let candidate = |b: &mut FunctionBuilder, bucket: Atom, v: Atom| -> Result<Atom, AdError> {
            let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), bucket);
            let hi = b.cmp(CmpOp::Lt, bucket, nb);
            let inside = b.binop(BinOp::LogAnd, lo, hi)?;
            b.begin();
            let h = b.let1("h", Exp::Index(result, vec![DimIndex::Fix(bucket)]))?;
            let d = b.let1("d", Exp::Index(dest, vec![DimIndex::Fix(bucket)]))?;
            let eq = b.cmp(CmpOp::Eq, v, Atom::Var(h));
            let dest_won = b.cmp(CmpOp::Eq, Atom::Var(d), Atom::Var(h));
            let not_dest = b.unop(UnOp::Not, dest_won)?;
            let c = b.binop(BinOp::LogAnd, eq, not_dest)?;
            let then_ = b.end(vec![c]);
            let else_ = Body {
                stms: vec![],
                result: vec![Atom::Const(PrimValue::Bool(false))],
            };
            Ok(Atom::Var(b.let1(
                "candidate",
                Exp::If {
                    cond: inside,
                    then_,
                    else_,
                },
            )?))
        };
        // The first candidate of each bucket (w where none).
        let positions =
            b.lambda::<AdError>("j", vec![i64t.clone(), t.clone(), i64t.clone()], |b, ps| {
                let c = candidate(b, Atom::Var(ps[0]), Atom::Var(ps[1]))?;
                Ok(vec![b.select(c, Atom::Var(ps[2]), w)?])
            })?;
        let pos = b.let1_existential(
            "positions",
            Exp::Soac(Soac::Map {
                w,
                lam: positions,
                arrs: vec![indices, values, iota],
            }),
        )?;
        let none = b.let1_existential("firsts", Exp::Replicate(nb, w))?;
        let min = b.lambda::<AdError>("i", vec![i64t.clone(), i64t.clone()], |b, ps| {
            Ok(vec![b.binop(
                BinOp::Min,
                Atom::Var(ps[0]),
                Atom::Var(ps[1]),
            )?])
        })?;
        let firsts = b.let1(
            "firsts",
            Exp::Soac(Soac::Hist {
                w,
                dest: vec![none],
                lam: min,
                neutral: vec![w],
                indices,
                values: vec![pos],
            }),
        )?;
        let value_adj =
            b.lambda::<AdError>("j", vec![i64t.clone(), t.clone(), i64t], |b, ps| {
                let bucket = Atom::Var(ps[0]);
                let c = candidate(b, bucket, Atom::Var(ps[1]))?;
                b.begin();
                let first = b.let1("first", Exp::Index(firsts, vec![DimIndex::Fix(bucket)]))?;
                let wins = b.cmp(CmpOp::Eq, Atom::Var(first), Atom::Var(ps[2]));
                let gb = b.let1("adj_elem", Exp::Index(g, vec![DimIndex::Fix(bucket)]))?;
                let r = b.select(wins, Atom::Var(gb), zero)?;
                let then_ = b.end(vec![r]);
                let else_ = Body {
                    stms: vec![],
                    result: vec![zero],
                };
                Ok(vec![Atom::Var(b.let1(
                    "adj_value",
                    Exp::If {
                        cond: c,
                        then_,
                        else_,
                    },
                )?)])
            })?;
        let vbar = b.let1_existential(
            "adj_values",
            Exp::Soac(Soac::Map {
                w,
                lam: value_adj,
                arrs: vec![indices, values, iota],
            }),
        )?;
        self.add(b, adj, values, Atom::Var(vbar), true)
    }
}
