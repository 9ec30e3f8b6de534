//! One traversal of the IR for analyses: the variables an expression reads
//! (with how it reads them), the bodies and lambdas nested in it, the
//! variables it binds, and free variables of statements and bodies.
//!
//! The walkers here do not recurse into nested bodies by themselves
//! ([`Exp::for_each_use`], [`Exp::for_each_nested`], [`Exp::nested_bodies`],
//! [`Exp::nested_bodies_mut`], [`Exp::for_each_binder`] look at one
//! expression only); [`free_vars_stm`], [`free_vars_body`], [`for_each_stm`]
//! and [`for_each_var`] do, iteratively with an explicit stack, so
//! adversarially deep IR cannot overflow the native stack.
//!
//! This module and [`crate::rewrite`] (the mutable [`crate::rewrite::Visitor`]
//! over variable occurrences, renaming and substitution) are the one
//! traversal of the IR: the passes of every crate build on them rather than
//! matching every construct to find nested bodies themselves
//! (`crates/nabla/tests/code_limits.rs` checks that no crate outside
//! nabla-ir lists nested bodies by hand).

use crate::{AccOp, Atom, Body, Dim, DimIndex, Exp, Lambda, LoopForm, Param, Soac, Stm, Type, Var};
use std::collections::HashSet;

/// How an expression reads a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// As a value that flows into the expression's results (an operand, an
    /// argument, an array read or updated, a neutral element, …).
    Value,
    /// Only as control or shape information: an `if` condition, a loop
    /// bound, an index of `Index`/`Update`, a size (`iota`, `replicate`,
    /// `reshape`, SOAC widths, dimensions in types), a rotation amount or an
    /// assertion. Such reads are never differentiated (Jensen 2024, §3.1:
    /// non-differentiable operations see primal values).
    Control,
}

/// A body or lambda nested directly in an expression.
#[derive(Clone, Copy, Debug)]
pub enum Nested<'a> {
    /// An `if` branch, a loop body or a `while` condition.
    Body(&'a Body),
    /// The lambda of a SOAC, `jvp` or `vjp`.
    Lambda(&'a Lambda),
}

impl Type {
    /// Calls `f` on every variable among the type's dimensions.
    pub fn for_each_dim_var(&self, mut f: impl FnMut(Var)) {
        if let Type::Array(_, ds) | Type::Acc(_, ds) = self {
            for d in ds {
                if let Dim::Var(v) = d {
                    f(*v);
                }
            }
        }
    }
}

fn atom(a: &Atom, u: Use, f: &mut impl FnMut(Var, Use)) {
    if let Atom::Var(v) = a {
        f(*v, u);
    }
}

fn atoms<'a>(xs: impl IntoIterator<Item = &'a Atom>, u: Use, f: &mut impl FnMut(Var, Use)) {
    for a in xs {
        atom(a, u, f);
    }
}

fn vars<'a>(xs: impl IntoIterator<Item = &'a Var>, u: Use, f: &mut impl FnMut(Var, Use)) {
    for v in xs {
        f(*v, u);
    }
}

fn indices(idx: &[DimIndex], f: &mut impl FnMut(Var, Use)) {
    for d in idx {
        match d {
            DimIndex::Fix(a) => atom(a, Use::Control, f),
            DimIndex::Slice { start, len, stride } => {
                atoms([start, len, stride], Use::Control, f);
            }
        }
    }
}

impl Exp {
    /// Calls `f` on every variable the expression itself reads (not those
    /// read inside its nested bodies and lambdas, nor the dimensions of the
    /// types of the variables it binds), with how it reads it. A variable
    /// read twice is reported twice.
    pub fn for_each_use(&self, mut f: impl FnMut(Var, Use)) {
        let f = &mut f;
        use Use::{Control as C, Value as V};
        match self {
            Exp::Atoms(xs) | Exp::Apply(_, xs) => atoms(xs, V, f),
            Exp::BinOp(_, x, y) | Exp::CmpOp(_, x, y) => atoms([x, y], V, f),
            Exp::UnOp(_, x) | Exp::Conv(_, x) => atom(x, V, f),
            Exp::TernOp(_, x, y, z) => atoms([x, y, z], V, f),
            Exp::If { cond, .. } => atom(cond, C, f),
            Exp::Loop { init, form, .. } => {
                atoms(init, V, f);
                if let LoopForm::For { bound, .. } = form {
                    atom(bound, C, f);
                }
            }
            Exp::Index(v, idx) => {
                f(*v, V);
                indices(idx, f);
            }
            Exp::Update(v, idx, x) => {
                f(*v, V);
                indices(idx, f);
                atom(x, V, f);
            }
            Exp::ArrayLit(xs, t) => {
                atoms(xs, V, f);
                t.for_each_dim_var(|v| f(v, C));
            }
            Exp::Iota { n, start, step, .. } => atoms([n, start, step], C, f),
            Exp::Replicate(n, x) => {
                atom(n, C, f);
                atom(x, V, f);
            }
            Exp::Copy(v) | Exp::Rearrange(_, v) | Exp::Reverse(v) => f(*v, V),
            Exp::Size(v, _) => f(*v, C),
            Exp::Reshape(xs, v) => {
                atoms(xs, C, f);
                f(*v, V);
            }
            Exp::Concat(vs) => vars(vs, V, f),
            Exp::Rotate(a, v) => {
                atom(a, C, f);
                f(*v, V);
            }
            Exp::AssertEqSizes(xs, _) => atoms(xs, C, f),
            Exp::Assert(x, _, xs) => {
                atom(x, C, f);
                atoms(xs, C, f);
            }
            Exp::Soac(soac) => match soac {
                Soac::Map { w, arrs, .. } => {
                    atom(w, C, f);
                    vars(arrs, V, f);
                }
                Soac::Reduce {
                    w, neutral, arrs, ..
                }
                | Soac::Scan {
                    w, neutral, arrs, ..
                } => {
                    atom(w, C, f);
                    atoms(neutral, V, f);
                    vars(arrs, V, f);
                }
                Soac::Hist {
                    w,
                    dest,
                    neutral,
                    indices,
                    values,
                    ..
                } => {
                    atom(w, C, f);
                    vars(dest, V, f);
                    atoms(neutral, V, f);
                    f(*indices, C);
                    vars(values, V, f);
                }
                Soac::Scatter {
                    w,
                    dest,
                    indices,
                    values,
                } => {
                    atom(w, C, f);
                    vars(dest, V, f);
                    vars(indices, C, f);
                    vars(values, V, f);
                }
            },
            Exp::Jvp {
                primals, tangents, ..
            } => atoms(primals.iter().chain(tangents), V, f),
            Exp::Vjp {
                primals, adjoints, ..
            } => atoms(primals.iter().chain(adjoints), V, f),
            Exp::WithVjp { args, .. } => atoms(args, V, f),
            Exp::WithAcc { inputs, .. } => {
                for input in inputs {
                    f(input.array, V);
                    if let AccOp::Lambda(_, neutral) = &input.op {
                        atom(neutral, V, f);
                    }
                }
            }
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => {
                f(*acc, V);
                atoms(indices, C, f);
                atom(value, V, f);
            }
        }
    }

    /// Calls `f` on every body and lambda nested directly in the expression
    /// (for a `while` loop: the condition, then the body).
    pub fn for_each_nested<'a>(&'a self, mut f: impl FnMut(Nested<'a>)) {
        match self {
            Exp::If { then_, else_, .. } => {
                f(Nested::Body(then_));
                f(Nested::Body(else_));
            }
            Exp::Loop { form, body, .. } => {
                if let LoopForm::While { cond } = form {
                    f(Nested::Body(cond));
                }
                f(Nested::Body(body));
            }
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            )
            | Exp::Jvp { lam, .. }
            | Exp::Vjp { lam, .. } => f(Nested::Lambda(lam)),
            Exp::WithVjp { lam, rule, .. } => {
                f(Nested::Lambda(lam));
                f(Nested::Lambda(rule));
            }
            Exp::WithAcc { inputs, lam } => {
                for input in inputs {
                    if let AccOp::Lambda(op, _) = &input.op {
                        f(Nested::Lambda(op));
                    }
                }
                f(Nested::Lambda(lam));
            }
            _ => {}
        }
    }

    /// Calls `f` on the variables the expression binds for its nested
    /// bodies (a loop's parameters and its `for` index; lambdas bind their
    /// own parameters), not those of the statement's pattern.
    pub fn for_each_binder(&self, mut f: impl FnMut(Var)) {
        if let Exp::Loop { params, form, .. } = self {
            params.iter().for_each(|p| f(p.var));
            if let LoopForm::For { i, .. } = form {
                f(*i);
            }
        }
    }

    /// The loop parameters of a `Loop` (empty otherwise), for their types.
    pub fn loop_params(&self) -> &[Param] {
        match self {
            Exp::Loop { params, .. } => params,
            _ => &[],
        }
    }
}

impl Exp {
    /// The bodies nested directly in the expression, in the order of
    /// [`Exp::for_each_nested`] (a lambda as its body), each with whether
    /// it runs repeatedly: a loop's condition and body, the lambda of a
    /// SOAC, `jvp`, `vjp` or accumulator operator (a "hot" position for
    /// inlining and hoisting); not the branches of an `if` nor the lambda
    /// of a `with_acc`, which run once.
    pub fn nested_bodies(&self) -> Vec<(&Body, bool)> {
        let repeated_once = matches!(self, Exp::If { .. });
        let mut out = Vec::new();
        self.for_each_nested(|n| match n {
            Nested::Body(b) => out.push((b, !repeated_once)),
            Nested::Lambda(l) => out.push((&l.body, true)),
        });
        if let Exp::WithAcc { .. } = self {
            // The with_acc lambda (the last) runs once.
            if let Some(last) = out.last_mut() {
                last.1 = false;
            }
        }
        out
    }

    /// The bodies nested directly in the expression, mutably, in the order
    /// of [`Exp::nested_bodies`].
    pub fn nested_bodies_mut(&mut self) -> Vec<&mut Body> {
        match self {
            Exp::If { then_, else_, .. } => vec![then_, else_],
            Exp::Loop { form, body, .. } => match form {
                LoopForm::While { cond } => vec![&mut **cond, body],
                LoopForm::For { .. } => vec![body],
            },
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            )
            | Exp::Jvp { lam, .. }
            | Exp::Vjp { lam, .. } => vec![&mut lam.body],
            Exp::Soac(Soac::Scatter { .. }) => vec![],
            Exp::WithVjp { lam, rule, .. } => vec![&mut lam.body, &mut rule.body],
            Exp::WithAcc { inputs, lam } => {
                let mut out: Vec<&mut Body> = Vec::new();
                for input in inputs.iter_mut() {
                    if let AccOp::Lambda(op, _) = &mut input.op {
                        out.push(&mut op.body);
                    }
                }
                out.push(&mut lam.body);
                out
            }
            _ => vec![],
        }
    }
}

/// Calls `f` on every statement of `body`, those of nested bodies and
/// lambdas included, in pre-order (a statement before the statements
/// nested in it, nested bodies in the order of [`Exp::for_each_nested`]).
/// Iterative: deep IR cannot overflow the native stack.
pub fn for_each_stm(body: &Body, f: &mut dyn FnMut(&Stm)) {
    for_each_stm_of(&body.stms, f)
}

/// [`for_each_stm`] over a list of statements.
pub fn for_each_stm_of(stms: &[Stm], f: &mut dyn FnMut(&Stm)) {
    let mut stack = vec![stms.iter()];
    while let Some(top) = stack.last_mut() {
        let Some(s) = top.next() else {
            stack.pop();
            continue;
        };
        f(s);
        let mut nested = Vec::new();
        s.exp.for_each_nested(|n| {
            nested.push(match n {
                Nested::Body(b) => b,
                Nested::Lambda(l) => &l.body,
            })
        });
        for b in nested.into_iter().rev() {
            stack.push(b.stms.iter());
        }
    }
}

/// One step of [`for_each_var`]'s walk.
enum Item<'a> {
    Body(&'a Body),
    Stm(&'a Stm),
    Lambda(&'a Lambda),
}

/// Calls `use_` on every variable read anywhere in `stms`/`results` of the
/// given roots (nested bodies and lambdas included, type dimensions as
/// [`Use::Control`]) and `bind` on every variable bound there (patterns,
/// loop parameters and indices, lambda parameters). Iterative: no recursion.
fn walk<'a>(mut stack: Vec<Item<'a>>, mut use_: impl FnMut(Var, Use), mut bind: impl FnMut(Var)) {
    while let Some(it) = stack.pop() {
        match it {
            Item::Body(b) => {
                for a in &b.result {
                    if let Atom::Var(v) = a {
                        use_(*v, Use::Value);
                    }
                }
                for s in b.stms.iter().rev() {
                    stack.push(Item::Stm(s));
                }
            }
            Item::Lambda(l) => {
                for p in &l.params {
                    bind(p.var);
                    p.ty.for_each_dim_var(|v| use_(v, Use::Control));
                }
                for t in &l.ret {
                    t.for_each_dim_var(|v| use_(v, Use::Control));
                }
                stack.push(Item::Body(&l.body));
            }
            Item::Stm(s) => {
                for p in &s.pat {
                    bind(p.var);
                    p.ty.for_each_dim_var(|v| use_(v, Use::Control));
                }
                s.exp.for_each_use(&mut use_);
                s.exp.for_each_binder(&mut bind);
                for p in s.exp.loop_params() {
                    p.ty.for_each_dim_var(|v| use_(v, Use::Control));
                }
                let mut nested = Vec::new();
                s.exp.for_each_nested(|n| nested.push(n));
                for n in nested.into_iter().rev() {
                    stack.push(match n {
                        Nested::Body(b) => Item::Body(b),
                        Nested::Lambda(l) => Item::Lambda(l),
                    });
                }
            }
        }
    }
}

/// Calls `use_` on every variable read in `body` (recursively, type
/// dimensions included) and `bind` on every variable bound in it.
pub fn for_each_var(body: &Body, use_: impl FnMut(Var, Use), bind: impl FnMut(Var)) {
    walk(vec![Item::Body(body)], use_, bind)
}

fn free_of(stack: Vec<Item<'_>>) -> Vec<Var> {
    let mut uses = Vec::new();
    let mut binds = HashSet::new();
    walk(
        stack,
        |v, _| uses.push(v),
        |v| {
            binds.insert(v);
        },
    );
    let mut seen = HashSet::new();
    uses.into_iter()
        .filter(|v| !binds.contains(v) && seen.insert(*v))
        .collect()
}

/// The variables a statement reads that it does not bind itself (type
/// dimensions of its pattern included), each once, in order of first
/// appearance. IR variables are bound once per function, so "bound anywhere
/// inside" is "bound before use".
pub fn free_vars_stm(stm: &Stm) -> Vec<Var> {
    free_of(vec![Item::Stm(stm)])
}

/// The variables a body reads that it does not bind (see [`free_vars_stm`]).
pub fn free_vars_body(body: &Body) -> Vec<Var> {
    free_of(vec![Item::Body(body)])
}

/// The variables a lambda reads that it does not bind (see [`free_vars_stm`]).
pub fn free_vars_lambda(lam: &Lambda) -> Vec<Var> {
    free_of(vec![Item::Lambda(lam)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BinOp, CmpOp, PrimType, PrimValue, Span};

    fn stm(pat: &[u32], exp: Exp) -> Stm {
        Stm {
            pat: pat
                .iter()
                .map(|&v| Param::new(Var(v), Type::Prim(PrimType::F64)))
                .collect(),
            exp,
            span: Span::default(),
        }
    }

    /// `if v0 then { let v1 = …; loop (v2 = v1) while { let v3 = … } do
    /// { let v4 = … } } else { let v5 = … }`, then `let v6 = …`.
    fn nested_statements() -> Body {
        let leaf = |v: u32| Body {
            stms: vec![stm(&[v], Exp::Atoms(vec![Atom::Var(Var(0))]))],
            result: vec![Atom::Var(Var(v))],
        };
        let lp = stm(
            &[9],
            Exp::Loop {
                params: vec![Param::new(Var(2), Type::Prim(PrimType::F64))],
                init: vec![Atom::Var(Var(1))],
                form: LoopForm::While {
                    cond: Box::new(leaf(3)),
                },
                body: leaf(4),
            },
        );
        let mut then_ = leaf(1);
        then_.stms.push(lp);
        let branch = stm(
            &[8],
            Exp::If {
                cond: Atom::Var(Var(0)),
                then_,
                else_: leaf(5),
            },
        );
        Body {
            stms: vec![branch, stm(&[6], Exp::Atoms(vec![Atom::Var(Var(0))]))],
            result: vec![],
        }
    }

    #[test]
    fn statements_are_visited_in_pre_order() {
        let body = nested_statements();
        let mut seen = Vec::new();
        for_each_stm(&body, &mut |s| seen.push(s.pat[0].var.0));
        assert_eq!(seen, [8, 1, 9, 3, 4, 5, 6]);
    }

    #[test]
    fn nested_bodies_say_which_run_repeatedly() {
        let mut body = nested_statements();
        let branch = &body.stms[0].exp;
        let flags: Vec<bool> = branch.nested_bodies().iter().map(|(_, r)| *r).collect();
        assert_eq!(flags, [false, false]);
        let Exp::If { then_, .. } = branch else {
            panic!("an if")
        };
        let lp = &then_.stms[1].exp;
        let firsts: Vec<(u32, bool)> = lp
            .nested_bodies()
            .iter()
            .map(|(b, r)| (b.stms[0].pat[0].var.0, *r))
            .collect();
        assert_eq!(firsts, [(3, true), (4, true)]);
        let mutable: Vec<u32> = body.stms[0]
            .exp
            .nested_bodies_mut()
            .iter()
            .map(|b| b.stms[0].pat[0].var.0)
            .collect();
        assert_eq!(mutable, [1, 5]);
    }

    #[test]
    fn free_vars_of_a_loop_exclude_its_binders() {
        // loop (p2 = v0) for i3 < v1 do { let v4 = p2 * v5 in (v4) }
        let body = Body {
            stms: vec![stm(
                &[4],
                Exp::BinOp(BinOp::Mul, Atom::Var(Var(2)), Atom::Var(Var(5))),
            )],
            result: vec![Atom::Var(Var(4))],
        };
        let lp = stm(
            &[6],
            Exp::Loop {
                params: vec![Param::new(
                    Var(2),
                    Type::Array(PrimType::F64, vec![Dim::Var(Var(7))]),
                )],
                init: vec![Atom::Var(Var(0))],
                form: LoopForm::For {
                    i: Var(3),
                    bound: Atom::Var(Var(1)),
                },
                body,
            },
        );
        assert_eq!(free_vars_stm(&lp), vec![Var(0), Var(1), Var(7), Var(5)]);
    }

    #[test]
    fn uses_are_classified() {
        let e = Exp::If {
            cond: Atom::Var(Var(1)),
            then_: Body::default(),
            else_: Body::default(),
        };
        let mut us = Vec::new();
        e.for_each_use(|v, u| us.push((v, u)));
        assert_eq!(us, vec![(Var(1), Use::Control)]);
        let e = Exp::CmpOp(CmpOp::Lt, Atom::Var(Var(2)), Atom::Const(PrimValue::I32(0)));
        let mut us = Vec::new();
        e.for_each_use(|v, u| us.push((v, u)));
        assert_eq!(us, vec![(Var(2), Use::Value)]);
        let mut n = 0;
        Exp::If {
            cond: Atom::Var(Var(1)),
            then_: Body::default(),
            else_: Body::default(),
        }
        .for_each_nested(|_| n += 1);
        assert_eq!(n, 2);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let mut b = Body {
            stms: vec![],
            result: vec![Atom::Var(Var(0))],
        };
        for k in 0..100_000u32 {
            b = Body {
                stms: vec![stm(
                    &[k + 10],
                    Exp::If {
                        cond: Atom::Var(Var(1)),
                        then_: b,
                        else_: Body::default(),
                    },
                )],
                result: vec![Atom::Var(Var(k + 10))],
            };
        }
        assert_eq!(free_vars_body(&b), vec![Var(1), Var(0)]);
        // The IR's own Drop is recursive; leak the deep test value.
        std::mem::forget(b);
    }
}
