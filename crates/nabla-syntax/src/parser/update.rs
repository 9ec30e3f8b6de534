//! Update paths: `e with p = v` and `let x p = v`, where the path `p` mixes
//! record fields and indices (`xs with [0].f = v`, `let r.a[i] = v`,
//! `x with 0[1] = v`), as in Futhark.
//!
//! A path of fields only is a [`ExprKind::RecordUpdate`], one group of
//! indices an [`ExprKind::Update`]; a mixed path is desugared into nested
//! updates, each updating one part with the update of the part below it:
//! `s with [i].f = v` is `s with [i] = (copy s[i] with f = v)`. A source that is
//! not a variable is bound to a name first, so it is evaluated (and
//! consumed) once.

use super::{mk, mkpat, PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;
use crate::span::Span;

/// One step of an update path.
pub(super) enum PathStep {
    /// `.f` (or the first `f` right after `with`).
    Field(Ident),
    /// `[i, j]`, with the span of the brackets.
    Index(Vec<DimIndex>, Span),
}

impl PathStep {
    fn span(&self) -> Span {
        match self {
            PathStep::Field(f) => f.span,
            PathStep::Index(_, s) => *s,
        }
    }
}

impl Parser<'_> {
    /// Parses an update path after `with` (`after_let`: false; a first
    /// field is written `f`) or after the variable of a `let` (true; `.f`):
    /// steps `.f` and `[…]` up to the `=`. Errors: a step that is neither.
    pub(super) fn update_path(&mut self, after_let: bool) -> PResult<Vec<PathStep>> {
        let mut steps = Vec::new();
        loop {
            let first = steps.is_empty();
            match self.peek() {
                Tok::LBracket { index } if first || *index => {
                    let open = self.bump().span;
                    let indices = self.dim_indices(open)?;
                    let close = self.prev_span();
                    steps.push(PathStep::Index(indices, open.to(close)));
                }
                Tok::Dot if !first || after_let => {
                    self.bump();
                    steps.push(PathStep::Field(self.field_id()?));
                }
                _ if first => steps.push(PathStep::Field(self.field_id()?)),
                _ => break,
            }
        }
        Ok(steps)
    }
}

/// Whether an index group selects one element in every dimension (no
/// slices), so that a following group can be merged into it.
fn all_fixed(indices: &[DimIndex]) -> bool {
    indices.iter().all(|d| matches!(d, DimIndex::Fix(_)))
}

/// Splits the first part off an update path: its leading fields form one
/// record path, its leading fixed index groups one group of indices
/// (`xss[0][1]` is `xss[0, 1]`); `None` for an empty path.
fn split_head(path: Vec<PathStep>) -> Option<(Head, Vec<PathStep>)> {
    let mut steps = path.into_iter().peekable();
    match steps.next()? {
        PathStep::Field(f) => {
            let mut fields = vec![f];
            while let Some(PathStep::Field(_)) = steps.peek() {
                if let Some(PathStep::Field(f)) = steps.next() {
                    fields.push(f);
                }
            }
            Some((Head::Fields(fields), steps.collect()))
        }
        PathStep::Index(mut indices, _) => {
            while all_fixed(&indices) && matches!(steps.peek(), Some(PathStep::Index(..))) {
                if let Some(PathStep::Index(more, _)) = steps.next() {
                    indices.extend(more);
                }
            }
            Some((Head::Indices(indices), steps.collect()))
        }
    }
}

/// The update of `src` at `path` with `value`, spanning `span`.
pub(super) fn update_expr(src: Expr, path: Vec<PathStep>, value: Expr, span: Span) -> Expr {
    let Some((head, rest)) = split_head(path) else {
        return value;
    };
    if rest.is_empty() {
        return head.update(src, value, span);
    }
    // Fields then indices: an in-place update of the array in the field
    // (`r with a.b[i] = v`).
    let (head, rest) = match (head, rest.first()) {
        (Head::Fields(fields), Some(PathStep::Index(..))) => {
            match split_head(rest) {
                Some((Head::Indices(indices), more)) if more.is_empty() => {
                    return mk(
                        ExprKind::Update {
                            src: Box::new(src),
                            path: fields,
                            indices,
                            value: Box::new(value),
                        },
                        span,
                    );
                }
                Some((inner, more)) => {
                    // Put the steps back: the general case below.
                    let mut steps: Vec<PathStep> = inner.into_steps(span);
                    steps.extend(more);
                    (Head::Fields(fields), steps)
                }
                None => (Head::Fields(fields), vec![]),
            }
        }
        (head, _) => (head, rest),
    };
    // A mixed path: update the part `head` selects with the rest of the path.
    let (bound, var) = match &src.kind {
        ExprKind::Var { .. } => (None, src),
        _ => {
            let name = format!("with_source@{}", src.span.start);
            let ident = Ident {
                name: name.clone(),
                span: src.span,
            };
            let var = variable(&name, src.span);
            (Some((ident, src)), var)
        }
    };
    let rest_span = rest.first().map_or(span, |s| s.span().to(value.span));
    // The element an index selects is copied before its own update: it
    // aliases the source, which the outer update consumes. (The outer
    // update writes the whole element anyway, so the copy costs no more.)
    let part = match head {
        Head::Fields(_) => head.select(var.clone()),
        Head::Indices(_) => copy_of(head.select(var.clone())),
    };
    let inner = update_expr(part, rest, value, rest_span);
    let update = head.update(var, inner, span);
    match bound {
        None => update,
        Some((ident, src)) => {
            let pat_span = ident.span;
            mk(
                ExprKind::LetPat {
                    sizes: vec![],
                    pat: mkpat(PatKind::Id(ident), pat_span),
                    value: Box::new(src),
                    body: Box::new(update),
                },
                span,
            )
        }
    }
}

/// The first part of an update path: a record path or one index group.
enum Head {
    Fields(Vec<Ident>),
    Indices(Vec<DimIndex>),
}

impl Head {
    /// The head as path steps again.
    fn into_steps(self, span: Span) -> Vec<PathStep> {
        match self {
            Head::Fields(fs) => fs.into_iter().map(PathStep::Field).collect(),
            Head::Indices(indices) => vec![PathStep::Index(indices, span)],
        }
    }

    /// `src with head = value`.
    fn update(self, src: Expr, value: Expr, span: Span) -> Expr {
        let (src, value) = (Box::new(src), Box::new(value));
        let kind = match self {
            Head::Fields(path) => ExprKind::RecordUpdate { src, path, value },
            Head::Indices(indices) => ExprKind::Update {
                src,
                path: vec![],
                indices,
                value,
            },
        };
        mk(kind, span)
    }

    /// The part of `e` the head selects (`e.a.b`, `e[i, j]`).
    fn select(&self, e: Expr) -> Expr {
        match self {
            Head::Fields(path) => path.iter().fold(e, |e, f| {
                let span = e.span.to(f.span);
                mk(ExprKind::Project(Box::new(e), f.clone()), span)
            }),
            Head::Indices(indices) => {
                let span = e.span;
                mk(ExprKind::Index(Box::new(e), indices.clone()), span)
            }
        }
    }
}

/// `intrinsics.copy e` (a name no program can shadow).
fn copy_of(e: Expr) -> Expr {
    let span = e.span;
    let copy = mk(
        ExprKind::Var {
            name: QualName {
                quals: vec!["intrinsics".to_string()],
                name: "copy".to_string(),
                span,
            },
            res: None,
            inst: vec![],
        },
        span,
    );
    mk(ExprKind::Apply(Box::new(copy), vec![e]), span)
}

/// A reference to the local variable `name`.
pub(super) fn variable(name: &str, span: Span) -> Expr {
    mk(
        ExprKind::Var {
            name: QualName {
                quals: vec![],
                name: name.to_string(),
                span,
            },
            res: None,
            inst: vec![],
        },
        span,
    )
}
