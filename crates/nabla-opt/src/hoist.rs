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
//! `jvp`/`vjp` lambda (the AD decides what is recomputed there).
//!
//! A statement of a SOAC lambda with several results, some of which read
//! only values from outside the lambda (a map, reduction, scan, `for` loop
//! or branch that computes a primal beside the tangents of the lambda's
//! seed), is split (`split_invariant`): a slice of it that computes only
//! the invariant results (`slice_stm`) moves out under the rules above,
//! and the statement in the lambda reads those moved results instead of
//! its own (its now-dead copies are left to dead-code elimination). A loop
//! that consumes a fresh array made in the lambda from outside values (a
//! `copy` or `replicate`) counts as reading those values: the slice, or the
//! whole loop where every result is invariant, moves with the array remade
//! outside — so the forward sweep of `map (\s -> vjp f x (seed s))`, which
//! writes its checkpoints into such an array, runs once for all seeds.
//! Bodies are processed innermost first, so a statement invariant in
//! several nested loops moves out of all of them in one run.

use crate::simplify::{removable, SizeFacts};
use crate::walk;
use nabla_ir::rewrite::fresh_var;
use nabla_ir::{Atom, Body, Exp, Function, Lambda, LoopForm, Param, Soac, Stm, Type, Var};
use std::collections::{HashMap, HashSet};

/// Hoists loop-invariant statements in one function, given its analysis.
/// Returns whether anything moved.
pub fn hoist_function(f: &mut Function, analysis: &nabla_ir::FunctionAnalysis) -> bool {
    let types = SizeFacts::from_types(f, walk::var_types(f, Some(analysis)));
    let mut changed = false;
    body(&mut f.body, &types, &mut changed, &mut f.var_names);
    changed
}

fn body(b: &mut Body, types: &SizeFacts, changed: &mut bool, var_names: &mut Vec<String>) {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        let old = std::mem::take(&mut b.stms);
        let mut out = Vec::with_capacity(old.len());
        for mut s in old {
            // Innermost first; not into `jvp`/`vjp` lambdas (hoisting must
            // not change what is differentiated).
            let differentiated = matches!(
                s.exp,
                Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. }
            );
            if !differentiated {
                for nb in s.exp.nested_bodies_mut() {
                    body(nb, types, changed, var_names);
                }
            }
            for (scope_vars, nb, lambda) in repeated_bodies(&mut s.exp) {
                if lambda.is_some() {
                    *changed |= fission_maps(nb, &scope_vars, types, lambda, var_names);
                }
                let moved = hoist_out(nb, scope_vars, types, lambda, var_names);
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

/// Map fission with materialisation, so that invariant work nested in a
/// map can leave an enclosing SOAC lambda `b` (whose own parameters are
/// `bound`): in a map `S` of `b` with some inputs from outside `b`, the
/// statements of `S`'s lambda that read only those inputs' rows and values
/// from outside `b` (the primal of each element, beside the tangent for
/// each of several seeds: `map (\t -> jvp f x (unit t))`) become a map
/// `S1` of their own over those inputs, which returns as arrays the values
/// the rest reads; `S` then reads them as extra inputs. `S1` reads nothing
/// bound in `b`, so the hoisting that follows moves it out — the fission is
/// made only where it will (`S1` pure, and total or `b` running at least
/// once), and only for scalar work of at least two statements (the values
/// materialised are scalars). Returns whether a map was split.
fn fission_maps(
    b: &mut Body,
    bound: &[Var],
    types: &SizeFacts,
    lambda: Option<bool>,
    var_names: &mut Vec<String>,
) -> bool {
    let runs_at_least_once = lambda == Some(true);
    let mut inside: HashSet<Var> = bound.iter().copied().collect();
    let mut changed = false;
    let old = std::mem::take(&mut b.stms);
    for s in old {
        let split = match &s.exp {
            Exp::Soac(Soac::Map { w, lam, arrs })
                if !matches!(w, Atom::Var(v) if inside.contains(v))
                    && arrs.iter().any(|a| !inside.contains(a))
                    && pure(&s) =>
            {
                split_map(&s, *w, lam, arrs, &inside, types, var_names)
            }
            _ => None,
        };
        match split {
            Some((s1, s2))
                if pure(&s1)
                    && (runs_at_least_once || removable(&s1, types))
                    && nesting_at_most(&s1.exp, MAX_NESTING) =>
            {
                changed = true;
                inside.extend(s2.pat.iter().map(|p| p.var));
                b.stms.push(s1);
                b.stms.push(s2);
            }
            _ => {
                inside.extend(s.pat.iter().map(|p| p.var));
                b.stms.push(s);
            }
        }
    }
    changed
}

/// The two maps of [`fission_maps`] for `s` (`map w lam arrs`), if its
/// lambda has invariant work worth materialising.
fn split_map(
    s: &Stm,
    w: Atom,
    lam: &Lambda,
    arrs: &[Var],
    inside: &HashSet<Var>,
    types: &SizeFacts,
    var_names: &mut Vec<String>,
) -> Option<(Stm, Stm)> {
    // The lambda's parameters reading rows of arrays bound in `b` vary.
    let mut variant: Vec<Var> = inside.iter().copied().collect();
    for (p, a) in lam.params.iter().zip(arrs) {
        if inside.contains(a) {
            variant.push(p.var);
        }
    }
    let mut body = lam.body.clone();
    let moved = hoist_out(&mut body, variant, types, Some(true), var_names);
    // Scalar work only, and at least two statements of it: materialising
    // arrays, or the results of nested SOACs, measured slower than
    // recomputing them (hand tracking's Jacobian took twice as long).
    let worth = moved.len() >= 2
        && moved.iter().all(|t| {
            t.exp.nested_bodies().is_empty() && t.pat.iter().all(|p| matches!(p.ty, Type::Prim(_)))
        });
    if !worth {
        return None;
    }
    // The moved values the rest still reads.
    let mut used: HashSet<Var> = nabla_ir::free_vars_body(&body).into_iter().collect();
    used.extend(body.result.iter().filter_map(|a| a.as_var()));
    let mut outs: Vec<Param> = Vec::new();
    for t in &moved {
        for p in &t.pat {
            if used.contains(&p.var) {
                if !matches!(p.ty, Type::Prim(_)) {
                    return None;
                }
                outs.push(p.clone());
            }
        }
    }
    if outs.is_empty() {
        return None;
    }
    // S1: the moved statements over the invariant inputs, on fresh variables.
    let inv: Vec<(Param, Var)> = lam
        .params
        .iter()
        .zip(arrs)
        .filter(|(_, a)| !inside.contains(a))
        .map(|(p, a)| (p.clone(), *a))
        .collect();
    let mut copy = Lambda {
        params: inv.iter().map(|(p, _)| p.clone()).collect(),
        ret: outs.iter().map(|p| p.ty.clone()).collect(),
        body: Body {
            stms: moved,
            result: outs.iter().map(|p| Atom::Var(p.var)).collect(),
        },
    };
    let free = nabla_ir::free_vars_lambda(&copy);
    let mut fresh_params = Vec::with_capacity(copy.params.len());
    for p in &mut copy.params {
        let name = var_names[p.var.0 as usize].clone();
        let v = fresh_var(var_names, &name);
        fresh_params.push((p.var, Atom::Var(v)));
        p.var = v;
    }
    copy.body = walk::renamed_copy(&copy.body, free, fresh_params, var_names);
    let w_dim = nabla_ir::rewrite::dim_of_atom(w);
    let materialised: Vec<Param> = outs
        .iter()
        .map(|p| {
            let name = var_names[p.var.0 as usize].clone();
            let v = fresh_var(var_names, &name);
            let t = p.ty.array_of(w_dim);
            Param::new(v, t)
        })
        .collect();
    let s1 = Stm {
        pat: materialised.clone(),
        exp: Exp::Soac(Soac::Map {
            w,
            lam: copy,
            arrs: inv.iter().map(|(_, a)| *a).collect(),
        }),
        span: s.span,
    };
    // S2: the rest, reading the materialised values row by row (the moved
    // statements' own variables become its extra parameters).
    let mut lam2 = lam.clone();
    lam2.body = body;
    lam2.params.extend(outs.iter().cloned());
    let mut arrs2 = arrs.to_vec();
    arrs2.extend(materialised.iter().map(|p| p.var));
    let s2 = Stm {
        pat: s.pat.clone(),
        exp: Exp::Soac(Soac::Map {
            w,
            lam: lam2,
            arrs: arrs2,
        }),
        span: s.span,
    };
    Some((s1, s2))
}

/// Removes from `b` the statements that depend on nothing bound in it (or
/// in `bound`, the construct's own parameters) and may move; returns them
/// in order. `lambda`: `b` is a SOAC lambda (`None`: a loop body), and
/// whether its width is a positive constant, so any pure statement of it
/// would run anyway (arrays and statements that may fail move too; the
/// first run would have failed the same way).
fn hoist_out(
    b: &mut Body,
    bound: Vec<Var>,
    types: &SizeFacts,
    lambda: Option<bool>,
    var_names: &mut Vec<String>,
) -> Vec<Stm> {
    let runs_at_least_once = lambda == Some(true);
    let mut inside: HashSet<Var> = bound.into_iter().collect();
    let consumed = if lambda.is_some() {
        consumed_in(b)
    } else {
        HashSet::new()
    };
    let mut moved = Vec::new();
    // Fresh arrays of the body so far made only of values from outside it
    // (`x = copy(y)`, `x = replicate(n, v)`): x to its expression.
    let mut fresh: HashMap<Var, Exp> = HashMap::new();
    let old = std::mem::take(&mut b.stms);
    for s in old {
        if let (Exp::Copy(_) | Exp::Replicate(..), [p]) = (&s.exp, &s.pat[..]) {
            if nabla_ir::free_vars_stm(&s)
                .iter()
                .all(|v| !inside.contains(v))
            {
                fresh.insert(p.var, s.exp.clone());
            }
        }
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
        let may_move = |t: &Stm| {
            let not_consumed = t
                .pat
                .iter()
                .all(|p| !consumed.contains(&p.var) && !p.unique);
            let pure_total = removable(t, types) && local_effects_only(t);
            (runs_at_least_once && local_effects_only(t) && not_consumed)
                || (pure_total && not_consumed)
        };
        if movable {
            moved.push(s);
        } else if let Some((hoisted, rest)) = lambda
            .is_some()
            .then(|| split_invariant(&s, &inside, &fresh, var_names))
            .flatten()
            .filter(|(hoisted, _)| hoisted.iter().all(may_move))
        {
            // Part of the statement's results depend only on values from
            // outside the lambda (e.g. the primal of a forward-mode
            // derivative mapped over seeds), or all of them but for a fresh
            // array it consumes (the forward sweep of a reverse-mode
            // derivative mapped over seeds, writing its checkpoints): they
            // move out; the rest stays.
            moved.extend(hoisted);
            if let Some(rest) = rest {
                inside.extend(rest.pat.iter().map(|p| p.var));
                b.stms.push(rest);
            }
        } else {
            // Only the statement's own results are in scope after it
            // (variables bound in its nested bodies are not).
            inside.extend(s.pat.iter().map(|p| p.var));
            b.stms.push(s);
        }
    }
    moved
}

/// Whether a statement differentiates nothing, binds no accumulator,
/// calls no function, and consumes (updates in place, scatters into, …)
/// only arrays bound inside it — so a copy of it next to it changes
/// nothing but the time taken (a `for` loop's own initial values are the
/// caller's concern).
fn local_effects_only(s: &Stm) -> bool {
    let bad = any_inside(s, |e| {
        matches!(
            e,
            Exp::Jvp { .. }
                | Exp::Vjp { .. }
                | Exp::WithVjp { .. }
                | Exp::WithAcc { .. }
                | Exp::UpdateAcc { .. }
                | Exp::Apply(..)
        )
    });
    if bad {
        return false;
    }
    let free: HashSet<Var> = nabla_ir::free_vars_stm(s).into_iter().collect();
    let mut consumed = HashSet::new();
    for (b, _) in s.exp.nested_bodies() {
        consumed.extend(consumed_in(b));
    }
    if let Exp::Update(a, ..) = &s.exp {
        consumed.insert(*a);
    }
    if let Exp::Soac(Soac::Hist { dest, .. } | Soac::Scatter { dest, .. }) = &s.exp {
        consumed.extend(dest.iter().copied());
    }
    !consumed.iter().any(|v| free.contains(v))
}

/// Whether a statement has no effect anywhere inside it (see
/// [`walk::has_effect`]), differentiates nothing and binds no accumulator.
fn pure(s: &Stm) -> bool {
    let ad_or_acc = any_inside(s, |e| {
        matches!(e, Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. })
    });
    !ad_or_acc && !walk::has_effect(std::slice::from_ref(s))
}

/// Whether `s` or a statement nested in it has an expression `bad` marks
/// or binds an accumulator.
fn any_inside(s: &Stm, bad: impl Fn(&Exp) -> bool) -> bool {
    let mut found = false;
    walk::for_each_stm_of(std::slice::from_ref(s), &mut |t| {
        found |= bad(&t.exp) || t.pat.iter().any(|p| matches!(p.ty, Type::Acc(..)));
    });
    found
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
    let nested = e.nested_bodies();
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

/// Slices a body to what the variables `roots` need: a statement none of
/// whose results is needed is dropped, one with some results needed is
/// replaced by its slice to those ([`slice_stm`]). Returns the statements
/// kept and every variable they and the roots read.
fn slice_body(stms: &[Stm], roots: &[Var]) -> (Vec<Stm>, HashSet<Var>) {
    let mut needed: HashSet<Var> = roots.iter().copied().collect();
    let mut out = Vec::new();
    for s in stms.iter().rev() {
        let live: Vec<bool> = s.pat.iter().map(|p| needed.contains(&p.var)).collect();
        if !live.contains(&true) {
            continue;
        }
        let t = if live.contains(&false) {
            slice_stm(s, &live).unwrap_or_else(|| s.clone())
        } else {
            s.clone()
        };
        needed.extend(nabla_ir::free_vars_stm(&t));
        out.push(t);
    }
    out.reverse();
    (out, needed)
}

/// The variables of the atoms that are variables.
fn atom_vars<'a>(atoms: impl IntoIterator<Item = &'a Atom>) -> Vec<Var> {
    atoms.into_iter().filter_map(Atom::as_var).collect()
}

/// The size variables a type mentions.
fn type_vars(t: &Type) -> Vec<Var> {
    let mut out = Vec::new();
    t.for_each_dim_var(|v| out.push(v));
    out
}

fn pick<T: Clone>(xs: &[T], keep: &[bool]) -> Vec<T> {
    xs.iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(x, _)| x.clone())
        .collect()
}

/// `lam` with the parameters `params` marks, the results `live` marks and
/// the body statements `stms` (its slice to those results).
fn sliced_lambda(lam: &Lambda, params: &[bool], live: &[bool], stms: Vec<Stm>) -> Lambda {
    Lambda {
        params: pick(&lam.params, params),
        ret: pick(&lam.ret, live),
        body: Body {
            stms,
            result: pick(&lam.body.result, live),
        },
    }
}

/// A statement that binds only the results `live` marks of `s` (a pure
/// `map`, `reduce`, `scan`, `for` loop, `if` or tuple of atoms), computing
/// only what they need: lambdas and branches sliced, map inputs nothing
/// reads dropped (their size checks stay with `s`), a reduction's or
/// scan's components kept when the live ones read only live ones, a
/// loop's parameters closed under what the live results read. `None`
/// where no such slice exists (the caller keeps `s` whole). Binders are
/// not renamed.
fn slice_stm(s: &Stm, live: &[bool]) -> Option<Stm> {
    let n = s.pat.len();
    let pat_vars: HashSet<Var> = s.pat.iter().map(|p| p.var).collect();
    let bad_type = |t: &Type| type_vars(t).iter().any(|v| pat_vars.contains(v));
    if live.len() != n || s.pat.iter().any(|p| bad_type(&p.ty)) {
        return None;
    }
    let (live, exp): (Vec<bool>, Exp) = match &s.exp {
        Exp::Atoms(xs) if xs.len() == n => (live.to_vec(), Exp::Atoms(pick(xs, live))),
        Exp::Soac(Soac::Map { w, lam, arrs }) if lam.body.result.len() == n => {
            let roots = atom_vars(pick(&lam.body.result, live).iter());
            let (stms, needed) = slice_body(&lam.body.stms, &roots);
            let mut used: Vec<bool> = lam.params.iter().map(|p| needed.contains(&p.var)).collect();
            if !used.contains(&true) {
                *used.first_mut()? = true;
            }
            let lam = sliced_lambda(lam, &used, live, stms);
            let exp = Exp::Soac(Soac::Map {
                w: *w,
                lam,
                arrs: pick(arrs, &used),
            });
            (live.to_vec(), exp)
        }
        Exp::Soac(
            soac @ (Soac::Reduce {
                lam, neutral, arrs, ..
            }
            | Soac::Scan {
                lam, neutral, arrs, ..
            }),
        ) if lam.body.result.len() == n && lam.params.len() == 2 * n && arrs.len() == n => {
            let roots = atom_vars(pick(&lam.body.result, live).iter());
            let (stms, needed) = slice_body(&lam.body.stms, &roots);
            let both: Vec<bool> = live.iter().chain(live).copied().collect();
            if lam
                .params
                .iter()
                .zip(&both)
                .any(|(p, k)| !k && needed.contains(&p.var))
            {
                return None;
            }
            let lam = sliced_lambda(lam, &both, live, stms);
            let (neutral, arrs) = (pick(neutral, live), pick(arrs, live));
            let exp = match soac {
                Soac::Reduce { w, commutative, .. } => Exp::Soac(Soac::Reduce {
                    w: *w,
                    lam,
                    neutral,
                    arrs,
                    commutative: *commutative,
                }),
                Soac::Scan { w, .. } => Exp::Soac(Soac::Scan {
                    w: *w,
                    lam,
                    neutral,
                    arrs,
                }),
                _ => return None,
            };
            (live.to_vec(), exp)
        }
        Exp::Loop {
            params,
            init,
            form: LoopForm::For { i, bound },
            body,
        } if params.len() == n && body.result.len() == n => {
            // The live results and the parameters their code reads.
            let mut keep = live.to_vec();
            let stms = loop {
                let roots = atom_vars(pick(&body.result, &keep).iter());
                let (stms, needed) = slice_body(&body.stms, &roots);
                let mut grown = false;
                for (j, p) in params.iter().enumerate() {
                    if needed.contains(&p.var) && !keep[j] {
                        keep[j] = true;
                        grown = true;
                    }
                }
                if !grown {
                    break stms;
                }
            };
            if !keep.contains(&false) {
                return None;
            }
            let dropped: HashSet<Var> = pick(params, &keep.iter().map(|k| !k).collect::<Vec<_>>())
                .iter()
                .map(|p| p.var)
                .collect();
            if pick(params, &keep)
                .iter()
                .any(|p| type_vars(&p.ty).iter().any(|v| dropped.contains(v)))
            {
                return None;
            }
            let exp = Exp::Loop {
                params: pick(params, &keep),
                init: pick(init, &keep),
                form: LoopForm::For {
                    i: *i,
                    bound: *bound,
                },
                body: Body {
                    stms,
                    result: pick(&body.result, &keep),
                },
            };
            (keep, exp)
        }
        Exp::If { cond, then_, else_ } if then_.result.len() == n && else_.result.len() == n => {
            let side = |b: &Body| {
                let roots = atom_vars(pick(&b.result, live).iter());
                Body {
                    stms: slice_body(&b.stms, &roots).0,
                    result: pick(&b.result, live),
                }
            };
            let exp = Exp::If {
                cond: *cond,
                then_: side(then_),
                else_: side(else_),
            };
            (live.to_vec(), exp)
        }
        _ => return None,
    };
    Some(Stm {
        pat: pick(&s.pat, &live),
        exp,
        span: s.span,
    })
}

/// Loop-invariant code motion by fission: splits a statement with several
/// results (a `map`, `reduce`, `scan`, `for` loop or `if`), some of which
/// (`K`) depend only on values bound outside the lambda (the variables not
/// in `inside`), into its slice to `K` ([`slice_stm`], binders renamed;
/// it binds the original variables of `K`, and may move out) and the
/// original statement, whose results in `K` are renamed to fresh, dead
/// variables (dead-code elimination then drops them from a map). A loop
/// parameter that the slice would consume gets its own fresh array, made
/// outside as the lambda made its initial value (`fresh`: a `copy` or
/// `replicate` of values from outside); otherwise, and where the statement
/// consumes anything from outside, no split. Where every result is in `K`
/// (a loop that reads nothing else from inside: the forward sweep of a
/// `vjp` writing its checkpoints into a fresh array), the whole statement
/// moves and nothing stays. Returns the statements to move (the fresh
/// arrays, then the slice) and the statement that stays, if any.
fn split_invariant(
    s: &Stm,
    inside: &HashSet<Var>,
    fresh: &HashMap<Var, Exp>,
    var_names: &mut Vec<String>,
) -> Option<(Vec<Stm>, Option<Stm>)> {
    let n = s.pat.len();
    if n < 2 || !local_effects_only(s) || s.pat.iter().any(|p| matches!(p.ty, Type::Acc(..))) {
        return None;
    }
    // A loop's consumed initial values (position, the variable, how it is
    // made): `None` where one is not a fresh array made from outside.
    let consumed_inits = |t: &Stm| -> Option<Vec<(usize, Var, Exp)>> {
        let Exp::Loop { params, init, .. } = &t.exp else {
            return Some(vec![]);
        };
        let mut out = Vec::new();
        for (k, (p, a)) in params.iter().zip(init).enumerate() {
            if let (true, Atom::Var(x)) = (p.unique, a) {
                out.push((k, *x, fresh.get(x)?.clone()));
            }
        }
        Some(out)
    };
    // Whether a slice reads nothing bound inside the lambda (a consumed
    // initial value counting as the fresh array that will replace it).
    let invariant = |t: &Stm| {
        let Some(inits) = consumed_inits(t) else {
            return false;
        };
        let replaced: HashSet<Var> = inits.iter().map(|(_, x, _)| *x).collect();
        nabla_ir::free_vars_stm(t)
            .iter()
            .all(|v| !inside.contains(v) || replaced.contains(v))
    };
    // The whole statement reads only outside values and fresh arrays made
    // from them, which it consumes: it moves with those arrays remade
    // outside. (A statement reading only outside values without consuming
    // such an array moves by plain hoisting, in the caller.)
    let whole = consumed_inits(s).is_some_and(|inits| !inits.is_empty()) && invariant(s);
    let mut sliced = if whole {
        s.clone()
    } else {
        let mut live = vec![false; n];
        for k in 0..n {
            let mut one = vec![false; n];
            one[k] = true;
            if let Some(t) = slice_stm(s, &one) {
                if invariant(&t) {
                    for (j, p) in s.pat.iter().enumerate() {
                        live[j] |= t.pat.iter().any(|q| q.var == p.var);
                    }
                }
            }
        }
        if !live.contains(&true) || !live.contains(&false) {
            return None;
        }
        let sliced = slice_stm(s, &live)?;
        if sliced.pat.len() == n || !invariant(&sliced) {
            return None;
        }
        sliced
    };
    // The slice's consumed initial values become fresh arrays made outside.
    let inits = consumed_inits(&sliced)?;
    let mut prelude = Vec::new();
    if let Exp::Loop { params, init, .. } = &mut sliced.exp {
        for (k, x, made) in inits {
            let name = var_names[x.0 as usize].clone();
            let c = fresh_var(var_names, &name);
            prelude.push(Stm {
                pat: vec![Param::new(c, params[k].ty.clone())],
                exp: made,
                span: s.span,
            });
            init[k] = Atom::Var(c);
        }
    }
    if whole {
        // The statement itself moves: its binders stay as they are.
        prelude.push(sliced);
        return Some((prelude, None));
    }
    let originals: Vec<Var> = sliced.pat.iter().map(|p| p.var).collect();
    // Free variables keep their names; every binder of the copy is fresh.
    let free = nabla_ir::free_vars_stm(&sliced);
    let body = Body {
        stms: vec![sliced],
        result: vec![],
    };
    let mut copy = walk::renamed_copy(&body, free, [], var_names);
    let mut hoisted = copy.stms.pop()?;
    for (p, v) in hoisted.pat.iter_mut().zip(&originals) {
        p.var = *v;
    }
    let mut rest = s.clone();
    for p in rest.pat.iter_mut() {
        if originals.contains(&p.var) {
            let name = var_names[p.var.0 as usize].clone();
            p.var = fresh_var(var_names, &name);
        }
    }
    prelude.push(hoisted);
    Some((prelude, Some(rest)))
}
