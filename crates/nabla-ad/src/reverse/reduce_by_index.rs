//! The rules of `reduce_by_index` (Bruun and Larsen, "Reverse Automatic
//! Differentiation in Futhark" (master's thesis, 2022), §6; Schenck, Rønning,
//! Henriksen and Oancea, "AD for an Array Language with Nested Parallelism"
//! (SC22), §5.1, multi-reduce): the special cases of `+` (§6.2: each value gets
//! the adjoint of its bucket) and `min`/`max` (§6.4), and the generic rule,
//! computed by passes over the values in order (sequentially, or in chunks
//! that run in parallel for a parallel target). The histograms are first
//! lowered to these forms by `histograms.rs`.

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

/// Values per chunk in the chunked form of the generic `reduce_by_index`
/// rule ([`Reverse::chunked_bucket_passes`]). A constant, so that `lower`
/// sees a chunk's work in its loop bound; the form is used from two
/// chunks on.
const HIST_CHUNK: i64 = 4096;

/// The most buckets (the out-of-bounds one included) for which the chunked
/// form is used: each chunk starts from `n + 1` neutral elements and the
/// carries between chunks cost `2(n + 1)` operator applications per chunk,
/// at most `1/16` of the chunk's own work here.
const HIST_CHUNKED_BUCKETS: i64 = 128;

/// What the passes over a histogram's values share.
struct BucketPasses<'a> {
    h: Histogram<'a>,
    /// A bucket's type, per component: a scalar, or a row.
    ts: &'a [Type],
    /// `[]t` for each of `ts`.
    ats: &'a [Type],
    /// The number of buckets `n` (out-of-bounds values go to bucket `n`).
    n: Atom,
}

/// One pass of [`Reverse::bucket_pass`].
struct PassRange {
    /// From the last value to the first (the operator's later operand is
    /// then the reduction so far).
    backwards: bool,
    /// The reductions per bucket to start from (`k` arrays of `[n + 1]`).
    init: Vec<Atom>,
    /// The first value.
    start: Atom,
    /// The loop's number of iterations.
    trips: Atom,
    /// The number of values, where below `trips` (`None`: `trips`).
    count: Option<Atom>,
    /// Whether each value's exclusive reduction is stored.
    record: bool,
}

/// The bucket of value `i` of `indices` (`n` where out of bounds), and
/// whether it is in bounds.
fn bucket_of(
    b: &mut FunctionBuilder,
    indices: Var,
    n: Atom,
    i: Atom,
) -> Result<(Atom, Atom), AdError> {
    let idx = Atom::Var(b.let1("bucket", Exp::Index(indices, vec![DimIndex::Fix(i)]))?);
    let lo = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(0)), idx);
    let hi = b.cmp(CmpOp::Lt, idx, n);
    let inside = b.binop(BinOp::LogAnd, lo, hi)?;
    Ok((b.select(inside, idx, n)?, inside))
}

/// Each component of element `i` of `arrays`.
fn elements(
    b: &mut FunctionBuilder,
    name: &str,
    arrays: &[Var],
    i: Atom,
) -> Result<Vec<Atom>, AdError> {
    arrays
        .iter()
        .map(|a| {
            Ok(Atom::Var(
                b.let1(name, Exp::Index(*a, vec![DimIndex::Fix(i)]))?,
            ))
        })
        .collect()
}

/// `replicate len ne` for each neutral element.
fn replicate_neutral(
    b: &mut FunctionBuilder,
    neutral: &[Atom],
    len: Atom,
) -> Result<Vec<Atom>, AdError> {
    neutral
        .iter()
        .map(|ne| {
            Ok(Atom::Var(
                b.let1_existential("partial", Exp::Replicate(len, *ne))?,
            ))
        })
        .collect()
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
    /// tuples of `k` scalars or rows (Bruun and Larsen's generic rule):
    /// every value `vs[i]` needs `l[i]`, the reduction of the earlier values
    /// of its bucket, and `r[i]`, the reduction of the later ones, and each
    /// bucket its total `t`. A bucket's result is
    /// `op(dest[b], op(op(l[i], vs[i]), r[i]))` for each of its values, so
    /// `v̄s[i]` is the vjp of that function of `vs[i]` with the bucket's
    /// adjoint as seed, and `d̄est[b]` the vjp of `op(d, t[b])` in `d`.
    /// Out-of-bounds values go to an extra bucket (index `n`) and get a zero
    /// adjoint. One array per component throughout: `dest`, `neutral`,
    /// `values` and the result adjoints `g` (`[n]` each) have `k` entries.
    ///
    /// `l`, `r` and `t` come from passes over the values in order
    /// ([`Reverse::bucket_pass`]) instead of seed 002's sort by bucket
    /// and segmented scans: sequentially, a loop forwards and one
    /// backwards; for a target that runs segmented operations in parallel
    /// ([`crate::Options::parallel_target`]), at the outermost level, the
    /// chunked form of [`Reverse::chunked_bucket_passes`] where it pays
    /// (many values, few buckets: `HIST_CHUNK`, `HIST_CHUNKED_BUCKETS`).
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
        let passes = BucketPasses {
            h,
            ts: &ts,
            ats: &ats,
            n,
        };
        let zero = Atom::Const(PrimValue::I64(0));
        let sequential = |this: &mut Self, b: &mut FunctionBuilder, backwards: bool| {
            let init = replicate_neutral(b, neutral, n1)?;
            this.bucket_pass(
                b,
                &passes,
                PassRange {
                    backwards,
                    init,
                    start: zero,
                    trips: w,
                    count: None,
                    record: true,
                },
            )
        };
        let chunked = self.ad.options.parallel_target && self.lambda_depth == 0 && values_active;
        let (totals, before, after) = if chunked {
            // The chunked form where it pays, else the sequential one.
            let big = b.cmp(CmpOp::Le, Atom::Const(PrimValue::I64(2 * HIST_CHUNK)), w);
            let few = b.cmp(
                CmpOp::Le,
                n1,
                Atom::Const(PrimValue::I64(HIST_CHUNKED_BUCKETS)),
            );
            let cond = b.binop(BinOp::LogAnd, big, few)?;
            // A branch's results: the totals, then `l` and `r`.
            let results =
                |parts: [Vec<Var>; 3]| parts.concat().into_iter().map(Atom::Var).collect();
            b.begin();
            let (totals, before, after) = self.chunked_bucket_passes(b, &passes, n1)?;
            let then_ = b.end(results([totals, before, after]));
            b.begin();
            let (totals, before) = sequential(self, b, false)?;
            let (_, after) = sequential(self, b, true)?;
            let else_ = b.end(results([totals, before, after]));
            let names = ["totals", "before", "after"];
            let pat: Vec<Param> = (0..3 * k)
                .map(|c| b.param(names[c / k], ats[c % k].clone()))
                .collect();
            let vars: Vec<Var> = pat.iter().map(|p| p.var).collect();
            b.push(Stm {
                pat,
                exp: Exp::If { cond, then_, else_ },
                span,
            });
            (
                vars[..k].to_vec(),
                vars[k..2 * k].to_vec(),
                Some(vars[2 * k..].to_vec()),
            )
        } else {
            let (totals, before) = sequential(self, b, false)?;
            (totals, before, None)
        };
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
        let after = match after {
            Some(after) => after,
            None => sequential(self, b, true)?.1,
        };
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
            let (bk, inside) = bucket_of(b, indices, n, i)?;
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

    /// One sequential pass of the generic `reduce_by_index` rule over the
    /// values `range.start + p` for `p` in `0 .. count` (forwards, or
    /// backwards from the last), starting from the per-bucket reductions
    /// `range.init` (`k` arrays of `[n + 1]` buckets, consumed). Returns
    /// the per-bucket reductions after the pass and, when `range.record`,
    /// each value's exclusive reduction within its bucket in the order of
    /// the pass, at position `p` of `k` arrays of `range.trips` elements
    /// (the neutral element beyond `count`). The loop runs `trips` times
    /// (a constant `trips` lets `lower` see the work of a chunk); where a
    /// count is given, the iterations from it on do no real work.
    fn bucket_pass(
        &mut self,
        b: &mut FunctionBuilder,
        passes: &BucketPasses,
        mut range: PassRange,
    ) -> Result<(Vec<Var>, Vec<Var>), AdError> {
        let &BucketPasses { h, ts, ats, .. } = passes;
        let k = ts.len();
        let span = self.span;
        let i64t = Type::Prim(PrimType::I64);
        let mut init = std::mem::take(&mut range.init);
        let mut params = Vec::with_capacity(2 * k);
        for t in ats {
            let mut p = b.param("partial", t.clone());
            p.unique = true;
            params.push(p);
        }
        if range.record {
            init.extend(replicate_neutral(b, h.neutral, range.trips)?);
            for t in ats {
                let mut p = b.param("excl", t.clone());
                p.unique = true;
                params.push(p);
            }
        }
        let partial: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
        let excl: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
        let j = b.vars.fresh("j", i64t);
        b.begin();
        let results = self.bucket_step(b, passes, &range, j, &partial, &excl)?;
        let body = b.end(results);
        let names = |c: usize| if c < k { "partial" } else { "excl" };
        let vars = push_for_loop(b, params, init, (j, range.trips), body, span, names);
        Ok((vars[..k].to_vec(), vars[k..].to_vec()))
    }

    /// Iteration `j` of [`Reverse::bucket_pass`]: the value's bucket
    /// reduction updated, and (when recording) its exclusive reduction
    /// stored. Returns the new `partial` and `excl` arrays.
    fn bucket_step(
        &mut self,
        b: &mut FunctionBuilder,
        passes: &BucketPasses,
        range: &PassRange,
        j: Var,
        partial: &[Var],
        excl: &[Var],
    ) -> Result<Vec<Atom>, AdError> {
        let &BucketPasses { h, ts, n, .. } = passes;
        let in_order = if range.backwards {
            let one = Atom::Const(PrimValue::I64(1));
            let last = b.binop(BinOp::Sub, range.count.unwrap_or(range.trips), one)?;
            b.binop(BinOp::Sub, last, Atom::Var(j))?
        } else {
            Atom::Var(j)
        };
        // Iterations from `count` on (padding) read the range's first value,
        // put it in the out-of-bounds bucket (whose reductions nothing
        // reads) and store at `j`, beyond `count`: no branch on the arrays,
        // so they stay updated in place.
        let (position, source, padding) = match range.count {
            None => (in_order, in_order, None),
            Some(count) => {
                let inside = b.cmp(CmpOp::Lt, Atom::Var(j), count);
                let position = b.select(inside, in_order, Atom::Var(j))?;
                let source = b.select(inside, in_order, Atom::Const(PrimValue::I64(0)))?;
                (position, source, Some(inside))
            }
        };
        let i = match range.start {
            Atom::Const(PrimValue::I64(0)) => source,
            start => b.binop(BinOp::Add, start, source)?,
        };
        let (mut bk, _) = bucket_of(b, h.indices, n, i)?;
        if let Some(inside) = padding {
            bk = b.select(inside, bk, n)?;
        }
        let v = elements(b, "value", h.values, i)?;
        let mut old = elements(b, "partial_elem", partial, bk)?;
        // A row read from `partial` is copied: `partial` is updated in
        // place below, while the row lives on in `excl`.
        for (o, t) in old.iter_mut().zip(ts) {
            if let (Atom::Var(row), true) = (*o, t.rank() > 0) {
                *o = Atom::Var(b.let1("partial_elem", Exp::Copy(row))?);
            }
        }
        let args: Vec<Atom> = if range.backwards {
            v.iter().chain(&old).copied().collect()
        } else {
            old.iter().chain(&v).copied().collect()
        };
        let new = self.apply_op(b, h.op, &args)?;
        let mut result = Vec::with_capacity(2 * ts.len());
        for (p, x) in partial.iter().zip(&new) {
            result.push(Atom::Var(
                b.let1("partial", Exp::Update(*p, vec![DimIndex::Fix(bk)], *x))?,
            ));
        }
        for (e, o) in excl.iter().zip(&old) {
            result.push(Atom::Var(
                b.let1("excl", Exp::Update(*e, vec![DimIndex::Fix(position)], *o))?,
            ));
        }
        Ok(result)
    }

    /// The passes of the generic `reduce_by_index` rule in chunks of
    /// `HIST_CHUNK` values, for a parallel target: a `map` over the chunks
    /// reduces each chunk per bucket; two short loops over the chunks give
    /// each chunk the reductions of the chunks before it and after it
    /// (`n + 1` buckets each, `n1` of them); a second `map` over the chunks
    /// runs the forward and the backward pass of each chunk from those.
    /// The operator is applied about `3w` times instead of `2w`, but the
    /// two maps run in parallel (the chunked multi-scan of a histogram,
    /// as the multicore backend runs a scan: per-thread chunks, carries in
    /// order). Returns the bucket totals (`[n + 1]`) and each value's
    /// exclusive reductions before and after it (`[w]`), `k` arrays each.
    #[allow(clippy::type_complexity)]
    fn chunked_bucket_passes(
        &mut self,
        b: &mut FunctionBuilder,
        passes: &BucketPasses,
        n1: Atom,
    ) -> Result<(Vec<Var>, Vec<Var>, Vec<Var>), AdError> {
        let &BucketPasses { h, ts, ats, .. } = passes;
        let (w, neutral) = (h.w, h.neutral);
        let k = ts.len();
        let span = self.span;
        let i64t = Type::Prim(PrimType::I64);
        let chunk = Atom::Const(PrimValue::I64(HIST_CHUNK));
        let one = Atom::Const(PrimValue::I64(1));
        let padded = b.binop(BinOp::Add, w, Atom::Const(PrimValue::I64(HIST_CHUNK - 1)))?;
        let chunks = b.binop(BinOp::Quot, padded, chunk)?;
        let chunk_ids = iota(b, chunks)?;
        // Chunk `c`: its first value and its number of values.
        let bounds = |b: &mut FunctionBuilder, c: Var| -> Result<(Atom, Atom), AdError> {
            let start = b.binop(BinOp::Mul, Atom::Var(c), chunk)?;
            let rest = b.binop(BinOp::Sub, w, start)?;
            Ok((start, b.binop(BinOp::Min, rest, chunk)?))
        };
        // Each chunk's reduction per bucket.
        let lam = b.lambda::<AdError>("c", vec![i64t.clone()], |b, ps| {
            let (start, count) = bounds(b, ps[0])?;
            let init = replicate_neutral(b, neutral, n1)?;
            let range = PassRange {
                backwards: false,
                init,
                start,
                trips: chunk,
                count: Some(count),
                record: false,
            };
            let (partial, _) = self.bucket_pass(b, passes, range)?;
            Ok(partial.into_iter().map(Atom::Var).collect())
        })?;
        let pat: Vec<Param> = ats
            .iter()
            .map(|t| b.param("chunk_totals", t.array_of(Dim::Ext)))
            .collect();
        let chunk_totals: Vec<Var> = pat.iter().map(|p| p.var).collect();
        b.push(Stm {
            pat,
            exp: Exp::Soac(Soac::Map {
                w: chunks,
                lam,
                arrs: vec![chunk_ids],
            }),
            span,
        });
        let (before_chunk, totals) =
            self.chunk_carries(b, passes, &chunk_totals, chunks, n1, false)?;
        let (after_chunk, _) = self.chunk_carries(b, passes, &chunk_totals, chunks, n1, true)?;
        // Each chunk's passes, from the reductions of the chunks before and
        // after it.
        let mut param_types = vec![i64t];
        param_types.extend(ats.iter().cloned());
        param_types.extend(ats.iter().cloned());
        let lam = b.lambda::<AdError>("c", param_types, |b, ps| {
            let (start, count) = bounds(b, ps[0])?;
            let mut results = Vec::with_capacity(2 * k);
            for (backwards, carries) in [(false, &ps[1..=k]), (true, &ps[k + 1..])] {
                let mut init = Vec::with_capacity(k);
                for c in carries {
                    init.push(Atom::Var(b.let1("partial", Exp::Copy(*c))?));
                }
                let range = PassRange {
                    backwards,
                    init,
                    start,
                    trips: chunk,
                    count: Some(count),
                    record: true,
                };
                let (_, excl) = self.bucket_pass(b, passes, range)?;
                results.extend(excl.into_iter().map(Atom::Var));
            }
            Ok(results)
        })?;
        let pat: Vec<Param> = (0..2 * k)
            .map(|c| {
                let name = if c < k { "before" } else { "after" };
                b.param(name, ats[c % k].array_of(Dim::Ext))
            })
            .collect();
        let per_chunk: Vec<Var> = pat.iter().map(|p| p.var).collect();
        let mut arrs = vec![chunk_ids];
        arrs.extend(before_chunk);
        arrs.extend(after_chunk);
        b.push(Stm {
            pat,
            exp: Exp::Soac(Soac::Map {
                w: chunks,
                lam,
                arrs,
            }),
            span,
        });
        // `[chunks][HIST_CHUNK]` to the first `w` of `[chunks * HIST_CHUNK]`.
        let flat = b.binop(BinOp::Mul, chunks, chunk)?;
        let mut exclusive = Vec::with_capacity(2 * k);
        for (c, a) in per_chunk.iter().enumerate() {
            let mut shape = vec![flat];
            for d in 0..ts[c % k].rank() {
                shape.push(Atom::Var(b.let1("m", Exp::Size(*a, 2 + d))?));
            }
            let flat_a = b.let1_existential("flat", Exp::Reshape(shape, *a))?;
            let slice = DimIndex::Slice {
                start: Atom::Const(PrimValue::I64(0)),
                len: w,
                stride: one,
            };
            exclusive.push(b.let1_existential("exclusive", Exp::Index(flat_a, vec![slice]))?);
        }
        Ok((totals, exclusive[..k].to_vec(), exclusive[k..].to_vec()))
    }

    /// The reductions per bucket of the chunks before each chunk
    /// (`backwards`: after it, the later operand on the right), by a loop
    /// over the chunks' reductions `chunk_totals` (`[chunks][n + 1]`, `k`
    /// arrays): `[chunks][n + 1]` per component, and the reduction of all
    /// chunks (`[n + 1]`).
    fn chunk_carries(
        &mut self,
        b: &mut FunctionBuilder,
        passes: &BucketPasses,
        chunk_totals: &[Var],
        chunks: Atom,
        n1: Atom,
        backwards: bool,
    ) -> Result<(Vec<Var>, Vec<Var>), AdError> {
        let &BucketPasses { h, ts, ats, .. } = passes;
        let k = ts.len();
        let span = self.span;
        let one = Atom::Const(PrimValue::I64(1));
        let mut init = replicate_neutral(b, h.neutral, n1)?;
        for c in 0..k {
            let rows = b.let1_existential("carries", Exp::Replicate(chunks, init[c]))?;
            init.push(Atom::Var(rows));
        }
        let mut params = Vec::with_capacity(2 * k);
        for t in ats {
            params.push(b.param("carry", t.clone()));
        }
        for t in ats {
            let mut p = b.param("carries", t.array_of(Dim::Ext));
            p.unique = true;
            params.push(p);
        }
        let carry: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
        let carries: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
        let j = b.vars.fresh("j", Type::Prim(PrimType::I64));
        b.begin();
        let c = if backwards {
            let last = b.binop(BinOp::Sub, chunks, one)?;
            b.binop(BinOp::Sub, last, Atom::Var(j))?
        } else {
            Atom::Var(j)
        };
        let mut stored = Vec::with_capacity(k);
        for (rows, row) in carries.iter().zip(&carry) {
            stored.push(Atom::Var(b.let1(
                "carries",
                Exp::Update(*rows, vec![DimIndex::Fix(c)], Atom::Var(*row)),
            )?));
        }
        let mut totals = Vec::with_capacity(k);
        for t in chunk_totals {
            totals.push(b.let1("chunk_total", Exp::Index(*t, vec![DimIndex::Fix(c)]))?);
        }
        let mut param_types = ts.to_vec();
        param_types.extend(ts.iter().cloned());
        let lam = b.lambda::<AdError>("a", param_types, |b, ps| {
            let args: Vec<Atom> = if backwards {
                ps[k..]
                    .iter()
                    .chain(&ps[..k])
                    .map(|v| Atom::Var(*v))
                    .collect()
            } else {
                ps.iter().map(|v| Atom::Var(*v)).collect()
            };
            self.apply_op(b, h.op, &args)
        })?;
        let pat: Vec<Param> = ats.iter().map(|t| b.param("carry", t.clone())).collect();
        let mut next: Vec<Atom> = pat.iter().map(|p| Atom::Var(p.var)).collect();
        let mut arrs = carry.clone();
        arrs.extend(totals);
        b.push(Stm {
            pat,
            exp: Exp::Soac(Soac::Map { w: n1, lam, arrs }),
            span,
        });
        next.extend(stored);
        let body = b.end(next);
        let names = |c: usize| if c < k { "carry" } else { "carries" };
        let vars = push_for_loop(b, params, init, (j, chunks), body, span, names);
        Ok((vars[k..].to_vec(), vars[..k].to_vec()))
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
