//! What the passes share on top of nabla-ir's one traversal
//! (`nabla_ir::visit`, `nabla_ir::rewrite`, re-exported here): the
//! per-function tables (variable types and use counts from the analysis the
//! pass received, consumed variables, callees, effects), and fresh copies of
//! bodies. Not a traversal of its own: every walk here is one of nabla-ir's.

pub(crate) use nabla_ir::rewrite::{walk_body_deep, walk_exp, Visitor};
use nabla_ir::{Atom, Body, Exp, FunId, Function, FunctionAnalysis, PrimValue, Soac, Type, Var};

/// Stack growth for the recursive walks: nesting in the IR follows the
/// user's nesting (bounded by the front end), but deep bodies must not
/// overflow the native stack.
pub(crate) const RED_ZONE: usize = 64 * 1024;
pub(crate) const STACK_SEGMENT: usize = 1024 * 1024;

pub(crate) use nabla_ir::visit::{for_each_stm, for_each_stm_of};

/// Whether a statement, or one nested in it, has an effect that moving or
/// merging code must respect: an in-place update (`Update`, `hist`,
/// `scatter`, accumulators, a loop with unique parameters) or a call (which
/// may consume its arguments).
pub(crate) fn has_effect(stms: &[nabla_ir::Stm]) -> bool {
    let mut found = false;
    for_each_stm_of(stms, &mut |s| {
        found |= matches!(
            s.exp,
            Exp::Update(..)
                | Exp::Soac(Soac::Hist { .. })
                | Exp::Soac(Soac::Scatter { .. })
                | Exp::WithAcc { .. }
                | Exp::UpdateAcc { .. }
                | Exp::Apply(..)
        ) || matches!(&s.exp, Exp::Loop { params, .. } if params.iter().any(|p| p.unique));
    });
    found
}

/// Number of statements in `b`, nested ones included.
pub fn count_stms(b: &Body) -> usize {
    let mut n = 0;
    for_each_stm(b, &mut |_| n += 1);
    n
}

/// The variables a function consumes (updated in place: `Update`'s array,
/// `hist` and `scatter` destinations). The interpreter takes these out of
/// their slots, so a consumed variable must never be merged with another.
pub(crate) fn consumed_vars(f: &Function) -> Vec<bool> {
    let mut out = vec![false; f.var_names.len()];
    let mut mark = |v: Var| {
        let i = v.0 as usize;
        if i >= out.len() {
            out.resize(i + 1, false);
        }
        out[i] = true;
    };
    for_each_stm(&f.body, &mut |s| match &s.exp {
        Exp::Update(a, _, _) => mark(*a),
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => {
            dest.iter().for_each(|d| mark(*d))
        }
        Exp::WithAcc { inputs, .. } => inputs.iter().for_each(|i| mark(i.array)),
        Exp::UpdateAcc { acc, .. } => mark(*acc),
        _ => {}
    });
    out
}

/// The type of every variable of `f` (`None` for numbers never bound):
/// `analysis`'s table when given (the analysis the pass received, while `f`
/// is still as received), otherwise recomputed from `f`'s binders.
pub(crate) fn var_types(f: &Function, analysis: Option<&FunctionAnalysis>) -> Vec<Option<Type>> {
    match analysis {
        Some(a) => a.types().to_vec(),
        None => nabla_ir::builder::VarTable::of_function(f).into_types(),
    }
}

/// How many times each variable of `f` is read (see
/// [`nabla_ir::use_counts`]): `analysis`'s counts when given (the analysis
/// the pass received, while `f` is still as received), otherwise
/// recounted.
pub(crate) fn use_counts(f: &Function, analysis: Option<&FunctionAnalysis>) -> Vec<u32> {
    match analysis {
        Some(a) => a.use_counts().to_vec(),
        None => nabla_ir::use_counts(f),
    }
}

/// Calls of every function made by `f` (with repetitions).
pub(crate) fn callees(b: &Body) -> Vec<FunId> {
    let mut out = Vec::new();
    for_each_stm(b, &mut |s| {
        if let Exp::Apply(g, _) = &s.exp {
            out.push(*g);
        }
    });
    out
}

/// `types` (the function's [`var_types`]), with each unknown dimension
/// (`?`) of an array replaced by the variable a `size(a, d)` statement binds
/// to it, where the function has one: the facts "this array's outer size is
/// that width" which [`crate::simplify::removable`] uses to see that a
/// SOAC's width check cannot fail. (For these checks only: the IR keeps its
/// own types.)
pub(crate) fn var_types_with_sizes(
    f: &Function,
    mut types: Vec<Option<Type>>,
) -> Vec<Option<Type>> {
    for_each_stm(&f.body, &mut |s| {
        if let (Exp::Size(a, d), [p]) = (&s.exp, &s.pat[..]) {
            if let Some(Some(Type::Array(_, ds))) = types.get_mut(a.0 as usize) {
                if let Some(dim @ nabla_ir::Dim::Ext) = ds.get_mut(*d) {
                    *dim = nabla_ir::Dim::Var(p.var);
                }
            }
        }
    });
    types
}

/// A copy of `body` in which the variables `keep` stay themselves, each
/// `(v, a)` of `subst` becomes `a`, and every other variable (every binder
/// of the copy) is fresh (appended to `var_names`).
pub(crate) fn renamed_copy(
    body: &Body,
    keep: impl IntoIterator<Item = Var>,
    subst: impl IntoIterator<Item = (Var, Atom)>,
    var_names: &mut Vec<String>,
) -> Body {
    let mut map = vec![None; var_names.len()];
    let mut set = |v: Var, a: Atom| {
        if let Some(slot) = map.get_mut(v.0 as usize) {
            *slot = Some(a);
        }
    };
    for v in keep {
        set(v, Atom::Var(v));
    }
    for (v, a) in subst {
        set(v, a);
    }
    let mut copy = body.clone();
    let names = var_names.clone();
    walk_body_deep(
        &mut copy,
        &mut nabla_ir::rewrite::Renamer::new(map, &names, var_names),
    );
    copy
}

/// Whether `c` is a floating-point zero (adjoints are floats; adding
/// `-0.0` changes nothing either).
pub(crate) fn is_zero(c: &PrimValue) -> bool {
    c.prim_type().is_float() && *c == PrimValue::zero(c.prim_type())
}
