//! Per-function simplification: copy propagation, constant folding, a few
//! local rewrites, and dead-code elimination.
//!
//! Forward pass, in statement order:
//! * every operand, array position and size in a type is rewritten through
//!   the substitution built so far;
//! * scalar operations on constants are folded with `nabla-prim`'s
//!   evaluators — an operation that fails (integer division by zero) is left
//!   alone, so it still fails at run time with its span;
//! * `if` on a constant becomes the chosen branch's statements;
//! * `assert true` and `assert_eq_sizes` of equal atoms are dropped;
//! * a repeated `size(a, d)` in scope reuses the first one, and an
//!   `assert_eq_sizes` of the same atoms as one in scope is dropped;
//! * `let p = x` (an `Atoms` statement) is removed and `p` replaced by `x`
//!   everywhere when that keeps the IR valid and the interpreter's behaviour:
//!   constants only for scalars; for arrays, neither side may be consumed by
//!   an in-place operation (the interpreter takes consumed arrays out of
//!   their slots), and `x`'s type must be at least as precise as `p`'s (each
//!   dimension `?` or equal), so every use still type-checks.
//!
//! Backward pass: a statement whose results are all unused is removed when
//! its expression is pure and total — it cannot fail, loop forever, or
//! write in place (see [`removable`]). Asserts, size checks, indexing,
//! division, reshapes, concatenation, updates, calls and SOACs whose width
//! might not match their inputs are kept. A map some of whose results are
//! unused stops computing them.

use crate::walk::{self, Visitor};
use nabla_ir::rewrite::Substitution;
use nabla_ir::{
    Atom, BinOp, Body, ConvOp, Dim, DimIndex, Exp, Function, FunctionAnalysis, LoopForm, PrimType,
    PrimValue, Stm, Type, Var,
};
use std::collections::{HashMap, HashSet};

/// Simplifies one function (forward pass then dead-code elimination, up to
/// a few times), given its analysis as received. Returns whether anything
/// changed.
pub fn simplify_function(f: &mut Function, analysis: &FunctionAnalysis) -> bool {
    let mut changed = false;
    // The received analysis holds until the first change.
    let mut received = Some(analysis);
    for _ in 0..4 {
        let mut c = forward(f, received);
        if c {
            received = None;
        }
        c |= dce(f, received);
        changed |= c;
        if !c {
            break;
        }
        received = None;
    }
    changed
}

/// The forward pass alone (see the module docs). `analysis`: the
/// function's analysis when `f` is as analysed (its variable types are
/// recomputed otherwise).
pub fn forward(f: &mut Function, analysis: Option<&FunctionAnalysis>) -> bool {
    let n = f.var_names.len();
    let mut cx = Forward {
        sub: Substitution::with_capacity(n),
        types: walk::var_types(f, analysis),
        consumed: walk::consumed_vars(f),
        sizes: HashMap::new(),
        asserted: HashSet::new(),
        literals: HashMap::new(),
        changed: false,
    };
    cx.body(&mut f.body);
    cx.changed
}

struct Forward {
    sub: Substitution,
    types: Vec<Option<Type>>,
    consumed: Vec<bool>,
    /// `size(a, d)` statements in scope.
    sizes: HashMap<(Var, usize), Var>,
    /// Size equalities asserted in scope (`assert_eq_sizes` atoms, sorted).
    asserted: HashSet<Vec<SizeKey>>,
    /// The elements of the one-dimensional array literals seen so far (a
    /// constant index into one is its element).
    literals: HashMap<Var, Vec<Atom>>,
    changed: bool,
}

/// An `i64` atom as a hashable key.
type SizeKey = (u8, i64);

fn size_key(a: &Atom) -> Option<SizeKey> {
    match a {
        Atom::Var(v) => Some((0, i64::from(v.0))),
        Atom::Const(PrimValue::I64(c)) => Some((1, *c)),
        Atom::Const(_) => None,
    }
}

/// Scoped facts to forget when a body ends.
enum Fact {
    Size((Var, usize)),
    Asserted(Vec<SizeKey>),
}

impl Forward {
    fn consumed(&self, v: Var) -> bool {
        self.consumed.get(v.0 as usize).copied().unwrap_or(false)
    }

    fn type_of(&self, v: Var) -> Option<Type> {
        let t = self.types.get(v.0 as usize)?.as_ref()?;
        Some(t.map_dims(|d| self.sub.dim(d)))
    }

    /// Whether `let p = x` may be removed, replacing `p` by `x`.
    fn can_propagate(&self, p: &nabla_ir::Param, x: &Atom) -> bool {
        match x {
            Atom::Const(c) => p.ty == Type::Prim(c.prim_type()),
            Atom::Var(y) => match (&p.ty, self.type_of(*y)) {
                (Type::Prim(a), Some(Type::Prim(b))) => *a == b,
                (Type::Array(pe, pd), Some(Type::Array(ye, yd))) => {
                    !self.consumed(p.var)
                        && !self.consumed(*y)
                        && *pe == ye
                        && pd.len() == yd.len()
                        && pd
                            .iter()
                            .zip(&yd)
                            .all(|(want, have)| *have == Dim::Ext || have == want)
                }
                _ => false,
            },
        }
    }

    fn stm(&mut self, mut s: Stm, out: &mut Vec<Stm>, keys: &mut Vec<Fact>) {
        walk::walk_exp(&mut s.exp, self);
        for p in &mut s.pat {
            self.ty(&mut p.ty);
        }
        if let Some(c) = fold(&s.exp).or_else(|| identity(&s.exp)) {
            s.exp = Exp::Atoms(vec![c]);
            self.changed = true;
        }
        // `[a, b, c][1]` is `b`.
        if let Exp::Index(v, idx) = &s.exp {
            if let ([DimIndex::Fix(Atom::Const(PrimValue::I64(k)))], Some(elems)) =
                (&idx[..], self.literals.get(v))
            {
                if let Some(e) = usize::try_from(*k).ok().and_then(|k| elems.get(k)) {
                    s.exp = Exp::Atoms(vec![*e]);
                    self.changed = true;
                }
            }
        }
        if let (Exp::ArrayLit(elems, Type::Prim(_)), [p]) = (&s.exp, &s.pat[..]) {
            self.literals.insert(p.var, elems.clone());
        }
        if let Exp::If { cond, then_, else_ } = &s.exp {
            use Atom::Const as C;
            use PrimValue::Bool as B;
            if then_.stms.is_empty() && else_.stms.is_empty() {
                match (&then_.result[..], &else_.result[..]) {
                    // Both branches the same atoms, computed by nothing.
                    (t, e) if t == e => {
                        s.exp = Exp::Atoms(t.to_vec());
                        self.changed = true;
                    }
                    // `if c then true else false`, and its negation.
                    ([C(B(true))], [C(B(false))]) => {
                        s.exp = Exp::Atoms(vec![*cond]);
                        self.changed = true;
                    }
                    ([C(B(false))], [C(B(true))]) => {
                        s.exp = Exp::UnOp(nabla_ir::UnOp::Not, *cond);
                        self.changed = true;
                    }
                    _ => {}
                }
            }
        }
        match &mut s.exp {
            Exp::If {
                cond: Atom::Const(PrimValue::Bool(c)),
                then_,
                else_,
            } => {
                let b = std::mem::take(if *c { then_ } else { else_ });
                out.extend(b.stms);
                s.exp = Exp::Atoms(b.result);
                self.changed = true;
            }
            Exp::Assert(Atom::Const(PrimValue::Bool(true)), ..) => {
                self.changed = true;
                return;
            }
            Exp::AssertEqSizes(xs, _) => {
                if xs.windows(2).all(|w| w[0] == w[1]) {
                    self.changed = true;
                    return;
                }
                if let Some(mut k) = xs.iter().map(size_key).collect::<Option<Vec<_>>>() {
                    k.sort_unstable();
                    k.dedup();
                    if self.asserted.contains(&k) {
                        self.changed = true;
                        return;
                    }
                    self.asserted.insert(k.clone());
                    keys.push(Fact::Asserted(k));
                }
            }
            Exp::Size(v, d) => {
                if let Some(&prev) = self.sizes.get(&(*v, *d)) {
                    s.exp = Exp::Atoms(vec![Atom::Var(prev)]);
                    self.changed = true;
                } else if let [p] = &s.pat[..] {
                    self.sizes.insert((*v, *d), p.var);
                    keys.push(Fact::Size((*v, *d)));
                }
            }
            _ => {}
        }
        if let Exp::Atoms(xs) = &s.exp {
            if xs.len() == s.pat.len() {
                let mut keep_p = Vec::new();
                let mut keep_x = Vec::new();
                for (p, x) in s.pat.iter().zip(xs) {
                    if self.can_propagate(p, x) {
                        self.sub.set(p.var, *x);
                        self.changed = true;
                    } else {
                        keep_p.push(p.clone());
                        keep_x.push(*x);
                    }
                }
                if keep_p.is_empty() {
                    return;
                }
                s.pat = keep_p;
                s.exp = Exp::Atoms(keep_x);
            }
        }
        out.push(s);
    }
}

impl Visitor for Forward {
    fn atom(&mut self, a: &mut Atom) {
        self.sub.atom(a);
    }
    fn var(&mut self, v: &mut Var) {
        self.sub.var(v);
    }
    fn bind(&mut self, _v: &mut Var) {}
    fn dim(&mut self, d: &mut Dim) {
        *d = self.sub.dim(*d);
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            let mut keys = Vec::new();
            let old = std::mem::take(&mut b.stms);
            let mut out = Vec::with_capacity(old.len());
            for s in old {
                self.stm(s, &mut out, &mut keys);
            }
            for a in &mut b.result {
                self.atom(a);
            }
            b.stms = out;
            for k in keys {
                match k {
                    Fact::Size(k) => {
                        self.sizes.remove(&k);
                    }
                    Fact::Asserted(k) => {
                        self.asserted.remove(&k);
                    }
                }
            }
        })
    }
}

/// The constant a scalar operation on constants evaluates to, if it
/// evaluates without error.
pub fn fold(e: &Exp) -> Option<Atom> {
    use Atom::Const as C;
    let v = match e {
        Exp::BinOp(op, C(a), C(b)) => nabla_prim::eval_binop(*op, *a, *b).ok()?,
        Exp::CmpOp(op, C(a), C(b)) => PrimValue::Bool(nabla_prim::eval_cmpop(*op, *a, *b).ok()?),
        Exp::UnOp(op, C(a)) => nabla_prim::eval_unop(*op, *a).ok()?,
        Exp::TernOp(op, C(a), C(b), C(c)) => nabla_prim::eval_ternop(*op, *a, *b, *c).ok()?,
        Exp::Conv(op, C(a)) => nabla_prim::eval_conv(*op, *a).ok()?,
        _ => return None,
    };
    Some(Atom::Const(v))
}

/// The atom an operation equals by an algebraic identity that holds
/// exactly, for every value of its variable operand — in IEEE arithmetic
/// too (`x * 1`, `x / 1`, `x ** 1`, `x - 0.0`, `x + -0.0`; on integers also
/// `x + 0`, `x - 0`, `x * 0`, `x - x`; `min x x`, `x && true`, …). Never
/// `x + 0.0` on floats (`-0.0 + 0.0` is `+0.0`) or `x * 0.0` (`inf * 0` is
/// NaN).
pub fn identity(e: &Exp) -> Option<Atom> {
    use Atom::Const as C;
    let is = |a: &Atom, v: f64, negative_zero: bool| match a {
        C(c) => {
            let t = c.prim_type();
            (t.is_int() || t.is_float())
                && c.as_f64() == v
                && (!t.is_float() || v != 0.0 || c.as_f64().is_sign_negative() == negative_zero)
        }
        _ => false,
    };
    let int = |a: &Atom, b: &Atom| {
        [a, b]
            .iter()
            .any(|x| matches!(x, C(c) if c.prim_type().is_int()))
    };
    let t = |x: &Atom| Some(*x);
    match e {
        Exp::BinOp(op, a, b) => match op {
            BinOp::Mul if is(b, 1.0, false) => t(a),
            BinOp::Mul if is(a, 1.0, false) => t(b),
            BinOp::Mul if int(a, b) && is(b, 0.0, false) => t(b),
            BinOp::Mul if int(a, b) && is(a, 0.0, false) => t(a),
            BinOp::Div | BinOp::IntDiv | BinOp::Quot | BinOp::Pow if is(b, 1.0, false) => t(a),
            BinOp::Add if is(b, 0.0, true) || (int(a, b) && is(b, 0.0, false)) => t(a),
            BinOp::Add if is(a, 0.0, true) || (int(a, b) && is(a, 0.0, false)) => t(b),
            BinOp::Sub if is(b, 0.0, false) => t(a),
            BinOp::LogAnd if *b == C(PrimValue::Bool(true)) => t(a),
            BinOp::LogAnd if *a == C(PrimValue::Bool(true)) => t(b),
            BinOp::LogOr if *b == C(PrimValue::Bool(false)) => t(a),
            BinOp::LogOr if *a == C(PrimValue::Bool(false)) => t(b),
            BinOp::LogAnd if *b == C(PrimValue::Bool(false)) => t(b),
            BinOp::LogOr if *b == C(PrimValue::Bool(true)) => t(b),
            BinOp::Min
            | BinOp::Max
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::LogAnd
            | BinOp::LogOr
                if a == b && matches!(a, Atom::Var(_)) =>
            {
                t(a)
            }
            _ => None,
        },
        Exp::Conv(nabla_ir::ConvOp::Convert(from, to), a) if from == to => t(a),
        _ => None,
    }
}

/// Dead-code elimination (the backward pass). `analysis`: the function's
/// analysis when `f` is as analysed (its variable types are recomputed
/// otherwise). Returns whether a statement was removed.
pub fn dce(f: &mut Function, analysis: Option<&FunctionAnalysis>) -> bool {
    let mut cx = Dce {
        live: vec![false; f.var_names.len()],
        facts: SizeFacts::of_function(f, walk::var_types(f, analysis)),
        changed: false,
    };
    cx.body(&mut f.body);
    cx.changed
}

struct Dce {
    live: Vec<bool>,
    facts: SizeFacts,
    changed: bool,
}

impl Dce {
    fn mark(&mut self, v: Var) {
        let i = v.0 as usize;
        if i >= self.live.len() {
            self.live.resize(i + 1, false);
        }
        self.live[i] = true;
    }
    fn is_live(&self, v: Var) -> bool {
        self.live.get(v.0 as usize).copied().unwrap_or(false)
    }
}

impl Visitor for Dce {
    fn atom(&mut self, a: &mut Atom) {
        if let Atom::Var(v) = a {
            self.mark(*v);
        }
    }
    fn var(&mut self, v: &mut Var) {
        self.mark(*v);
    }
    fn bind(&mut self, _v: &mut Var) {}
    fn dim(&mut self, d: &mut Dim) {
        if let Dim::Var(v) = d {
            self.mark(*v);
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            for a in &b.result {
                if let Atom::Var(v) = a {
                    self.mark(*v);
                }
            }
            let old = std::mem::take(&mut b.stms);
            let mut kept = Vec::with_capacity(old.len());
            for mut s in old.into_iter().rev() {
                if s.pat.iter().all(|p| !self.is_live(p.var)) && removable(&s, &self.facts) {
                    self.changed = true;
                    continue;
                }
                // Unused results of a reduction or scan whose live results
                // do not depend on them: dropped with their operator parts.
                if let Exp::Soac(
                    nabla_ir::Soac::Reduce {
                        w,
                        lam,
                        neutral,
                        arrs,
                        ..
                    }
                    | nabla_ir::Soac::Scan {
                        w,
                        lam,
                        neutral,
                        arrs,
                    },
                ) = &mut s.exp
                {
                    let live: Vec<bool> = s.pat.iter().map(|p| self.is_live(p.var)).collect();
                    // An input dropped with its component must not take a
                    // size check with it.
                    let checked = arrs
                        .iter()
                        .zip(&live)
                        .all(|(a, l)| *l || outer_size_is(&self.facts.types, *a, w));
                    if checked && live.len() > 1 && live.contains(&false) && live.contains(&true) {
                        if let Some(keep) = independent_components(lam, &live) {
                            let both: Vec<bool> = keep.iter().chain(&keep).copied().collect();
                            retain_where(&mut s.pat, &keep);
                            retain_where(neutral, &keep);
                            retain_where(arrs, &keep);
                            retain_where(&mut lam.params, &both);
                            retain_where(&mut lam.body.result, &keep);
                            retain_where(&mut lam.ret, &keep);
                            self.changed = true;
                        }
                    }
                }
                // A with_acc's unused extra results (after the
                // accumulated arrays): its lambda stops returning them.
                if let Exp::WithAcc { inputs, lam } = &mut s.exp {
                    let k = inputs.len();
                    let keep: Vec<bool> = s
                        .pat
                        .iter()
                        .enumerate()
                        .map(|(j, p)| j < k || self.is_live(p.var))
                        .collect();
                    if keep.contains(&false) && keep.len() == lam.body.result.len() {
                        retain_where(&mut s.pat, &keep);
                        retain_where(&mut lam.body.result, &keep);
                        retain_where(&mut lam.ret, &keep);
                        self.changed = true;
                    }
                }
                // A map's unused results: the lambda stops computing them.
                if let Exp::Soac(nabla_ir::Soac::Map { lam, .. }) = &mut s.exp {
                    if s.pat.len() > 1 && s.pat.iter().any(|p| !self.is_live(p.var)) {
                        let keep: Vec<bool> = s.pat.iter().map(|p| self.is_live(p.var)).collect();
                        retain_where(&mut s.pat, &keep);
                        retain_where(&mut lam.body.result, &keep);
                        retain_where(&mut lam.ret, &keep);
                        self.changed = true;
                    }
                }
                // A loop's parameters that nothing live needs: dropped with
                // their initial values and results.
                if let Exp::Loop {
                    params,
                    init,
                    form,
                    body,
                } = &mut s.exp
                {
                    let live_out: Vec<bool> = s.pat.iter().map(|p| self.is_live(p.var)).collect();
                    if live_out.len() == params.len() && live_out.contains(&false) {
                        let keep = needed_loop_params(params, form, body, &live_out, &self.facts);
                        if keep.contains(&false) && keep.contains(&true) {
                            retain_where(params, &keep);
                            retain_where(init, &keep);
                            retain_where(&mut body.result, &keep);
                            retain_where(&mut s.pat, &keep);
                            self.changed = true;
                        }
                    }
                }
                walk::walk_exp(&mut s.exp, self);
                // A map's inputs whose lambda parameters are unused: dropped,
                // when their size check cannot fail (so none is lost). Their
                // producers become dead in the next round.
                if let Exp::Soac(nabla_ir::Soac::Map { w, lam, arrs }) = &mut s.exp {
                    let checked = s
                        .pat
                        .first()
                        .is_some_and(|p| self.facts.checked_soacs.contains(&p.var));
                    let keep: Vec<bool> = lam
                        .params
                        .iter()
                        .zip(arrs.iter())
                        .map(|(p, a)| {
                            self.is_live(p.var)
                                || !(checked || outer_size_is(&self.facts.types, *a, w))
                        })
                        .collect();
                    if keep.len() == arrs.len() && keep.contains(&false) && keep.contains(&true) {
                        retain_where(&mut lam.params, &keep);
                        retain_where(arrs, &keep);
                        self.changed = true;
                    }
                }
                for p in &mut s.pat {
                    self.ty(&mut p.ty);
                }
                kept.push(s);
            }
            kept.reverse();
            b.stms = kept;
        })
    }
}

/// Which parameters of a loop are needed, given which of its results are
/// live after it (`live_out`): a parameter is needed when its result is
/// live, or when the body's needed part reads it — the results of needed
/// parameters, the `while` condition, statements that cannot be removed
/// (they may fail), and the sizes in needed parameters' types. The others
/// only feed themselves (a checkpoint array the return sweep never reads)
/// and can go with their initial values.
fn needed_loop_params(
    params: &[nabla_ir::Param],
    form: &LoopForm,
    body: &Body,
    live_out: &[bool],
    facts: &SizeFacts,
) -> Vec<bool> {
    let mut needed = live_out.to_vec();
    loop {
        let mut live: HashSet<Var> = HashSet::new();
        for (k, a) in body.result.iter().enumerate() {
            if let (true, Atom::Var(v)) = (needed[k], a) {
                live.insert(*v);
            }
        }
        if let LoopForm::While { cond } = form {
            live.extend(nabla_ir::free_vars_body(cond));
        }
        for (p, _) in params.iter().zip(&needed).filter(|(_, n)| **n) {
            p.ty.for_each_dim_var(|v| {
                live.insert(v);
            });
        }
        for stm in body.stms.iter().rev() {
            if stm.pat.iter().any(|p| live.contains(&p.var)) || !removable(stm, facts) {
                live.extend(nabla_ir::free_vars_stm(stm));
            }
        }
        let mut changed = false;
        for (k, p) in params.iter().enumerate() {
            if !needed[k] && live.contains(&p.var) {
                needed[k] = true;
                changed = true;
            }
        }
        if !changed {
            return needed;
        }
    }
}

/// Whether array `a`'s type says its outer size is `w` (so a SOAC of width
/// `w` over it cannot fail its size check).
fn outer_size_is(types: &[Option<Type>], a: Var, w: &Atom) -> bool {
    outer_size_equal(types, a, w, |x, y| x == y)
}

/// Whether array `a`'s outer size (from its type) is `w`, with `same`
/// deciding the equality of two size atoms.
fn outer_size_equal(
    types: &[Option<Type>],
    a: Var,
    w: &Atom,
    same: impl Fn(&Atom, &Atom) -> bool,
) -> bool {
    match types.get(a.0 as usize) {
        Some(Some(Type::Array(_, ds))) => match ds.first() {
            Some(Dim::Var(d)) => same(&Atom::Var(*d), w),
            Some(Dim::Const(k)) => *w == Atom::Const(PrimValue::I64(*k)),
            _ => false,
        },
        _ => false,
    }
}

/// Keeps the elements of `v` whose flag in `keep` is set.
fn retain_where<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&true));
}

/// For an operator lambda of `k` components (parameters: `k`
/// accumulators, then `k` elements) and which results are `live`: the
/// components to keep — the live ones — when no live result depends on a
/// parameter of a dead component; `None` when one does.
fn independent_components(lam: &nabla_ir::Lambda, live: &[bool]) -> Option<Vec<bool>> {
    let k = live.len();
    if lam.params.len() != 2 * k || lam.body.result.len() != k {
        return None;
    }
    let mut needed: HashSet<Var> = lam
        .body
        .result
        .iter()
        .zip(live)
        .filter_map(|(a, l)| match (a, l) {
            (Atom::Var(v), true) => Some(*v),
            _ => None,
        })
        .collect();
    for s in lam.body.stms.iter().rev() {
        if s.pat.iter().any(|p| needed.contains(&p.var)) {
            needed.extend(nabla_ir::free_vars_stm(s));
        }
    }
    let dead_param = |j: usize| !live[j % k];
    let uses_dead = lam
        .params
        .iter()
        .enumerate()
        .any(|(j, p)| dead_param(j) && needed.contains(&p.var));
    if uses_dead {
        None
    } else {
        Some(live.to_vec())
    }
}

/// What [`removable`] knows about a function: the types of its variables
/// (with unknown dimensions named by `size` statements, see
/// [`walk::var_types_with_sizes`]) and the SOACs whose inputs provably have
/// the SOAC's width as their outer size (through their types and the
/// `assert_eq_sizes` statements in scope before them), named by their first
/// result.
pub struct SizeFacts {
    types: Vec<Option<Type>>,
    checked_soacs: HashSet<Var>,
    /// Variables bound by `size(a, d)` (never negative).
    sizes: HashSet<Var>,
    /// Variables bound by an `i64` product `a * b` (e.g. the size of a
    /// flattened array), with their factors.
    products: HashMap<Var, (Atom, Atom)>,
    /// Integer variables known to lie in `0..n` wherever they are in
    /// scope, with `n`: the index of a `for` loop, the parameter of a map
    /// over `iota(n)` (see [`index_ranges`]).
    ranges: HashMap<Var, Atom>,
    /// While [`removable`] looks into the lambda of a SOAC or the body of
    /// a `for` loop: their widths and trip counts, which are positive
    /// there (the body runs only if they are), so an integer division by
    /// one of them cannot fail there.
    positive: std::cell::RefCell<Vec<Atom>>,
}

/// The index variables of `f` with the exclusive upper bound of their
/// values: `for i < n` binds `i` in `0..n`; a map whose input is
/// `iota(n, 0, 1)` binds the parameter reading it in `0..n`; `(n - 1) - i`
/// with `i` a loop index in `0..n` is in `0..n`; `x % n` with `n` a size
/// is in `0..n` (the modulo takes the divisor's sign, and a zero divisor
/// fails before the result exists).
fn index_ranges(f: &Function) -> HashMap<Var, Atom> {
    let sizes = size_vars(f);
    let mut iotas: HashMap<Var, Atom> = HashMap::new();
    // `m = n - 1`, by m.
    let mut minus_one: HashMap<Var, Atom> = HashMap::new();
    let mut out = HashMap::new();
    walk::for_each_stm(&f.body, &mut |s| match (&s.exp, &s.pat[..]) {
        (
            Exp::Iota {
                n,
                start: Atom::Const(PrimValue::I64(0)),
                step: Atom::Const(PrimValue::I64(1)),
                ty: PrimType::I64,
            },
            [p],
        ) => {
            iotas.insert(p.var, *n);
        }
        (
            Exp::Loop {
                form: LoopForm::For { i, bound },
                ..
            },
            _,
        ) => {
            out.insert(*i, *bound);
        }
        (Exp::BinOp(BinOp::Sub, n, Atom::Const(PrimValue::I64(1))), [p])
            if p.ty == Type::Prim(PrimType::I64) =>
        {
            minus_one.insert(p.var, *n);
        }
        _ => {}
    });
    let mut more = Vec::new();
    walk::for_each_stm(&f.body, &mut |s| match (&s.exp, &s.pat[..]) {
        // Iotas are bound before the maps that read them.
        (Exp::Soac(nabla_ir::Soac::Map { lam, arrs, .. }), _) => {
            for (p, a) in lam.params.iter().zip(arrs) {
                if let Some(n) = iotas.get(a) {
                    more.push((p.var, *n));
                }
            }
        }
        (Exp::BinOp(BinOp::Mod, _, Atom::Var(n)), [p])
            if p.ty == Type::Prim(PrimType::I64) && sizes.contains(n) =>
        {
            more.push((p.var, Atom::Var(*n)));
        }
        // An integer in 0..k (k a constant) converted to `i64` keeps its
        // value: in 0..k (the index of a loop counting in `i32`, converted
        // to index an array).
        (Exp::Conv(ConvOp::Convert(from, PrimType::I64), Atom::Var(j)), [p]) if from.is_int() => {
            if let Some(Atom::Const(k)) = out.get(j) {
                if k.prim_type().is_int() && k.as_i64() >= 0 {
                    more.push((p.var, Atom::Const(PrimValue::I64(k.as_i64()))));
                }
            }
        }
        // `(n - 1) - j` with j in 0..n (a loop run backwards, as in a
        // return sweep) is in 0..n.
        (Exp::BinOp(BinOp::Sub, Atom::Var(m), Atom::Var(j)), [p]) => {
            if let (Some(n), Some(r)) = (minus_one.get(m), out.get(j)) {
                if n == r {
                    more.push((p.var, *n));
                }
            }
        }
        _ => {}
    });
    out.extend(more);
    out
}

/// The `i64` products `let v = a * b` of `f`.
fn products(f: &Function) -> HashMap<Var, (Atom, Atom)> {
    let mut out = HashMap::new();
    walk::for_each_stm(&f.body, &mut |s| {
        if let (Exp::BinOp(BinOp::Mul, a, b), [p]) = (&s.exp, &s.pat[..]) {
            if p.ty == Type::Prim(PrimType::I64) {
                out.insert(p.var, (*a, *b));
            }
        }
    });
    out
}

impl SizeFacts {
    /// `f()` with `n` known to be positive (see [`SizeFacts::positive`]).
    fn with_positive<T>(&self, n: Atom, f: impl FnOnce() -> T) -> T {
        self.positive.borrow_mut().push(n);
        let r = f();
        self.positive.borrow_mut().pop();
        r
    }

    /// Whether `a[idx]` (fixed indices only) is provably in bounds: each
    /// index is a constant below a constant dimension, or a variable whose
    /// range ([`index_ranges`]) ends at the dimension (the same variable or
    /// constant).
    pub(crate) fn index_in_bounds(&self, a: Var, idx: &[DimIndex]) -> bool {
        let Some(Some(Type::Array(_, dims))) = self.types.get(a.0 as usize) else {
            return false;
        };
        idx.len() <= dims.len()
            && idx.iter().zip(dims).all(|(d, dim)| match (d, *dim) {
                (DimIndex::Fix(Atom::Const(PrimValue::I64(k))), Dim::Const(n)) => *k >= 0 && *k < n,
                (DimIndex::Fix(Atom::Var(i)), dim) => match (self.ranges.get(i), dim) {
                    (Some(Atom::Var(n)), Dim::Var(m)) => *n == m,
                    (Some(Atom::Const(PrimValue::I64(n))), Dim::Const(m)) => *n == m,
                    _ => false,
                },
                _ => false,
            })
    }

    /// The factors of a size: the product of its constants and its
    /// variables, expanding variables bound by products; a negative or
    /// non-`i64` constant becomes the unknown factor `Var(u32::MAX)`.
    fn factors(&self, a: &Atom, constant: &mut i64, vars: &mut Vec<Var>, depth: usize) {
        match a {
            Atom::Const(PrimValue::I64(k)) if *k >= 0 => *constant = constant.wrapping_mul(*k),
            Atom::Var(v) => match self.products.get(v) {
                Some((x, y)) if depth < 64 => {
                    self.factors(x, constant, vars, depth + 1);
                    self.factors(y, constant, vars, depth + 1);
                }
                _ => vars.push(*v),
            },
            Atom::Const(_) => vars.push(Var(u32::MAX)),
        }
    }

    /// Whether `reshape(shape, v)` keeps the number of elements, as far as
    /// the sizes' definitions show: the products of the new shape and of
    /// `v`'s dimensions have the same factors (so it cannot fail).
    fn reshape_keeps_count(&self, shape: &[Atom], v: Var) -> bool {
        let Some(Some(Type::Array(_, dims))) = self.types.get(v.0 as usize) else {
            return false;
        };
        let count = |atoms: &mut dyn Iterator<Item = Atom>| {
            let (mut constant, mut vars) = (1i64, Vec::new());
            for a in atoms {
                self.factors(&a, &mut constant, &mut vars, 0);
            }
            vars.sort();
            (constant, vars)
        };
        let mut old = dims.iter().map(|d| match d {
            Dim::Const(k) => Atom::Const(PrimValue::I64(*k)),
            Dim::Var(x) => Atom::Var(*x),
            Dim::Ext => Atom::Const(PrimValue::Bool(false)),
        });
        let old = count(&mut old);
        let new = count(&mut shape.iter().copied());
        let unknown = Var(u32::MAX);
        !old.1.contains(&unknown) && !new.1.contains(&unknown) && old == new
    }
}

/// The variables `size` statements bind.
fn size_vars(f: &Function) -> HashSet<Var> {
    let mut out = HashSet::new();
    walk::for_each_stm(&f.body, &mut |s| {
        if let (Exp::Size(..), [p]) = (&s.exp, &s.pat[..]) {
            out.insert(p.var);
        }
    });
    out
}

impl SizeFacts {
    /// The facts of function `f`, whose variables have the types `types`,
    /// from its types alone, without the `assert_eq_sizes` statements (for
    /// code motion: a statement moved away from an assertion must not rely
    /// on it).
    pub fn from_types(f: &Function, types: Vec<Option<Type>>) -> SizeFacts {
        SizeFacts {
            types: walk::var_types_with_sizes(f, types),
            checked_soacs: HashSet::new(),
            sizes: size_vars(f),
            products: products(f),
            ranges: index_ranges(f),
            positive: Default::default(),
        }
    }

    /// The facts of function `f`, whose variables have the types `types`.
    pub fn of_function(f: &Function, types: Vec<Option<Type>>) -> SizeFacts {
        let types = walk::var_types_with_sizes(f, types);
        let mut cx = SizeScan {
            types: &types,
            parent: HashMap::new(),
            undo: Vec::new(),
            checked: HashSet::new(),
        };
        cx.body(&f.body);
        let checked_soacs = cx.checked;
        SizeFacts {
            types,
            checked_soacs,
            sizes: size_vars(f),
            products: products(f),
            ranges: index_ranges(f),
            positive: Default::default(),
        }
    }
}

/// The forward scan behind [`SizeFacts`]: equalities of sizes from
/// `assert_eq_sizes`, scoped to the body after the assertion (a union-find
/// with an undo log).
struct SizeScan<'a> {
    types: &'a [Option<Type>],
    parent: HashMap<Var, Var>,
    undo: Vec<Var>,
    checked: HashSet<Var>,
}

impl SizeScan<'_> {
    fn find(&self, mut v: Var) -> Var {
        while let Some(&p) = self.parent.get(&v) {
            v = p;
        }
        v
    }
    fn same(&self, a: &Atom, b: &Atom) -> bool {
        match (a, b) {
            (Atom::Var(x), Atom::Var(y)) => self.find(*x) == self.find(*y),
            (x, y) => x == y,
        }
    }
    fn body(&mut self, b: &Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            let mark = self.undo.len();
            for s in &b.stms {
                match &s.exp {
                    Exp::AssertEqSizes(xs, _) => {
                        let vars: Vec<Var> = xs
                            .iter()
                            .filter_map(|a| match a {
                                Atom::Var(v) => Some(*v),
                                Atom::Const(_) => None,
                            })
                            .collect();
                        for w in vars.windows(2) {
                            let (a, b) = (self.find(w[0]), self.find(w[1]));
                            if a != b {
                                self.parent.insert(b, a);
                                self.undo.push(b);
                            }
                        }
                    }
                    Exp::Soac(
                        nabla_ir::Soac::Map { w, arrs, .. }
                        | nabla_ir::Soac::Reduce { w, arrs, .. }
                        | nabla_ir::Soac::Scan { w, arrs, .. },
                    ) => {
                        let ok = arrs
                            .iter()
                            .all(|a| outer_size_equal(self.types, *a, w, |x, y| self.same(x, y)));
                        if let (true, Some(p)) = (ok, s.pat.first()) {
                            self.checked.insert(p.var);
                        }
                    }
                    _ => {}
                }
                for (nb, _) in s.exp.nested_bodies() {
                    self.body(nb);
                }
            }
            while self.undo.len() > mark {
                if let Some(v) = self.undo.pop() {
                    self.parent.remove(&v);
                }
            }
        })
    }
}

/// Whether an expression is pure and total: it has no effect, cannot fail
/// at run time, and terminates — so it may be removed when its results are
/// unused. `types` gives the function's variable types (integer division
/// by a variable may fail; float division may not).
pub fn removable(s: &Stm, facts: &SizeFacts) -> bool {
    removable_exp(&s.exp, s.pat.first().map(|p| p.var), facts)
}

fn removable_exp(e: &Exp, first: Option<Var>, facts: &SizeFacts) -> bool {
    let types = &facts.types[..];
    let int_operand = |a: &Atom| match a {
        Atom::Const(c) => Some(c.prim_type().is_int()),
        Atom::Var(v) => match types.get(v.0 as usize) {
            Some(Some(Type::Prim(p))) => Some(p.is_int()),
            _ => None,
        },
    };
    let all = |b: &Body| b.stms.iter().all(|s| removable(s, facts));
    match e {
        Exp::Atoms(_)
        | Exp::CmpOp(..)
        | Exp::UnOp(..)
        | Exp::TernOp(..)
        | Exp::Conv(..)
        | Exp::Copy(_)
        | Exp::Size(..)
        | Exp::Rearrange(..)
        | Exp::Reverse(_)
        | Exp::Rotate(..) => true,
        Exp::BinOp(op, a, divisor) => match op {
            BinOp::Div | BinOp::Mod | BinOp::IntDiv | BinOp::IntMod | BinOp::Quot | BinOp::Rem => {
                int_operand(a) == Some(false)
                    || match divisor {
                        Atom::Const(c) => {
                            c.prim_type().is_int() && *c != PrimValue::zero(c.prim_type())
                        }
                        Atom::Var(_) => facts.positive.borrow().contains(divisor),
                    }
            }
            _ => true,
        },
        Exp::ArrayLit(_, row) => matches!(row, Type::Prim(_)),
        Exp::Index(a, idx) => facts.index_in_bounds(*a, idx),
        // An in-place update of one element, or of a row whose value is
        // typed with the row's own sizes (so the shape check cannot fail),
        // provably in bounds.
        Exp::Update(a, idx, value) => {
            let Some(Some(Type::Array(_, dims))) = facts.types.get(a.0 as usize) else {
                return false;
            };
            let row = dims.get(idx.len()..).unwrap_or(&[]);
            let value_fits = row.is_empty()
                || match value {
                    Atom::Var(v) => matches!(
                        facts.types.get(v.0 as usize),
                        Some(Some(Type::Array(_, vdims)))
                            if vdims == row && row.iter().all(|d| !matches!(d, Dim::Ext))
                    ),
                    Atom::Const(_) => false,
                };
            facts.index_in_bounds(*a, idx) && value_fits
        }
        Exp::Reshape(shape, v) => facts.reshape_keeps_count(shape, *v),
        Exp::Iota {
            n: Atom::Const(PrimValue::I64(k)),
            ..
        }
        | Exp::Replicate(Atom::Const(PrimValue::I64(k)), _) => *k >= 0,
        Exp::Iota {
            n: Atom::Var(n), ..
        }
        | Exp::Replicate(Atom::Var(n), _) => {
            // A size, or an index known to be in `0..bound`: not negative.
            facts.sizes.contains(n) || facts.ranges.contains_key(n)
        }
        Exp::If { then_, else_, .. } => {
            stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
                all(then_) && all(else_)
            })
        }
        Exp::Loop {
            form: LoopForm::For { bound, .. },
            body,
            ..
        } => stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            facts.with_positive(*bound, || all(body))
        }),
        // A map, reduction or scan whose inputs are typed with its width as
        // their outer size (so the width check cannot fail) and whose
        // lambda is total.
        Exp::Soac(
            nabla_ir::Soac::Map { w, lam, arrs }
            | nabla_ir::Soac::Reduce { w, lam, arrs, .. }
            | nabla_ir::Soac::Scan { w, lam, arrs, .. },
        ) => {
            (first.is_some_and(|v| facts.checked_soacs.contains(&v))
                || arrs.iter().all(|a| outer_size_is(types, *a, w)))
                && stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
                    facts.with_positive(*w, || all(&lam.body))
                })
        }
        _ => false,
    }
}
