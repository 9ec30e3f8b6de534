//! Fusion of maps (Shaikhha et al., ICFP19, §5), two rewrites:
//!
//! - **Replicated inputs**: a map input bound by `replicate(n, x)` with a
//!   scalar `x` and `n` the map's width is dropped; the lambda reads `x`
//!   itself. (Reverse mode's `+`-reduction rule broadcasts the adjoint with
//!   a `replicate`; this removes the array.)
//! - **Vertical fusion**: `let ys = map(w, f, xs)` whose results are read
//!   only as inputs of one later `map(w, g, …, ys, …)` in the same body
//!   becomes one map computing `f` then `g` per element, so `ys` is never
//!   stored. Not when a statement between the two consumes an array (the
//!   producer would read it after the update), nor for lambdas that thread
//!   accumulators.
//!
//! Neither duplicates work: the producer runs once per element, as before.

use crate::walk;
use nabla_ir::{Atom, Body, Exp, Function, Lambda, Param, Soac, Stm, Type, Var};
use std::collections::HashMap;

/// Fuses maps in one function, given its analysis. Returns whether
/// anything changed.
pub fn fuse_function(f: &mut Function, analysis: &nabla_ir::FunctionAnalysis) -> bool {
    let mut changed = false;
    let replicates = replicated_scalars(&f.body);
    body_replicates(&mut f.body, &replicates, &mut changed);
    let uses = walk::use_counts(f, (!changed).then_some(analysis));
    body_vertical(&mut f.body, &uses, &mut changed);
    changed
}

/// Variables bound by `replicate(n, x)` with `x` a scalar: (n, x).
fn replicated_scalars(b: &Body) -> HashMap<Var, (Atom, Atom)> {
    let mut out = HashMap::new();
    walk::for_each_stm(b, &mut |s| {
        if let (Exp::Replicate(n, x), [p]) = (&s.exp, &s.pat[..]) {
            if p.ty.rank() == 1 {
                out.insert(p.var, (*n, *x));
            }
        }
    });
    out
}

fn body_replicates(b: &mut Body, reps: &HashMap<Var, (Atom, Atom)>, changed: &mut bool) {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        for s in &mut b.stms {
            for nb in s.exp.nested_bodies_mut() {
                body_replicates(nb, reps, changed);
            }
            let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut s.exp else {
                continue;
            };
            let mut j = 0;
            while j < arrs.len() {
                let replicated = reps.get(&arrs[j]).filter(|(n, _)| n == w).map(|(_, x)| *x);
                let param_is_scalar = matches!(lam.params[j].ty, Type::Prim(_));
                match replicated {
                    Some(x) if param_is_scalar && arrs.len() > 1 => {
                        let p = lam.params.remove(j);
                        arrs.remove(j);
                        lam.body.stms.insert(
                            0,
                            Stm {
                                pat: vec![Param::new(p.var, p.ty)],
                                exp: Exp::Atoms(vec![x]),
                                span: s.span,
                            },
                        );
                        *changed = true;
                    }
                    _ => j += 1,
                }
            }
        }
    })
}

fn body_vertical(b: &mut Body, uses: &[u32], changed: &mut bool) {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        for s in &mut b.stms {
            for nb in s.exp.nested_bodies_mut() {
                body_vertical(nb, uses, changed);
            }
        }
        let mut i = 0;
        while i < b.stms.len() {
            if let Some(j) = fusion_partner(b, i, uses) {
                let producer = b.stms.remove(i);
                let consumer = &mut b.stms[j - 1];
                fuse_into(producer, consumer);
                *changed = true;
                continue;
            }
            i += 1;
        }
    })
}

/// The index of the map that statement `i` (a map) can fuse into.
fn fusion_partner(b: &Body, i: usize, uses: &[u32]) -> Option<usize> {
    let Exp::Soac(Soac::Map { w, lam, .. }) = &b.stms[i].exp else {
        return None;
    };
    let results: Vec<Var> = b.stms[i].pat.iter().map(|p| p.var).collect();
    if lam.params.iter().any(|p| matches!(p.ty, Type::Acc(..)))
        || lam.ret.iter().any(|t| matches!(t, Type::Acc(..)))
        || b.stms[i].pat.iter().any(|p| p.unique)
    {
        return None;
    }
    // Each result read exactly once, by one later map of the same width.
    for (j, s) in b.stms.iter().enumerate().skip(i + 1) {
        let reads: Vec<Var> = nabla_ir::free_vars_stm(s);
        let touches = results.iter().any(|r| reads.contains(r));
        if let Exp::Soac(Soac::Map {
            w: w2,
            lam: lam2,
            arrs,
        }) = &s.exp
        {
            let all_inputs = results
                .iter()
                .all(|r| arrs.iter().filter(|a| *a == r).count() == 1 && uses_of(uses, *r) == 1);
            let acc_free = !lam2.params.iter().any(|p| matches!(p.ty, Type::Acc(..)));
            if touches {
                return (w2 == w && all_inputs && acc_free && !walk::has_effect(&b.stms[i + 1..j]))
                    .then_some(j);
            }
        } else if touches {
            return None;
        }
    }
    None
}

fn uses_of(uses: &[u32], v: Var) -> u32 {
    uses.get(v.0 as usize).copied().unwrap_or(0)
}

/// Moves the producer map's computation into the consumer map.
fn fuse_into(producer: Stm, consumer: &mut Stm) {
    let Exp::Soac(Soac::Map {
        lam: plam,
        arrs: parrs,
        ..
    }) = producer.exp
    else {
        return;
    };
    let Exp::Soac(Soac::Map { lam, arrs, .. }) = &mut consumer.exp else {
        return;
    };
    let results: Vec<Var> = producer.pat.iter().map(|p| p.var).collect();
    // The consumer's parameters that received the producer's rows.
    let mut row_params: Vec<(usize, Param)> = Vec::new();
    let mut keep_params = Vec::new();
    let mut keep_arrs = Vec::new();
    for (a, p) in arrs.iter().zip(lam.params.drain(..)) {
        match results.iter().position(|r| r == a) {
            Some(k) => row_params.push((k, p)),
            None => {
                keep_params.push(p);
                keep_arrs.push(*a);
            }
        }
    }
    // New inputs: the producer's, then the consumer's others.
    let Lambda {
        params: pparams,
        body: pbody,
        ..
    } = plam;
    let mut params = pparams;
    params.extend(keep_params);
    let mut new_arrs = parrs;
    new_arrs.extend(keep_arrs);
    // The body: the producer's statements, its row results bound to the
    // consumer's parameters, then the consumer's statements.
    let mut stms = pbody.stms;
    for (k, p) in row_params {
        stms.push(Stm {
            pat: vec![Param::new(p.var, p.ty)],
            exp: Exp::Atoms(vec![pbody.result[k]]),
            span: producer.span,
        });
    }
    stms.append(&mut lam.body.stms);
    lam.body.stms = stms;
    lam.params = params;
    *arrs = new_arrs;
}
