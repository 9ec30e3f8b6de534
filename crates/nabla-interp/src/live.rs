//! Dead array slots at consuming statements.
//!
//! `Update`, `reduce_by_index` and `scatter` write in place only when the
//! consumed array's buffer is unshared. A slot whose variable is dead — a
//! row view read earlier in a loop body, an alias no later statement reads —
//! still holds a reference until it is overwritten, and would force a copy
//! of the whole array on every iteration. So when a consuming statement
//! finds its array shared, the evaluator first clears the slots that are
//! dead once that statement runs (this module's table), then writes; a
//! buffer that is still shared is copied as before (copy-on-write).
//!
//! A variable `x` is dead at a consuming statement `S` when `x` is an
//! array bound in one of the bodies enclosing `S` (a statement before the
//! one that contains `S`, or a parameter of that body's loop, lambda or
//! function), and neither the statement of that body containing `S` nor any
//! later one, nor the body's results, read it. IR variables are bound once
//! per function, so this is a per-function analysis, computed the first
//! time a consuming statement of the function finds its array shared.

use nabla_ir::{free_vars_stm, Atom, Body, Exp, Nested, Param, Program, Soac, Stm, Var};
use std::collections::HashMap;
use std::rc::Rc;

/// Per consuming statement: the array variables dead once it runs.
#[derive(Default)]
pub(crate) struct DeadTable {
    done: Vec<bool>,
    map: HashMap<*const Stm, Rc<[Var]>>,
}

impl DeadTable {
    /// The dead array variables at `stm` of function `f` (computing the
    /// function's table on first use).
    pub(crate) fn at(&mut self, prog: &Program, f: usize, stm: &Stm) -> Option<Rc<[Var]>> {
        if self.done.len() < prog.functions.len() {
            self.done.resize(prog.functions.len(), false);
        }
        if !self.done.get(f).copied().unwrap_or(true) {
            self.done[f] = true;
            let fun = &prog.functions[f];
            let mut levels = Vec::new();
            body(&fun.body, &fun.params, &mut levels, &mut self.map);
        }
        self.map.get(&(stm as *const Stm)).cloned()
    }
}

/// One enclosing body: where each variable is last read (`usize::MAX`: by
/// the results), the arrays it binds (with the index of the binding
/// statement; parameters at 0 with `param`), and the index of the statement
/// being visited.
struct Level {
    last_use: HashMap<Var, usize>,
    arrays: Vec<(Var, usize, bool)>,
    k: usize,
}

fn is_consuming(e: &Exp) -> bool {
    matches!(
        e,
        Exp::Update(..) | Exp::Soac(Soac::Hist { .. } | Soac::Scatter { .. }) | Exp::WithAcc { .. }
    )
}

fn body(
    b: &Body,
    params: &[Param],
    levels: &mut Vec<Level>,
    out: &mut HashMap<*const Stm, Rc<[Var]>>,
) {
    let mut last_use = HashMap::new();
    let mut arrays = Vec::new();
    for p in params {
        if p.ty.rank() > 0 {
            arrays.push((p.var, 0, true));
        }
    }
    for (i, s) in b.stms.iter().enumerate() {
        for v in free_vars_stm(s) {
            last_use.insert(v, i);
        }
        for p in &s.pat {
            if p.ty.rank() > 0 {
                arrays.push((p.var, i, false));
            }
        }
    }
    for a in &b.result {
        if let Atom::Var(v) = a {
            last_use.insert(*v, usize::MAX);
        }
    }
    levels.push(Level {
        last_use,
        arrays,
        k: 0,
    });
    for (i, s) in b.stms.iter().enumerate() {
        if let Some(l) = levels.last_mut() {
            l.k = i;
        }
        if is_consuming(&s.exp) {
            let mut dead = Vec::new();
            for l in levels.iter() {
                for &(x, at, param) in &l.arrays {
                    let bound_before = param || at < l.k;
                    let unused = l.last_use.get(&x).is_none_or(|&u| u < l.k);
                    if bound_before && unused {
                        dead.push(x);
                    }
                }
            }
            if !dead.is_empty() {
                out.insert(s as *const Stm, dead.into());
            }
        }
        let mut nested = Vec::new();
        s.exp.for_each_nested(|n| nested.push(n));
        let loop_params = s.exp.loop_params();
        for n in nested {
            stacker::maybe_grow(crate::RED_ZONE, crate::STACK_SEGMENT, || match n {
                Nested::Body(nb) => {
                    // A loop's parameters belong to its body (not to a
                    // `while` condition).
                    let is_loop_body =
                        matches!(&s.exp, Exp::Loop { body: lb, .. } if std::ptr::eq(lb, nb));
                    body(
                        nb,
                        if is_loop_body { loop_params } else { &[] },
                        levels,
                        out,
                    )
                }
                Nested::Lambda(l) => body(&l.body, &l.params, levels, out),
            });
        }
    }
    levels.pop();
}
