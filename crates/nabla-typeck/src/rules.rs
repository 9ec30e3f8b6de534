//! Static rules of Futhark that are not part of type inference proper, run on
//! each top-level definition once its types are known (after `check`, before
//! the consumption check of `consume`).
//!
//! Each rule follows the Futhark language reference (and the compiler's error
//! index) and is drawn no stricter than Futhark draws it:
//!
//! - **Duplicate names**: a size parameter or a type parameter may not be
//!   bound twice in the same parameter list (`def f [n] [n] …`,
//!   `def f 'a 'a …`), nor a size twice in `let [n] [n] …`. (Duplicate
//!   value names in one pattern or parameter list are found during
//!   inference.)
//! - **`_`-names**: a name beginning with an underscore may be bound but
//!   never used in an expression.
//! - **Unused sizes** (error index "unused-size"): every size parameter of a
//!   function, and every size bound by `let [n] p = e` or `loop [n] p = …`,
//!   must be the size of something in the parameters (the pattern), since
//!   that is where its value comes from at run time. A size that appears
//!   only in the result type (`def f [n] (x: i32) : [n]i32`) is rejected.
//!   One used only inside a function-typed parameter is accepted, as Futhark
//!   does (it is ambiguous only at uses that do not fix it). An entry
//!   point's size parameters must be used directly as array sizes (not only
//!   inside `[n+1]`), and a size bound by `?[n].t` must be the size of an
//!   array outside function types ("unused-existential").
//! - **Entry points** may not be polymorphic ("polymorphic-entry").
//! - **Higher-order restrictions** (section "Higher-order functions"):
//!   functions may not be returned from the branches of `if` or `match`,
//!   loop parameters may not be (or contain) functions, and entry points may
//!   neither take nor return functions ("higher-order-entry"). An entry
//!   point defined as a function value (`entry f = g`, `def main (x: i32) =
//!   plus x`) is first-order when the parameters and result of its type are:
//!   it takes the remaining parameters of that type (the elaborator
//!   eta-expands it). A lifted type parameter (`'^a`) is treated as a
//!   function type, as Futhark does. (Arrays of functions, and functions as
//!   instances of unlifted type parameters `'a`, are rejected during
//!   inference: "found to be functional".)
//! - **Exhaustiveness** (error index "unmatched-cases"): the cases of a
//!   `match` must cover every value of the scrutinee's type; the error shows
//!   one value that no case matches. Patterns of `let`, parameters and loops
//!   must be irrefutable (a constructor or literal pattern there must be the
//!   only possible value).

use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::HashSet;

type R<T> = Result<T, Diagnostic>;

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, msg)
}

/// Maximum expression nesting the rules follow (inference already bounds it).
const MAX_DEPTH: usize = 20000;

/// How many steps the exhaustiveness search may take for one pattern set;
/// past it the patterns are accepted (the search is exponential only on
/// contrived inputs).
const EXHAUSTIVENESS_BUDGET: usize = 200_000;

/// Checks the rules of this module on one type-checked top-level definition.
/// Errors: the first violation, at the offending code.
/// `entry`: whether the definition is an entry point (an `entry`, or the
/// main file's `def main` where no entry point is named `main`).
pub(crate) fn check_valbind(vb: &ValBind, entry: bool) -> R<()> {
    let mut cx = Rules {
        lifted: Vec::new(),
        depth: 0,
    };
    if vb.name.name == "&&" || vb.name.name == "||" {
        return Err(err(
            vb.name.span,
            format!(
                "The operator `{}` cannot be defined: it is built in, and short-circuiting",
                vb.name.name
            ),
        ));
    }
    check_duplicate_type_params(&vb.type_params)?;
    check_sizes_vs_params(&vb.type_params, &vb.params)?;
    let mark = cx.push_lifted(&vb.type_params);
    if entry {
        cx.entry_point(vb)?;
        entry_accumulators(vb)?;
    }
    check_sizes_used(
        &vb.type_params,
        &vb.params,
        vb.ret.as_ref(),
        "function",
        entry,
    )?;
    for p in &vb.params {
        cx.irrefutable(p, "a function parameter")?;
    }
    cx.expr(&vb.body)?;
    cx.lifted.truncate(mark);
    Ok(())
}

/// An entry point may neither take nor return accumulators
/// (`intrinsics.acc`): they exist only inside the stream that made them.
fn entry_accumulators(vb: &ValBind) -> R<()> {
    fn has_acc(t: &Type) -> bool {
        match t {
            Type::Acc { .. } => true,
            Type::Array { elem, .. } => has_acc(elem),
            Type::Record(fs) => fs.iter().any(|(_, t)| has_acc(t)),
            Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(has_acc),
            Type::Arrow { param, ret, .. } => has_acc(param) || has_acc(ret),
            Type::Prim(_) | Type::Param(_) | Type::Var(_) => false,
        }
    }
    let msg = |what: &str| {
        format!(
            "the entry point `{}` {what} an accumulator, but accumulators exist only inside the `scatter_stream` or `hist_stream` that makes them",
            vb.name.name
        )
    };
    if let Some(p) = vb
        .params
        .iter()
        .find(|p| p.ty.as_ref().is_some_and(has_acc))
    {
        return Err(err(p.span, msg("takes")));
    }
    if vb.ty.as_ref().is_some_and(has_acc) {
        let span = vb.ret.as_ref().map_or(vb.name.span, |te| te.span());
        return Err(err(span, msg("returns")));
    }
    Ok(())
}

/// Checks the parameters of a type abbreviation (`type t 'a [n] = …`) for
/// duplicates.
pub(crate) fn check_typebind(tb: &TypeBind) -> R<()> {
    check_duplicate_type_params(&tb.params)
}

/// A size parameter and a value parameter (or a name the `let` pattern
/// binds) may not share a name: Futhark's "also bound" (`def f [m] (m:
/// [m]i64)`, `let [n] (n: [n]i32) = x`).
fn check_sizes_vs_params(tps: &[TypeParam], params: &[Pat]) -> R<()> {
    let mut names = vec![];
    for p in params {
        crate::recursion::pat_names(p, &mut names);
    }
    for tp in tps {
        if let TypeParam::Size(i) = tp {
            if names.contains(&i.name) {
                return Err(err(
                    i.span,
                    format!(
                        "`{}` is a size parameter and is also bound as a parameter; rename one of them",
                        i.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Size parameters and type parameters live in different name spaces, so a
/// size and a type parameter may share a name; two of the same kind may not.
fn check_duplicate_type_params(tps: &[TypeParam]) -> R<()> {
    let mut sizes: Vec<&Ident> = Vec::new();
    let mut types: Vec<&Ident> = Vec::new();
    for tp in tps {
        let (seen, id, what) = match tp {
            TypeParam::Size(i) => (&mut sizes, i, "size parameter"),
            TypeParam::Type(i, _) => (&mut types, i, "type parameter"),
        };
        if let Some(first) = seen.iter().find(|s| s.name == id.name) {
            return Err(err(
                id.span,
                format!(
                    "the {what} `{}` is also bound earlier in the same parameter list; rename one of them",
                    id.name
                ),
            )
            .with_label(first.span, "first bound here"));
        }
        seen.push(id);
    }
    Ok(())
}

/// Error index "unused-size": each size parameter must be the size of some
/// parameter (named in a parameter's type annotation or inferred into its
/// type), or, except for an entry point, be named in the declared result type
/// `ret` (then each call takes it from the type the context gives the result,
/// as for the prelude's `rep [n] (x: t): *[n]t`); otherwise no value can be
/// given to it when the function is called.
///
/// For an entry point (`constructive`), the size must be used directly as
/// the size of an array parameter (error index "nonconstructive-entry"): a
/// use only inside a size expression such as `[n+1]` does not count, since
/// the caller outside the program cannot solve it for `n`.
fn check_sizes_used(
    tps: &[TypeParam],
    params: &[Pat],
    ret: Option<&TypeExp>,
    what: &str,
    constructive: bool,
) -> R<()> {
    for tp in tps {
        let TypeParam::Size(n) = tp else { continue };
        if !constructive && ret.is_some_and(|t| typeexp_mentions_size(t, &n.name, false)) {
            continue;
        }
        if constructive
            && params.iter().any(|p| pat_mentions_size(p, &n.name, false))
            && !params.iter().any(|p| pat_mentions_size(p, &n.name, true))
        {
            return Err(err(
                n.span,
                format!(
                    "Entry point size parameter `[{0}]` only used non-constructively: it is used only inside a size expression, not directly as the size of an array parameter, so it cannot be determined from the arguments; use `[{0}]` directly (and coerce with `:>` in the body), or pass `{0}` as an ordinary parameter",
                    n.name
                ),
            ));
        }
        if !params.iter().any(|p| pat_mentions_size(p, &n.name, false)) {
            let fix = if params.len() == 1 && !what.contains("function") {
                format!(
                    "use `{}` in the pattern's type annotation, or drop it",
                    n.name
                )
            } else {
                format!(
                    "use `{0}` in a parameter's type, or make it an ordinary parameter `({0}: i64)`",
                    n.name
                )
            };
            if params.is_empty() && what.contains("function") {
                return Err(err(
                    n.span,
                    format!(
                        "Size parameter `[{0}]` on a size-polymorphic value binding: a definition without parameters cannot have size parameters, as nothing could give `{0}` a value; make `{0}` an ordinary parameter `({0}: i64)`",
                        n.name
                    ),
                ));
            }
            return Err(err(
                n.span,
                format!(
                    "Size [{0}] unused in a parameter: the size parameter `[{0}]` is not the size of any parameter of this {what}, so its value can never be known; {fix}",
                    n.name
                ),
            ));
        }
    }
    Ok(())
}

/// Whether the pattern's type (as inferred, or as annotated) refers to the
/// size `n`.
/// With `direct`, only a use as a whole array size counts.
fn pat_mentions_size(p: &Pat, n: &str, direct: bool) -> bool {
    if p.ty
        .as_ref()
        .is_some_and(|t| type_mentions_size(t, n, direct))
    {
        return true;
    }
    match &p.kind {
        PatKind::Ascribe(q, te) => {
            typeexp_mentions_size(te, n, direct) || pat_mentions_size(q, n, direct)
        }
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
            ps.iter().any(|q| pat_mentions_size(q, n, direct))
        }
        PatKind::Record(fs) => fs.iter().any(|(_, q)| pat_mentions_size(q, n, direct)),
        PatKind::Id(_) | PatKind::Wildcard | PatKind::Lit(_) => false,
    }
}

/// The parameter types of the function type that a definition returns
/// beyond its written parameters (an entry point defined as a function
/// value takes them too).
fn arrow_params(vb: &ValBind) -> impl Iterator<Item = &Type> {
    let mut t = vb.ty.as_ref();
    for _ in &vb.params {
        t = match t {
            Some(Type::Arrow { ret, .. }) => Some(&**ret),
            _ => None,
        };
    }
    std::iter::from_fn(move || match t {
        Some(Type::Arrow { param, ret, .. }) => {
            t = Some(&**ret);
            Some(&**param)
        }
        _ => None,
    })
}

/// The type a definition returns once applied to all of its parameters,
/// the written ones and those of the function type it returns.
fn final_result(vb: &ValBind) -> Option<&Type> {
    let mut t = vb.ty.as_ref();
    for _ in &vb.params {
        t = match t {
            Some(Type::Arrow { ret, .. }) => Some(&**ret),
            _ => None,
        };
    }
    while let Some(Type::Arrow { ret, .. }) = t {
        t = Some(&**ret);
    }
    t
}

/// Whether a type mentions a type parameter (declared or generalised).
fn mentions_type_param(t: &Type) -> bool {
    let mut found = matches!(t, Type::Param(_));
    t.for_each_child(|c| found = found || mentions_type_param(c));
    found
}

/// Whether `t` refers to the size `n` (with `direct`, only as a whole
/// array size, not inside a size expression).
fn type_mentions_size(t: &Type, n: &str, direct: bool) -> bool {
    let go = |t: &Type| type_mentions_size(t, n, direct);
    match t {
        Type::Array { elem, shape, .. } => {
            shape.iter().any(|s| match s {
                Size::Var(v) => v == n,
                s => !direct && s.mentions(n),
            }) || go(elem)
        }
        Type::Record(fs) => fs.iter().any(|(_, t)| go(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(go),
        Type::Arrow { param, ret, .. } => go(param) || go(ret),
        Type::Acc { arr, .. } => go(arr),
        Type::Prim(_) | Type::Param(_) | Type::Var(_) => false,
    }
}

fn typeexp_mentions_size(te: &TypeExp, n: &str, direct: bool) -> bool {
    let size = |s: &SizeExp| match s {
        SizeExp::Any(_) => false,
        SizeExp::Expr(e) if direct => {
            matches!(&e.kind, ExprKind::Var { name, .. } if name.quals.is_empty() && name.name == n)
        }
        SizeExp::Expr(e) => expr_names(e, n),
    };
    match te {
        TypeExp::Prim(..) => false,
        TypeExp::Named(_, args, _) => args.iter().any(|a| match a {
            TypeArg::Size(s) => size(s),
            TypeArg::Type(t) => typeexp_mentions_size(t, n, direct),
        }),
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| typeexp_mentions_size(t, n, direct)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| typeexp_mentions_size(t, n, direct)),
        TypeExp::Array(s, t, _) => size(s) || typeexp_mentions_size(t, n, direct),
        TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => typeexp_mentions_size(t, n, direct),
        TypeExp::Arrow(_, a, b, _) => {
            typeexp_mentions_size(a, n, direct) || typeexp_mentions_size(b, n, direct)
        }
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| typeexp_mentions_size(t, n, direct)),
    }
}

/// Error index "unused-existential": each size bound by `?[n].t` must be
/// used *constructively* in `t`, as the size of an array that is not inside
/// a function type (a function does not carry the sizes of its parameter or
/// result at run time, so `n` could never be read from it).
pub(crate) fn check_existentials_used(names: &[Ident], t: &TypeExp) -> R<()> {
    for n in names {
        if !typeexp_sizes_constructively(t, &n.name) {
            return Err(err(
                n.span,
                format!(
                    "Existential size \"{0}\" is not used as the size of an array (outside function types), so its value could never be known; use it, e.g. with a witness array of type `[{0}]()`, or drop it",
                    n.name
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `n` is the size of an array in `t`, outside function types.
fn typeexp_sizes_constructively(t: &TypeExp, n: &str) -> bool {
    match t {
        TypeExp::Arrow(..) | TypeExp::Prim(..) => false,
        TypeExp::Array(s, elem, _) => {
            matches!(s, SizeExp::Expr(e) if expr_names(e, n))
                || typeexp_sizes_constructively(elem, n)
        }
        TypeExp::Named(_, args, _) => args.iter().any(|a| match a {
            TypeArg::Size(SizeExp::Expr(e)) => expr_names(e, n),
            TypeArg::Size(SizeExp::Any(_)) => false,
            TypeArg::Type(t) => typeexp_sizes_constructively(t, n),
        }),
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| typeexp_sizes_constructively(t, n)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| typeexp_sizes_constructively(t, n)),
        TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => typeexp_sizes_constructively(t, n),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| typeexp_sizes_constructively(t, n)),
    }
}

/// Whether a size expression is (or, through parentheses, contains) the
/// plain name `n`.
fn expr_names(e: &Expr, n: &str) -> bool {
    match &e.kind {
        ExprKind::Var { name, .. } => name.quals.is_empty() && name.name == n,
        ExprKind::Parens(x) => expr_names(x, n),
        ExprKind::BinOp { lhs, rhs, .. } => expr_names(lhs, n) || expr_names(rhs, n),
        _ => false,
    }
}

/// Whether values of type `t` are, or contain, functions (Futhark's
/// "order > 0"); a lifted type parameter counts as a function type.
pub(crate) fn is_higher_order(t: &Type, lifted: &[Name]) -> bool {
    match t {
        Type::Arrow { .. } => true,
        Type::Param(p) => lifted.contains(p),
        Type::Array { elem, .. } => is_higher_order(elem, lifted),
        Type::Record(fs) => fs.iter().any(|(_, t)| is_higher_order(t, lifted)),
        Type::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| is_higher_order(t, lifted)),
        Type::Acc { arr, .. } => is_higher_order(arr, lifted),
        Type::Prim(_) | Type::Var(_) => false,
    }
}

/// Whether a name may not be used in an expression: it begins with `_`.
fn is_underscore_name(name: &QualName) -> bool {
    name.quals.is_empty()
        && name.name.len() > 1
        && name.name.starts_with('_')
        && name
            .name
            .chars()
            .nth(1)
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\'')
}

fn underscore_error(span: Span, name: &str) -> Diagnostic {
    err(
        span,
        format!(
            "`{name}` cannot be used: names beginning with `_` mark values that are never used; rename it (e.g. to `{}`) to use it",
            name.trim_start_matches('_')
        ),
    )
}

struct Rules {
    /// The lifted type parameters (`'^a`) in scope.
    lifted: Vec<Name>,
    depth: usize,
}

impl Rules {
    fn push_lifted(&mut self, tps: &[TypeParam]) -> usize {
        let mark = self.lifted.len();
        for tp in tps {
            if let TypeParam::Type(i, Liftedness::Lifted) = tp {
                self.lifted.push(i.name.clone());
            }
        }
        mark
    }

    fn entry_point(&self, vb: &ValBind) -> R<()> {
        // Futhark (error index "polymorphic-entry"): no type parameters,
        // declared or inferred (`def main xs = xs[0]` is polymorphic).
        const POLYMORPHIC: &str = "Entry point functions may not be polymorphic";
        if let Some(TypeParam::Type(t, _)) = vb
            .type_params
            .iter()
            .find(|tp| matches!(tp, TypeParam::Type(..)))
        {
            return Err(err(
                t.span,
                format!(
                    "{POLYMORPHIC}: the entry point `{}` has the type parameter `'{}`; define one monomorphic entry point per type, each calling a polymorphic `def`",
                    vb.name.name, t.name
                ),
            ));
        }
        if let Some(t) = vb.ty.as_ref().filter(|t| mentions_type_param(t)) {
            return Err(err(
                vb.name.span,
                format!(
                    "{POLYMORPHIC}: the type of the entry point `{}`, `{t}`, is polymorphic (a parameter's type is not fully known); annotate the parameters with their types",
                    vb.name.name
                ),
            ));
        }
        // Futhark (error index "higher-order-entry"): the parameters, the
        // parameters of the function type the definition returns (an entry
        // point defined as a function value takes them too: `entry f = g`),
        // and the final result must all be first-order.
        const HIGHER_ORDER: &str = "Entry point functions may not be higher-order";
        for p in &vb.params {
            if let Some(t) = p.ty.as_ref().filter(|t| is_higher_order(t, &self.lifted)) {
                return Err(err(
                    p.span,
                    format!(
                        "{HIGHER_ORDER}: the entry point `{}` takes a function (this parameter has type `{t}`), but entry points may neither take nor return functions; make it an ordinary `def` and call it from a first-order entry point",
                        vb.name.name
                    ),
                ));
            }
        }
        let span = vb.ret.as_ref().map_or(vb.name.span, |te| te.span());
        if let Some(t) = arrow_params(vb).find(|t| is_higher_order(t, &self.lifted)) {
            return Err(err(
                span,
                format!(
                    "{HIGHER_ORDER}: the entry point `{}` is a function whose parameter of type `{t}` is a function, but entry points may neither take nor return functions",
                    vb.name.name
                ),
            ));
        }
        let ret = final_result(vb);
        if let Some(t) = ret.filter(|t| is_higher_order(t, &self.lifted)) {
            return Err(err(
                span,
                format!(
                    "{HIGHER_ORDER}: the entry point `{}` returns `{t}`, which contains a function, but entry points may neither take nor return functions; return the function's result instead",
                    vb.name.name
                ),
            ));
        }
        // Futhark ("size-polymorphic-entry"): a size parameter in the
        // result type must also be the size of a parameter (the caller
        // outside the program cannot choose it).
        let in_params = |n: &str| {
            vb.params.iter().any(|p| pat_mentions_size(p, n, false))
                || arrow_params(vb).any(|t| type_mentions_size(t, n, false))
        };
        for tp in &vb.type_params {
            if let TypeParam::Size(n) = tp {
                if ret.is_some_and(|t| type_mentions_size(t, &n.name, false)) && !in_params(&n.name)
                {
                    return Err(err(
                        n.span,
                        format!(
                            "Entry point functions must not be size-polymorphic in their return type: the size `[{0}]` of the result of `{1}` is not the size of any parameter, so the caller could not choose it; compute the result's size from the parameters (or return an array of unknown size `[]`)",
                            n.name, vb.name.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A pattern that binds without a `match` (parameters, `let`, loops)
    /// must match every value of its type.
    fn irrefutable(&self, p: &Pat, what: &str) -> R<()> {
        let Some(t) = p.ty.as_ref() else {
            return Ok(());
        };
        let mut search = Exhaustiveness {
            budget: EXHAUSTIVENESS_BUDGET,
        };
        if let Some(missing) = search.witness(vec![vec![Shape::of(p)]], std::slice::from_ref(t)) {
            return Err(err(
                p.span,
                format!(
                    "Refutable pattern not allowed here: it does not match `{}`, but {what} must match every value of its type; use `match` to distinguish the cases",
                    missing.join(" ")
                ),
            ));
        }
        Ok(())
    }

    /// `what`: "If" or "Match" (Futhark's wording: "If-expression returns
    /// type … but if-results may not be of function type").
    fn no_function_branches(&self, e: &Expr, what: &str, fix: &str) -> R<()> {
        if let Some(t) = e.ty.as_ref().filter(|t| is_higher_order(t, &self.lifted)) {
            return Err(err(
                e.span,
                format!(
                    "{what}-expression returns type `{t}`, but {}-results may not be of function type (Futhark must know statically which function is called); {fix}",
                    what.to_lowercase()
                ),
            ));
        }
        Ok(())
    }

    fn var(&self, name: &QualName, res: Option<&Res>, span: Span) -> R<()> {
        let bound = matches!(res, Some(Res::Local | Res::Size | Res::Global(_)));
        if bound && is_underscore_name(name) {
            return Err(underscore_error(span, &name.name));
        }
        Ok(())
    }

    fn dims(&mut self, idx: &[DimIndex]) -> R<()> {
        for d in idx {
            match d {
                DimIndex::Fix(x) => self.expr(x)?,
                DimIndex::Slice { start, end, stride } => {
                    for x in [start, end, stride].into_iter().flatten() {
                        self.expr(x)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> R<()> {
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            Err(err(e.span, "expression nested too deeply"))
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &Expr) -> R<()> {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::ProjSection(_) => Ok(()),
            ExprKind::OpSection { op, op_res, .. } => self.var(op, op_res.as_ref(), op.span),
            ExprKind::Var { name, res, .. } => self.var(name, res.as_ref(), e.span),
            ExprKind::Parens(x)
            | ExprKind::Attr(_, x)
            | ExprKind::Ascribe(x, _)
            | ExprKind::Coerce(x, _)
            | ExprKind::LocalOpen(_, x)
            | ExprKind::Negate(x)
            | ExprKind::Not(x)
            | ExprKind::Project(x, _) => self.expr(x),
            ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
                xs.iter().try_for_each(|x| self.expr(x))
            }
            ExprKind::Record(fs) => {
                for f in fs {
                    match f {
                        RecordField::Named(_, x) => self.expr(x)?,
                        RecordField::Pun(i) => {
                            if i.name.len() > 1 && i.name.starts_with('_') {
                                return Err(underscore_error(i.span, &i.name));
                            }
                        }
                    }
                }
                Ok(())
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start)?;
                if let Some(s) = second {
                    self.expr(s)?;
                }
                self.expr(end)
            }
            ExprKind::Index(x, idx) => {
                self.expr(x)?;
                self.dims(idx)
            }
            ExprKind::Apply(f, args) => {
                self.expr(f)?;
                args.iter().try_for_each(|x| self.expr(x))
            }
            ExprKind::BinOp {
                op,
                op_res,
                lhs,
                rhs,
                ..
            } => {
                self.var(op, op_res.as_ref(), op.span)?;
                self.expr(lhs)?;
                self.expr(rhs)
            }
            ExprKind::OpSectionLeft {
                op, op_res, lhs: x, ..
            }
            | ExprKind::OpSectionRight {
                op, op_res, rhs: x, ..
            } => {
                self.var(op, op_res.as_ref(), op.span)?;
                self.expr(x)
            }
            ExprKind::Lambda { params, body, .. } => {
                for p in params {
                    self.irrefutable(p, "a lambda parameter")?;
                }
                self.expr(body)
            }
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => {
                let tps: Vec<TypeParam> = sizes.iter().cloned().map(TypeParam::Size).collect();
                check_duplicate_type_params(&tps)?;
                check_sizes_vs_params(&tps, std::slice::from_ref(pat))?;
                check_sizes_used(
                    &tps,
                    std::slice::from_ref(pat),
                    None,
                    "`let` pattern",
                    false,
                )?;
                self.irrefutable(pat, "a `let` pattern")?;
                self.expr(value)?;
                self.expr(body)
            }
            ExprKind::LetFun {
                type_params,
                params,
                ret,
                value,
                body,
                ..
            } => {
                check_duplicate_type_params(type_params)?;
                check_sizes_vs_params(type_params, params)?;
                check_sizes_used(type_params, params, ret.as_ref(), "local function", false)?;
                let mark = self.push_lifted(type_params);
                let r = (|| {
                    for p in params {
                        self.irrefutable(p, "a function parameter")?;
                    }
                    self.expr(value)
                })();
                self.lifted.truncate(mark);
                r?;
                self.expr(body)
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                ..
            } => {
                self.dims(indices)?;
                self.expr(value)?;
                self.expr(body)
            }
            ExprKind::If { cond, then_, else_ } => {
                self.no_function_branches(
                    e,
                    "If",
                    "apply the functions inside the branches instead, e.g. `\\x -> if c then f x else g x`",
                )?;
                self.expr(cond)?;
                self.expr(then_)?;
                self.expr(else_)
            }
            ExprKind::Match { scrutinee, cases } => {
                self.no_function_branches(
                    e,
                    "Match",
                    "apply the functions inside the cases instead, e.g. `\\x -> match v case #a -> f x case #b -> g x`",
                )?;
                self.expr(scrutinee)?;
                self.exhaustive(e, scrutinee, cases)?;
                cases.iter().try_for_each(|c| self.expr(&c.body))
            }
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body,
                ..
            } => {
                let tps: Vec<TypeParam> = sizes.iter().cloned().map(TypeParam::Size).collect();
                check_duplicate_type_params(&tps)?;
                check_sizes_used(
                    &tps,
                    std::slice::from_ref(pat),
                    None,
                    "loop's parameter",
                    false,
                )?;
                if let Some(t) = pat.ty.as_ref().filter(|t| is_higher_order(t, &self.lifted)) {
                    return Err(err(
                        pat.span,
                        format!(
                            "Loop parameter inferred to have type `{t}`, but a loop parameter may not be of function type (nor contain a function: Futhark must know statically which function is called); keep the function outside the loop and loop over the data it needs"
                        ),
                    ));
                }
                self.irrefutable(pat, "a loop parameter")?;
                if let Some(i) = init {
                    self.expr(i)?;
                }
                match form {
                    LoopForm::For(_, b) => self.expr(b)?,
                    LoopForm::ForIn(p, xs) => {
                        self.irrefutable(p, "the element pattern of `for … in`")?;
                        self.expr(xs)?;
                    }
                    LoopForm::While(c) => self.expr(c)?,
                }
                self.expr(body)
            }
            ExprKind::Update {
                src,
                indices,
                value,
                ..
            } => {
                self.expr(src)?;
                self.dims(indices)?;
                self.expr(value)
            }
            ExprKind::RecordUpdate { src, value, .. } => {
                self.expr(src)?;
                self.expr(value)
            }
        }
    }

    fn exhaustive(&self, e: &Expr, scrutinee: &Expr, cases: &[Case]) -> R<()> {
        let Some(t) = scrutinee.ty.as_ref() else {
            return Ok(());
        };
        let rows = cases.iter().map(|c| vec![Shape::of(&c.pat)]).collect();
        let mut search = Exhaustiveness {
            budget: EXHAUSTIVENESS_BUDGET,
        };
        if let Some(missing) = search.witness(rows, std::slice::from_ref(t)) {
            return Err(err(
                e.span,
                format!(
                    "Unmatched cases in this `match` (it is not exhaustive): no case matches `{}`; add a case for it, or end with `case _ -> …`",
                    missing.join(" ")
                ),
            ));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ exhaustiveness

/// A pattern reduced to what matters for exhaustiveness.
#[derive(Clone, Debug)]
enum Shape {
    /// A variable or `_`: matches everything.
    Any,
    Constr(Name, Vec<Shape>),
    Bool(bool),
    Int(i128),
    /// Any other literal (floats): matches one value of an infinite type.
    OtherLit,
    /// A record or tuple, fields sorted by name like `Type::Record`.
    Record(Vec<(Name, Shape)>),
}

impl Shape {
    fn of(p: &Pat) -> Shape {
        match &p.kind {
            PatKind::Id(_) | PatKind::Wildcard => Shape::Any,
            PatKind::Ascribe(q, _) => Shape::of(q),
            PatKind::Tuple(ps) if ps.len() == 1 => Shape::of(&ps[0]),
            PatKind::Tuple(ps) => {
                let mut fs: Vec<(Name, Shape)> = ps
                    .iter()
                    .enumerate()
                    .map(|(i, q)| (i.to_string(), Shape::of(q)))
                    .collect();
                fs.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Shape::Record(fs)
            }
            PatKind::Record(fs) => {
                let mut fs: Vec<(Name, Shape)> = fs
                    .iter()
                    .map(|(f, q)| (f.name.clone(), Shape::of(q)))
                    .collect();
                fs.sort_by(|a, b| nabla_syntax::types::field_order(&a.0, &b.0));
                Shape::Record(fs)
            }
            PatKind::Lit(Literal::Bool(b)) => Shape::Bool(*b),
            PatKind::Lit(Literal::Int { value, .. }) => Shape::Int(*value),
            PatKind::Lit(Literal::Float { .. }) => Shape::OtherLit,
            PatKind::Constr(c, ps) => {
                Shape::Constr(c.name.clone(), ps.iter().map(Shape::of).collect())
            }
        }
    }
}

/// A search for a value that no row of a pattern matrix matches (the
/// "usefulness" algorithm of ML compilers), giving that value as text.
struct Exhaustiveness {
    budget: usize,
}

/// Wraps a witness in parentheses where it is used as a constructor's
/// payload and has spaces of its own.
fn atomic(w: &str) -> String {
    if w.contains(' ') && !w.starts_with('(') && !w.starts_with('{') {
        format!("({w})")
    } else {
        w.to_string()
    }
}

fn show_record(names: &[&Name], ws: &[String]) -> String {
    let is_tuple =
        names.len() > 1 && (0..names.len()).all(|i| names.iter().any(|n| **n == i.to_string()));
    if names.is_empty() {
        "()".to_string()
    } else if is_tuple {
        let mut by_index: Vec<(usize, &String)> = names
            .iter()
            .zip(ws)
            .map(|(n, w)| (n.parse::<usize>().unwrap_or(0), w))
            .collect();
        by_index.sort_by_key(|(i, _)| *i);
        let parts: Vec<&str> = by_index.iter().map(|(_, w)| w.as_str()).collect();
        format!("({})", parts.join(", "))
    } else {
        let parts: Vec<String> = names
            .iter()
            .zip(ws)
            .map(|(n, w)| format!("{n} = {w}"))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }
}

fn show_constr(c: &str, args: &[String]) -> String {
    let mut s = format!("#{c}");
    for a in args {
        s.push(' ');
        s.push_str(&atomic(a));
    }
    s
}

impl Exhaustiveness {
    /// A value (one text per column of `tys`) that no row matches, or `None`
    /// if the rows cover every value (or the search ran out of budget).
    fn witness(&mut self, rows: Vec<Vec<Shape>>, tys: &[Type]) -> Option<Vec<String>> {
        if self.budget == 0 {
            return None;
        }
        self.budget -= 1;
        let Some((t0, rest_tys)) = tys.split_first() else {
            return if rows.is_empty() { Some(vec![]) } else { None };
        };
        match t0 {
            Type::Record(fields) => {
                let names: Vec<&Name> = fields.iter().map(|(n, _)| n).collect();
                let rows = rows
                    .into_iter()
                    .map(|row| {
                        let mut it = row.into_iter();
                        let head = it.next().unwrap_or(Shape::Any);
                        let mut new: Vec<Shape> = match head {
                            Shape::Record(fs) => names
                                .iter()
                                .map(|n| {
                                    fs.iter()
                                        .find(|(f, _)| f == *n)
                                        .map_or(Shape::Any, |(_, s)| s.clone())
                                })
                                .collect(),
                            _ => vec![Shape::Any; names.len()],
                        };
                        new.extend(it);
                        new
                    })
                    .collect();
                let mut tys2: Vec<Type> = fields.iter().map(|(_, t)| t.clone()).collect();
                tys2.extend(rest_tys.iter().cloned());
                let mut w = self.witness(rows, &tys2)?;
                let rest = w.split_off(names.len());
                let mut out = vec![show_record(&names, &w)];
                out.extend(rest);
                Some(out)
            }
            Type::Sum(cs) => {
                let ctors: Vec<(String, Vec<Type>)> = cs.clone();
                self.finite(rows, rest_tys, &ctors, true)
            }
            Type::Prim(nabla_prim::PrimType::Bool) => {
                let ctors = vec![("false".to_string(), vec![]), ("true".to_string(), vec![])];
                self.finite(rows, rest_tys, &ctors, false)
            }
            _ => {
                let mut ints = HashSet::new();
                let mut defaults = Vec::new();
                for mut row in rows {
                    if row.is_empty() {
                        continue;
                    }
                    match row.remove(0) {
                        Shape::Any => defaults.push(row),
                        Shape::Int(v) => {
                            ints.insert(v);
                        }
                        _ => {}
                    }
                }
                let mut w = self.witness(defaults, rest_tys)?;
                let head = if ints.is_empty() {
                    "_".to_string()
                } else {
                    (0i128..)
                        .find(|v| !ints.contains(v))
                        .map_or("_".to_string(), |v| v.to_string())
                };
                w.insert(0, head);
                Some(w)
            }
        }
    }

    /// The first column has finitely many constructors (`ctors`, with their
    /// payload types): booleans (`is_sum` false) or a sum type.
    fn finite(
        &mut self,
        rows: Vec<Vec<Shape>>,
        rest_tys: &[Type],
        ctors: &[(String, Vec<Type>)],
        is_sum: bool,
    ) -> Option<Vec<String>> {
        let head_name = |s: &Shape| -> Option<String> {
            match s {
                Shape::Constr(c, _) if is_sum => Some(c.clone()),
                Shape::Bool(b) if !is_sum => Some(b.to_string()),
                _ => None,
            }
        };
        let present: HashSet<String> = rows
            .iter()
            .filter_map(|r| r.first().and_then(head_name))
            .collect();
        let complete = ctors.iter().all(|(c, _)| present.contains(c));
        if complete {
            for (c, payload) in ctors {
                let spec: Vec<Vec<Shape>> = rows
                    .iter()
                    .filter_map(|row| {
                        let (head, rest) = row.split_first()?;
                        let mut new = match head {
                            Shape::Any => vec![Shape::Any; payload.len()],
                            h if head_name(h).as_deref() == Some(c.as_str()) => match h {
                                Shape::Constr(_, ps) if ps.len() == payload.len() => ps.clone(),
                                _ => vec![Shape::Any; payload.len()],
                            },
                            _ => return None,
                        };
                        new.extend(rest.iter().cloned());
                        Some(new)
                    })
                    .collect();
                let mut tys2 = payload.clone();
                tys2.extend(rest_tys.iter().cloned());
                if let Some(mut w) = self.witness(spec, &tys2) {
                    let rest = w.split_off(payload.len());
                    let head = if is_sum {
                        show_constr(c, &w)
                    } else {
                        c.clone()
                    };
                    let mut out = vec![head];
                    out.extend(rest);
                    return Some(out);
                }
            }
            None
        } else {
            let defaults: Vec<Vec<Shape>> = rows
                .into_iter()
                .filter(|r| matches!(r.first(), Some(Shape::Any)))
                .map(|mut r| {
                    r.remove(0);
                    r
                })
                .collect();
            let mut w = self.witness(defaults, rest_tys)?;
            let (c, payload) = ctors.iter().find(|(c, _)| !present.contains(c))?;
            // No case names a constructor here: any value is missing.
            let head = if present.is_empty() {
                "_".to_string()
            } else if is_sum {
                show_constr(c, &vec!["_".to_string(); payload.len()])
            } else {
                c.clone()
            };
            w.insert(0, head);
            Some(w)
        }
    }
}
