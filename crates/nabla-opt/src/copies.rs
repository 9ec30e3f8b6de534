//! Copy elimination: `let y = copy(x)` goes, and `y` becomes `x`
//! everywhere, where nothing can tell the difference, so that an in-place
//! update of `y` updates `x`'s array instead of a copy of it.
//!
//! A copy is needed only to keep `x` as it was while `y` is consumed (by an
//! in-place update, a unique loop parameter, …). Without the copy,
//! consuming `y` consumes `x` and everything aliasing it; that is allowed
//! exactly when the function still obeys the consumption rules (Futhark's
//! uniqueness rules, module `analysis` of `nabla_ir`): nothing uses `x` or
//! an alias of it afterwards, and `x` may be consumed there (not a loop
//! body's free variable, not a non-unique parameter). So each copy is tried
//! in turn, and stays out only where [`nabla_ir::consumption_errors`] finds
//! no error.
//!
//! The rules do not check one thing: that a function result marked unique
//! aliases no non-unique parameter. So in that one-by-one elimination, a
//! copy of a non-unique function parameter, or of an array that may alias
//! one, is always kept.
//!
//! Before it, the copies that no consumption can tell from their operand
//! go all at once, without checking the function again (see
//! `untouched_copies`): nothing consumes the copy, its operand or an
//! array sharing memory with either, and the copy is not a unique result.
//! These include copies of non-unique parameters: the elaborator copies
//! the arrays of every `zip` (Futhark's `zip` returns a unique array), and
//! most are only read.
//!
//! Forward-mode AD makes such copies: the tangent of `acc with [i] = v` is
//! `copy(acc_tan) with [i] = v_tan`, where `acc_tan` is a unique loop
//! parameter dead after the copy (ht's Jacobian copied a [22][4][4][26]
//! tangent, 73 KB, at every step of its loop over the bones).

use nabla_ir::rewrite::Substitution;
use nabla_ir::{
    analyse_function, consumption_errors, Atom, Body, Exp, FunId, Function, FunctionAnalysis,
    Program, Var,
};
use std::collections::HashSet;

/// At most this many statements checked per function and run (each try
/// checks the whole function): a function of 50 000 statements tries its
/// first 100 copies.
const CHECK_BUDGET: usize = 5_000_000;

/// Runs the pass on every function of `prog`; returns whether a copy went.
pub fn elide_copies(prog: &mut Program) -> bool {
    let mut changed = false;
    for fi in 0..prog.functions.len() {
        let f = FunId(fi as u32);
        let mut copies = Vec::new();
        nabla_ir::visit::for_each_stm(&prog.functions[fi].body, &mut |s| {
            if let (Exp::Copy(x), [y]) = (&s.exp, &s.pat[..]) {
                copies.push((y.var, *x));
            }
        });
        if copies.is_empty() || !consumption_errors(prog, f).is_empty() {
            continue;
        }
        let shared: Vec<Var> = prog.functions[fi]
            .params
            .iter()
            .filter(|p| !p.unique)
            .map(|p| p.var)
            .collect();
        let mut analysis = analyse_function(prog, f);
        // What each elided copy's variable became (a later copy may copy it).
        let mut became = Substitution::with_capacity(0);
        let untouched = untouched_copies(&prog.functions[fi], &analysis, &copies);
        if !untouched.is_empty() {
            // In program order, so a copy of an elided copy becomes a copy
            // of what that one became.
            for &(y, mut x) in &untouched {
                became.var(&mut x);
                remove_binding(&mut prog.functions[fi].body, y);
                became.set(y, Atom::Var(x));
            }
            became.apply(&mut prog.functions[fi].body);
            changed = true;
            copies.retain(|(y, _)| !untouched.iter().any(|(u, _)| u == y));
            if copies.is_empty() {
                continue;
            }
            analysis = analyse_function(prog, f);
        }
        let size = crate::count_stms(&prog.functions[fi].body).max(1);
        let tries = (CHECK_BUDGET / size).max(1);
        for (y, mut x) in copies.into_iter().take(tries) {
            became.var(&mut x);
            let aliases_shared =
                shared.contains(&x) || analysis.aliases(x).iter().any(|a| shared.contains(a));
            if aliases_shared {
                continue;
            }
            let saved = prog.functions[fi].body.clone();
            let body = &mut prog.functions[fi].body;
            remove_binding(body, y);
            let mut substitution = Substitution::with_capacity(0);
            substitution.set(y, Atom::Var(x));
            substitution.apply(body);
            if consumption_errors(prog, f).is_empty() {
                changed = true;
                became.set(y, Atom::Var(x));
                analysis = analyse_function(prog, f);
            } else {
                prog.functions[fi].body = saved;
            }
        }
    }
    changed
}

/// The copies `(y, x)` (`y = copy(x)`) that no consumption can tell from
/// their operand, so that all of them may go at once without checking the
/// function again: nothing consumes `y`, `x`, an array either may share
/// memory with, or an array that may share memory with either; and `y` is
/// not, nor may it share memory with, a result the function marks unique
/// (its caller may consume those) or a result of a nested body (a loop's
/// next iteration may consume it; a branch's result leaves the scope of
/// what it aliases). The copies of `zip`'s arrays (Futhark's
/// `zip` returns a unique array) are of this kind wherever the zipped
/// array is only read.
fn untouched_copies(
    f: &Function,
    analysis: &FunctionAnalysis,
    copies: &[(Var, Var)],
) -> Vec<(Var, Var)> {
    // Every array a consumption consumes: the variable and all it may share
    // memory with.
    let mut consumed: HashSet<Var> = HashSet::new();
    for c in analysis.consumed() {
        consumed.insert(c);
        consumed.extend(analysis.aliases(c).iter().copied());
    }
    let touched =
        |v: Var| consumed.contains(&v) || analysis.aliases(v).iter().any(|a| consumed.contains(a));
    let mut unique_results: Vec<Var> = f
        .body
        .result
        .iter()
        .zip(&f.unique_ret)
        .filter_map(|(r, unique)| match (r, unique) {
            (Atom::Var(r), true) => Some(*r),
            _ => None,
        })
        .collect();
    // The results of nested bodies too: a loop body's results are its
    // parameters' next values, which the next iteration may consume, and a
    // branch's results become its statement's, out of the scope of what
    // they alias inside the branch.
    nabla_ir::visit::for_each_stm(&f.body, &mut |s| {
        s.exp.for_each_nested(|nested| {
            let body = match nested {
                nabla_ir::Nested::Body(b) => b,
                nabla_ir::Nested::Lambda(l) => &l.body,
            };
            unique_results.extend(body.result.iter().filter_map(|r| match r {
                Atom::Var(r) => Some(*r),
                Atom::Const(_) => None,
            }));
        });
    });
    copies
        .iter()
        .filter(|&&(y, x)| {
            !touched(y)
                && !touched(x)
                && !unique_results
                    .iter()
                    .any(|r| *r == y || analysis.aliases(*r).contains(&y))
        })
        .copied()
        .collect()
}

/// Removes the statement of `body` (nested ones included) that binds `y`
/// alone.
fn remove_binding(body: &mut Body, y: Var) -> bool {
    if let Some(at) = body
        .stms
        .iter()
        .position(|s| matches!(&s.pat[..], [p] if p.var == y))
    {
        body.stms.remove(at);
        return true;
    }
    body.stms.iter_mut().any(|s| {
        s.exp
            .nested_bodies_mut()
            .into_iter()
            .any(|nested| remove_binding(nested, y))
    })
}
