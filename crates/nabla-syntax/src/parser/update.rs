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

/// The update of `src` at `path` with `value`, spanning `span`.
pub(super) fn update_expr(src: Expr, mut path: Vec<PathStep>, value: Expr, span: Span) -> Expr {
    // Leading fields form one record path, leading fixed index groups one
    // group of indices (`xss[0][1]` is `xss[0, 1]`).
    let rest;
    let head = match path.first() {
        Some(PathStep::Field(_)) => {
            let n = path
                .iter()
                .take_while(|s| matches!(s, PathStep::Field(_)))
                .count();
            rest = path.split_off(n);
            let fields = path
                .into_iter()
                .map(|s| match s {
                    PathStep::Field(f) => f,
                    PathStep::Index(..) => unreachable!("only fields were taken"),
                })
                .collect();
            Head::Fields(fields)
        }
        Some(PathStep::Index(..)) => {
            let mut steps = path.into_iter();
            let Some(PathStep::Index(mut indices, _)) = steps.next() else {
                unreachable!("the first step is an index group")
            };
            let mut others: Vec<PathStep> = steps.collect();
            while all_fixed(&indices) {
                match others.first() {
                    Some(PathStep::Index(..)) => {
                        let PathStep::Index(more, _) = others.remove(0) else {
                            unreachable!("matched an index group")
                        };
                        indices.extend(more);
                    }
                    _ => break,
                }
            }
            rest = others;
            Head::Indices(indices)
        }
        None => return value,
    };
    if rest.is_empty() {
        return head.update(src, value, span);
    }
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
    /// `src with head = value`.
    fn update(self, src: Expr, value: Expr, span: Span) -> Expr {
        let (src, value) = (Box::new(src), Box::new(value));
        let kind = match self {
            Head::Fields(path) => ExprKind::RecordUpdate { src, path, value },
            Head::Indices(indices) => ExprKind::Update {
                src,
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
