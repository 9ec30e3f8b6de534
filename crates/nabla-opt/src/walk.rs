//! Generic traversals of the IR used by every pass: a mutable visitor over
//! the variable occurrences of an expression, read-only walks over nested
//! bodies, and the per-function tables (variable types, consumed variables).

use nabla_ir::{
    Atom, Body, Dim, DimIndex, Exp, FunId, Function, Lambda, LoopForm, Param, Soac, Type, Var,
};

/// Stack growth for the recursive walks: nesting in the IR follows the
/// user's nesting (bounded by the front end), but deep bodies must not
/// overflow the native stack.
pub(crate) const RED_ZONE: usize = 64 * 1024;
pub(crate) const STACK_SEGMENT: usize = 1024 * 1024;

/// Visits the variable occurrences of one expression. [`walk_exp`] calls
/// `atom` for operands, `var` for positions that must be variables (arrays),
/// `param`/`bind` for binders inside the expression (lambda, loop
/// parameters, the `for` counter), `ty` for types it carries, `body` for
/// nested bodies and `fun` for called functions. Statement patterns are the
/// caller's business.
pub(crate) trait Visitor {
    fn atom(&mut self, a: &mut Atom);
    fn var(&mut self, v: &mut Var);
    fn bind(&mut self, v: &mut Var);
    fn dim(&mut self, d: &mut Dim);
    fn body(&mut self, b: &mut Body);
    fn fun(&mut self, _f: &mut FunId) {}
    fn ty(&mut self, t: &mut Type) {
        if let Type::Array(_, ds) = t {
            for d in ds {
                self.dim(d);
            }
        }
    }
    fn param(&mut self, p: &mut Param) {
        self.bind(&mut p.var);
        self.ty(&mut p.ty);
    }
    fn lambda(&mut self, l: &mut Lambda) {
        for p in &mut l.params {
            self.param(p);
        }
        for t in &mut l.ret {
            self.ty(t);
        }
        self.body(&mut l.body);
    }
}

fn atoms<V: Visitor + ?Sized>(xs: &mut [Atom], v: &mut V) {
    for a in xs {
        v.atom(a);
    }
}

fn vars<V: Visitor + ?Sized>(xs: &mut [Var], v: &mut V) {
    for x in xs {
        v.var(x);
    }
}

fn index<V: Visitor + ?Sized>(idx: &mut [DimIndex], v: &mut V) {
    for d in idx {
        match d {
            DimIndex::Fix(a) => v.atom(a),
            DimIndex::Slice { start, len, stride } => {
                v.atom(start);
                v.atom(len);
                v.atom(stride);
            }
        }
    }
}

/// Visits the direct parts of `e` (see [`Visitor`]).
pub(crate) fn walk_exp<V: Visitor + ?Sized>(e: &mut Exp, v: &mut V) {
    match e {
        Exp::Atoms(xs) | Exp::AssertEqSizes(xs, _) => atoms(xs, v),
        Exp::Apply(f, xs) => {
            v.fun(f);
            atoms(xs, v);
        }
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) | Exp::Replicate(a, b) => {
            v.atom(a);
            v.atom(b);
        }
        Exp::UnOp(_, a) | Exp::Conv(_, a) | Exp::Assert(a, _) => v.atom(a),
        Exp::TernOp(_, a, b, c) => {
            v.atom(a);
            v.atom(b);
            v.atom(c);
        }
        Exp::If { cond, then_, else_ } => {
            v.atom(cond);
            v.body(then_);
            v.body(else_);
        }
        Exp::Loop {
            params,
            init,
            form,
            body,
        } => {
            atoms(init, v);
            if let LoopForm::For { i, bound } = form {
                v.atom(bound);
                v.bind(i);
            }
            for p in params.iter_mut() {
                v.param(p);
            }
            if let LoopForm::While { cond } = form {
                v.body(cond);
            }
            v.body(body);
        }
        Exp::Index(a, idx) => {
            v.var(a);
            index(idx, v);
        }
        Exp::Update(a, idx, x) => {
            v.var(a);
            index(idx, v);
            v.atom(x);
        }
        Exp::ArrayLit(xs, t) => {
            atoms(xs, v);
            v.ty(t);
        }
        Exp::Iota { n, start, step, .. } => {
            v.atom(n);
            v.atom(start);
            v.atom(step);
        }
        Exp::Copy(a) | Exp::Size(a, _) | Exp::Rearrange(_, a) | Exp::Reverse(a) => v.var(a),
        Exp::Reshape(shape, a) => {
            atoms(shape, v);
            v.var(a);
        }
        Exp::Concat(xs) => vars(xs, v),
        Exp::Rotate(r, a) => {
            v.atom(r);
            v.var(a);
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, lam, arrs } => {
                v.atom(w);
                vars(arrs, v);
                v.lambda(lam);
            }
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            }
            | Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => {
                v.atom(w);
                atoms(neutral, v);
                vars(arrs, v);
                v.lambda(lam);
            }
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => {
                v.atom(w);
                vars(dest, v);
                atoms(neutral, v);
                v.var(indices);
                vars(values, v);
                v.lambda(lam);
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                v.atom(w);
                vars(dest, v);
                vars(indices, v);
                vars(values, v);
            }
        },
        Exp::Jvp {
            lam,
            primals,
            tangents: extra,
        }
        | Exp::Vjp {
            lam,
            primals,
            adjoints: extra,
        } => {
            atoms(primals, v);
            atoms(extra, v);
            v.lambda(lam);
        }
    }
}

/// Walks a whole body with `v`: each statement's expression, then its
/// pattern (as binders), then the result atoms. Visitors whose `body`
/// should recurse call this from it.
pub(crate) fn walk_body_deep<V: Visitor + ?Sized>(b: &mut Body, v: &mut V) {
    for s in &mut b.stms {
        walk_exp(&mut s.exp, v);
        for p in &mut s.pat {
            v.param(p);
        }
    }
    atoms(&mut b.result, v);
}

/// The bodies nested directly in `e` (lambda bodies, branches, loop
/// condition and body), with whether each runs repeatedly (a SOAC or AD
/// lambda or a loop: a "hot" position for inlining).
pub(crate) fn nested_bodies(e: &Exp) -> Vec<(&Body, bool)> {
    match e {
        Exp::If { then_, else_, .. } => vec![(then_, false), (else_, false)],
        Exp::Loop { form, body, .. } => {
            let mut v = Vec::new();
            if let LoopForm::While { cond } = form {
                v.push((&**cond, true));
            }
            v.push((body, true));
            v
        }
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. }
            | Soac::Reduce { lam, .. }
            | Soac::Scan { lam, .. }
            | Soac::Hist { lam, .. } => vec![(&lam.body, true)],
            Soac::Scatter { .. } => vec![],
        },
        Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => vec![(&lam.body, true)],
        _ => vec![],
    }
}

/// Calls `f` on every statement of `b`, nested ones included (pre-order).
pub(crate) fn for_each_stm(b: &Body, f: &mut dyn FnMut(&nabla_ir::Stm)) {
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
        for s in &b.stms {
            f(s);
            for (nb, _) in nested_bodies(&s.exp) {
                for_each_stm(nb, f);
            }
        }
    })
}

/// Number of statements in `b`, nested ones included.
pub fn count_stms(b: &Body) -> usize {
    let mut n = 0;
    for_each_stm(b, &mut |_| n += 1);
    n
}

/// The variables a function consumes (updated in place: `Update`'s array,
/// `hist` and `scatter` destinations). The interpreter takes these out of
/// their slots, so a consumed variable must never be merged with another.
pub(crate) fn consumed_vars(f: &Function) -> Vec<bool> {
    let mut out = vec![false; f.var_names.len()];
    let mut mark = |v: Var| {
        let i = v.0 as usize;
        if i >= out.len() {
            out.resize(i + 1, false);
        }
        out[i] = true;
    };
    for_each_stm(&f.body, &mut |s| match &s.exp {
        Exp::Update(a, _, _) => mark(*a),
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => {
            dest.iter().for_each(|d| mark(*d))
        }
        _ => {}
    });
    out
}

/// The type of every variable of a function (`None` for numbers never
/// bound), from parameters, patterns, lambda and loop parameters and `for`
/// counters.
pub(crate) fn var_types(f: &Function) -> Vec<Option<Type>> {
    let mut t: Vec<Option<Type>> = vec![None; f.var_names.len()];
    fn set(t: &mut Vec<Option<Type>>, v: Var, ty: &Type) {
        let i = v.0 as usize;
        if i >= t.len() {
            t.resize(i + 1, None);
        }
        t[i] = Some(ty.clone());
    }
    for p in &f.params {
        set(&mut t, p.var, &p.ty);
    }
    for_each_stm(&f.body, &mut |s| {
        for p in &s.pat {
            set(&mut t, p.var, &p.ty);
        }
        let lam = match &s.exp {
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            ) => Some(lam),
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => Some(lam),
            _ => None,
        };
        if let Some(l) = lam {
            for p in &l.params {
                set(&mut t, p.var, &p.ty);
            }
        }
        if let Exp::Loop { params, form, .. } = &s.exp {
            for p in params {
                set(&mut t, p.var, &p.ty);
            }
            if let LoopForm::For { i, bound } = form {
                let bt = match bound {
                    Atom::Const(c) => Some(Type::Prim(c.prim_type())),
                    Atom::Var(b) => t.get(b.0 as usize).cloned().flatten(),
                };
                if let Some(bt) = bt {
                    set(&mut t, *i, &bt);
                }
            }
        }
    });
    t
}

/// Calls of every function made by `f` (with repetitions).
pub(crate) fn callees(b: &Body) -> Vec<FunId> {
    let mut out = Vec::new();
    for_each_stm(b, &mut |s| {
        if let Exp::Apply(g, _) = &s.exp {
            out.push(*g);
        }
    });
    out
}
