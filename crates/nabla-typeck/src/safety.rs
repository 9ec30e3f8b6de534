//! `#[warn(safety_checks)]`: a warning for each run-time safety check (an
//! index, a slice or an in-place update whose bounds are checked) in the
//! expression the attribute marks, including the bodies of the top-level
//! functions it calls, which the compiler inlines there (as Futhark warns
//! "Safety check required at run time").

use crate::recursion::for_each_child;
use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::{HashMap, HashSet};

/// Maximum expression nesting followed (inference already bounds it).
const MAX_DEPTH: usize = 20000;

/// The warnings of the `#[warn(safety_checks)]` expressions of `files`.
pub(crate) fn safety_check_warnings(files: &[Program]) -> Vec<Diagnostic> {
    let mut defs: HashMap<NodeId, &ValBind> = HashMap::new();
    for f in files {
        collect_defs(&f.decs, &mut defs);
    }
    let mut out = Vec::new();
    for vb in defs.values() {
        find_marked(&vb.body, &defs, &mut out, 0);
    }
    out.sort_by_key(|d: &Diagnostic| (d.span.file, d.span.start));
    out.dedup_by_key(|d| d.span);
    out
}

fn collect_defs<'a>(decs: &'a [Dec], defs: &mut HashMap<NodeId, &'a ValBind>) {
    for d in decs {
        match d {
            Dec::Val(vb) => {
                defs.insert(vb.id, vb);
            }
            Dec::Local(d, _) => collect_defs(std::slice::from_ref(d), defs),
            Dec::Module(m) => {
                if let ModExp::Struct(ds, _) = &m.body {
                    collect_defs(ds, defs);
                }
            }
            _ => {}
        }
    }
}

fn is_warn_safety(a: &Attr) -> bool {
    let t: String = a.text.chars().filter(|c| !c.is_whitespace()).collect();
    t == "warn(safety_checks)"
}

/// Finds the marked expressions inside `e`.
fn find_marked(
    e: &Expr,
    defs: &HashMap<NodeId, &ValBind>,
    out: &mut Vec<Diagnostic>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if let ExprKind::Attr(a, x) = &e.kind {
        if is_warn_safety(a) {
            let mut seen = HashSet::new();
            checks_in(x, a.span, defs, &mut seen, out, 0);
        }
    }
    for_each_child(e, &mut |c| find_marked(c, defs, out, depth + 1));
}

/// Warns for each safety check in `e` (marked by the attribute at
/// `marked`), following calls of top-level functions once each.
fn checks_in(
    e: &Expr,
    marked: Span,
    defs: &HashMap<NodeId, &ValBind>,
    seen: &mut HashSet<NodeId>,
    out: &mut Vec<Diagnostic>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let what = match &e.kind {
        ExprKind::Index(_, idx) if idx.iter().any(|d| !is_constant_full_slice(d)) => {
            Some("an index or slice is checked against the array's bounds")
        }
        ExprKind::LetWith { indices, .. } | ExprKind::Update { indices, .. }
            if !indices.is_empty() =>
        {
            Some("an in-place update is checked against the array's bounds")
        }
        _ => None,
    };
    if let Some(what) = what {
        out.push(
            Diagnostic::new(
                DiagnosticKind::Warning,
                e.span,
                format!("Safety check required at run time: {what}."),
            )
            .with_label(marked, "in code marked #[warn(safety_checks)]"),
        );
    }
    if let ExprKind::Var {
        res: Some(Res::Global(id)),
        ..
    } = &e.kind
    {
        if let Some(vb) = defs.get(id) {
            if seen.insert(*id) {
                checks_in(&vb.body, marked, defs, seen, out, depth + 1);
            }
        }
    }
    for_each_child(e, &mut |c| checks_in(c, marked, defs, seen, out, depth + 1));
}

/// `xs[:]`: a slice of the whole dimension needs no check.
fn is_constant_full_slice(d: &DimIndex) -> bool {
    matches!(
        d,
        DimIndex::Slice {
            start: None,
            end: None,
            stride: None
        }
    )
}
