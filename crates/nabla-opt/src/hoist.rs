//! Loop-invariant code motion: statements of a loop body or of a SOAC's
//! lambda that read nothing bound inside it are moved out, before the loop
//! or the SOAC, so they run once instead of once per iteration or element.
//!
//! Only what is safe to run even where the original would not run (a loop
//! of zero iterations, a map over an empty array) moves: pure, total
//! statements (see [`crate::simplify::removable`]) with scalar results —
//! arithmetic, comparisons, conversions, `size`, and branches and `for`
//! loops built of such. Array results stay (an array moved out of a loop
//! could be consumed once per iteration), and so does anything inside a
//! `jvp`/`vjp` lambda (the AD decides what is recomputed there). Bodies are
//! processed innermost first, so a statement invariant in several nested
//! loops moves out of all of them in one run.

use crate::simplify::{removable, SizeFacts};
use crate::walk;
use nabla_ir::{Body, Exp, Function, LoopForm, Soac, Stm, Type, Var};
use std::collections::HashSet;

/// Hoists loop-invariant statements in one function. Returns whether
/// anything moved.
pub fn hoist_function(f: &mut Function) -> bool {
    let types = SizeFacts::from_types(f);
    let mut changed = false;
    body(&mut f.body, &types, &mut changed);
    changed
}

fn body(b: &mut Body, types: &SizeFacts, changed: &mut bool) {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        let old = std::mem::take(&mut b.stms);
        let mut out = Vec::with_capacity(old.len());
        for mut s in old {
            // Innermost first.
            for nb in nested_bodies_mut(&mut s.exp) {
                body(nb, types, changed);
            }
            for (scope_vars, nb) in repeated_bodies(&mut s.exp) {
                let moved = hoist_out(nb, scope_vars, types);
                if !moved.is_empty() {
                    *changed = true;
                    out.extend(moved);
                }
            }
            out.push(s);
        }
        b.stms = out;
    })
}

/// Removes from `b` the statements that depend on nothing bound in it (or
/// in `bound`, the construct's own parameters) and may move; returns them
/// in order.
fn hoist_out(b: &mut Body, bound: Vec<Var>, types: &SizeFacts) -> Vec<Stm> {
    let mut inside: HashSet<Var> = bound.into_iter().collect();
    let mut moved = Vec::new();
    let old = std::mem::take(&mut b.stms);
    for s in old {
        let movable = s.pat.iter().all(|p| matches!(p.ty, Type::Prim(_)))
            && !s.pat.is_empty()
            && removable(&s, types)
            && nabla_ir::free_vars_stm(&s)
                .iter()
                .all(|v| !inside.contains(v));
        if movable {
            moved.push(s);
        } else {
            for v in bound_by(&s) {
                inside.insert(v);
            }
            b.stms.push(s);
        }
    }
    moved
}

/// Every variable a statement binds, nested binders included.
fn bound_by(s: &Stm) -> Vec<Var> {
    let mut out: Vec<Var> = s.pat.iter().map(|p| p.var).collect();
    let mut stack: Vec<&Exp> = vec![&s.exp];
    while let Some(e) = stack.pop() {
        match e {
            Exp::Loop { params, form, .. } => {
                out.extend(params.iter().map(|p| p.var));
                if let LoopForm::For { i, .. } = form {
                    out.push(*i);
                }
            }
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            ) => {
                out.extend(lam.params.iter().map(|p| p.var));
            }
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } | Exp::WithAcc { lam, .. } => {
                out.extend(lam.params.iter().map(|p| p.var));
            }
            _ => {}
        }
        for (nb, _) in walk::nested_bodies(e) {
            for st in &nb.stms {
                out.extend(st.pat.iter().map(|p| p.var));
                stack.push(&st.exp);
            }
        }
    }
    out
}

/// The bodies nested in `e` that hoisting may look into (not `jvp`/`vjp`
/// lambdas).
fn nested_bodies_mut(e: &mut Exp) -> Vec<&mut Body> {
    match e {
        Exp::If { then_, else_, .. } => vec![then_, else_],
        Exp::Loop { form, body, .. } => {
            let mut v = Vec::new();
            if let LoopForm::While { cond } = form {
                v.push(&mut **cond);
            }
            v.push(body);
            v
        }
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. }
            | Soac::Reduce { lam, .. }
            | Soac::Scan { lam, .. }
            | Soac::Hist { lam, .. } => vec![&mut lam.body],
            Soac::Scatter { .. } => vec![],
        },
        Exp::WithAcc { lam, .. } => vec![&mut lam.body],
        _ => vec![],
    }
}

/// The bodies of `e` that run repeatedly, with the variables each binds
/// itself (loop parameters and counter, lambda parameters).
fn repeated_bodies(e: &mut Exp) -> Vec<(Vec<Var>, &mut Body)> {
    match e {
        Exp::Loop {
            params, form, body, ..
        } => {
            let mut vars: Vec<Var> = params.iter().map(|p| p.var).collect();
            if let LoopForm::For { i, .. } = form {
                vars.push(*i);
            }
            vec![(vars, body)]
        }
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. }
            | Soac::Reduce { lam, .. }
            | Soac::Scan { lam, .. }
            | Soac::Hist { lam, .. } => {
                let vars = lam.params.iter().map(|p| p.var).collect();
                vec![(vars, &mut lam.body)]
            }
            Soac::Scatter { .. } => vec![],
        },
        _ => vec![],
    }
}
