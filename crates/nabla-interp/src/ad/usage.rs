//! Which scalar results never need derivatives.
//!
//! A scalar statement (`BinOp`, `UnOp`, `Conv`) whose result is read only
//! as control or shape information — an `if` condition, a loop bound, an
//! index, a size, a comparison operand (comparisons are not differentiated,
//! Jensen 2024, §3.1) — or only by other such statements, contributes nothing
//! to any tangent or adjoint: in Jensen 2024, §4.2's loop, `i32.f32 (x * 10) %% 4`
//! picks a branch and is never differentiated. AD mode evaluates these
//! statements on the primals alone, as plain values: no tangent, no tape
//! entry. Everything else (a value reaching a body result, a call, an array,
//! a loop parameter, a conversion whose result is used as a value, …) is
//! treated as differentiable.
//!
//! Computed once per program, the first time a `jvp`/`vjp` runs: per
//! function, one flag per variable.

use nabla_ir::{Atom, Body, Exp, Nested, Program, Stm, Use, Var};

/// `flags[f][v]`: variable `v` of function `f` is bound by a scalar
/// statement whose value is never differentiated.
pub(crate) fn primal_only(prog: &Program, frame_size: &[usize]) -> Vec<Vec<bool>> {
    prog.functions
        .iter()
        .zip(frame_size)
        .map(|(f, &n)| function(&f.body, n))
        .collect()
}

enum Item<'a> {
    Body(&'a Body),
    Stm(&'a Stm),
}

fn function(body: &Body, n: usize) -> Vec<bool> {
    // `relevant[v]`: v may carry a derivative that matters.
    let mut relevant = vec![false; n];
    let mark = |relevant: &mut Vec<bool>, v: Var| {
        if let Some(r) = relevant.get_mut(v.0 as usize) {
            *r = true;
        }
    };
    // Candidate statements, in textual order: (result, operands).
    let mut cands: Vec<(Var, [Option<Var>; 2])> = Vec::new();
    let mut stack = vec![Item::Body(body)];
    while let Some(it) = stack.pop() {
        match it {
            Item::Body(b) => {
                for a in &b.result {
                    if let Atom::Var(v) = a {
                        mark(&mut relevant, *v);
                    }
                }
                for s in b.stms.iter().rev() {
                    stack.push(Item::Stm(s));
                }
            }
            Item::Stm(s) => {
                let var = |a: &Atom| match a {
                    Atom::Var(v) => Some(*v),
                    Atom::Const(_) => None,
                };
                match (&s.exp, s.pat.as_slice()) {
                    (Exp::BinOp(_, a, b), [p]) => cands.push((p.var, [var(a), var(b)])),
                    (Exp::UnOp(_, a) | Exp::Conv(_, a), [p]) => cands.push((p.var, [var(a), None])),
                    // Comparisons read their operands' primals only.
                    (Exp::CmpOp(..), _) => {}
                    (e, _) => e.for_each_use(|v, u| {
                        if u == Use::Value {
                            mark(&mut relevant, v);
                        }
                    }),
                }
                let mut nested = Vec::new();
                s.exp.for_each_nested(|x| nested.push(x));
                for x in nested.into_iter().rev() {
                    match x {
                        Nested::Body(b) => stack.push(Item::Body(b)),
                        Nested::Lambda(l) => stack.push(Item::Body(&l.body)),
                    }
                }
            }
        }
    }
    // Uses follow definitions textually (loop-carried values pass through
    // body results, which are relevant), so one backward pass suffices; the
    // loop is a safety net.
    loop {
        let mut changed = false;
        for (r, ops) in cands.iter().rev() {
            if relevant.get(r.0 as usize) == Some(&true) {
                for v in ops.iter().flatten() {
                    if let Some(x) = relevant.get_mut(v.0 as usize) {
                        changed |= !*x;
                        *x = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = vec![false; n];
    for (r, _) in &cands {
        if let (Some(o), Some(false)) = (out.get_mut(r.0 as usize), relevant.get(r.0 as usize)) {
            *o = true;
        }
    }
    out
}
