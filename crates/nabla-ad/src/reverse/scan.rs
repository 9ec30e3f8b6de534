//! The rules of `scan` (Schenck, Rønning, Henriksen and Oancea, "AD for an
//! Array Language with Nested Parallelism" (SC22), §5.2; Bruun and Larsen,
//! "Reverse Automatic Differentiation in Futhark" (master's thesis, 2022), §5
//! and §7): the generic rule on scalar components (a scan over the composition
//! of linear functions, their Jacobians from the operator's local vjp), a
//! sequential rule for rows, and the special cases of `+` (§7.2) and vectorised
//! operators (§7.3).

use super::adjoints::{iota, Adjoints, Results, Reverse};
use super::operators::{
    exclusive, is_plus, push_for_loop, single_binop, vectorised_operator, Vectorised,
};
use crate::util::{type_of, zero_like};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, CmpOp, Dim, DimIndex, Exp, Lambda, PrimType, PrimValue, Soac, Type, Var,
};

/// A scan `ys = scan op neutral arrs` (`w` elements, `k` components) in
/// the return sweep, with the adjoints `gs` of its results (absent: zero);
/// its arities are checked where it is made.
struct ScanAdjoint<'a> {
    w: Atom,
    op: &'a Lambda,
    neutral: &'a [Atom],
    arrs: &'a [Var],
    ys: Vec<Var>,
    gs: Vec<Option<Var>>,
}

impl Reverse<'_> {
    /// `pat = scan lam neutral arrs`: the special cases of vectorised
    /// operators and `+` (Bruun and Larsen §7.2–7.3), else the generic
    /// rule on scalars and the sequential one on rows.
    pub(super) fn scan(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        soac: &Soac,
    ) -> Result<(), AdError> {
        let Soac::Scan {
            w,
            lam,
            arrs,
            neutral,
        } = soac
        else {
            return error(self.span, "internal error: not a scan");
        };
        let (pat, ybar, g) = (res.pat, res.ybar, res.ybar[0]);
        if arrs.len() == 1 && lam.ret[0].rank() == 1 && vectorised_operator(lam).is_some() {
            let Some(Atom::Var(g)) = g else { return Ok(()) };
            if !self.active.contains(&arrs[0]) {
                return Ok(());
            }
            let Some(op) = vectorised_operator(lam) else {
                return Ok(());
            };
            let v = Vectorised {
                w: *w,
                op: &op,
                neutral: neutral[0],
                arr: arrs[0],
                result: pat[0].var,
                g,
            };
            self.scan_vectorised(b, adj, v)?;
        } else if arrs.len() == 1 && is_plus(lam) {
            let Some(Atom::Var(g)) = g else { return Ok(()) };
            if !self.active.contains(&arrs[0]) {
                return Ok(());
            }
            let x = self.plus_scan_adjoint(b, *w, lam, g)?;
            self.add(b, adj, arrs[0], Atom::Var(x), true)?;
        } else {
            if !arrs.iter().any(|a| self.active.contains(a)) {
                return Ok(());
            }
            let k = arrs.len();
            if lam.params.len() != 2 * k
                || lam.ret.len() != k
                || neutral.len() != k
                || pat.len() != k
            {
                return error(self.span, "internal error: malformed scan operator");
            }
            let scan = ScanAdjoint {
                w: *w,
                op: lam,
                neutral,
                arrs,
                ys: pat.iter().map(|p| p.var).collect(),
                gs: self.array_adjoints(ybar)?,
            };
            // Scalar components: Bruun and Larsen's rule; rows: the sequential
            // one.
            if lam.ret.iter().all(|t| t.rank() == 0) {
                self.scan_generic(b, adj, &scan)?;
            } else {
                self.scan_sequential(b, adj, &scan)?;
            }
        }
        Ok(())
    }

    /// The generic rule for an inclusive scan with any associative operator
    /// on tuples of `k` scalars (Bruun and Larsen, scan as linear-function
    /// composition). Only the float components (all of one type) are
    /// linearised; integer and boolean ones (flags, indices) get no
    /// adjoint, so below `k` counts the float components. With `A[i]` the
    /// `k×k` Jacobian of `op` in its
    /// accumulator at `(ys[i-1], xs[i])` (rows from `k` vjps of the
    /// operator), the results' adjoints `r` satisfy
    /// `r[i] = ȳ[i] + A[i+1]ᵀ·r[i+1]`, a linear recurrence solved by a
    /// scan that composes the affine maps `r ↦ M·r + c` (`k×k` matrices
    /// flattened row-major into `k²` arrays); then `x̄[i]` is the operator's
    /// vjp in `x` at `(ys[i-1], xs[i])` with seed `r[i]`. `gs[p]` is the
    /// adjoint of result `p` (absent: zero).
    fn scan_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        scan: &ScanAdjoint<'_>,
    ) -> Result<(), AdError> {
        let ScanAdjoint {
            w,
            op,
            neutral,
            arrs,
            ref ys,
            ref gs,
        } = *scan;
        let k = arrs.len();
        let ts = op.ret.clone();
        // The float components: only they have adjoints. Integer and
        // boolean components (a segmented scan's flags, an arg-max's
        // index) are constants of the linearisation.
        let f: Vec<usize> = (0..k).filter(|&q| ts[q].elem().is_float()).collect();
        let Some(&first_float) = f.first() else {
            return Ok(());
        };
        let ft = ts[first_float].clone();
        if f.iter().any(|&q| ts[q] != ft) {
            // One Jacobian needs one float type: the sequential rule.
            return self.scan_sequential(b, adj, scan);
        }
        let kf = f.len();
        let fat = Type::Array(ft.elem(), vec![Dim::Ext]);
        let zero_of = |t: &Type| Atom::Const(PrimValue::zero(t.elem()));
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        let iota = iota(b, w)?;
        // `vjp op (prev, x) seed` as statements of the builder's open body:
        // the adjoints of the accumulator and of x, k each.
        let param_types: Vec<Type> = op.params.iter().map(|p| p.ty.clone()).collect();
        let op_vjp = |this: &mut Self,
                      b: &mut FunctionBuilder,
                      prev: &[Atom],
                      xs: &[Atom],
                      seed: Vec<Atom>|
         -> Result<(Vec<Atom>, Vec<Atom>), AdError> {
            let primals = prev.iter().chain(xs).copied().collect();
            let mut adjoints =
                this.local_vjp(b, &param_types, &ts, primals, seed, |this, b, args| {
                    this.applied(b, op, args)
                })?;
            let x = adjoints.split_off(k);
            Ok((adjoints, x))
        };
        // prev[i] = i == 0 ? ne : ys[i-1]
        let previous = |b: &mut FunctionBuilder, i: Atom| -> Result<Vec<Atom>, AdError> {
            let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
            let before = b.binop(BinOp::Sub, i, one)?;
            (0..k)
                .map(|j| exclusive(b, first, neutral[j], ys[j], before))
                .collect()
        };
        let unit = |t: &Type, v: f64| Atom::Const(nabla_ir::derivatives::constant(t.elem(), v));
        // a[p*kf+q][i] = ∂y_p/∂acc_q at (prev[i], xs[i]), p and q float
        // components (numbered within `f`).
        let mut lam_types = ts.clone();
        lam_types.push(i64t.clone());
        let jacobian = b.lambda::<AdError>("x", lam_types.clone(), |b, ps| {
            let xs: Vec<Atom> = ps[..k].iter().map(|x| Atom::Var(*x)).collect();
            let prev = previous(b, Atom::Var(ps[k]))?;
            let mut entries = Vec::with_capacity(kf * kf);
            for &p in &f {
                let seed = (0..k)
                    .map(|q| match (f.contains(&q), p == q) {
                        (true, true) => unit(&ts[q], 1.0),
                        _ => zero_of(&ts[q]),
                    })
                    .collect();
                let (a, _) = op_vjp(self, b, &prev, &xs, seed)?;
                entries.extend(f.iter().map(|&q| a[q]));
            }
            Ok(entries)
        })?;
        let mut jac_arrs = arrs.to_vec();
        jac_arrs.push(iota);
        let jac_types: Vec<Type> = (0..kf * kf).map(|_| fat.clone()).collect();
        let jac = b.let_existential(
            "jacobian",
            Exp::Soac(Soac::Map {
                w,
                lam: jacobian,
                arrs: jac_arrs,
            }),
        )?;
        // The affine maps in reverse order, j = 0 … w-1:
        // M_j = A[w-j]ᵀ (zero for j = 0), c_j = ȳ[w-1-j].
        let last = b.binop(BinOp::Sub, w, one)?;
        let maps = b.lambda::<AdError>("j", vec![i64t.clone()], |b, ps| {
            let j = Atom::Var(ps[0]);
            let idx = b.binop(BinOp::Sub, last, j)?;
            let first = b.cmp(CmpOp::Eq, j, Atom::Const(PrimValue::I64(0)));
            let next = b.binop(BinOp::Add, idx, one)?;
            let mut out = Vec::with_capacity(kf * kf + kf);
            // M[q][p] = a[p][q]
            for q in 0..kf {
                for p in 0..kf {
                    out.push(exclusive(b, first, zero_of(&ft), jac[p * kf + q], next)?);
                }
            }
            for &p in &f {
                out.push(match gs[p] {
                    None => zero_of(&ft),
                    Some(g) => {
                        Atom::Var(b.let1("adj_elem", Exp::Index(g, vec![DimIndex::Fix(idx)]))?)
                    }
                });
            }
            Ok(out)
        })?;
        let mut affine_types = jac_types.clone();
        affine_types.extend((0..kf).map(|_| fat.clone()));
        let mc = b.let_existential(
            "affine",
            Exp::Soac(Soac::Map {
                w,
                lam: maps,
                arrs: vec![iota],
            }),
        )?;
        // Compose: (M1, c1) then (M2, c2) is (M2·M1, M2·c1 + c2).
        let compose_types: Vec<Type> = (0..kf * kf + kf).map(|_| ft.clone()).collect();
        let both = [compose_types.clone(), compose_types].concat();
        let compose = b.lambda::<AdError>("f", both, |b, ps| {
            let half = kf * kf + kf;
            let (m1, c1) = (&ps[..kf * kf], &ps[kf * kf..half]);
            let (m2, c2) = (&ps[half..half + kf * kf], &ps[half + kf * kf..]);
            // Σ_l a[l]·b[l], in order.
            let dot = |b: &mut FunctionBuilder,
                       terms: Vec<(Atom, Atom)>,
                       start: Option<Atom>|
             -> Result<Atom, AdError> {
                let mut acc = start;
                for (x, y) in terms {
                    let t = b.binop(BinOp::Mul, x, y)?;
                    acc = Some(match acc {
                        None => t,
                        Some(a) => b.binop(BinOp::Add, a, t)?,
                    });
                }
                Ok(acc.expect("k ≥ 1"))
            };
            let mut out = Vec::with_capacity(half);
            for q in 0..kf {
                for p in 0..kf {
                    let terms = (0..kf)
                        .map(|l| (Atom::Var(m2[q * kf + l]), Atom::Var(m1[l * kf + p])))
                        .collect();
                    out.push(dot(b, terms, None)?);
                }
            }
            for q in 0..kf {
                let terms = (0..kf)
                    .map(|l| (Atom::Var(m2[q * kf + l]), Atom::Var(c1[l])))
                    .collect();
                let mc = dot(b, terms, None)?;
                out.push(b.binop(BinOp::Add, mc, Atom::Var(c2[q]))?);
            }
            Ok(out)
        })?;
        let mut compose_neutral = Vec::with_capacity(kf * kf + kf);
        for q in 0..kf {
            for p in 0..kf {
                compose_neutral.push(unit(&ft, if p == q { 1.0 } else { 0.0 }));
            }
        }
        compose_neutral.extend((0..kf).map(|_| unit(&ft, 0.0)));
        let scanned = b.let_existential(
            "composed",
            Exp::Soac(Soac::Scan {
                w,
                lam: compose,
                neutral: compose_neutral,
                arrs: mc,
            }),
        )?;
        let r_rev = scanned[kf * kf..].to_vec();
        let xbar = b.lambda::<AdError>("x", lam_types, |b, ps| {
            let xs: Vec<Atom> = ps[..k].iter().map(|x| Atom::Var(*x)).collect();
            let i = Atom::Var(ps[k]);
            let prev = previous(b, i)?;
            let idx = b.binop(BinOp::Sub, last, i)?;
            let mut seed: Vec<Atom> = ts.iter().map(zero_of).collect();
            for (p, &q) in f.iter().enumerate() {
                seed[q] =
                    Atom::Var(b.let1("adj_elem", Exp::Index(r_rev[p], vec![DimIndex::Fix(idx)]))?);
            }
            let (_, x) = op_vjp(self, b, &prev, &xs, seed)?;
            Ok(f.iter().map(|&q| x[q]).collect())
        })?;
        let mut x_arrs = arrs.to_vec();
        x_arrs.push(iota);
        let x = b.let_existential(
            "adj_scan",
            Exp::Soac(Soac::Map {
                w,
                lam: xbar,
                arrs: x_arrs,
            }),
        )?;
        for (&q, x) in f.iter().zip(x) {
            self.add(b, adj, arrs[q], Atom::Var(x), true)?;
        }
        Ok(())
    }

    /// The reverse rule for an inclusive scan with any operator, on
    /// components of any types (rows included), computed sequentially: with
    /// `prev = i == 0 ? ne : ys[i-1]`, `ys[i] = op(prev, xs[i])`, so a loop
    /// over the elements from the last to the first carries `r`, the
    /// adjoint that `ys[i]` receives from `ys[i+1]` (zero for the last), and
    /// computes `(r', x̄[i]) = vjp op (prev, xs[i]) (ȳ[i] + r)`. This is the
    /// adjoint of the scan as a loop (Schenck et al. §4.2 with the loop's states
    /// the scan's own results, so nothing is checkpointed): `O(w)` vjps of
    /// the operator, where Bruun and Larsen's parallel rule for rows of width `m`
    /// would compose `m×m` Jacobians. It serves the operators that rule
    /// cannot linearise into one matrix: components that are arrays, or
    /// floats of different types. `gs[p]` is the adjoint of result `p`
    /// (absent: zero); the neutral element gets no adjoint (as in the other
    /// scan and reduce rules).
    fn scan_sequential(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        scan: &ScanAdjoint<'_>,
    ) -> Result<(), AdError> {
        let ScanAdjoint {
            w,
            op,
            neutral,
            arrs,
            ref ys,
            ref gs,
        } = *scan;
        let k = arrs.len();
        let span = self.span;
        let ts: Vec<Type> = op.ret.iter().map(crate::util::existential).collect();
        let ats: Vec<Type> = ts.iter().map(|t| t.array_of(Dim::Ext)).collect();
        let i64t = Type::Prim(PrimType::I64);
        let one = Atom::Const(PrimValue::I64(1));
        // The last element's carried adjoint: zeros shaped like the
        // neutral element (every result element has its shape).
        let mut init = Vec::with_capacity(2 * k);
        for (ne, t) in neutral.iter().zip(&ts) {
            init.push(match ne {
                Atom::Var(v) => zero_like(b, span, *v)?,
                Atom::Const(_) => Atom::Const(PrimValue::zero(t.elem())),
            });
        }
        for c in 0..k {
            let zeros = b.let1_existential("adj_scan", Exp::Replicate(w, init[c]))?;
            init.push(Atom::Var(zeros));
        }
        let mut params = Vec::with_capacity(2 * k);
        for t in &ts {
            params.push(b.param("adj_carried", t.clone()));
        }
        for at in &ats {
            let mut p = b.param("adj_scan", at.clone());
            p.unique = true;
            params.push(p);
        }
        let carried: Vec<Var> = params[..k].iter().map(|p| p.var).collect();
        let xbar: Vec<Var> = params[k..].iter().map(|p| p.var).collect();
        let param_types: Vec<Type> = op.params.iter().map(|p| p.ty.clone()).collect();
        let j = b.vars.fresh("j", i64t.clone());
        b.begin();
        let last = b.binop(BinOp::Sub, w, one)?;
        let i = b.binop(BinOp::Sub, last, Atom::Var(j))?;
        let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
        let before = b.binop(BinOp::Sub, i, one)?;
        let mut primals = Vec::with_capacity(2 * k);
        for c in 0..k {
            primals.push(exclusive(b, first, neutral[c], ys[c], before)?);
        }
        for &arr in &arrs[..k] {
            let x = b.let1("elem", Exp::Index(arr, vec![DimIndex::Fix(i)]))?;
            primals.push(Atom::Var(x));
        }
        let mut seeds = Vec::with_capacity(k);
        for c in 0..k {
            let r = Atom::Var(carried[c]);
            seeds.push(match gs[c] {
                None => r,
                Some(g) => {
                    let gi = b.let1("adj_elem", Exp::Index(g, vec![DimIndex::Fix(i)]))?;
                    self.add_values(b, &ts[c], Atom::Var(gi), r)?
                }
            });
        }
        let mut adjoints =
            self.local_vjp(b, &param_types, &ts, primals, seeds, |this, b, args| {
                this.applied(b, op, args)
            })?;
        let x_adjoints = adjoints.split_off(k);
        let mut result = adjoints;
        for c in 0..k {
            result.push(Atom::Var(b.let1(
                "adj_scan",
                Exp::Update(xbar[c], vec![DimIndex::Fix(i)], x_adjoints[c]),
            )?));
        }
        let body = b.end(result);
        let names = |c: usize| if c < k { "adj_carried" } else { "adj_scan" };
        let vars = push_for_loop(b, params, init, (j, w), body, span, names);
        for (a, x) in arrs.iter().zip(&vars[k..]) {
            self.add(b, adj, *a, Atom::Var(*x), true)?;
        }
        Ok(())
    }

    /// A scan whose operator is a scalar operator mapped over rows (`scan
    /// (map2 op) ne xss`): a map of scalar scans over the columns, each
    /// differentiated with the scalar rule (`+`: the reversed scan of the
    /// reversed adjoints; otherwise the generic affine-map rule).
    fn scan_vectorised(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Vectorised,
    ) -> Result<(), AdError> {
        let Vectorised { w, op, .. } = v;
        self.by_columns(b, adj, v, |this, b, local, [col, ne_j, ys_j, g_j]| {
            if single_binop(op) == Some(BinOp::Add) {
                let x = this.plus_scan_adjoint(b, w, op, g_j)?;
                this.add(b, local, col, Atom::Var(x), true)
            } else {
                let column = ScanAdjoint {
                    w,
                    op,
                    neutral: &[Atom::Var(ne_j)],
                    arrs: &[col],
                    ys: vec![ys_j],
                    gs: vec![Some(g_j)],
                };
                this.scan_generic(b, local, &column)
            }
        })
    }

    /// Schenck et al. §5.2: the adjoint of an inclusive (+)-scan (operator `op`,
    /// width `w`) whose results have adjoints `g`: the reversed (+)-scan of
    /// the reversed adjoints.
    fn plus_scan_adjoint(
        &self,
        b: &mut FunctionBuilder,
        w: Atom,
        op: &Lambda,
        g: Var,
    ) -> Result<Var, AdError> {
        let t = crate::util::existential(&type_of(b, self.span, g)?);
        let reversed = b.let1_existential("adj_rev", Exp::Reverse(g))?;
        let fresh_op = self.fresh_lambda(b, op)?;
        let zero = Atom::Const(PrimValue::zero(t.elem()));
        let scanned = b.let1_existential(
            "adj_scan",
            Exp::Soac(Soac::Scan {
                w,
                lam: fresh_op,
                neutral: vec![zero],
                arrs: vec![reversed],
            }),
        )?;
        Ok(b.let1("adj_rev", Exp::Reverse(scanned))?)
    }
}
