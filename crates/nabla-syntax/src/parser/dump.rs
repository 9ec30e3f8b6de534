//! Compact S-expression rendering of the AST, for tests and debugging.
//!
//! Shapes: `(+ a b)` for operators, `(app f x y)` for application,
//! `(neg e)`, `(not e)`, `(paren e)`, `(tuple …)`, `(array …)`,
//! `(record (a 1) b)`, `(. e f)` projection, `(index a i (slice s e st))`,
//! `(section +)`, `(lsection + e)`, `(rsection + e)`, `(proj a b)`,
//! `(lambda (p…) ret body)`, `(let [n] p v body)`, `(letfun f (tp…) (p…) ret v body)`,
//! `(letwith a (i…) v body)`, `(if c t e)`, `(match e (case p b)…)`,
//! `(loop p init form body)`, `(update a (i…) v)`, `(recupdate r a.b v)`,
//! `(: e t)`, `(:> e t)`, `(#c e…)`, `(open m e)`, `(attr text e)`,
//! ranges `(..< a b)`, `(... a b)`, `(..> a b)`, `(.. a s ... b)`.
//! Literals print as written with their suffix (`1i8`, `2.5f32`, `-1`).
//! `_` marks an absent optional part.

use crate::ast::*;

/// Renders a literal.
pub fn lit(l: &Literal) -> String {
    match l {
        Literal::Int { value, suffix } => match suffix {
            Some(t) => format!("{value}{t}"),
            None => value.to_string(),
        },
        Literal::Float { text, suffix, .. } => match suffix {
            Some(t) => format!("{text}{t}"),
            None => text.clone(),
        },
        Literal::Bool(b) => b.to_string(),
    }
}

fn opt_expr(e: &Option<Expr>) -> String {
    e.as_ref().map(expr).unwrap_or_else(|| "_".into())
}

fn dim(d: &DimIndex) -> String {
    match d {
        DimIndex::Fix(e) => expr(e),
        DimIndex::Slice { start, end, stride } => {
            format!(
                "(slice {} {} {})",
                opt_expr(start),
                opt_expr(end),
                opt_expr(stride)
            )
        }
    }
}

fn dims(ds: &[DimIndex]) -> String {
    ds.iter().map(dim).collect::<Vec<_>>().join(" ")
}

fn list<T>(xs: &[T], f: impl Fn(&T) -> String) -> String {
    xs.iter().map(f).collect::<Vec<_>>().join(" ")
}

fn tparam(t: &TypeParam) -> String {
    match t {
        TypeParam::Size(i) => format!("[{}]", i.name),
        TypeParam::Type(i, Liftedness::Unlifted) => format!("'{}", i.name),
        TypeParam::Type(i, Liftedness::SizeLifted) => format!("'~{}", i.name),
        TypeParam::Type(i, Liftedness::Lifted) => format!("'^{}", i.name),
    }
}

fn size(d: &SizeExp) -> String {
    match d {
        SizeExp::Any(_) => "[]".into(),
        SizeExp::Expr(e) => format!("[{}]", expr(e)),
    }
}

/// Renders a type expression.
pub fn ty(t: &TypeExp) -> String {
    match t {
        TypeExp::Prim(p, _) => p.to_string(),
        TypeExp::Named(q, args, _) => {
            if args.is_empty() {
                q.to_string()
            } else {
                let a = list(args, |a| match a {
                    TypeArg::Size(d) => size(d),
                    TypeArg::Type(t) => ty(t),
                });
                format!("({q} {a})")
            }
        }
        TypeExp::Tuple(ts, _) => format!("(tuple {})", list(ts, ty)).replace("(tuple )", "()"),
        TypeExp::Record(fs, _) => {
            format!(
                "{{{}}}",
                fs.iter()
                    .map(|(n, t)| format!("{}: {}", n.name, ty(t)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        TypeExp::Array(d, t, _) => format!("{}{}", size(d), ty(t)),
        TypeExp::Unique(t, _) => format!("*{}", ty(t)),
        TypeExp::Arrow(n, a, b, _) => match n {
            Some(n) => format!("(-> ({}: {}) {})", n.name, ty(a), ty(b)),
            None => format!("(-> {} {})", ty(a), ty(b)),
        },
        TypeExp::Sum(cs, _) => format!(
            "(sum {})",
            cs.iter()
                .map(|(c, ts)| if ts.is_empty() {
                    format!("#{}", c.name)
                } else {
                    format!("(#{} {})", c.name, list(ts, ty))
                })
                .collect::<Vec<_>>()
                .join(" ")
        ),
        TypeExp::Exists(ns, t, _) => {
            format!(
                "(?{} {})",
                ns.iter()
                    .map(|n| format!("[{}]", n.name))
                    .collect::<String>(),
                ty(t)
            )
        }
    }
}

/// Renders a pattern.
pub fn pat(p: &Pat) -> String {
    match &p.kind {
        PatKind::Id(i) => i.name.clone(),
        PatKind::Wildcard => "_".into(),
        PatKind::Tuple(ps) => format!("(tuple {})", list(ps, pat)).replace("(tuple )", "()"),
        PatKind::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, p)| format!("{}={}", n.name, pat(p)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        PatKind::Ascribe(p, t) => format!("(: {} {})", pat(p), ty(t)),
        PatKind::Lit(l) => lit(l),
        PatKind::Constr(c, ps) => {
            if ps.is_empty() {
                format!("#{}", c.name)
            } else {
                format!("(#{} {})", c.name, list(ps, pat))
            }
        }
    }
}

/// Renders an expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Lit(l) => lit(l),
        ExprKind::Var { name, .. } => name.to_string(),
        ExprKind::Parens(e) => format!("(paren {})", expr(e)),
        ExprKind::Tuple(es) => format!("(tuple {})", list(es, expr)).replace("(tuple )", "()"),
        ExprKind::Record(fs) => format!(
            "(record {})",
            list(fs, |f| match f {
                RecordField::Named(n, e) => format!("({} {})", n.name, expr(e)),
                RecordField::Pun(n) => n.name.clone(),
            })
        ),
        ExprKind::ArrayLit(es) => format!("(array {})", list(es, expr)),
        ExprKind::Range {
            start,
            second,
            end,
            kind,
        } => {
            let k = match kind {
                RangeKind::UpToExclusive => "..<",
                RangeKind::ToInclusive => "...",
                RangeKind::DownToExclusive => "..>",
            };
            match second {
                Some(s) => format!("(.. {} {} {k} {})", expr(start), expr(s), expr(end)),
                None => format!("({k} {} {})", expr(start), expr(end)),
            }
        }
        ExprKind::Project(e, f) => format!("(. {} {})", expr(e), f.name),
        ExprKind::Index(a, ds) => format!("(index {} {})", expr(a), dims(ds)),
        ExprKind::Apply(f, args) => format!("(app {} {})", expr(f), list(args, expr)),
        ExprKind::Negate(e) => format!("(neg {})", expr(e)),
        ExprKind::Not(e) => format!("(not {})", expr(e)),
        ExprKind::BinOp { op, lhs, rhs, .. } => {
            format!("({} {} {})", op, expr(lhs), expr(rhs))
        }
        ExprKind::OpSection { op, .. } => format!("(section {})", op),
        ExprKind::OpSectionLeft { op, lhs, .. } => format!("(lsection {} {})", op, expr(lhs)),
        ExprKind::OpSectionRight { op, rhs, .. } => {
            format!("(rsection {} {})", op, expr(rhs))
        }
        ExprKind::ProjSection(fs) => format!("(proj {})", list(fs, |f| f.name.clone())),
        ExprKind::Lambda { params, ret, body } => format!(
            "(lambda ({}) {} {})",
            list(params, pat),
            ret.as_ref().map(ty).unwrap_or_else(|| "_".into()),
            expr(body)
        ),
        ExprKind::LetPat {
            sizes,
            pat: p,
            value,
            body,
        } => {
            let sz: String = sizes.iter().map(|s| format!("[{}] ", s.name)).collect();
            format!("(let {sz}{} {} {})", pat(p), expr(value), expr(body))
        }
        ExprKind::LetFun {
            name,
            type_params,
            params,
            ret,
            value,
            body,
        } => format!(
            "(letfun {} ({}) ({}) {} {} {})",
            name.name,
            list(type_params, tparam),
            list(params, pat),
            ret.as_ref().map(ty).unwrap_or_else(|| "_".into()),
            expr(value),
            expr(body)
        ),
        ExprKind::LetWith {
            dest,
            indices,
            value,
            body,
        } => {
            format!(
                "(letwith {} ({}) {} {})",
                dest.name,
                dims(indices),
                expr(value),
                expr(body)
            )
        }
        ExprKind::If { cond, then_, else_ } => {
            format!("(if {} {} {})", expr(cond), expr(then_), expr(else_))
        }
        ExprKind::Match { scrutinee, cases } => format!(
            "(match {} {})",
            expr(scrutinee),
            list(cases, |c| format!(
                "(case {} {})",
                pat(&c.pat),
                expr(&c.body)
            ))
        ),
        ExprKind::Loop {
            sizes,
            pat: p,
            init,
            form,
            body,
            attrs,
        } => {
            let sz: String = sizes.iter().map(|s| format!("[{}] ", s.name)).collect();
            let at: String = attrs.iter().map(|a| format!("#[{}] ", a.text)).collect();
            let init = init.as_ref().map(|e| expr(e)).unwrap_or_else(|| "_".into());
            let form = match form {
                LoopForm::For(i, n) => format!("(for {} {})", i.name, expr(n)),
                LoopForm::ForIn(p, xs) => format!("(for-in {} {})", pat(p), expr(xs)),
                LoopForm::While(c) => format!("(while {})", expr(c)),
            };
            format!("(loop {at}{sz}{} {init} {form} {})", pat(p), expr(body))
        }
        ExprKind::Update {
            src,
            path,
            indices,
            value,
        } => {
            let fields: String = path.iter().map(|f| format!(".{}", f.name)).collect();
            format!(
                "(update {}{fields} ({}) {})",
                expr(src),
                dims(indices),
                expr(value)
            )
        }
        ExprKind::RecordUpdate { src, path, value } => format!(
            "(recupdate {} {} {})",
            expr(src),
            path.iter()
                .map(|p| p.name.clone())
                .collect::<Vec<_>>()
                .join("."),
            expr(value)
        ),
        ExprKind::Ascribe(e, t) => format!("(: {} {})", expr(e), ty(t)),
        ExprKind::Coerce(e, t) => format!("(:> {} {})", expr(e), ty(t)),
        ExprKind::Constr(c, es) => {
            if es.is_empty() {
                format!("#{}", c.name)
            } else {
                format!("(#{} {})", c.name, list(es, expr))
            }
        }
        ExprKind::LocalOpen(m, e) => format!("(open {} {})", m, expr(e)),
        ExprKind::Attr(a, e) => format!("(attr {} {})", a.text, expr(e)),
    }
}
