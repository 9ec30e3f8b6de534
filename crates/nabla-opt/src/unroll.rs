//! `unroll`: maps and reductions over a few elements (a constant width of
//! at most [`MAX_WIDTH`]) whose lambda is straight-line scalar code become
//! that code once per element, and the map's results array literals.
//!
//! Programs on small fixed-size vectors (the 3-vectors and 2-vectors of
//! bundle adjustment, the 3×3 and 4×4 matrices of hand tracking) otherwise
//! allocate an array for every intermediate vector, per element of the
//! enclosing map. Unrolled, the vector's elements are scalars: together with
//! the simplifier's folding of `[a, b, c][k]` to the element, most of those
//! arrays disappear; what is left are literals of the results that are
//! still needed as arrays.
//!
//! An `if` whose branches both return a small literal of scalars for the
//! same result ([`MAX_LITERAL`] elements at most) returns the elements
//! instead, and the literal is built after it, where the simplifier can
//! fold the reads of it (see `scalar_branches`).
//!
//! A small vector built from other known vectors (`replicate c x`, copies,
//! updates at constant positions, concatenations, reshapes to its length)
//! is written as a literal of scalars (see `literal_vectors`): reverse
//! mode's adjoints of small vectors, built one element at a time, become
//! scalars too.
//!
//! Only maps and reductions whose inputs are one-dimensional (their
//! elements scalars) and whose lambdas bind scalars without nested
//! bodies are unrolled, and only while the copies stay small
//! ([`MAX_STATEMENTS`]). An input whose type does not say its length is the
//! width gets the size check the SOAC made (`assert_eq_sizes`).

use nabla_ir::rewrite::fresh_var;
use nabla_ir::{
    Atom, Body, Dim, DimIndex, Exp, Function, Lambda, Param, PrimType, PrimValue, Soac, Stm, Type,
};

use crate::walk;

/// The widest map or reduction unrolled (with [`MAX_STATEMENTS`], a
/// lambda of one statement: an index computation of 11 or 15 elements,
/// as bundle adjustment's rows of column indices, built per element of a
/// `map` without an allocation per piece).
pub const MAX_WIDTH: i64 = 16;
/// The most statements an unrolling may produce.
pub const MAX_STATEMENTS: usize = 48;
/// The longest literal that a branch result is split into scalars for.
pub const MAX_LITERAL: usize = 16;
/// The longest vector that updates, concatenations and reshapes build as a
/// literal (see `literal_vectors`).
pub const MAX_VECTOR: usize = 32;

/// Unrolls the small maps and reductions of `f`, given its analysis.
/// Returns whether anything changed.
pub fn unroll_function(f: &mut Function, analysis: &nabla_ir::FunctionAnalysis) -> bool {
    let types = walk::var_types(f, Some(analysis));
    let mut changed = false;
    body(&mut f.body, &types, &mut f.var_names, &mut changed);
    changed
}

fn body(b: &mut Body, types: &[Option<Type>], var_names: &mut Vec<String>, changed: &mut bool) {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        let old = std::mem::take(&mut b.stms);
        let mut out = Vec::with_capacity(old.len());
        for mut s in old {
            // Innermost first: an inner map unrolled may make its lambda
            // straight-line. Inside `jvp`/`vjp` lambdas too: the AD then
            // differentiates scalar code. Not inside the operators of
            // reductions, scans and histograms: static AD has rules for
            // vectorised operators (`map2 op`) that need them as maps.
            let operator = matches!(
                s.exp,
                Exp::Soac(Soac::Reduce { .. } | Soac::Scan { .. } | Soac::Hist { .. })
            );
            if !operator {
                for nb in s.exp.nested_bodies_mut() {
                    body(nb, types, var_names, changed);
                }
            }
            match unrolled(&s, types, var_names).or_else(|| scalar_branches(&s, var_names)) {
                Some(stms) => {
                    *changed = true;
                    out.extend(stms);
                }
                None => out.push(s),
            }
        }
        if literal_vectors(&mut out, types) {
            *changed = true;
        }
        b.stms = out;
    })
}

/// Rewrites the statements of one body that build a small vector of
/// scalars (at most [`MAX_VECTOR`] elements, rank 1) from other such
/// vectors into array literals: `replicate c x`, `copy`, in-place updates
/// at constant in-bounds positions, concatenations and reshapes to the
/// same length. The vectors the rewritten statements read are then unused
/// (the simplifier removes them, and folds `[a, b, c][k]` to the element),
/// so an adjoint built by `replicate 11 0` and updates one element at a
/// time (reverse mode's adjoint of a camera in bundle adjustment) becomes
/// scalars and one literal. Returns whether anything changed.
fn literal_vectors(stms: &mut [Stm], types: &[Option<Type>]) -> bool {
    let mut known: std::collections::HashMap<nabla_ir::Var, Vec<Atom>> =
        std::collections::HashMap::new();
    let scalar = |a: &Atom| match a {
        Atom::Const(_) => true,
        Atom::Var(v) => matches!(types.get(v.0 as usize), Some(Some(Type::Prim(_)))),
    };
    let mut changed = false;
    for s in stms.iter_mut() {
        let [p] = &s.pat[..] else {
            continue;
        };
        let Type::Array(elem, dims) = &p.ty else {
            continue;
        };
        if dims.len() != 1 {
            continue;
        }
        let elems: Option<Vec<Atom>> = match &s.exp {
            Exp::ArrayLit(atoms, Type::Prim(_)) => {
                known.insert(p.var, atoms.clone());
                continue;
            }
            Exp::Replicate(Atom::Const(PrimValue::I64(c)), x)
                if (1..=MAX_VECTOR as i64).contains(c) && scalar(x) =>
            {
                Some(vec![*x; *c as usize])
            }
            Exp::Copy(x) => known.get(x).cloned(),
            Exp::Update(x, idx, value) => match (known.get(x), &idx[..]) {
                (Some(xs), [DimIndex::Fix(Atom::Const(PrimValue::I64(k)))])
                    if scalar(value) && (0..xs.len() as i64).contains(k) =>
                {
                    let mut xs = xs.clone();
                    xs[*k as usize] = *value;
                    Some(xs)
                }
                _ => None,
            },
            Exp::Concat(parts) => parts
                .iter()
                .map(|v| known.get(v).cloned())
                .collect::<Option<Vec<Vec<Atom>>>>()
                .map(|xs| xs.concat())
                .filter(|xs| xs.len() <= MAX_VECTOR),
            Exp::Reshape(shape, x) => match (&shape[..], known.get(x)) {
                ([Atom::Const(PrimValue::I64(c))], Some(xs)) if *c == xs.len() as i64 => {
                    Some(xs.clone())
                }
                _ => None,
            },
            _ => None,
        };
        let Some(elems) = elems else {
            continue;
        };
        if !literal_fits(dims[0], elems.len()) {
            continue;
        }
        known.insert(p.var, elems.clone());
        s.exp = Exp::ArrayLit(elems, Type::Prim(*elem));
        changed = true;
    }
    changed
}

/// Whether a literal of `len` elements has the type's outer dimension
/// `dim` (a constant `len`, or existential; a size variable is not known
/// to be `len`).
fn literal_fits(dim: Dim, len: usize) -> bool {
    match dim {
        Dim::Const(c) => c == len as i64,
        Dim::Ext => true,
        Dim::Var(_) => false,
    }
}

/// The statements that replace `s`, if it is a small map or reduction.
fn unrolled(s: &Stm, types: &[Option<Type>], var_names: &mut Vec<String>) -> Option<Vec<Stm>> {
    let Exp::Soac(soac) = &s.exp else {
        return None;
    };
    let (w, lam, arrs, neutral) = match soac {
        Soac::Map { w, lam, arrs } => (w, lam, arrs, None),
        Soac::Reduce {
            w,
            lam,
            neutral,
            arrs,
            ..
        } => (w, lam, arrs, Some(neutral)),
        _ => return None,
    };
    let Atom::Const(PrimValue::I64(k)) = *w else {
        return None;
    };
    if !(1..=MAX_WIDTH).contains(&k) || !straight_line(lam) {
        return None;
    }
    if (k as usize) * (lam.body.stms.len() + arrs.len() + 1) > MAX_STATEMENTS {
        return None;
    }
    // Inputs: one-dimensional arrays of scalars.
    let mut elems = Vec::with_capacity(arrs.len());
    for a in arrs {
        match types.get(a.0 as usize) {
            Some(Some(Type::Array(p, dims))) if dims.len() == 1 => elems.push((*a, *p, dims[0])),
            _ => return None,
        }
    }
    let span = s.span;
    let mut out = Vec::new();
    // The width check the SOAC made, where the types do not settle it.
    for &(a, _, dim) in &elems {
        if dim != Dim::Const(k) {
            let n = fresh_var(var_names, "n");
            out.push(Stm {
                pat: vec![Param::new(n, Type::Prim(PrimType::I64))],
                exp: Exp::Size(a, 0),
                span,
            });
            out.push(Stm {
                pat: vec![],
                exp: Exp::AssertEqSizes(
                    vec![Atom::Var(n), *w],
                    "the width of a map or reduction does not match its input".to_string(),
                ),
                span,
            });
        }
    }
    let n_acc = neutral.map_or(0, |ne| ne.len());
    let mut accs: Vec<Atom> = neutral.cloned().unwrap_or_default();
    let mut results: Vec<Vec<Atom>> = vec![Vec::new(); lam.ret.len()];
    for i in 0..k {
        let mut args = accs.clone();
        for &(a, p, _) in &elems {
            let e = fresh_var(var_names, "elem");
            out.push(Stm {
                pat: vec![Param::new(e, Type::Prim(p))],
                exp: Exp::Index(a, vec![DimIndex::Fix(Atom::Const(PrimValue::I64(i)))]),
                span,
            });
            args.push(Atom::Var(e));
        }
        let copy = instance(lam, &args, var_names);
        out.extend(copy.stms);
        if n_acc > 0 {
            accs = copy.result;
        } else {
            for (r, a) in results.iter_mut().zip(copy.result) {
                r.push(a);
            }
        }
    }
    if n_acc > 0 {
        out.push(Stm {
            pat: s.pat.clone(),
            exp: Exp::Atoms(accs),
            span,
        });
    } else {
        for ((p, r), t) in s.pat.iter().zip(results).zip(&lam.ret) {
            out.push(Stm {
                pat: vec![p.clone()],
                exp: Exp::ArrayLit(r, t.clone()),
                span,
            });
        }
    }
    Some(out)
}

/// The statements that replace `s`, if it is an `if` with a result that
/// both branches make as a literal of at most [`MAX_LITERAL`] scalars: the
/// branches return the elements instead (one scalar result each), and the
/// literal is built once after the `if`. Indexing it at constant positions
/// then folds to the elements, so a small vector chosen by a branch (the
/// rotation of bundle adjustment) is not allocated.
fn scalar_branches(s: &Stm, var_names: &mut Vec<String>) -> Option<Vec<Stm>> {
    let Exp::If { cond, then_, else_ } = &s.exp else {
        return None;
    };
    let literal = |b: &Body, k: usize| -> Option<(Vec<Atom>, PrimType)> {
        let Atom::Var(v) = b.result.get(k)? else {
            return None;
        };
        b.stms.iter().find_map(|st| match (&st.exp, &st.pat[..]) {
            (Exp::ArrayLit(atoms, Type::Prim(p)), [q]) if q.var == *v => Some((atoms.clone(), *p)),
            _ => None,
        })
    };
    let mut split = Vec::with_capacity(s.pat.len());
    for (k, p) in s.pat.iter().enumerate() {
        let entry = match &p.ty {
            Type::Array(_, dims) if dims.len() == 1 => match (literal(then_, k), literal(else_, k))
            {
                (Some((a, pa)), Some((b, pb)))
                    if pa == pb
                        && a.len() == b.len()
                        && (1..=MAX_LITERAL).contains(&a.len())
                        && literal_fits(dims[0], a.len()) =>
                {
                    Some((a, b, pa))
                }
                _ => None,
            },
            _ => None,
        };
        split.push(entry);
    }
    if split.iter().all(Option::is_none) {
        return None;
    }
    let mut pat = Vec::new();
    let (mut then_result, mut else_result) = (Vec::new(), Vec::new());
    let mut after = Vec::new();
    for (k, (p, entry)) in s.pat.iter().zip(split).enumerate() {
        match entry {
            None => {
                pat.push(p.clone());
                then_result.push(then_.result[k]);
                else_result.push(else_.result[k]);
            }
            Some((a, b, prim)) => {
                let mut elems = Vec::with_capacity(a.len());
                for _ in 0..a.len() {
                    let e = fresh_var(var_names, "elem");
                    pat.push(Param::new(e, Type::Prim(prim)));
                    elems.push(Atom::Var(e));
                }
                then_result.extend(a);
                else_result.extend(b);
                after.push(Stm {
                    pat: vec![p.clone()],
                    exp: Exp::ArrayLit(elems, Type::Prim(prim)),
                    span: s.span,
                });
            }
        }
    }
    let mut then_ = then_.clone();
    then_.result = then_result;
    let mut else_ = else_.clone();
    else_.result = else_result;
    let mut out = vec![Stm {
        pat,
        exp: Exp::If {
            cond: *cond,
            then_,
            else_,
        },
        span: s.span,
    }];
    out.extend(after);
    Some(out)
}

/// Whether `lam` binds only scalars, with no nested bodies, and returns
/// scalars.
fn straight_line(lam: &Lambda) -> bool {
    lam.ret.iter().all(|t| matches!(t, Type::Prim(_)))
        && lam.params.iter().all(|p| matches!(p.ty, Type::Prim(_)))
        && lam.body.stms.iter().all(|s| {
            s.pat.iter().all(|p| matches!(p.ty, Type::Prim(_)))
                && s.exp.nested_bodies().is_empty()
                && !matches!(s.exp, Exp::Jvp { .. } | Exp::Vjp { .. })
        })
}

/// A copy of `lam`'s body with its parameters replaced by `args` and every
/// variable it binds fresh.
fn instance(lam: &Lambda, args: &[Atom], var_names: &mut Vec<String>) -> Body {
    let subst = lam.params.iter().map(|p| p.var).zip(args.iter().copied());
    walk::renamed_copy(&lam.body, nabla_ir::free_vars_lambda(lam), subst, var_names)
}
