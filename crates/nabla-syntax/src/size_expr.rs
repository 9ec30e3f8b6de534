//! Compound size expressions: the sizes in types that are neither a name nor
//! a constant, such as `[n * m]`, `[n + 1]`, `[i64.i32 k]` or `[s.0]`.
//!
//! Futhark allows any expression of type `i64` that binds nothing as an array
//! size, and compares sizes syntactically (up to the substitution of size
//! variables). A [`SizeExpr`] keeps the checked expression (resolutions and
//! types filled in, so that the elaborator can evaluate it) together with its
//! canonical text in Futhark syntax, which is what equality, hashing and
//! printing use: spans, parentheses and annotations do not matter.
//!
//! Sub-expressions are read as sizes with [`size_of_expr`]: an unqualified
//! local name of type `i64` is [`Size::Var`], an `i64` literal
//! [`Size::Const`], anything else a [`Size::Expr`] again.

use crate::ast::{Expr, ExprKind, Literal, QualName, RecordField, Res};
use crate::span::Span;
use crate::types::{Name, Size, Type};
use nabla_prim::PrimType;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A compound size expression (see the module documentation).
#[derive(Clone)]
pub struct SizeExpr {
    key: Arc<str>,
    expr: Arc<Expr>,
}

impl SizeExpr {
    /// Wraps a checked expression as a size, or `None` if it is not an
    /// expression Futhark allows in a size (one that binds names: `let`,
    /// `loop`, lambdas, `match`, …).
    pub fn new(e: Expr) -> Option<SizeExpr> {
        let mut key = String::new();
        print_expr(&e, 0, &mut key)?;
        Some(SizeExpr {
            key: key.into(),
            expr: Arc::new(e),
        })
    }

    /// The expression (as checked; may contain parentheses).
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The canonical text in Futhark syntax: `n * m`, `i64.i32 k`.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl PartialEq for SizeExpr {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for SizeExpr {}

impl Hash for SizeExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state)
    }
}

impl fmt::Debug for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SizeExpr({})", self.key)
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

/// `e` without enclosing parentheses and attributes.
pub fn strip_parens(mut e: &Expr) -> &Expr {
    loop {
        match &e.kind {
            ExprKind::Parens(x) | ExprKind::Attr(_, x) => e = x,
            _ => return e,
        }
    }
}

fn is_i64(t: &Option<Type>) -> bool {
    matches!(t, None | Some(Type::Prim(PrimType::I64)))
}

/// Whether a name reference is to a local variable or size (which size
/// substitution may replace), not to a global or built-in.
fn is_local_ref(res: &Option<Res>) -> bool {
    matches!(res, None | Some(Res::Local | Res::Size))
}

/// The size that an expression denotes: a local name of type `i64` is a
/// [`Size::Var`], an `i64` literal a [`Size::Const`], any other expression
/// that may be a size a [`Size::Expr`]; `None` if it may not be a size.
pub fn size_of_expr(e: &Expr) -> Option<Size> {
    let s = strip_parens(e);
    match &s.kind {
        ExprKind::Var { name, res, .. }
            if name.quals.is_empty() && is_local_ref(res) && is_i64(&s.ty) =>
        {
            Some(Size::Var(name.name.clone()))
        }
        ExprKind::Lit(Literal::Int { value, suffix })
            if matches!(suffix, None | Some(PrimType::I64)) && is_i64(&s.ty) =>
        {
            match i64::try_from(*value) {
                Ok(v) => Some(Size::Const(v)),
                Err(_) => SizeExpr::new(s.clone()).map(Size::Expr),
            }
        }
        _ => SizeExpr::new(s.clone()).map(Size::Expr),
    }
}

/// The expression a size stands for (`None` for [`Size::Any`]); names
/// become references to local sizes of type `i64`.
pub fn expr_of_size(s: &Size, span: Span) -> Option<Expr> {
    let kind = match s {
        Size::Const(c) => ExprKind::Lit(Literal::Int {
            value: *c as i128,
            suffix: None,
        }),
        Size::Var(n) => ExprKind::Var {
            name: QualName {
                quals: vec![],
                name: n.clone(),
                span,
            },
            res: Some(Res::Size),
            inst: vec![],
        },
        Size::Expr(x) => return Some(x.expr().clone()),
        Size::Any => return None,
    };
    Some(Expr {
        kind,
        span,
        ty: Some(Type::Prim(PrimType::I64)),
    })
}

/// The size `a op b` for an `i64` operator `op` (`+`, `*`), built as the
/// expression a program would write (`[n * m]`), so that it compares equal
/// to that; `None` where a side is [`Size::Any`].
pub fn size_binop(op: &str, a: &Size, b: &Size, span: Span) -> Option<Size> {
    let i64t = Some(Type::Prim(PrimType::I64));
    let e = Expr {
        kind: ExprKind::BinOp {
            op: QualName {
                quals: vec![],
                name: op.to_string(),
                span,
            },
            op_res: Some(Res::Intrinsic(op.to_string())),
            op_inst: vec![],
            lhs: Box::new(expr_of_size(a, span)?),
            rhs: Box::new(expr_of_size(b, span)?),
        },
        span,
        ty: i64t,
    };
    size_of_expr(&e)
}

impl Size {
    /// Replaces the local names that `f` maps (in compound expressions too).
    /// A compound expression in which a name is replaced by [`Size::Any`]
    /// becomes [`Size::Any`].
    pub fn subst(&self, f: &dyn Fn(&str) -> Option<Size>) -> Size {
        match self {
            Size::Var(v) => f(v).unwrap_or_else(|| self.clone()),
            Size::Expr(x) => {
                let mut changed = false;
                match subst_expr(x.expr(), f, &mut changed) {
                    Some(e) if changed => size_of_expr(&e).unwrap_or(Size::Any),
                    Some(_) => self.clone(),
                    None => Size::Any,
                }
            }
            _ => self.clone(),
        }
    }

    /// The local names this size mentions (in order, without repeats).
    pub fn names(&self, out: &mut Vec<Name>) {
        match self {
            Size::Var(v) if !out.contains(v) => out.push(v.clone()),
            Size::Expr(x) => expr_names(x.expr(), out),
            _ => {}
        }
    }

    /// Whether this size mentions the local name `n`.
    pub fn mentions(&self, n: &str) -> bool {
        match self {
            Size::Var(v) => v == n,
            Size::Expr(x) => {
                let mut names = vec![];
                expr_names(x.expr(), &mut names);
                names.iter().any(|m| m == n)
            }
            _ => false,
        }
    }

    /// Applies `f` to the types annotating a compound expression's nodes
    /// (the checker uses it to give them their final types).
    pub fn map_expr_types(&self, f: &mut dyn FnMut(&Type) -> Type) -> Size {
        match self {
            Size::Expr(x) => {
                let mut e = x.expr().clone();
                map_types(&mut e, f);
                match SizeExpr::new(e) {
                    Some(y) => Size::Expr(y),
                    None => self.clone(),
                }
            }
            _ => self.clone(),
        }
    }
}

/// If the two compound sizes have the same outermost construct (the same
/// operator, function, field, …), the pairs of their corresponding parts,
/// read as sizes; `None` otherwise. Unification of sizes recurses into
/// these parts, so that `?n * ?m` and `a * b` unify with `?n = a`, `?m = b`.
pub fn similar_parts(a: &SizeExpr, b: &SizeExpr) -> Option<Vec<(Size, Size)>> {
    let (x, y) = (strip_parens(a.expr()), strip_parens(b.expr()));
    let part = |e: &Expr| size_of_expr(e);
    let pair = |p: &Expr, q: &Expr| Some((part(p)?, part(q)?));
    match (&x.kind, &y.kind) {
        (
            ExprKind::BinOp {
                op: o1,
                lhs: l1,
                rhs: r1,
                ..
            },
            ExprKind::BinOp {
                op: o2,
                lhs: l2,
                rhs: r2,
                ..
            },
        ) if o1.to_string() == o2.to_string() && same_type(x, y) => {
            Some(vec![pair(l1, l2)?, pair(r1, r2)?])
        }
        (ExprKind::Apply(f1, a1), ExprKind::Apply(f2, a2))
            if a1.len() == a2.len() && key_of(f1)? == key_of(f2)? =>
        {
            a1.iter().zip(a2).map(|(p, q)| pair(p, q)).collect()
        }
        (ExprKind::Negate(p), ExprKind::Negate(q)) | (ExprKind::Not(p), ExprKind::Not(q)) => {
            Some(vec![pair(p, q)?])
        }
        (ExprKind::Project(p, f1), ExprKind::Project(q, f2)) if f1.name == f2.name => {
            Some(vec![pair(p, q)?])
        }
        (ExprKind::Tuple(ps), ExprKind::Tuple(qs)) if ps.len() == qs.len() => {
            ps.iter().zip(qs).map(|(p, q)| pair(p, q)).collect()
        }
        _ => None,
    }
}

fn same_type(x: &Expr, y: &Expr) -> bool {
    match (&x.ty, &y.ty) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

fn key_of(e: &Expr) -> Option<String> {
    let mut s = String::new();
    print_expr(e, 0, &mut s)?;
    Some(s)
}

fn subst_expr(e: &Expr, f: &dyn Fn(&str) -> Option<Size>, changed: &mut bool) -> Option<Expr> {
    let mut out = e.clone();
    subst_in(&mut out, f, changed)?;
    Some(out)
}

fn subst_in(e: &mut Expr, f: &dyn Fn(&str) -> Option<Size>, changed: &mut bool) -> Option<()> {
    if let ExprKind::Var { name, res, .. } = &e.kind {
        if name.quals.is_empty() && is_local_ref(res) {
            if let Some(s) = f(&name.name) {
                let mut r = expr_of_size(&s, e.span)?;
                if !matches!(s, Size::Expr(_)) {
                    // Keep the type of the replaced reference (a size name
                    // may stand for a non-`i64` value inside an expression).
                    r.ty = e.ty.clone().or(r.ty);
                }
                *e = r;
                *changed = true;
            }
        }
        return Some(());
    }
    for_each_child(e, &mut |c| subst_in(c, f, changed))
}

fn expr_names(e: &Expr, out: &mut Vec<Name>) {
    if let ExprKind::Var { name, res, .. } = &e.kind {
        if name.quals.is_empty() && is_local_ref(res) && !out.contains(&name.name) {
            out.push(name.name.clone());
        }
        return;
    }
    for c in children(e) {
        expr_names(c, out);
    }
}

/// The direct sub-expressions of the constructs a size may contain.
fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Parens(x)
        | ExprKind::Attr(_, x)
        | ExprKind::Negate(x)
        | ExprKind::Not(x)
        | ExprKind::Project(x, _)
        | ExprKind::OpSectionLeft { lhs: x, .. }
        | ExprKind::OpSectionRight { rhs: x, .. } => vec![x],
        ExprKind::BinOp { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Apply(f, args) => std::iter::once(&**f).chain(args.iter()).collect(),
        ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) => xs.iter().collect(),
        ExprKind::Record(fs) => fs
            .iter()
            .filter_map(|f| match f {
                RecordField::Named(_, x) => Some(x),
                RecordField::Pun(_) => None,
            })
            .collect(),
        _ => vec![],
    }
}

fn map_types(e: &mut Expr, f: &mut dyn FnMut(&Type) -> Type) {
    if let Some(t) = &e.ty {
        e.ty = Some(f(t));
    }
    for_each_child(e, &mut |x| {
        map_types(x, f);
        Some(())
    });
}

/// Calls `g` on each direct sub-expression of the constructs a size may
/// contain (see [`print_expr`]); stops at the first `None`.
fn for_each_child(e: &mut Expr, g: &mut dyn FnMut(&mut Expr) -> Option<()>) -> Option<()> {
    match &mut e.kind {
        ExprKind::Lit(_)
        | ExprKind::Var { .. }
        | ExprKind::OpSection { .. }
        | ExprKind::ProjSection(_) => Some(()),
        ExprKind::Parens(x)
        | ExprKind::Attr(_, x)
        | ExprKind::Negate(x)
        | ExprKind::Not(x)
        | ExprKind::Project(x, _)
        | ExprKind::OpSectionLeft { lhs: x, .. }
        | ExprKind::OpSectionRight { rhs: x, .. } => g(x),
        ExprKind::BinOp { lhs, rhs, .. } => {
            g(lhs)?;
            g(rhs)
        }
        ExprKind::Apply(f, args) => {
            g(f)?;
            args.iter_mut().try_for_each(g)
        }
        ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) => xs.iter_mut().try_for_each(g),
        ExprKind::Record(fs) => fs.iter_mut().try_for_each(|f| match f {
            RecordField::Named(_, x) => g(x),
            RecordField::Pun(_) => Some(()),
        }),
        _ => Some(()),
    }
}

/// The precedence level of a binary operator (Futhark's table, by the
/// operator's leading characters): higher binds tighter.
fn op_prec(op: &str) -> u8 {
    if op.starts_with("||") {
        1
    } else if op.starts_with("&&") {
        2
    } else if op.starts_with("<<") || op.starts_with(">>") {
        5
    } else if op.starts_with("|>") {
        8
    } else if op.starts_with("<|") {
        9
    } else if op.starts_with("**") {
        10
    } else if op.starts_with(['<', '>', '=', '!']) {
        3
    } else if op.starts_with(['&', '^', '|']) {
        4
    } else if op.starts_with(['+', '-']) {
        6
    } else if op.starts_with(['*', '/', '%']) {
        7
    } else {
        // A function name used infix (`x \`f\` y`) binds loosest.
        0
    }
}

/// The precedence of an application (juxtaposition).
const APP: u8 = 11;
/// The precedence of an atom (never needs parentheses).
const ATOM: u8 = 12;

fn prec_of(e: &Expr) -> u8 {
    match &strip_parens(e).kind {
        ExprKind::BinOp { op, .. } => op_prec(&op.name),
        ExprKind::Apply(..) => APP,
        ExprKind::Negate(_) | ExprKind::Not(_) => APP,
        ExprKind::Lit(Literal::Int { value, .. }) if *value < 0 => APP,
        ExprKind::Lit(Literal::Float { value, .. }) if *value < 0.0 => APP,
        _ => ATOM,
    }
}

/// Prints `e` in Futhark syntax, parenthesised if its precedence is below
/// `min`. `None` if `e` contains a construct that may not be in a size.
/// `open`, the expressions separated by commas, `close`.
fn print_list(xs: &[Expr], open: char, close: char, out: &mut String) -> Option<()> {
    out.push(open);
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        print_expr(x, 0, out)?;
    }
    out.push(close);
    Some(())
}

fn print_expr(e: &Expr, min: u8, out: &mut String) -> Option<()> {
    let e = strip_parens(e);
    let p = prec_of(e);
    if p < min {
        out.push('(');
        print_expr(e, 0, out)?;
        out.push(')');
        return Some(());
    }
    match &e.kind {
        ExprKind::Lit(Literal::Int { value, suffix }) => {
            out.push_str(&value.to_string());
            if let Some(s) = suffix.filter(|s| *s != PrimType::I64) {
                out.push_str(&s.to_string());
            }
        }
        ExprKind::Lit(Literal::Float { text, suffix, .. }) => {
            out.push_str(text);
            if let Some(s) = suffix {
                out.push_str(&s.to_string());
            }
        }
        ExprKind::Lit(Literal::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        ExprKind::Var { name, .. } => out.push_str(&name.to_string()),
        ExprKind::BinOp { op, lhs, rhs, .. } => {
            let q = op_prec(&op.name);
            print_expr(lhs, q, out)?;
            if q == 0 {
                out.push_str(&format!(" `{op}` "));
            } else {
                out.push_str(&format!(" {op} "));
            }
            print_expr(rhs, q + 1, out)?;
        }
        ExprKind::Apply(f, args) => {
            print_expr(f, APP, out)?;
            for a in args {
                out.push(' ');
                print_expr(a, ATOM, out)?;
            }
        }
        ExprKind::Negate(x) => {
            out.push('-');
            print_expr(x, ATOM, out)?;
        }
        ExprKind::Not(x) => {
            out.push('!');
            print_expr(x, ATOM, out)?;
        }
        ExprKind::Project(x, f) => {
            print_expr(x, ATOM, out)?;
            out.push('.');
            out.push_str(&f.name);
        }
        ExprKind::Tuple(xs) => print_list(xs, '(', ')', out)?,
        ExprKind::ArrayLit(xs) => print_list(xs, '[', ']', out)?,
        ExprKind::Record(fs) => {
            out.push('{');
            for (i, f) in fs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match f {
                    RecordField::Named(n, x) => {
                        out.push_str(&n.name);
                        out.push_str(" = ");
                        print_expr(x, 0, out)?;
                    }
                    RecordField::Pun(n) => out.push_str(&n.name),
                }
            }
            out.push('}');
        }
        ExprKind::OpSection { op, .. } => out.push_str(&format!("({op})")),
        ExprKind::OpSectionLeft { op, lhs, .. } => {
            out.push('(');
            print_expr(lhs, op_prec(&op.name), out)?;
            out.push_str(&format!(" {op})"));
        }
        ExprKind::OpSectionRight { op, rhs, .. } => {
            out.push_str(&format!("({op} "));
            print_expr(rhs, op_prec(&op.name) + 1, out)?;
            out.push(')');
        }
        ExprKind::ProjSection(fs) => {
            out.push('(');
            for f in fs {
                out.push('.');
                out.push_str(&f.name);
            }
            out.push(')');
        }
        _ => return None,
    }
    Some(())
}
