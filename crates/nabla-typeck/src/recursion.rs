//! Futhark's restrictions on recursive functions, checked on each
//! type-checked top-level definition that uses itself.
//!
//! Only top-level functions (definitions with parameters) may be recursive:
//! the type checker puts such a function in scope in its own body (see
//! `Checker::bind_self`), not a constant or a local function. Functions
//! are static values that the compiler specialises to the functions passed
//! to them, so a recursive function is restricted:
//!
//! - its result may not be, or contain, a function ("not first-order"):
//!   such a function must take the extra parameters instead;
//! - if it has a higher-order parameter (a parameter that is, or contains,
//!   a function, or whose type is a lifted type parameter `'^a`), it may be
//!   used in its own body only in applications to all its parameters
//!   ("fully saturated"), and each such application must pass every
//!   higher-order parameter unchanged: the parameter itself, not another
//!   function. So all the recursive calls of one specialisation call that
//!   same specialisation. The check looks into lambdas and local functions
//!   too.

use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::HashMap;

use crate::rules::is_higher_order;

type R<T> = Result<T, Diagnostic>;

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, msg)
}

/// Maximum expression nesting followed (inference already bounds it).
const MAX_DEPTH: usize = 20000;

/// Checks the restrictions on recursion of one type-checked top-level
/// definition (nothing to check unless its body uses it).
pub(crate) fn check_valbind(vb: &ValBind) -> R<()> {
    if !is_recursive(vb) {
        return Ok(());
    }
    let lifted: Vec<Name> = vb
        .type_params
        .iter()
        .filter_map(|tp| match tp {
            TypeParam::Type(i, Liftedness::Lifted) => Some(i.name.clone()),
            _ => None,
        })
        .collect();
    let fname = crate::check::definition_base_name(&vb.name.name).to_string();
    let mut ret = vb.ty.as_ref();
    for _ in &vb.params {
        ret = match ret {
            Some(Type::Arrow { ret, .. }) => Some(ret),
            _ => None,
        };
    }
    if ret.is_some_and(|t| is_higher_order(t, &lifted)) {
        let span = vb.ret.as_ref().map_or(vb.name.span, |te| te.span());
        return Err(err(
            span,
            format!(
                "the result of the recursive function `{fname}` is not first-order (it is, or contains, a function); give `{fname}` the function's parameters as further parameters instead"
            ),
        ));
    }
    let higher_order: Vec<Option<Option<Name>>> = vb
        .params
        .iter()
        .map(|p| {
            p.ty.as_ref()
                .filter(|t| is_higher_order(t, &lifted))
                .map(|_| single_name(p))
        })
        .collect();
    if higher_order.iter().all(Option::is_none) {
        return Ok(());
    }
    let mut w = Walk {
        id: vb.id,
        fname,
        higher_order,
        shadowed: HashMap::new(),
        depth: 0,
    };
    w.expr(&vb.body)
}

/// The one variable a parameter pattern binds, if it is a name
/// (possibly ascribed or parenthesised).
fn single_name(p: &Pat) -> Option<Name> {
    match &p.kind {
        PatKind::Id(i) => Some(i.name.clone()),
        PatKind::Ascribe(q, _) => single_name(q),
        _ => None,
    }
}

/// Whether the top-level definition `vb` uses itself (a recursive function).
pub(crate) fn is_recursive(vb: &ValBind) -> bool {
    !vb.params.is_empty() && uses_self(&vb.body, vb.id, 0)
}

/// Whether `e` refers to the top-level definition `id` anywhere.
fn uses_self(e: &Expr, id: NodeId, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let is_self = |res: &Option<Res>| matches!(res, Some(Res::Global(r)) if *r == id);
    match &e.kind {
        ExprKind::Var { res, .. } | ExprKind::OpSection { op_res: res, .. } => is_self(res),
        ExprKind::BinOp { op_res, .. }
        | ExprKind::OpSectionLeft { op_res, .. }
        | ExprKind::OpSectionRight { op_res, .. }
            if is_self(op_res) =>
        {
            true
        }
        _ => {
            let mut found = false;
            for_each_child(e, &mut |c| found = found || uses_self(c, id, depth + 1));
            found
        }
    }
}

/// Calls `f` on each direct subexpression of `e` (including those inside
/// indices, loop forms and cases).
pub(crate) fn for_each_child<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    let dims = |idx: &'e [DimIndex], f: &mut dyn FnMut(&'e Expr)| {
        for d in idx {
            match d {
                DimIndex::Fix(x) => f(x),
                DimIndex::Slice { start, end, stride } => {
                    for x in [start, end, stride].into_iter().flatten() {
                        f(x);
                    }
                }
            }
        }
    };
    match &e.kind {
        ExprKind::Lit(_)
        | ExprKind::Var { .. }
        | ExprKind::OpSection { .. }
        | ExprKind::ProjSection(_) => {}
        ExprKind::Parens(x)
        | ExprKind::Attr(_, x)
        | ExprKind::Ascribe(x, _)
        | ExprKind::Coerce(x, _)
        | ExprKind::LocalOpen(_, x)
        | ExprKind::Negate(x)
        | ExprKind::Not(x)
        | ExprKind::Project(x, _)
        | ExprKind::OpSectionLeft { lhs: x, .. }
        | ExprKind::OpSectionRight { rhs: x, .. }
        | ExprKind::Lambda { body: x, .. } => f(x),
        ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
            xs.iter().for_each(f)
        }
        ExprKind::Record(fs) => {
            for fl in fs {
                if let RecordField::Named(_, x) = fl {
                    f(x);
                }
            }
        }
        ExprKind::Range {
            start, second, end, ..
        } => {
            f(start);
            if let Some(s) = second {
                f(s);
            }
            f(end);
        }
        ExprKind::Index(x, idx) => {
            f(x);
            dims(idx, f);
        }
        ExprKind::Apply(g, args) => {
            f(g);
            args.iter().for_each(f);
        }
        ExprKind::BinOp { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::LetPat { value, body, .. } | ExprKind::LetFun { value, body, .. } => {
            f(value);
            f(body);
        }
        ExprKind::LetWith {
            indices,
            value,
            body,
            ..
        } => {
            dims(indices, f);
            f(value);
            f(body);
        }
        ExprKind::If { cond, then_, else_ } => {
            f(cond);
            f(then_);
            f(else_);
        }
        ExprKind::Match { scrutinee, cases } => {
            f(scrutinee);
            cases.iter().for_each(|c| f(&c.body));
        }
        ExprKind::Loop {
            init, form, body, ..
        } => {
            if let Some(i) = init {
                f(i);
            }
            match form {
                LoopForm::For(_, b) => f(b),
                LoopForm::ForIn(_, xs) => f(xs),
                LoopForm::While(c) => f(c),
            }
            f(body);
        }
        ExprKind::Update {
            src,
            indices,
            value,
            ..
        } => {
            f(src);
            dims(indices, f);
            f(value);
        }
        ExprKind::RecordUpdate { src, value, .. } => {
            f(src);
            f(value);
        }
    }
}

/// The names a pattern binds.
pub(crate) fn pat_names(p: &Pat, out: &mut Vec<Name>) {
    match &p.kind {
        PatKind::Id(i) => out.push(i.name.clone()),
        PatKind::Wildcard | PatKind::Lit(_) => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|p| pat_names(p, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, p)| pat_names(p, out)),
        PatKind::Ascribe(p, _) => pat_names(p, out),
    }
}

/// The walk over the body of a recursive function with higher-order
/// parameters.
struct Walk {
    id: NodeId,
    fname: String,
    /// Per parameter: `None` if first-order, else `Some` of the name it
    /// binds (`None` inside if it is not a single name).
    higher_order: Vec<Option<Option<Name>>>,
    /// Names bound inside the body (with how many bindings are in scope),
    /// which hide the parameters of the same name.
    shadowed: HashMap<Name, usize>,
    depth: usize,
}

impl Walk {
    fn is_self(&self, res: &Option<Res>) -> bool {
        matches!(res, Some(Res::Global(r)) if *r == self.id)
    }

    fn unsaturated(&self, span: Span) -> Diagnostic {
        err(
            span,
            format!(
                "`{}` is recursive and has a higher-order parameter, so in its own body it may only be applied to all {} of its arguments; this use is not fully saturated",
                self.fname,
                self.higher_order.len()
            ),
        )
    }

    /// Runs `f` with the names `names` bound (hiding parameters).
    fn scoped(&mut self, names: Vec<Name>, f: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        for n in &names {
            *self.shadowed.entry(n.clone()).or_default() += 1;
        }
        let r = f(self);
        for n in &names {
            if let Some(c) = self.shadowed.get_mut(n) {
                *c -= 1;
            }
        }
        r
    }

    /// A recursive application to `args`: saturated, with every
    /// higher-order parameter passed unchanged.
    fn call(&mut self, args: &[&Expr], span: Span) -> R<()> {
        if args.len() < self.higher_order.len() {
            return Err(self.unsaturated(span));
        }
        for (k, (arg, ho)) in args.iter().zip(&self.higher_order).enumerate() {
            let Some(param) = ho else { continue };
            let mut a = *arg;
            while let ExprKind::Parens(x) = &a.kind {
                a = x;
            }
            let unchanged = match (&a.kind, param) {
                (
                    ExprKind::Var {
                        name,
                        res: Some(Res::Local),
                        ..
                    },
                    Some(p),
                ) => {
                    name.quals.is_empty()
                        && name.name == *p
                        && self.shadowed.get(p).copied().unwrap_or(0) == 0
                }
                _ => false,
            };
            if !unchanged {
                let which = match param {
                    Some(p) => format!("write the parameter `{p}` itself here"),
                    None => "name the parameter with a single variable and pass that".to_string(),
                };
                return Err(err(
                    arg.span,
                    format!(
                        "argument {} of this recursive call of `{}` is for a higher-order parameter, which must be passed unchanged: {which} (a recursive function is specialised to the functions passed to it, so they may not change between calls)",
                        k + 1,
                        self.fname
                    ),
                ));
            }
        }
        args.iter().try_for_each(|a| self.expr(a))
    }

    fn expr(&mut self, e: &Expr) -> R<()> {
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            Ok(())
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &Expr) -> R<()> {
        match &e.kind {
            ExprKind::Var { res, .. } | ExprKind::OpSection { op_res: res, .. }
                if self.is_self(res) =>
            {
                Err(self.unsaturated(e.span))
            }
            ExprKind::OpSectionLeft { op_res, .. } | ExprKind::OpSectionRight { op_res, .. }
                if self.is_self(op_res) =>
            {
                Err(self.unsaturated(e.span))
            }
            ExprKind::Apply(f, args) => {
                let mut head = &**f;
                while let ExprKind::Parens(x) = &head.kind {
                    head = x;
                }
                match &head.kind {
                    ExprKind::Var { res, .. } if self.is_self(res) => {
                        let args: Vec<&Expr> = args.iter().collect();
                        self.call(&args, e.span)
                    }
                    _ => {
                        self.expr(f)?;
                        args.iter().try_for_each(|a| self.expr(a))
                    }
                }
            }
            ExprKind::BinOp {
                op_res, lhs, rhs, ..
            } if self.is_self(op_res) => self.call(&[lhs, rhs], e.span),
            ExprKind::Lambda { params, body, .. } => {
                let mut names = vec![];
                params.iter().for_each(|p| pat_names(p, &mut names));
                self.scoped(names, |w| w.expr(body))
            }
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => {
                self.expr(value)?;
                let mut names: Vec<Name> = sizes.iter().map(|i| i.name.clone()).collect();
                pat_names(pat, &mut names);
                self.scoped(names, |w| w.expr(body))
            }
            ExprKind::LetFun {
                name,
                params,
                value,
                body,
                ..
            } => {
                let mut names = vec![];
                params.iter().for_each(|p| pat_names(p, &mut names));
                self.scoped(names, |w| w.expr(value))?;
                self.scoped(vec![name.name.clone()], |w| w.expr(body))
            }
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => {
                for d in indices {
                    match d {
                        DimIndex::Fix(x) => self.expr(x)?,
                        DimIndex::Slice { start, end, stride } => {
                            for x in [start, end, stride].into_iter().flatten() {
                                self.expr(x)?;
                            }
                        }
                    }
                }
                self.expr(value)?;
                self.scoped(vec![dest.name.clone()], |w| w.expr(body))
            }
            ExprKind::Match { scrutinee, cases } => {
                self.expr(scrutinee)?;
                for c in cases {
                    let mut names = vec![];
                    pat_names(&c.pat, &mut names);
                    self.scoped(names, |w| w.expr(&c.body))?;
                }
                Ok(())
            }
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body,
                ..
            } => {
                if let Some(i) = init {
                    self.expr(i)?;
                }
                let mut names: Vec<Name> = sizes.iter().map(|i| i.name.clone()).collect();
                pat_names(pat, &mut names);
                match form {
                    LoopForm::For(i, b) => {
                        self.expr(b)?;
                        names.push(i.name.clone());
                    }
                    LoopForm::ForIn(p, xs) => {
                        self.expr(xs)?;
                        pat_names(p, &mut names);
                    }
                    LoopForm::While(c) => {
                        // The condition sees the loop parameters.
                        self.scoped(names.clone(), |w| w.expr(c))?;
                    }
                }
                self.scoped(names, |w| w.expr(body))
            }
            _ => {
                let mut children = vec![];
                for_each_child(e, &mut |c| children.push(c));
                children.into_iter().try_for_each(|c| self.expr(c))
            }
        }
    }
}
