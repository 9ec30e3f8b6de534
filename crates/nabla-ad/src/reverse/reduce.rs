//! The rules of `reduce` (Schenck, Rønning, Henriksen and Oancea, "AD for an
//! Array Language with Nested Parallelism" (SC22), §5.1; Bruun and Larsen,
//! "Reverse Automatic Differentiation in Futhark" (master's thesis, 2022), §4):
//! the generic rule (exclusive scans of the operator from both ends and its
//! local vjp), and the special cases of `+`, `*` on floats, `min`/`max` and
//! vectorised operators (`reduce (map2 op)`).

use super::adjoints::{iota, sequence, Adjoints, Results, Reverse};
use super::operators::{
    exclusive, is_min_or_max, is_plus, single_binop, vectorised_operator, Vectorised,
};
use crate::util::{type_of, zero_like};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, CmpOp, DimIndex, Exp, Lambda, PrimType, PrimValue, Soac, Type, Var,
};

/// A reduction `reduce op neutral arrs` over `w` elements, one array per
/// component of the operator.
#[derive(Clone, Copy)]
struct Reduction<'a> {
    w: Atom,
    op: &'a Lambda,
    neutral: &'a [Atom],
    arrs: &'a [Var],
}

impl Reverse<'_> {
    /// `pat = reduce lam neutral arrs`: the special cases of `min`/`max`,
    /// vectorised operators, `*` and `+` (Schenck et al. §5.1), else the
    /// generic rule.
    pub(super) fn reduce(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        soac: &Soac,
    ) -> Result<(), AdError> {
        let Soac::Reduce {
            w,
            lam,
            arrs,
            neutral,
            ..
        } = soac
        else {
            return error(self.span, "internal error: not a reduce");
        };
        let (pat, ybar, g) = (res.pat, res.ybar, res.ybar[0]);
        if arrs.len() == 1 && is_min_or_max(lam) {
            let Some(g) = g else { return Ok(()) };
            self.reduce_min_max(b, adj, *w, arrs[0], pat[0].var, g)?;
        } else if arrs.len() == 1 && lam.ret[0].rank() == 1 && vectorised_operator(lam).is_some() {
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
            self.reduce_vectorised(b, adj, v)?;
        } else if arrs.len() == 1
            && single_binop(lam) == Some(BinOp::Mul)
            && lam.ret[0].elem().is_float()
            && neutral[0] == Atom::Const(nabla_ir::derivatives::constant(lam.ret[0].elem(), 1.0))
        {
            let Some(g) = g else { return Ok(()) };
            if !self.active.contains(&arrs[0]) {
                return Ok(());
            }
            self.reduce_product(b, adj, *w, arrs[0], &lam.ret[0], g)?;
        } else if arrs.len() > 1 || !is_plus(lam) {
            if !arrs.iter().any(|a| self.active.contains(a)) {
                return Ok(());
            }
            // Zero seeds for results without an adjoint (arrays of
            // zeros for array results: rows of arrays of arrays).
            let mut seeds = self.seeds(&lam.ret, ybar);
            for (j, t) in lam.ret.iter().enumerate() {
                if ybar[j].is_none() && t.rank() > 0 {
                    seeds[j] = zero_like(b, self.span, pat[j].var)?;
                }
            }
            let r = Reduction {
                w: *w,
                op: lam,
                neutral,
                arrs,
            };
            self.reduce_generic(b, adj, r, seeds)?;
        } else {
            let Some(g) = g else { return Ok(()) };
            // The adjoint of every element is the result's (Schenck et al.
            // §5.1, the special case of +).
            let bc = b.let1_existential("adj_bcast", Exp::Replicate(*w, g))?;
            self.add(b, adj, arrs[0], Atom::Var(bc), true)?;
        }
        Ok(())
    }

    /// The generic rule for `reduce op ne xs` on tuples of scalars (Schenck
    /// et al. §5.1): with `l[i]` the reduction of the elements before `i` and
    /// `r[i]` of those after it (exclusive scans from both ends), the result
    /// is `op(op(l[i], xs[i]), r[i])` for every `i`, so `x̄[i]` is the `vjp`
    /// of that function of `xs[i]` (itself differentiated statically).
    /// `r.arrs` are the `k` arrays of the operator's `k` components (of
    /// scalars, or of rows for an operator on arrays that is not a mapped
    /// scalar operator), `seeds` the `k` adjoints of the result.
    fn reduce_generic(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        r: Reduction,
        seeds: Vec<Atom>,
    ) -> Result<(), AdError> {
        let Reduction {
            w,
            op,
            neutral,
            arrs,
        } = r;
        let k = arrs.len();
        if op.params.len() != 2 * k || op.ret.len() != k || neutral.len() != k {
            return error(self.span, "internal error: malformed reduce operator");
        }
        let ts: Vec<Type> = op.ret.iter().map(crate::util::existential).collect();
        let i64t = Type::Prim(PrimType::I64);
        // Inclusive scans from the front, and from the back (on the
        // reversed arrays, with the operator's arguments swapped).
        let front_op = self.fresh_lambda(b, op)?;
        let front = b.let_existential(
            "prefix",
            Exp::Soac(Soac::Scan {
                w,
                lam: front_op,
                neutral: neutral.to_vec(),
                arrs: arrs.to_vec(),
            }),
        )?;
        let reversed = arrs
            .iter()
            .map(|a| b.let1_existential("reversed", Exp::Reverse(*a)))
            .collect::<Result<Vec<Var>, _>>()?;
        let mut back_op = self.fresh_lambda(b, op)?;
        let (left, right) = back_op.params.split_at(k);
        back_op.params = right.iter().chain(left).cloned().collect();
        let back = b.let_existential(
            "suffix",
            Exp::Soac(Soac::Scan {
                w,
                lam: back_op,
                neutral: neutral.to_vec(),
                arrs: reversed,
            }),
        )?;
        let iota = iota(b, w)?;
        let mut lam_types = ts.clone();
        lam_types.push(i64t.clone());
        let lam = b.lambda::<AdError>("x", lam_types, |b, ps| {
            let (xs, i) = (&ps[..k], Atom::Var(ps[k]));
            // l = i == 0 ? ne : prefix[i-1]; r = i == w-1 ? ne : suffix[w-2-i]
            let first = b.cmp(CmpOp::Eq, i, Atom::Const(PrimValue::I64(0)));
            let before = b.binop(BinOp::Sub, i, Atom::Const(PrimValue::I64(1)))?;
            let last_index = b.binop(BinOp::Sub, w, Atom::Const(PrimValue::I64(1)))?;
            let last = b.cmp(CmpOp::Eq, i, last_index);
            let w2 = b.binop(BinOp::Sub, w, Atom::Const(PrimValue::I64(2)))?;
            let after = b.binop(BinOp::Sub, w2, i)?;
            let mut ls = Vec::with_capacity(k);
            let mut rs = Vec::with_capacity(k);
            for j in 0..k {
                ls.push(exclusive(b, first, neutral[j], front[j], before)?);
                rs.push(exclusive(b, last, neutral[j], back[j], after)?);
            }
            // vjp (\x -> op (op l x) r) x g
            let primals = xs.iter().map(|x| Atom::Var(*x)).collect();
            self.local_vjp(b, &ts, &ts, primals, seeds.clone(), |this, b, x| {
                let first = this.applied(b, op, &[&ls[..], x].concat())?;
                let second = this.applied(b, op, &[&first.result[..], &rs[..]].concat())?;
                Ok(sequence(vec![first, second]))
            })
        })?;
        let mut map_arrs = arrs.to_vec();
        map_arrs.push(iota);
        let xbar = b.let_existential(
            "adj_reduce",
            Exp::Soac(Soac::Map {
                w,
                lam,
                arrs: map_arrs,
            }),
        )?;
        for (a, x) in arrs.iter().zip(xbar) {
            self.add(b, adj, *a, Atom::Var(x), true)?;
        }
        Ok(())
    }

    /// A reduction whose operator is a scalar operator mapped over rows
    /// (`reduce (map2 op) ne xss`, Schenck et al. §5.1's vectorised operators): a
    /// map of scalar reductions over the columns, each differentiated with
    /// the scalar rule of `op` (the `+`, `*`, min/max or generic rule).
    fn reduce_vectorised(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Vectorised,
    ) -> Result<(), AdError> {
        let Vectorised { w, op, .. } = v;
        self.by_columns(b, adj, v, |this, b, local, [col, ne_j, r_j, g_j]| {
            let t = type_of(b, this.span, r_j)?;
            let elem = t.elem();
            let (ne_j, g_j) = (Atom::Var(ne_j), Atom::Var(g_j));
            match single_binop(op) {
                Some(BinOp::Add) => {
                    let col_t = type_of(b, this.span, col)?;
                    let bc = b.bind1("adj_bcast", col_t, Exp::Replicate(w, g_j));
                    this.add(b, local, col, Atom::Var(bc), true)
                }
                Some(BinOp::Min | BinOp::Max) => this.reduce_min_max(b, local, w, col, r_j, g_j),
                Some(BinOp::Mul)
                    if elem.is_float()
                        && ne_j == Atom::Const(nabla_ir::derivatives::constant(elem, 1.0)) =>
                {
                    this.reduce_product(b, local, w, col, &t, g_j)
                }
                _ => {
                    let r = Reduction {
                        w,
                        op,
                        neutral: &[ne_j],
                        arrs: &[col],
                    };
                    this.reduce_generic(b, local, r, vec![g_j])
                }
            }
        })
    }

    /// `reduce (*) 1 xs` on floats (Schenck et al. §5.1, the special case of
    /// `*`): with `p` the product of the non-zero elements and `z` the
    /// number of zeros, `x̄[i] = ȳ·p/x[i]` when `z = 0`, `ȳ·p` for the one
    /// zero when `z = 1`, and 0 otherwise — no division by zero, one pass
    /// for `(p, z)` and one for the adjoints.
    fn reduce_product(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        arr: Var,
        t: &Type,
        g: Atom,
    ) -> Result<(), AdError> {
        let elem = t.elem();
        let one = Atom::Const(nabla_ir::derivatives::constant(elem, 1.0));
        let zero = Atom::Const(PrimValue::zero(elem));
        let i64t = Type::Prim(PrimType::I64);
        // (x ≠ 0 ? x : 1, x = 0 ? 1 : 0) per element, then their product
        // and sum.
        let split = b.lambda::<AdError>("x", vec![t.clone()], |b, ps| {
            let x = Atom::Var(ps[0]);
            let is_zero = b.cmp(CmpOp::Eq, x, zero);
            let nonzero = b.select(is_zero, one, x)?;
            let count = b.select(
                is_zero,
                Atom::Const(PrimValue::I64(1)),
                Atom::Const(PrimValue::I64(0)),
            )?;
            Ok(vec![nonzero, count])
        })?;
        let parts = b.let_existential(
            "split",
            Exp::Soac(Soac::Map {
                w,
                lam: split,
                arrs: vec![arr],
            }),
        )?;
        let op = b.lambda::<AdError>(
            "p",
            vec![t.clone(), i64t.clone(), t.clone(), i64t.clone()],
            |b, ps| {
                let p = b.binop(BinOp::Mul, Atom::Var(ps[0]), Atom::Var(ps[2]))?;
                let z = b.binop(BinOp::Add, Atom::Var(ps[1]), Atom::Var(ps[3]))?;
                Ok(vec![p, z])
            },
        )?;
        let pz = b.let_(
            "product",
            Exp::Soac(Soac::Reduce {
                w,
                lam: op,
                neutral: vec![one, Atom::Const(PrimValue::I64(0))],
                arrs: parts,
                commutative: true,
            }),
        )?;
        let (p, z) = (Atom::Var(pz[0]), Atom::Var(pz[1]));
        let scaled = b.binop(BinOp::Mul, g, p)?;
        let no_zeros = b.cmp(CmpOp::Eq, z, Atom::Const(PrimValue::I64(0)));
        let one_zero = b.cmp(CmpOp::Eq, z, Atom::Const(PrimValue::I64(1)));
        let lam = b.lambda::<AdError>("x", vec![t.clone()], |b, ps| {
            let x = Atom::Var(ps[0]);
            let is_zero = b.cmp(CmpOp::Eq, x, zero);
            let safe = b.select(is_zero, one, x)?;
            let quotient = b.binop(BinOp::Div, scaled, safe)?;
            let lone_zero = b.binop(BinOp::LogAnd, one_zero, is_zero)?;
            let other = b.select(lone_zero, scaled, zero)?;
            Ok(vec![b.select(no_zeros, quotient, other)?])
        })?;
        let xbar = b.let1_existential(
            "adj_product",
            Exp::Soac(Soac::Map {
                w,
                lam,
                arrs: vec![arr],
            }),
        )?;
        self.add(b, adj, arr, Atom::Var(xbar), true)
    }

    /// `reduce min`/`reduce max`: the result's adjoint goes to the first
    /// element equal to the result (Schenck et al. §5.1: ties to the smallest
    /// index), one sparse update.
    fn reduce_min_max(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        w: Atom,
        arr: Var,
        result: Var,
        g: Atom,
    ) -> Result<(), AdError> {
        if !self.active.contains(&arr) {
            return Ok(());
        }
        let span = self.span;
        let t = type_of(b, span, result)?;
        let iota = iota(b, w)?;
        // The first index whose element equals the result (w if none).
        let candidates =
            b.lambda::<AdError>("i", vec![t.clone(), Type::Prim(PrimType::I64)], |b, ps| {
                let eq = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(result));
                Ok(vec![b.select(eq, Atom::Var(ps[1]), w)?])
            })?;
        let positions = b.let1_existential(
            "positions",
            Exp::Soac(Soac::Map {
                w,
                lam: candidates,
                arrs: vec![arr, iota],
            }),
        )?;
        let min = b.lambda::<AdError>(
            "i",
            vec![Type::Prim(PrimType::I64), Type::Prim(PrimType::I64)],
            |b, ps| {
                Ok(vec![b.binop(
                    BinOp::Min,
                    Atom::Var(ps[0]),
                    Atom::Var(ps[1]),
                )?])
            },
        )?;
        let first = b.let1(
            "first",
            Exp::Soac(Soac::Reduce {
                w,
                lam: min,
                neutral: vec![w],
                arrs: vec![positions],
                commutative: true,
            }),
        )?;
        if adj.get(arr).is_some() {
            // An adjoint exists already: one element update, in place.
            let a = self.owned_adjoint(b, adj, arr)?;
            let found = b.cmp(CmpOp::Lt, Atom::Var(first), w);
            let idx = vec![DimIndex::Fix(Atom::Var(first))];
            b.begin();
            let old = b.let1("adj_elem", Exp::Index(a, idx.clone()))?;
            let new = b.binop(BinOp::Add, Atom::Var(old), g)?;
            let upd = b.let1_existential("adj_upd", Exp::Update(a, idx, new))?;
            let then_ = b.end(vec![Atom::Var(upd)]);
            let else_ = Body {
                stms: vec![],
                result: vec![Atom::Var(a)],
            };
            let r = b.let1(
                "adj_arg",
                Exp::If {
                    cond: found,
                    then_,
                    else_,
                },
            )?;
            adj.map.insert(arr, Atom::Var(r));
            adj.owned.insert(r);
            return Ok(());
        }
        // Otherwise the one-hot adjoint `map (\i -> if i == first then g else 0)
        // (iota w)`: pure and total, so it disappears when a `map` reverses
        // the one element alone (see `map_one_hot`).
        let indices = b.let1(
            "iota",
            Exp::Iota {
                n: w,
                start: Atom::Const(PrimValue::I64(0)),
                step: Atom::Const(PrimValue::I64(1)),
                ty: PrimType::I64,
            },
        )?;
        let zero = Atom::Const(PrimValue::zero(t.elem()));
        let pick = b.lambda::<AdError>("i", vec![Type::Prim(PrimType::I64)], |b, ps| {
            let here = b.cmp(CmpOp::Eq, Atom::Var(ps[0]), Atom::Var(first));
            Ok(vec![b.select(here, g, zero)?])
        })?;
        let one_hot = b.let1(
            "adj_one_hot",
            Exp::Soac(Soac::Map {
                w,
                lam: pick,
                arrs: vec![indices],
            }),
        )?;
        self.one_hot.insert(one_hot, (Atom::Var(first), g));
        self.add(b, adj, arr, Atom::Var(one_hot), true)
    }
}
