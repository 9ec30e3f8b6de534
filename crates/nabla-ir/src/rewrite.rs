//! Rewriting the IR in place: a mutable visitor over the variable
//! occurrences of expressions, and renaming/substitution built on it (used
//! to copy lambda and function bodies with fresh variables).
//!
//! [`walk_exp`] visits one expression's direct parts; a visitor whose
//! [`Visitor::body`] calls [`walk_body_deep`] rewrites a whole tree.

use crate::{
    AccOp, Atom, Body, Dim, DimIndex, Exp, FunId, Lambda, LoopForm, Param, Soac, Type, Var,
};

/// Visits the variable occurrences of one expression. [`walk_exp`] calls
/// `atom` for operands, `var` for positions that must be variables (arrays),
/// `param`/`bind` for binders inside the expression (lambda, loop
/// parameters, the `for` counter), `ty` for types it carries, `body` for
/// nested bodies and `fun` for called functions. Statement patterns are the
/// caller's business.
pub trait Visitor {
    fn atom(&mut self, a: &mut Atom);
    fn var(&mut self, v: &mut Var);
    fn bind(&mut self, v: &mut Var);
    fn dim(&mut self, d: &mut Dim);
    fn body(&mut self, b: &mut Body);
    fn fun(&mut self, _f: &mut FunId) {}
    fn ty(&mut self, t: &mut Type) {
        if let Type::Array(_, ds) | Type::Acc(_, ds) = t {
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
pub fn walk_exp<V: Visitor + ?Sized>(e: &mut Exp, v: &mut V) {
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
        Exp::UnOp(_, a) | Exp::Conv(_, a) => v.atom(a),
        Exp::Assert(a, _, xs) => {
            v.atom(a);
            atoms(xs, v);
        }
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
        Exp::WithAcc { inputs, lam } => {
            for input in inputs.iter_mut() {
                v.var(&mut input.array);
                if let AccOp::Lambda(op, neutral) = &mut input.op {
                    v.atom(neutral);
                    v.lambda(op);
                }
            }
            v.lambda(lam);
        }
        Exp::UpdateAcc {
            acc,
            indices,
            value,
        } => {
            v.var(acc);
            atoms(indices, v);
            v.atom(value);
        }
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
        Exp::WithVjp {
            lam, rule, args, ..
        } => {
            atoms(args, v);
            v.lambda(lam);
            v.lambda(rule);
        }
    }
}

/// Walks a whole body with `v`: each statement's expression, then its
/// pattern (as binders), then the result atoms. Visitors whose `body`
/// should recurse call this from it.
pub fn walk_body_deep<V: Visitor + ?Sized>(b: &mut Body, v: &mut V) {
    for s in &mut b.stms {
        walk_exp(&mut s.exp, v);
        for p in &mut s.pat {
            v.param(p);
        }
    }
    atoms(&mut b.result, v);
}

/// Copies code from one function (or scope) into another: variables in the
/// substitution become their atoms, every other variable a fresh variable of
/// the target (allocated on first sight, named as in the source). Used to
/// inline a callee and to copy a lambda body. Run it with [`walk_body_deep`]
/// (its `body` recurses) or [`Visitor::lambda`].
pub struct Renamer<'a> {
    map: Substitution,
    names: &'a [String],
    var_names: &'a mut Vec<String>,
}

impl<'a> Renamer<'a> {
    /// A renamer with the substitution `map` (indexed by source variable
    /// number), the source's variable names, and the target's variable
    /// names (extended with the fresh variables).
    pub fn new(
        map: Vec<Option<Atom>>,
        names: &'a [String],
        var_names: &'a mut Vec<String>,
    ) -> Renamer<'a> {
        Renamer {
            map: Substitution { map },
            names,
            var_names,
        }
    }

    /// The atom that source variable `v` becomes (a fresh target variable
    /// if it is not substituted yet).
    pub fn get(&mut self, v: Var) -> Atom {
        if let Some(a) = self.map.get(v) {
            return a;
        }
        let name = self.names.get(v.0 as usize).map_or("v", |s| s.as_str());
        let a = Atom::Var(fresh_var(self.var_names, name));
        self.map.set(v, a);
        a
    }
}

/// A substitution of variables by atoms, indexed by variable number (the
/// table the simplifier, CSE and the [`Renamer`] keep): `get` reads it,
/// `set` extends it, and `atom`/`var`/`dim` apply it in place (a variable
/// position takes only a variable, a dimension the atom's [`dim_of_atom`]).
#[derive(Clone, Debug, Default)]
pub struct Substitution {
    map: Vec<Option<Atom>>,
}

impl Substitution {
    /// An empty substitution with room for `n` variables.
    pub fn with_capacity(n: usize) -> Substitution {
        Substitution { map: vec![None; n] }
    }

    /// The atom `v` stands for, if any.
    pub fn get(&self, v: Var) -> Option<Atom> {
        self.map.get(v.0 as usize).copied().flatten()
    }

    /// Makes `v` stand for `a`.
    pub fn set(&mut self, v: Var, a: Atom) {
        let i = v.0 as usize;
        if i >= self.map.len() {
            self.map.resize(i + 1, None);
        }
        self.map[i] = Some(a);
    }

    /// Replaces a substituted variable atom by its atom.
    pub fn atom(&self, a: &mut Atom) {
        if let Atom::Var(v) = a {
            if let Some(x) = self.get(*v) {
                *a = x;
            }
        }
    }

    /// Replaces a variable substituted by a variable.
    pub fn var(&self, v: &mut Var) {
        if let Some(Atom::Var(x)) = self.get(*v) {
            *v = x;
        }
    }

    /// A dimension with its variable substituted.
    pub fn dim(&self, d: Dim) -> Dim {
        match d {
            Dim::Var(v) => self.get(v).map_or(d, dim_of_atom),
            d => d,
        }
    }

    /// Applies the substitution to every use in `body`, nested bodies and
    /// types included (operands, array positions, dimensions; binders
    /// stay). Returns whether anything changed.
    pub fn apply(&self, body: &mut Body) -> bool {
        let mut apply = Apply {
            substitution: self,
            changed: false,
        };
        apply.body(body);
        apply.changed
    }
}

/// [`Substitution::apply`]'s visitor.
struct Apply<'a> {
    substitution: &'a Substitution,
    changed: bool,
}

impl Visitor for Apply<'_> {
    fn atom(&mut self, a: &mut Atom) {
        let old = *a;
        self.substitution.atom(a);
        self.changed |= *a != old;
    }
    fn var(&mut self, v: &mut Var) {
        let old = *v;
        self.substitution.var(v);
        self.changed |= *v != old;
    }
    fn bind(&mut self, _v: &mut Var) {}
    fn dim(&mut self, d: &mut Dim) {
        let old = *d;
        *d = self.substitution.dim(old);
        self.changed |= *d != old;
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || walk_body_deep(b, self))
    }
}

/// A fresh variable appended to a function's `var_names`, named after
/// `name` without its `_index` suffix (the printer adds the new index).
pub fn fresh_var(var_names: &mut Vec<String>, name: &str) -> Var {
    var_names.push(crate::builder::base_name(name).to_string());
    Var(var_names.len() as u32 - 1)
}

/// The dimension an `i64` atom denotes (other constants: existential).
pub fn dim_of_atom(a: Atom) -> Dim {
    match a {
        Atom::Var(v) => Dim::Var(v),
        Atom::Const(crate::PrimValue::I64(c)) => Dim::Const(c),
        Atom::Const(_) => Dim::Ext,
    }
}

impl Visitor for Renamer<'_> {
    fn atom(&mut self, a: &mut Atom) {
        if let Atom::Var(v) = a {
            *a = self.get(*v);
        }
    }
    fn var(&mut self, v: &mut Var) {
        if let Atom::Var(x) = self.get(*v) {
            *v = x;
        }
    }
    fn bind(&mut self, v: &mut Var) {
        self.var(v)
    }
    fn dim(&mut self, d: &mut Dim) {
        if let Dim::Var(v) = d {
            *d = dim_of_atom(self.get(*v));
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || walk_body_deep(b, self))
    }
}
