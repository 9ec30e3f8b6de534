//! Futhark's causality check: a value whose type mentions an unknown size
//! may only be used once that size has been computed.
//!
//! An unknown size (`d₃`, see [`crate::unify::Unknown`]) is the length of an
//! array that only running an expression tells: the result of `filter`, a
//! range with unknown bounds, a loop parameter whose size changes across
//! iterations. Inference may give that name to the types of expressions that
//! are *evaluated before* the expression producing it, for example the
//! operator section in `([1] ++) <| loop xs = [] for … do xs ++ xs` or the
//! empty array in `if b then filter p xs else []`. Such a program cannot be
//! run, because the array or function would need a size that does not yet
//! exist. Futhark rejects it with "Causality check" (error index
//! `causality-check` of Futhark's type checker, `causalityCheck` in
//! `Language.Futhark.TypeChecker.Terms`), and so do we.
//!
//! The check walks a definition's checked body in evaluation order, keeping
//! the set of unknown sizes computed so far:
//! - an application evaluates its arguments from the last to the first, then
//!   the function; a binary operator its left operand, then its right one;
//! - `let` evaluates the bound value before the body, `match` the scrutinee
//!   before the cases;
//! - sizes computed inside a lambda's body stay there;
//! - the branches of `if`/`match` and the parts of other expressions see
//!   only what was computed before the whole expression;
//! - an expression's own unknown sizes (made at its span: an application's
//!   existential result, a range, a slice, `if` branches of differing
//!   sizes, a loop's varying sizes) are computed after all of its parts; a
//!   loop's own sizes are in scope in its body (the loop parameters have
//!   them).
//!
//! What is checked against the set: the types of variables, operator and
//! projection sections, empty array literals, lambda parameters and
//! constructor applications, as Futhark checks them.

use std::collections::{HashMap, HashSet};

use nabla_syntax::ast::{Expr, ExprKind, LoopForm, Pat, PatKind, Res};
use nabla_syntax::types::Type;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};

use crate::unify::collect_size_names;

type Name = String;

/// Checks the body of one top-level definition. `unknowns` maps each
/// unknown size made while checking the definition to the span of the
/// expression producing it.
///
/// Errors: "Causality check: size "d" needed for type of …", at the use,
/// with a label at the expression that computes the size.
pub(crate) fn check(
    params: &[Pat],
    body: &Expr,
    unknowns: &HashMap<Name, Span>,
) -> Result<(), Diagnostic> {
    if unknowns.is_empty() {
        return Ok(());
    }
    let mut by_span: HashMap<Span, Vec<Name>> = HashMap::new();
    for (n, s) in unknowns {
        by_span.entry(*s).or_default().push(n.clone());
    }
    let walker = Walker { unknowns, by_span };
    walker.expr(body, &param_sizes(params)).map(|_| ())
}

struct Walker<'a> {
    unknowns: &'a HashMap<Name, Span>,
    /// The unknown sizes made by the expression at each span.
    by_span: HashMap<Span, Vec<Name>>,
}

type Known = HashSet<Name>;

impl Walker<'_> {
    /// The unknown sizes `e` computes, given those computed before it.
    fn expr(&self, e: &Expr, known: &Known) -> Result<Known, Diagnostic> {
        let mut new = Known::new();
        match &e.kind {
            ExprKind::Var { name, res, .. } => {
                let what = format!("\"{name}\"");
                match res {
                    // A hole stands for a value of its whole type.
                    Some(Res::Intrinsic(n)) if n == "???" => {
                        self.require(e.ty.as_ref(), known, &what, e.span)?;
                    }
                    // A function's arguments must exist before the call;
                    // the sizes of what it returns come with the call.
                    Some(Res::Global(_) | Res::Intrinsic(_)) => {
                        if let Some(t) = &e.ty {
                            let mut inputs = Vec::new();
                            input_types(t, &mut inputs);
                            for i in inputs {
                                self.require(Some(i), known, &what, e.span)?;
                            }
                        }
                    }
                    // A local variable's value is computed before its
                    // uses; its type's sizes may only look later because
                    // our inference lets a parameter's inferred size, or a
                    // local function's result size, take an unknown size
                    // (where Futhark keeps them rigid or existential).
                    _ => {}
                }
            }
            ExprKind::OpSectionLeft { .. }
            | ExprKind::OpSectionRight { .. }
            | ExprKind::ProjSection(_) => {
                let what = if matches!(e.kind, ExprKind::ProjSection(_)) {
                    "projection section"
                } else {
                    "operator section"
                };
                self.require(e.ty.as_ref(), known, what, e.span)?;
                self.children(e, known, &mut new)?;
            }
            ExprKind::ArrayLit(xs) if xs.is_empty() => {
                self.require(e.ty.as_ref(), known, "empty array", e.span)?;
            }
            ExprKind::Lambda { params, body, .. } => {
                for p in params {
                    self.require(p.ty.as_ref(), known, &describe_param(p), p.span)?;
                }
                // Sizes computed in the body are not known outside it.
                self.expr(body, known)?;
            }
            ExprKind::LetPat { value, body, .. } => {
                let first = self.expr(value, known)?;
                let then = self.expr(body, &union(known, &first))?;
                new.extend(first);
                new.extend(then);
            }
            ExprKind::Match { scrutinee, cases } => {
                let first = self.expr(scrutinee, known)?;
                let inner = union(known, &first);
                for c in cases {
                    new.extend(self.expr(&c.body, &inner)?);
                }
                new.extend(first);
            }
            ExprKind::Apply(f, args) => {
                let mut inner = known.clone();
                for a in args.iter().rev() {
                    let computed = self.expr(a, &inner)?;
                    inner.extend(computed.iter().cloned());
                    new.extend(computed);
                }
                new.extend(self.expr(f, &inner)?);
            }
            ExprKind::Constr(c, args) => {
                let mut inner = known.clone();
                for a in args {
                    let computed = self.expr(a, &inner)?;
                    inner.extend(computed.iter().cloned());
                    new.extend(computed);
                }
                self.require(e.ty.as_ref(), &inner, &format!("\"#{}\"", c.name), e.span)?;
            }
            ExprKind::LetFun {
                params,
                value,
                body,
                ..
            } => {
                new.extend(self.expr(value, &union(known, &param_sizes(params)))?);
                new.extend(self.expr(body, known)?);
            }
            ExprKind::BinOp { lhs, rhs, .. } => {
                let first = self.expr(lhs, known)?;
                let second = self.expr(rhs, &union(known, &first))?;
                new.extend(first);
                new.extend(second);
            }
            ExprKind::Loop {
                init, form, body, ..
            } => {
                // The initial value and the loop's bounds are computed before
                // the body runs; the loop parameters have the loop's own
                // sizes (or the initial value's, where they keep them).
                if let Some(i) = init {
                    new.extend(self.expr(i, known)?);
                }
                match form {
                    LoopForm::For(_, bound) => new.extend(self.expr(bound, known)?),
                    LoopForm::ForIn(_, array) => new.extend(self.expr(array, known)?),
                    LoopForm::While(_) => {}
                }
                let inside = union(&union(known, &new), &self.own(e));
                if let LoopForm::While(c) = form {
                    new.extend(self.expr(c, &inside)?);
                }
                new.extend(self.expr(body, &inside)?);
            }
            _ => self.children(e, known, &mut new)?,
        }
        new.extend(self.own(e));
        Ok(new)
    }

    /// Walks the parts of `e`, each seeing only what was computed before
    /// `e`, and adds what they compute to `new`.
    fn children(&self, e: &Expr, known: &Known, new: &mut Known) -> Result<(), Diagnostic> {
        let mut r = Ok(());
        crate::recursion::for_each_child(e, &mut |c| {
            if r.is_ok() {
                match self.expr(c, known) {
                    Ok(k) => new.extend(k),
                    Err(d) => r = Err(d),
                }
            }
        });
        r
    }

    /// The unknown sizes made by `e` itself.
    fn own(&self, e: &Expr) -> Known {
        self.by_span
            .get(&e.span)
            .map(|ns| ns.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Fails if `ty` mentions an unknown size not in `known`.
    fn require(
        &self,
        ty: Option<&Type>,
        known: &Known,
        what: &str,
        at: Span,
    ) -> Result<(), Diagnostic> {
        let Some(t) = ty else { return Ok(()) };
        let mut names = Vec::new();
        collect_size_names(t, &mut names);
        for n in names {
            if known.contains(&n) {
                continue;
            }
            if let Some(made) = self.unknowns.get(&n) {
                return Err(Diagnostic::new(
                    DiagnosticKind::Type,
                    at,
                    format!(
                        "Causality check: size \"{n}\" needed for type of {what}: `{t}`, but \"{n}\" is computed later, by the expression it is the size of. Hint: bind the expression producing \"{n}\" with `let` beforehand (causality-check)."
                    ),
                )
                .with_label(*made, format!("\"{n}\" is computed here")));
            }
        }
        Ok(())
    }
}

/// The types a value of type `t` needs as inputs: for a function, its
/// parameter types (for a function-typed parameter, that function's own
/// inputs, not its result), then the inputs of its result; nothing for a
/// value that is not a function.
fn input_types<'t>(t: &'t Type, out: &mut Vec<&'t Type>) {
    if let Type::Arrow { param, ret, .. } = t {
        match param.as_ref() {
            Type::Arrow { .. } => input_types(param, out),
            p => out.push(p),
        }
        input_types(ret, out);
    }
}

/// The sizes in the types of a function's parameters: known when its body
/// runs. (Our inference may give a parameter's inferred size, `[]` in its
/// type, the name of an unknown size made in the body; Futhark keeps it a
/// size parameter.)
fn param_sizes(params: &[Pat]) -> Known {
    let mut names = Vec::new();
    for p in params {
        if let Some(t) = &p.ty {
            collect_size_names(t, &mut names);
        }
    }
    names.into_iter().collect()
}

fn union(a: &Known, b: &Known) -> Known {
    a.union(b).cloned().collect()
}

fn describe_param(p: &Pat) -> String {
    match &p.kind {
        PatKind::Id(x) => format!("parameter \"{}\"", x.name),
        PatKind::Ascribe(inner, _) => describe_param(inner),
        _ => "a lambda parameter".to_string(),
    }
}
