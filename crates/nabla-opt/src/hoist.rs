//! Loop-invariant code motion: statements of a loop body or of a SOAC's
//! lambda that read nothing bound inside it are moved out, before the loop
//! or the SOAC, so they run once instead of once per iteration or element.
//!
//! Only what is safe to run even where the original would not run (a loop
//! of zero iterations, a map over an empty array) moves: pure, total
//! statements (see [`crate::simplify::removable`]) with scalar results —
//! arithmetic, comparisons, conversions, `size`, and branches and `for`
//! loops built of such. Out of a SOAC lambda of constant positive width
//! (which runs at least once) any pure statement moves, arrays and
//! indexing included, unless the lambda consumes its result — so
//! `map (\t -> jvp f x (unit t)) (iota 26)` computes `f`'s primal once.
//! Out of any SOAC lambda, pure and total statements with array results
//! move too (e.g. a `reverse` of a free array inside a `map`), unless the
//! lambda consumes them: where the lambda would not run at all, they cost
//! one evaluation and cannot fail.
//! Array results never move out of loops (an array moved out of a loop
//! could be consumed once per iteration), and nothing moves out of a
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
            for nb in walk::nested_bodies_mut(&mut s.exp, false) {
                body(nb, types, changed);
            }
            for (scope_vars, nb, lambda) in repeated_bodies(&mut s.exp) {
                let moved = hoist_out(nb, scope_vars, types, lambda);
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
/// in order. `lambda`: `b` is a SOAC lambda (`None`: a loop body), and
/// whether its width is a positive constant, so any pure statement of it
/// would run anyway (arrays and statements that may fail move too; the
/// first run would have failed the same way).
fn hoist_out(b: &mut Body, bound: Vec<Var>, types: &SizeFacts, lambda: Option<bool>) -> Vec<Stm> {
    let runs_at_least_once = lambda == Some(true);
    let mut inside: HashSet<Var> = bound.into_iter().collect();
    let consumed = if lambda.is_some() {
        consumed_in(b)
    } else {
        HashSet::new()
    };
    let mut moved = Vec::new();
    let old = std::mem::take(&mut b.stms);
    for s in old {
        // Statements nesting deeper than MAX_NESTING stay (checking them
        // at every level of a deep nest would take quadratic time).
        if !nesting_at_most(&s.exp, MAX_NESTING) {
            inside.extend(s.pat.iter().map(|p| p.var));
            b.stms.push(s);
            continue;
        }
        let invariant = nabla_ir::free_vars_stm(&s)
            .iter()
            .all(|v| !inside.contains(v));
        let safe_scalar = s.pat.iter().all(|p| matches!(p.ty, Type::Prim(_)))
            && !s.pat.is_empty()
            && removable(&s, types);
        let not_consumed = || {
            s.pat
                .iter()
                .all(|p| !consumed.contains(&p.var) && !p.unique)
        };
        let safe_once = runs_at_least_once && pure(&s) && not_consumed();
        let safe_array = lambda.is_some()
            && !s.pat.is_empty()
            && removable(&s, types)
            && pure(&s)
            && not_consumed();
        let movable = invariant && (safe_scalar || safe_once || safe_array);
        if movable {
            moved.push(s);
        } else {
            // Only the statement's own results are in scope after it
            // (variables bound in its nested bodies are not).
            inside.extend(s.pat.iter().map(|p| p.var));
            b.stms.push(s);
        }
    }
    moved
}

/// Whether a statement has no effect anywhere inside it (see
/// [`walk::has_effect`]), differentiates nothing and binds no accumulator.
fn pure(s: &Stm) -> bool {
    let stms = std::slice::from_ref(s);
    let mut ad_or_acc = false;
    walk::for_each_stm_of(stms, &mut |t| {
        ad_or_acc |= matches!(
            t.exp,
            Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. }
        ) || t.pat.iter().any(|p| matches!(p.ty, Type::Acc(..)));
    });
    !ad_or_acc && !walk::has_effect(stms)
}

/// The variables consumed anywhere in `b`: updated in place, scattered or
/// histogrammed into, given to `with_acc`, passed to a call (which may
/// consume its arguments) or as the initial value of a loop parameter.
fn consumed_in(b: &Body) -> HashSet<Var> {
    let mut out = HashSet::new();
    walk::for_each_stm(b, &mut |s| match &s.exp {
        Exp::Update(a, _, _) => {
            out.insert(*a);
        }
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => {
            out.extend(dest.iter().copied());
        }
        Exp::WithAcc { inputs, .. } => out.extend(inputs.iter().map(|i| i.array)),
        Exp::Apply(_, args) | Exp::Loop { init: args, .. } => {
            out.extend(args.iter().filter_map(|a| match a {
                nabla_ir::Atom::Var(v) => Some(*v),
                nabla_ir::Atom::Const(_) => None,
            }))
        }
        _ => {}
    });
    out
}

/// How deep a statement may nest bodies and still be considered for
/// moving.
const MAX_NESTING: usize = 8;

/// Whether `e` nests bodies at most `limit` deep (stops looking deeper).
fn nesting_at_most(e: &Exp, limit: usize) -> bool {
    let nested = walk::nested_bodies(e);
    if nested.is_empty() {
        return true;
    }
    if limit == 0 {
        return false;
    }
    nested
        .iter()
        .all(|(b, _)| b.stms.iter().all(|s| nesting_at_most(&s.exp, limit - 1)))
}

/// The bodies of `e` that run repeatedly, with the variables each binds
/// itself (loop parameters and counter, lambda parameters) and, for a SOAC
/// lambda, whether its width is a positive constant (it runs at least
/// once); `None` for a loop body.
fn repeated_bodies(e: &mut Exp) -> Vec<(Vec<Var>, &mut Body, Option<bool>)> {
    match e {
        Exp::Loop {
            params, form, body, ..
        } => {
            let mut vars: Vec<Var> = params.iter().map(|p| p.var).collect();
            if let LoopForm::For { i, .. } = form {
                vars.push(*i);
            }
            vec![(vars, body, None)]
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, lam, .. }
            | Soac::Reduce { w, lam, .. }
            | Soac::Scan { w, lam, .. }
            | Soac::Hist { w, lam, .. } => {
                let vars = lam.params.iter().map(|p| p.var).collect();
                let positive = matches!(
                    w,
                    nabla_ir::Atom::Const(nabla_ir::PrimValue::I64(k)) if *k > 0
                );
                vec![(vars, &mut lam.body, Some(positive))]
            }
            Soac::Scatter { .. } => vec![],
        },
        _ => vec![],
    }
}
