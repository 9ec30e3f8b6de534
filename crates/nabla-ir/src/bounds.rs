//! Indices that are provably in bounds, for a code generator that drops
//! the bounds checks of such indices ([`InBounds`]).
//!
//! A forward walk over a function keeps, per `i64` variable, what is known
//! about its value: a constant lower bound and a few exclusive upper
//! bounds, each a variable plus a constant offset or a constant alone
//! (`i < n`, `i < n - 1`, `i < 8`). The facts come from:
//! * constants; `size(a, d)`, never negative; the size variables of the
//!   function's parameter types, bound from (or checked against) the
//!   arguments' shapes;
//! * `for i < n`: `i` in `0..n`, and `n ≥ 1` in the body (it runs only if
//!   the bound is positive);
//! * the parameter of a `map` reading `iota(n, 0, 1)`: in `0..n`, and the
//!   map's width is at least 1 in its lambda;
//! * `a ± k` (k constant) where it cannot wrap; `(n + c) - j` with `j` in
//!   `0..n`; `x % n` with `n ≥ 0` (in `0..n`: Futhark's modulo takes the
//!   divisor's sign, and a zero divisor fails before the result exists);
//!   `x / k`; `min` and `max`;
//! * the condition of an enclosing branch, when it compares `i64` values
//!   (`<`, `<=`, `>`, `>=`, `==`, `!=`, and `&&`, `||`, `!` of those), and
//!   the condition of a `while` loop in its body;
//! * the results of a branch (what holds in both branches);
//! * an index of `a[i, …]` or `a with [i, …] = x`: in bounds after it
//!   (the access stops the program otherwise);
//! * `assert_eq_sizes` (its sizes are equal after it); the minimum or
//!   maximum (a `reduce` with `min`/`max`) of a map's `i64` results and a
//!   neutral element that are all at least some constant.
//!
//! An accumulator has the shape of the array its `with_acc` took (through
//! maps, loops and branches that thread it); an update or copy has the
//! shape of its array; `replicate`, `iota` and `map` make arrays whose
//! outer size is their width; a size bound by `size(b, e)` names
//! dimension e of b.
//!
//! An index is in bounds when it is at least 0 and one of its upper bounds
//! is at most the array's dimension: the dimension in the array's type (a
//! constant or a size variable; an existential dimension through the
//! `size` statements that name it), directly or through the upper bound of
//! the bounding variable itself (`i < j` and `j < n + 1`).
//!
//! The facts hold at the statement's own position (a branch condition, a
//! positive width): a pass that moves statements must not rely on them. The
//! dimensions are those of the IR's types, which the elaborator, the
//! passes and the run-time size checks keep exact; a code generator can
//! keep the checks and report a failed proof instead (the C backend's
//! `NB_VERIFY_PROOFS`).

use crate::{
    Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, Function, Lambda, LoopForm, Param, PrimType,
    PrimValue, Soac, Type, UnOp, Var,
};
use std::collections::{HashMap, HashSet};

/// The statements of a function whose indices are all provably in bounds,
/// named by the first variable they bind: `a[i, …]` and `a with [i, …] =
/// x` with single indices only (no slices), and `update_acc acc [i, …] x`.
/// See the module documentation for what is proven and how.
#[derive(Clone, Debug, Default)]
pub struct InBounds {
    proven: HashSet<Var>,
}

impl InBounds {
    /// The provably in-bounds indexing statements of `f`.
    pub fn of_function(f: &Function) -> InBounds {
        let mut walk = Walk::default();
        for p in &f.params {
            walk.types.insert(p.var, p.ty.clone());
        }
        collect_types(&f.body, &mut walk.types);
        // Size variables of the parameters' types are shapes.
        for p in &f.params {
            if let Type::Array(_, dims) = &p.ty {
                for d in dims {
                    if let Dim::Var(n) = d {
                        walk.refine(*n, Range::at_least(0));
                    }
                }
            }
        }
        walk.body(&f.body);
        InBounds {
            proven: walk.proven,
        }
    }

    /// Whether the indexing statement binding `first` (its first pattern
    /// variable) is provably in bounds.
    pub fn contains(&self, first: Var) -> bool {
        self.proven.contains(&first)
    }

    /// How many statements are proven.
    pub fn len(&self) -> usize {
        self.proven.len()
    }

    /// Whether no statement is proven.
    pub fn is_empty(&self) -> bool {
        self.proven.is_empty()
    }
}

/// The largest constant offset the walk reasons with: beyond it, facts are
/// dropped (so that no sum of offsets overflows).
const SMALL: i64 = 1 << 40;

/// At most this many upper bounds are kept per variable.
const MAX_UPPERS: usize = 4;

/// An exclusive upper bound: `value < var + offset`, or `value < offset`
/// without a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Upper {
    var: Option<Var>,
    offset: i64,
}

/// What is known about an `i64` value.
#[derive(Clone, Debug, Default, PartialEq)]
struct Range {
    /// `value >= low`.
    low: Option<i64>,
    uppers: Vec<Upper>,
}

impl Range {
    fn at_least(low: i64) -> Range {
        Range {
            low: Some(low),
            uppers: Vec::new(),
        }
    }

    fn constant(k: i64) -> Range {
        Range {
            low: Some(k),
            uppers: k
                .checked_add(1)
                .map(|o| Upper {
                    var: None,
                    offset: o,
                })
                .into_iter()
                .collect(),
        }
    }

    /// `0..bound` (`bound` an `i64` atom).
    fn below(bound: &Atom) -> Range {
        let mut r = Range::at_least(0);
        if let Some(u) = upper_of(bound, 0) {
            r.uppers.push(u);
        }
        r
    }

    fn add_upper(&mut self, u: Upper) {
        if u.offset.abs() > SMALL && u.var.is_some() {
            return;
        }
        if !self.uppers.contains(&u) && self.uppers.len() < MAX_UPPERS {
            self.uppers.push(u);
        }
    }

    /// Both facts at once.
    fn meet(&mut self, other: &Range) {
        self.low = match (self.low, other.low) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for u in &other.uppers {
            self.add_upper(*u);
        }
    }

    /// What holds of either value (the result of a branch).
    fn join(&self, other: &Range) -> Range {
        let low = match (self.low, other.low) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
        let mut uppers = Vec::new();
        for a in &self.uppers {
            for b in &other.uppers {
                if a.var == b.var {
                    uppers.push(Upper {
                        var: a.var,
                        offset: a.offset.max(b.offset),
                    });
                }
            }
        }
        uppers.dedup();
        uppers.truncate(MAX_UPPERS);
        Range { low, uppers }
    }

    /// The range of `value + k`, where that cannot wrap around; `None`
    /// where it might.
    fn shifted(&self, k: i64) -> Option<Range> {
        if k.abs() > SMALL {
            return None;
        }
        if k > 0 {
            // value + k must stay below 2^63: value < n + offset with
            // n ≤ i64::MAX needs offset + k ≤ 1; value < offset needs
            // offset - 1 + k ≤ i64::MAX.
            let safe = self.uppers.iter().any(|u| match u.var {
                Some(_) => u.offset + k <= 1,
                None => u.offset.checked_add(k - 1).is_some(),
            });
            if !safe {
                return None;
            }
        } else if k < 0 {
            let safe = self.low.is_some_and(|l| l.checked_add(k).is_some());
            if !safe {
                return None;
            }
        }
        Some(Range {
            low: self.low.and_then(|l| l.checked_add(k)),
            uppers: self
                .uppers
                .iter()
                .filter_map(|u| {
                    u.offset
                        .checked_add(k)
                        .map(|offset| Upper { var: u.var, offset })
                })
                .collect(),
        })
    }
}

/// `value < a + offset` as an [`Upper`], for an `i64` atom `a`.
fn upper_of(a: &Atom, offset: i64) -> Option<Upper> {
    match a {
        Atom::Var(v) => Some(Upper {
            var: Some(*v),
            offset,
        }),
        Atom::Const(PrimValue::I64(k)) => k.checked_add(offset).map(|o| Upper {
            var: None,
            offset: o,
        }),
        Atom::Const(_) => None,
    }
}

fn int_const(a: &Atom) -> Option<i64> {
    match a {
        Atom::Const(PrimValue::I64(k)) => Some(*k),
        _ => None,
    }
}

/// A boolean variable's definition, for branch conditions.
#[derive(Clone, Debug)]
enum Cond {
    Cmp(CmpOp, Atom, Atom),
    And(Atom, Atom),
    Or(Atom, Atom),
    Not(Atom),
}

#[derive(Default)]
struct Walk {
    types: HashMap<Var, Type>,
    /// `size(a, d)` statements, by the variable they bind.
    size_source: HashMap<Var, (Var, usize)>,
    /// `size(a, d)` statements: the variable naming dimension d of a.
    sizes: HashMap<(Var, usize), Vec<Var>>,
    /// `iota(n, 0, 1)` arrays of `i64`, with n.
    iotas: HashMap<Var, Atom>,
    conds: HashMap<Var, Cond>,
    /// Arrays and accumulators with the shape of another variable.
    same_shape: HashMap<Var, Var>,
    /// Arrays made by `replicate`, `iota` or `map`: their outer size, and
    /// for `replicate` of an array, that array (the shape of each row).
    made: HashMap<Var, (Atom, Option<Var>)>,
    /// `i64` arrays made by a map whose elements are at least a constant.
    element_low: HashMap<Var, i64>,
    /// Variables bound to `n + c` (n a variable, c a constant).
    exact: HashMap<Var, (Var, i64)>,
    ranges: HashMap<Var, Range>,
    /// Previous ranges, to restore on leaving a scope.
    undo: Vec<(Var, Option<Range>)>,
    proven: HashSet<Var>,
}

impl Walk {
    fn is_i64(&self, a: &Atom) -> bool {
        match a {
            Atom::Const(c) => c.prim_type() == PrimType::I64,
            Atom::Var(v) => self.types.get(v) == Some(&Type::Prim(PrimType::I64)),
        }
    }

    fn range(&self, a: &Atom) -> Range {
        match a {
            Atom::Const(PrimValue::I64(k)) => Range::constant(*k),
            Atom::Const(_) => Range::default(),
            Atom::Var(v) => self.ranges.get(v).cloned().unwrap_or_default(),
        }
    }

    fn low(&self, v: Var) -> Option<i64> {
        self.ranges.get(&v).and_then(|r| r.low)
    }

    fn set(&mut self, v: Var, r: Range) {
        let old = self.ranges.insert(v, r);
        self.undo.push((v, old));
    }

    /// Adds the facts of `r` to those of `v`.
    fn refine(&mut self, v: Var, r: Range) {
        let mut now = self.ranges.get(&v).cloned().unwrap_or_default();
        now.meet(&r);
        self.set(v, now);
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Walk) -> T) -> T {
        let mark = self.undo.len();
        let r = f(self);
        while self.undo.len() > mark {
            if let Some((v, old)) = self.undo.pop() {
                match old {
                    Some(r) => self.ranges.insert(v, r),
                    None => self.ranges.remove(&v),
                };
            }
        }
        r
    }

    /// A width or trip count is positive inside the lambda or body it
    /// runs.
    fn positive(&mut self, w: &Atom) {
        if let Atom::Var(n) = w {
            if self.is_i64(w) {
                self.refine(*n, Range::at_least(1));
            }
        }
    }

    // ----- branch conditions -----

    /// Assumes that the boolean `c` is `truth`.
    fn assume(&mut self, c: &Atom, truth: bool, depth: usize) {
        let Atom::Var(v) = c else { return };
        let Some(cond) = self.conds.get(v).cloned() else {
            return;
        };
        if depth > 16 {
            return;
        }
        match cond {
            Cond::Not(x) => self.assume(&x, !truth, depth + 1),
            Cond::And(x, y) if truth => {
                self.assume(&x, true, depth + 1);
                self.assume(&y, true, depth + 1);
            }
            Cond::Or(x, y) if !truth => {
                self.assume(&x, false, depth + 1);
                self.assume(&y, false, depth + 1);
            }
            Cond::And(..) | Cond::Or(..) => {}
            Cond::Cmp(op, a, b) => {
                if !self.is_i64(&a) || !self.is_i64(&b) {
                    return;
                }
                match (op, truth) {
                    (CmpOp::Lt, true) | (CmpOp::Ge, false) => self.less(&a, &b, true),
                    (CmpOp::Le, true) | (CmpOp::Gt, false) => self.less(&a, &b, false),
                    (CmpOp::Gt, true) | (CmpOp::Le, false) => self.less(&b, &a, true),
                    (CmpOp::Ge, true) | (CmpOp::Lt, false) => self.less(&b, &a, false),
                    (CmpOp::Eq, true) | (CmpOp::Neq, false) => {
                        self.equal(&a, &b);
                        self.equal(&b, &a);
                    }
                    (CmpOp::Eq, false) | (CmpOp::Neq, true) => {
                        self.different(&a, &b);
                        self.different(&b, &a);
                    }
                }
            }
        }
    }

    /// `a < b` (strict) or `a <= b`.
    fn less(&mut self, a: &Atom, b: &Atom, strict: bool) {
        let step = if strict { 0 } else { 1 };
        if let Atom::Var(x) = a {
            let mut r = Range::default();
            if let Some(u) = upper_of(b, step) {
                r.add_upper(u);
            }
            // a < b < u, or a <= b < u: a < u.
            for u in self.range(b).uppers {
                r.add_upper(u);
            }
            self.refine(*x, r);
        }
        if let (Atom::Var(y), Some(l)) = (b, self.range(a).low) {
            if let Some(l) = l.checked_add(1 - step) {
                self.refine(*y, Range::at_least(l));
            }
        }
    }

    /// `a == b`: a has b's facts.
    fn equal(&mut self, a: &Atom, b: &Atom) {
        if let Atom::Var(x) = a {
            let r = self.range(b);
            self.refine(*x, r);
        }
    }

    /// `a != b`, for a constant b at an end of a's range.
    fn different(&mut self, a: &Atom, b: &Atom) {
        let (Atom::Var(x), Some(k)) = (a, int_const(b)) else {
            return;
        };
        let r = self.range(a);
        let mut new = Range::default();
        if r.low == Some(k) {
            new.low = k.checked_add(1);
        }
        if r.uppers.contains(&Upper {
            var: None,
            offset: k.saturating_add(1),
        }) {
            new.add_upper(Upper {
                var: None,
                offset: k,
            });
        }
        self.refine(*x, new);
    }

    // ----- proofs -----

    /// Whether `0 <= i < dim d of array a`.
    fn index_fits(&self, i: &Atom, a: Var, d: usize) -> bool {
        let r = self.range(i);
        if !self.is_i64(i) || r.low.is_none_or(|l| l < 0) {
            return false;
        }
        let mut names = Vec::new();
        let mut constant = None;
        self.dim_names(a, d, &mut names, &mut constant, 0);
        r.uppers
            .iter()
            .any(|u| self.upper_fits(*u, &names, constant, 0))
    }

    /// The variables naming dimension `d` of array (or accumulator) `a`,
    /// and its constant size if known: from `a`'s type, the `size`
    /// statements on it, and where its shape comes from (the array an
    /// accumulator, update or copy has the shape of; the width of the
    /// `replicate`, `iota` or `map` that made it).
    fn dim_names(
        &self,
        a: Var,
        d: usize,
        names: &mut Vec<Var>,
        constant: &mut Option<i64>,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        if let Some(Type::Array(_, dims) | Type::Acc(_, dims)) = self.types.get(&a) {
            match dims.get(d) {
                Some(Dim::Var(n)) => self.add_name(*n, names, constant, depth),
                Some(Dim::Const(k)) => *constant = Some(*k),
                _ => {}
            }
        }
        names.extend(self.sizes.get(&(a, d)).into_iter().flatten());
        if let Some(&b) = self.same_shape.get(&a) {
            self.dim_names(b, d, names, constant, depth + 1);
        }
        if let Some((outer, rows)) = self.made.get(&a) {
            match (d, outer, rows) {
                (0, Atom::Var(n), _) => self.add_name(*n, names, constant, depth),
                (0, Atom::Const(PrimValue::I64(k)), _) => *constant = Some(*k),
                (0, _, _) => {}
                (_, _, Some(row)) => self.dim_names(*row, d - 1, names, constant, depth + 1),
                _ => {}
            }
        }
    }

    /// Adds size variable `n` to the names of a dimension; if `size(b,
    /// e)` bound it, dimension e of b has the same size, so its names too.
    fn add_name(&self, n: Var, names: &mut Vec<Var>, constant: &mut Option<i64>, depth: usize) {
        if names.contains(&n) {
            return;
        }
        names.push(n);
        if let Some(&(b, e)) = self.size_source.get(&n) {
            self.dim_names(b, e, names, constant, depth + 1);
        }
    }

    /// Records that `v` has the shape of `a` (if `a` is a variable).
    fn note_same(&mut self, v: Var, a: &Atom) {
        if let Atom::Var(a) = a {
            if *a != v {
                self.same_shape.insert(v, *a);
            }
        }
    }

    /// Whether `value < u` implies `value < dim`, for the dimension named
    /// by the variables `names` or of constant size `constant`.
    fn upper_fits(&self, u: Upper, names: &[Var], constant: Option<i64>, depth: usize) -> bool {
        match u.var {
            Some(v) if names.contains(&v) => u.offset <= 0,
            None => {
                constant.is_some_and(|k| u.offset <= k)
                    || names
                        .iter()
                        .any(|n| self.low(*n).is_some_and(|l| u.offset <= l))
            }
            // value < w + offset and w < x + o2: value < x + o2 - 1 + offset.
            Some(w) if depth < 2 => self.range(&Atom::Var(w)).uppers.iter().any(|u2| {
                let offset = u2.offset - 1 + u.offset;
                u.offset.abs() <= SMALL
                    && u2.offset.abs() <= SMALL
                    && self.upper_fits(
                        Upper {
                            var: u2.var,
                            offset,
                        },
                        names,
                        constant,
                        depth + 1,
                    )
            }),
            Some(_) => false,
        }
    }

    fn indices_fit(&self, a: Var, dims: &[Dim], indices: &[&Atom]) -> bool {
        indices.len() <= dims.len()
            && indices
                .iter()
                .enumerate()
                .all(|(d, i)| self.index_fits(i, a, d))
    }

    fn array_indices_fit(&self, a: Var, idx: &[DimIndex]) -> bool {
        let Some(Type::Array(_, dims)) = self.types.get(&a) else {
            return false;
        };
        let fixed: Option<Vec<&Atom>> = idx
            .iter()
            .map(|d| match d {
                DimIndex::Fix(x) => Some(x),
                DimIndex::Slice { .. } => None,
            })
            .collect();
        fixed.is_some_and(|f| self.indices_fit(a, dims, &f))
    }

    /// After `a[i, …]` or `a with [i, …] = x`, each single index is in
    /// bounds of its dimension: the access stops the program otherwise.
    /// (Not after `update_acc`, which ignores an index out of bounds.)
    fn checked_indices(&mut self, a: Var, idx: &[DimIndex]) {
        for (d, ix) in idx.iter().enumerate() {
            let DimIndex::Fix(Atom::Var(i)) = ix else {
                continue;
            };
            if self.types.get(i) != Some(&Type::Prim(PrimType::I64)) {
                continue;
            }
            let mut names = Vec::new();
            let mut constant = None;
            self.dim_names(a, d, &mut names, &mut constant, 0);
            let mut r = Range::at_least(0);
            for n in names {
                r.add_upper(Upper {
                    var: Some(n),
                    offset: 0,
                });
            }
            if let Some(k) = constant {
                r.add_upper(Upper {
                    var: None,
                    offset: k,
                });
            }
            self.refine(*i, r);
        }
    }

    // ----- the walk -----

    fn body(&mut self, b: &Body) -> Vec<Range> {
        stacker::maybe_grow(32 * 1024, 1024 * 1024, || {
            for s in &b.stms {
                self.stm(&s.pat, &s.exp);
            }
            b.result.iter().map(|a| self.range(a)).collect()
        })
    }

    fn lambda(&mut self, lam: &Lambda) {
        self.body(&lam.body);
    }

    fn stm(&mut self, pat: &[Param], e: &Exp) {
        let first = pat.first().map(|p| p.var);
        let one = match pat {
            [p] if p.ty == Type::Prim(PrimType::I64) => Some(p.var),
            _ => None,
        };
        self.note_shapes(pat, e);
        match e {
            Exp::Atoms(xs) => {
                for (p, x) in pat.iter().zip(xs) {
                    if p.ty == Type::Prim(PrimType::I64) {
                        let r = self.range(x);
                        self.set(p.var, r);
                        if let Some(&(n, c)) = x_exact(x, &self.exact) {
                            self.exact.insert(p.var, (n, c));
                        }
                    }
                }
            }
            Exp::BinOp(op, a, b) => {
                if let Some(v) = one {
                    self.binop(v, *op, a, b);
                }
                if let ([p], BinOp::LogAnd | BinOp::BitAnd) = (pat, op) {
                    if p.ty == Type::Prim(PrimType::Bool) {
                        self.conds.insert(p.var, Cond::And(*a, *b));
                    }
                }
                if let ([p], BinOp::LogOr | BinOp::BitOr) = (pat, op) {
                    if p.ty == Type::Prim(PrimType::Bool) {
                        self.conds.insert(p.var, Cond::Or(*a, *b));
                    }
                }
            }
            Exp::CmpOp(op, a, b) => {
                if let Some(p) = pat.first() {
                    self.conds.insert(p.var, Cond::Cmp(*op, *a, *b));
                }
            }
            Exp::UnOp(UnOp::Not, a) => {
                if let [p] = pat {
                    if p.ty == Type::Prim(PrimType::Bool) {
                        self.conds.insert(p.var, Cond::Not(*a));
                    }
                }
            }
            Exp::Size(a, d) => {
                if let Some(v) = one {
                    self.set(v, Range::at_least(0));
                    self.sizes.entry((*a, *d)).or_default().push(v);
                    self.size_source.insert(v, (*a, *d));
                }
            }
            Exp::Iota {
                n,
                start: Atom::Const(PrimValue::I64(0)),
                step: Atom::Const(PrimValue::I64(1)),
                ty: PrimType::I64,
            } => {
                if let Some(v) = first {
                    self.iotas.insert(v, *n);
                }
            }
            Exp::Index(a, idx) => {
                if self.array_indices_fit(*a, idx) {
                    self.proven.extend(first);
                }
                self.checked_indices(*a, idx);
            }
            Exp::Update(a, idx, _) => {
                if self.array_indices_fit(*a, idx) {
                    self.proven.extend(first);
                }
                self.checked_indices(*a, idx);
            }
            Exp::UpdateAcc { acc, indices, .. } => {
                if let Some(Type::Acc(_, dims)) = self.types.get(acc) {
                    let dims = dims.clone();
                    let is: Vec<&Atom> = indices.iter().collect();
                    if self.indices_fit(*acc, &dims, &is) {
                        self.proven.extend(first);
                    }
                }
            }
            Exp::If { cond, then_, else_ } => {
                let t = self.scoped(|w| {
                    w.assume(cond, true, 0);
                    w.body(then_)
                });
                let f = self.scoped(|w| {
                    w.assume(cond, false, 0);
                    w.body(else_)
                });
                for ((p, rt), rf) in pat.iter().zip(&t).zip(&f) {
                    if p.ty == Type::Prim(PrimType::I64) {
                        self.set(p.var, rt.join(rf));
                    }
                }
            }
            Exp::Loop { form, body, .. } => match form {
                LoopForm::For { i, bound } => {
                    self.scoped(|w| {
                        if w.is_i64(bound) {
                            w.set(*i, Range::below(bound));
                            w.positive(bound);
                        }
                        w.body(body);
                    });
                }
                LoopForm::While { cond } => {
                    self.scoped(|w| {
                        let c = w.body(cond);
                        let _ = c;
                    });
                    self.scoped(|w| {
                        if let [c] = cond.result.as_slice() {
                            w.assume(c, true, 0);
                        }
                        w.body(body);
                    });
                }
            },
            Exp::Soac(Soac::Map { w, lam, arrs }) => {
                self.scoped(|walk| {
                    walk.positive(w);
                    for (p, a) in lam.params.iter().zip(arrs) {
                        if let Some(n) = walk.iotas.get(a).copied() {
                            walk.set(p.var, Range::below(&n));
                            walk.positive(&n);
                        }
                    }
                    let results = walk.body(&lam.body);
                    for (p, r) in pat.iter().zip(results) {
                        if let (Type::Array(PrimType::I64, _), Some(low)) = (&p.ty, r.low) {
                            walk.element_low.insert(p.var, low);
                        }
                    }
                });
            }
            // The minimum or maximum of elements and a neutral element
            // that are all at least some constant.
            Exp::Soac(Soac::Reduce {
                lam, neutral, arrs, ..
            }) => {
                let low = match (min_or_max(lam), one, neutral.as_slice(), arrs.as_slice()) {
                    (true, Some(_), [ne], [a]) => self
                        .range(ne)
                        .low
                        .zip(self.element_low.get(a).copied())
                        .map(|(x, y)| x.min(y)),
                    _ => None,
                };
                self.scoped(|w| w.lambda(lam));
                if let (Some(v), Some(low)) = (one, low) {
                    self.set(v, Range::at_least(low));
                }
            }
            // After `assert_eq_sizes`, the sizes are equal.
            Exp::AssertEqSizes(xs, _) => {
                for pair in xs.windows(2) {
                    if self.is_i64(&pair[0]) && self.is_i64(&pair[1]) {
                        self.less(&pair[0], &pair[1], false);
                        self.less(&pair[1], &pair[0], false);
                    }
                }
            }
            // Operators: they also combine partial results, so their
            // parameters get no facts from the inputs.
            _ => {
                let mut nested = Vec::new();
                e.for_each_nested(|n| nested.push(n));
                for n in nested {
                    self.scoped(|w| match n {
                        crate::Nested::Body(b) => {
                            w.body(b);
                        }
                        crate::Nested::Lambda(l) => w.lambda(l),
                    });
                }
            }
        }
    }

    /// Where the shapes of the arrays and accumulators `e` binds (in
    /// `pat` and in its lambdas and loops) come from.
    fn note_shapes(&mut self, pat: &[Param], e: &Exp) {
        let first = pat.first().map(|p| p.var);
        match e {
            Exp::Atoms(xs) => {
                for (p, x) in pat.iter().zip(xs) {
                    self.note_same(p.var, x);
                }
            }
            Exp::Copy(a) | Exp::Update(a, ..) | Exp::UpdateAcc { acc: a, .. } => {
                if let Some(v) = first {
                    self.note_same(v, &Atom::Var(*a));
                }
            }
            Exp::Replicate(n, x) => {
                if let Some(v) = first {
                    let row = match x {
                        Atom::Var(r) if matches!(self.types.get(r), Some(Type::Array(..))) => {
                            Some(*r)
                        }
                        _ => None,
                    };
                    self.made.insert(v, (*n, row));
                }
            }
            Exp::Iota { n, .. } => {
                if let Some(v) = first {
                    self.made.insert(v, (*n, None));
                }
            }
            Exp::WithAcc { inputs, lam } => {
                for (i, input) in inputs.iter().enumerate() {
                    let a = Atom::Var(input.array);
                    if let Some(p) = lam.params.get(i) {
                        self.note_same(p.var, &a);
                    }
                    if let Some(p) = pat.get(i) {
                        self.note_same(p.var, &a);
                    }
                }
            }
            Exp::Soac(Soac::Map { w, lam, arrs }) => {
                let accs: Vec<Var> = arrs
                    .iter()
                    .copied()
                    .filter(|a| matches!(self.types.get(a), Some(Type::Acc(..))))
                    .collect();
                for (p, a) in lam.params.iter().zip(arrs) {
                    if accs.contains(a) {
                        self.note_same(p.var, &Atom::Var(*a));
                    }
                }
                let mut k = 0;
                for (j, p) in pat.iter().enumerate() {
                    match p.ty {
                        Type::Acc(..) => {
                            if let Some(a) = accs.get(k) {
                                self.note_same(p.var, &Atom::Var(*a));
                            }
                            k += 1;
                        }
                        Type::Array(..) => {
                            // Its rows have the shape of the lambda's result.
                            let row = match lam.body.result.get(j) {
                                Some(Atom::Var(r))
                                    if matches!(self.types.get(r), Some(Type::Array(..))) =>
                                {
                                    Some(*r)
                                }
                                _ => None,
                            };
                            self.made.insert(p.var, (*w, row));
                        }
                        Type::Prim(_) => {}
                    }
                }
            }
            // An accumulator keeps the shape of its array through loops
            // and branches (arrays may change shape there).
            Exp::Loop { params, init, .. } => {
                for ((p, x), q) in params.iter().zip(init).zip(pat) {
                    if p.ty.is_acc() {
                        self.note_same(p.var, x);
                        self.note_same(q.var, x);
                    }
                }
            }
            Exp::If { then_, .. } => {
                for (p, x) in pat.iter().zip(&then_.result) {
                    if p.ty.is_acc() {
                        self.note_same(p.var, x);
                    }
                }
            }
            _ => {}
        }
    }

    fn binop(&mut self, v: Var, op: BinOp, a: &Atom, b: &Atom) {
        if !self.is_i64(a) || !self.is_i64(b) {
            return;
        }
        let ra = self.range(a);
        let rb = self.range(b);
        let r = match op {
            BinOp::Add => match (int_const(a), int_const(b)) {
                (_, Some(k)) => {
                    self.note_exact(v, a, k);
                    ra.shifted(k)
                }
                (Some(k), _) => {
                    self.note_exact(v, b, k);
                    rb.shifted(k)
                }
                _ => None,
            },
            BinOp::Sub => match int_const(b) {
                Some(k) if k != i64::MIN => {
                    self.note_exact(v, a, -k);
                    ra.shifted(-k)
                }
                _ => self.difference(a, &rb),
            },
            BinOp::Mod if rb.low.is_some_and(|l| l >= 0) => {
                let mut r = Range::below(b);
                if ra.low.is_some_and(|l| l >= 0) {
                    for u in &ra.uppers {
                        r.add_upper(*u);
                    }
                }
                Some(r)
            }
            BinOp::Div => match int_const(b) {
                Some(k) if k >= 1 && ra.low.is_some_and(|l| l >= 0) => Some(Range {
                    low: ra.low.map(|l| l / k),
                    uppers: ra.uppers.clone(),
                }),
                _ => None,
            },
            BinOp::Min => {
                let mut r = Range {
                    low: match (ra.low, rb.low) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        _ => None,
                    },
                    uppers: Vec::new(),
                };
                for u in ra.uppers.iter().chain(&rb.uppers) {
                    r.add_upper(*u);
                }
                Some(r)
            }
            BinOp::Max => {
                let mut r = ra.join(&rb);
                r.low = match (ra.low, rb.low) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                };
                Some(r)
            }
            _ => None,
        };
        if let Some(r) = r {
            self.set(v, r);
        }
    }

    /// `v = a + k` with `a` a variable: records `v = n + c`.
    fn note_exact(&mut self, v: Var, a: &Atom, k: i64) {
        if let Atom::Var(x) = a {
            let (n, c) = self.exact.get(x).copied().unwrap_or((*x, 0));
            if let Some(c) = c.checked_add(k).filter(|c| c.abs() <= SMALL) {
                self.exact.insert(v, (n, c));
            }
        }
    }

    /// `(n + c) - j` with `c ≤ 0`, `n ≥ 0` and `j` in `lj..n + oj`: at
    /// least `c - oj + 1`, below `n + c - lj + 1`.
    fn difference(&self, a: &Atom, rb: &Range) -> Option<Range> {
        let Atom::Var(x) = a else { return None };
        let (n, c) = self.exact.get(x).copied().unwrap_or((*x, 0));
        let lj = rb.low.filter(|l| *l >= 0 && *l <= SMALL)?;
        if c > 0 || self.low(n).is_none_or(|l| l < 0) {
            return None;
        }
        let oj = rb
            .uppers
            .iter()
            .find(|u| u.var == Some(n) && u.offset.abs() <= SMALL)?
            .offset;
        let mut r = Range::at_least(c - oj + 1);
        r.add_upper(Upper {
            var: Some(n),
            offset: c - lj + 1,
        });
        Some(r)
    }
}

/// Whether `lam` is `\x y -> min x y` or `max` (on one component).
fn min_or_max(lam: &Lambda) -> bool {
    match (
        lam.params.as_slice(),
        lam.body.stms.as_slice(),
        lam.body.result.as_slice(),
    ) {
        ([x, y], [s], [Atom::Var(r)]) => {
            matches!(
                &s.exp,
                Exp::BinOp(BinOp::Min | BinOp::Max, Atom::Var(a), Atom::Var(b))
                    if (*a == x.var && *b == y.var) || (*a == y.var && *b == x.var)
            ) && s.pat.len() == 1
                && s.pat[0].var == *r
        }
        _ => false,
    }
}

fn x_exact<'a>(x: &Atom, exact: &'a HashMap<Var, (Var, i64)>) -> Option<&'a (Var, i64)> {
    match x {
        Atom::Var(v) => exact.get(v),
        Atom::Const(_) => None,
    }
}

/// The types of every variable bound in `b` (patterns, lambda and loop
/// parameters, `for` indices).
fn collect_types(b: &Body, types: &mut HashMap<Var, Type>) {
    stacker::maybe_grow(32 * 1024, 1024 * 1024, || {
        for s in &b.stms {
            for p in &s.pat {
                types.insert(p.var, p.ty.clone());
            }
            for p in s.exp.loop_params() {
                types.insert(p.var, p.ty.clone());
            }
            if let Exp::Loop {
                form: LoopForm::For { i, bound },
                ..
            } = &s.exp
            {
                let t = match bound {
                    Atom::Const(c) => Type::Prim(c.prim_type()),
                    Atom::Var(v) => types.get(v).cloned().unwrap_or(Type::Prim(PrimType::I64)),
                };
                types.insert(*i, t);
            }
            s.exp.for_each_nested(|n| match n {
                crate::Nested::Body(b) => collect_types(b, types),
                crate::Nested::Lambda(l) => {
                    for p in &l.params {
                        types.insert(p.var, p.ty.clone());
                    }
                    collect_types(&l.body, types);
                }
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the proven statements of the program's first function.
    fn proven(text: &str) -> Vec<String> {
        let prog = crate::parse_program(text).expect("the test program parses");
        crate::validate_program(&prog).expect("the test program validates");
        let f = &prog.functions[0];
        let ib = InBounds::of_function(f);
        let mut names: Vec<String> = ib
            .proven
            .iter()
            .map(|v| f.var_names[v.0 as usize].clone())
            .collect();
        names.sort();
        names
    }

    fn program(body: &str) -> String {
        format!(
            "fun main (xs_0: [?]f64, k_1: i64): (f64) = {{\n  let n_2: i64 = size(xs_0, 0)\n{body}\n}}\n\nentry main = main (params [1, 1], results [1])\n"
        )
    }

    #[test]
    fn a_map_over_iota_reads_its_own_row_and_its_neighbours_inside_a_branch() {
        // ode's right-hand side: x[i] and, for i != 0, y[i - 1]; x[0]
        // inside the map (its width is positive there).
        let p = program(
            "  let is_3: [n_2]i64 = iota<i64>(n_2, 0i64, 1i64)
  let m_13: [n_2]f64 = map(n_2, \\(i_4: i64): (f64) -> {
    let c_5: bool = i_4 == 0i64
    let r_12: f64 = if c_5 then {
      let a_6: f64 = xs_0[0i64]
      in (a_6)
    } else {
      let b_7: f64 = xs_0[i_4]
      let j_8: i64 = i_4 - 1i64
      let d_9: f64 = xs_0[j_8]
      let up_10: i64 = i_4 + 1i64
      let e_11: f64 = xs_0[up_10]
      in (d_9)
    }
    in (r_12)
  }, is_3)
  let z_14: f64 = xs_0[0i64]
  in (z_14)",
        );
        // e_11 (i + 1 may be n) and z_14 (xs may be empty) are not proven.
        assert_eq!(proven(&p), ["a_6", "b_7", "d_9"]);
    }

    #[test]
    fn loops_modulo_reversal_and_conditions() {
        let p = program(
            "  let n1_3: i64 = n_2 - 1i64
  let s_20: f64 = loop (acc_4: f64 = 0.0f64) for i_5 < n_2 do {
    let r_6: i64 = n1_3 - i_5
    let a_7: f64 = xs_0[r_6]
    let m_8: i64 = k_1 % n_2
    let b_9: f64 = xs_0[m_8]
    let c_10: bool = k_1 < n_2
    let d_11: bool = 0i64 <= k_1
    let e_12: bool = c_10 && d_11
    let f_14: f64 = if e_12 then {
      let g_13: f64 = xs_0[k_1]
      in (g_13)
    } else {
      let h_15: f64 = xs_0[k_1]
      in (h_15)
    }
    let q_16: i64 = i_5 + k_1
    let x_17: f64 = xs_0[q_16]
    let t_18: f64 = a_7 + b_9
    let u_19: f64 = t_18 + f_14
    in (u_19)
  }
  in (s_20)",
        );
        // h_15 (k may be out of range there) and x_17 (i + k) are not.
        assert_eq!(proven(&p), ["a_7", "b_9", "g_13"]);
    }

    #[test]
    fn an_accumulator_has_the_shape_of_its_array() {
        // Neither the zeros nor the accumulator name their size in their
        // types: the replicate that made the zeros does. The map's
        // parameter over iota(k) is not known to fit it.
        let p = program(
            "  let z_3: [?]f64 = replicate(n_2, 0.0f64)
  let is_4: [n_2]i64 = iota<i64>(n_2, 0i64, 1i64)
  let ks_12: [k_1]i64 = iota<i64>(k_1, 0i64, 1i64)
  let out_10: [?]f64 = with_acc([z_3 add], \\(acc_5: acc([?]f64)): (acc([?]f64)) -> {
    let a_9: acc([?]f64) = map(n_2, \\(i_6: i64, c_7: acc([?]f64)): (acc([?]f64)) -> {
      let c_8: acc([?]f64) = update_acc(c_7, [i_6], 1.0f64)
      in (c_8)
    }, is_4, acc_5)
    let b_16: acc([?]f64) = map(k_1, \\(j_14: i64, d_15: acc([?]f64)): (acc([?]f64)) -> {
      let d_11: acc([?]f64) = update_acc(d_15, [j_14], 1.0f64)
      in (d_11)
    }, ks_12, a_9)
    in (b_16)
  })
  let y_17: f64 = out_10[0i64]
  in (y_17)",
        );
        assert_eq!(proven(&p), ["c_8"]);
    }

    #[test]
    fn equal_sizes_a_size_s_array_and_the_first_minimum() {
        // kmeans's shape: the row of the first position where a value is
        // minimal (a min-reduction of positions in 0..n, with n as the
        // neutral element), guarded by `first < n`, in zeros whose row
        // size is named through a `size` of other zeros and an assertion.
        let p = program(
            "  let () = assert_eq_sizes(k_1, n_2, \"k is n\")
  let z_3: [?]f64 = replicate(k_1, 0.0f64)
  let zz_4: [?][?]f64 = replicate(n_2, z_3)
  let m_5: i64 = size(zz_4, 1)
  let y_6: [?]f64 = replicate(m_5, 0.0f64)
  let yy_7: [?][?]f64 = replicate(n_2, y_6)
  let is_8: [n_2]i64 = iota<i64>(n_2, 0i64, 1i64)
  let ps_13: [n_2]i64 = map(n_2, \\(x_9: f64, i_10: i64): (i64) -> {
    let c_11: bool = x_9 == 0.0f64
    let s_12: i64 = if c_11 then {
      in (i_10)
    } else {
      in (n_2)
    }
    in (s_12)
  }, xs_0, is_8)
  let f_17: i64 = reduce_comm(n_2, \\(a_14: i64, b_15: i64): (i64) -> {
    let r_16: i64 = min(a_14, b_15)
    in (r_16)
  }, (n_2), ps_13)
  let c_18: bool = f_17 < n_2
  let e_21: f64 = if c_18 then {
    let row_19: f64 = yy_7[f_17, 0i64]
    let row_20: f64 = yy_7[f_17, f_17]
    in (row_20)
  } else {
    in (0.0f64)
  }
  in (e_21)",
        );
        // yy[f, 0] needs k ≥ 1, which nothing says.
        assert_eq!(proven(&p), ["row_20"]);
        // Without the assertion, k and n are unrelated.
        let p = p.replace("let () = assert_eq_sizes(k_1, n_2, \"k is n\")\n", "");
        assert!(proven(&p).is_empty());
    }

    #[test]
    fn a_checked_access_bounds_its_index_for_what_follows() {
        // gmm's return sweep: an element `xs[k]` is read (checked) before
        // the adjoint's update at the same index, in an accumulator of
        // zeros made by a map whose rows have the size n of xs.
        let p = program(
            "  let ks_3: [k_1]i64 = iota<i64>(k_1, 0i64, 1i64)
  let zs_6: [?][?]f64 = map(k_1, \\(u_4: i64): ([n_2]f64) -> {
    let z_5: [n_2]f64 = replicate(n_2, 0.0f64)
    in (z_5)
  }, ks_3)
  let out_21: [?][?]f64 = with_acc([zs_6 add], \\(acc_7: acc([?][?]f64)): (acc([?][?]f64)) -> {
    let a_20: acc([?][?]f64) = map(k_1, \\(i_8: i64, c_9: acc([?][?]f64)): (acc([?][?]f64)) -> {
      let c_10: bool = k_1 < n_2
      let d_11: bool = 0i64 <= k_1
      let e_12: bool = c_10 && d_11
      let b_15: acc([?][?]f64) = if e_12 then {
        let b_14: acc([?][?]f64) = update_acc(c_9, [i_8, k_1], 1.0f64)
        let w_13: f64 = xs_0[k_1]
        in (b_14)
      } else {
        in (c_9)
      }
      let b_16: acc([?][?]f64) = update_acc(b_15, [i_8, k_1], 1.0f64)
      let b_17: acc([?][?]f64) = update_acc(b_16, [i_8, k_1], 1.0f64)
      let v_18: f64 = xs_0[k_1]
      let b_19: acc([?][?]f64) = update_acc(b_17, [i_8, k_1], v_18)
      in (b_19)
    }, ks_3, acc_7)
    in (a_20)
  })
  let y_22: f64 = xs_0[k_1]
  let y_23: f64 = xs_0[k_1]
  in (y_23)",
        );
        // Inside the branch, its condition (b_14, w_13). After it, neither
        // the branch's read nor an update_acc (b_16, b_17; it ignores an
        // index out of bounds) says anything; the read v_18 does (b_19).
        // The facts of the map's lambda stay there (y_22: the map may not
        // have run), and y_22's own read proves y_23.
        assert_eq!(proven(&p), ["b_14", "b_19", "w_13", "y_23"]);
    }

    #[test]
    fn a_while_loop_s_condition_holds_in_its_body() {
        let p = program(
            "  let (s_11: f64, j_12: i64) = loop (acc_3: f64 = 0.0f64, i_4: i64 = 0i64) while {
    let c_5: bool = i_4 < n_2
    let d_6: bool = 0i64 <= i_4
    let e_7: bool = c_5 && d_6
    in (e_7)
  } do {
    let a_8: f64 = xs_0[i_4]
    let b_9: f64 = acc_3 + a_8
    let i2_10: i64 = i_4 + 1i64
    in (b_9, i2_10)
  }
  in (s_11)",
        );
        assert_eq!(proven(&p), ["a_8"]);
        // Without the lower bound, a loop parameter may be negative.
        let p = p.replace("let e_7: bool = c_5 && d_6", "let e_7: bool = c_5 || d_6");
        assert!(proven(&p).is_empty());
    }
}
