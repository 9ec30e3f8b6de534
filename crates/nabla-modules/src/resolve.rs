//! Name resolution inside declarations: rewrites every reference to a module
//! member (`M.x`, `x` after `open M`, `M.(e)`, `x M.+ y`, `M.t`) into the
//! flat name the member was given, and leaves every other name alone.
//!
//! Local bindings (parameters, `let`, `loop`, `case`, lambda parameters,
//! size and type parameters) shadow module names; a local open `M.(e)`
//! shadows everything bound outside it.

use crate::env::{Env, ModVal, TypeTarget, ValTarget};
use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::rc::Rc;

/// One entry of the lexical scope, innermost last.
enum Frame {
    /// A local value (or size) binding.
    Val(Name),
    /// A type parameter.
    Type(Name),
    /// A local open `M.(e)`.
    Open(Rc<Env>),
}

/// What an unqualified value name refers to.
enum Found {
    /// A local binding: leave the name as it is.
    Local,
    Target(ValTarget),
    /// Not known to the module pass (an intrinsic, or an error the type
    /// checker reports): leave it.
    Unknown,
}

/// Rewrites names in one declaration against the module-level `scope`.
pub(crate) struct Resolver<'a> {
    scope: &'a Env,
    frames: Vec<Frame>,
    pub diags: Vec<Diagnostic>,
}

fn error(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, message)
}

/// The qualified name `quals[..n]` joined by dots, for messages.
fn path_text(quals: &[Name]) -> String {
    quals.join(".")
}

impl<'a> Resolver<'a> {
    pub fn new(scope: &'a Env) -> Resolver<'a> {
        Resolver {
            scope,
            frames: Vec::new(),
            diags: Vec::new(),
        }
    }

    fn lookup_val(&self, name: &str) -> Found {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Val(n) if n == name => return Found::Local,
                Frame::Open(env) => {
                    if let Some(t) = env.vals.get(name) {
                        if !(env.builtin && crate::env::is_operator(name)) {
                            return Found::Target(t.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        match self.scope.vals.get(name) {
            Some(t) => Found::Target(t.clone()),
            None => Found::Unknown,
        }
    }

    fn is_local_val(&self, name: &str) -> bool {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Val(n) if n == name => return true,
                Frame::Open(env) if env.vals.contains_key(name) => return false,
                _ => {}
            }
        }
        false
    }

    fn lookup_type(&self, name: &str) -> Option<TypeTarget> {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Type(n) if n == name => return None,
                Frame::Open(env) => {
                    if let Some(t) = env.types.get(name) {
                        return Some(t.clone());
                    }
                }
                _ => {}
            }
        }
        self.scope.types.get(name).cloned()
    }

    /// The module named `name` visible here (local opens first).
    fn lookup_mod(&self, name: &str) -> Option<ModVal> {
        for f in self.frames.iter().rev() {
            if let Frame::Open(env) = f {
                if let Some(m) = env.mods.get(name) {
                    return Some(m.clone());
                }
            }
        }
        self.scope.mods.get(name).cloned()
    }

    /// Follows `quals[1..upto]` from the module `first`; the environment
    /// reached, or an error at `span`.
    fn descend(
        &self,
        first: ModVal,
        quals: &[Name],
        upto: usize,
        span: Span,
    ) -> Result<Rc<Env>, Diagnostic> {
        let mut cur = first;
        for i in 1..=upto {
            let env = match &cur {
                ModVal::Struct(env) => env.clone(),
                ModVal::Functor(_) => {
                    return Err(error(
                        span,
                        format!(
                            "`{}` is a parametric module: apply it to a module first",
                            path_text(&quals[..i]),
                        ),
                    ))
                }
            };
            if i == upto {
                return Ok(env);
            }
            match env.mods.get(&quals[i]) {
                Some(m) => cur = m.clone(),
                None => {
                    return Err(error(
                        span,
                        format!(
                            "module `{}` has no submodule `{}`",
                            path_text(&quals[..i]),
                            quals[i]
                        ),
                    ))
                }
            }
        }
        match cur {
            ModVal::Struct(env) => Ok(env),
            ModVal::Functor(f) => Err(error(
                span,
                format!("`{}` is a parametric module: apply it first", f.name),
            )),
        }
    }

    /// Resolves a module path written in an expression (`M.N` in `M.N.(e)`).
    fn module_path(&self, q: &QualName) -> Result<Rc<Env>, Diagnostic> {
        let mut path = q.quals.clone();
        path.push(q.name.clone());
        let first = self
            .lookup_mod(&path[0])
            .ok_or_else(|| error(q.span, format!("unknown module `{q}`")))?;
        self.descend(first, &path, path.len(), q.span)
    }

    /// Resolves a value name (variable or operator). Returns the new name and
    /// the fields to project from it (`M.r.a` where `r` is a record member).
    fn resolve_val_name(&mut self, q: &QualName) -> Option<(QualName, Vec<Name>)> {
        if q.quals.is_empty() {
            return match self.lookup_val(&q.name) {
                Found::Target(t) => Some((
                    QualName {
                        quals: t.quals,
                        name: t.name,
                        span: q.span,
                    },
                    vec![],
                )),
                Found::Local | Found::Unknown => None,
            };
        }
        if self.is_local_val(&q.quals[0]) {
            return None; // field access on a local record
        }
        let first = self.lookup_mod(&q.quals[0])?;
        // Walk down submodules while the qualifiers name them; a qualifier
        // that names a value member starts field projections.
        let mut env = match self.descend(first.clone(), &q.quals, 1, q.span) {
            Ok(e) => e,
            Err(d) => {
                self.diags.push(d);
                return None;
            }
        };
        let mut i = 1;
        while i < q.quals.len() {
            let n = &q.quals[i];
            if let Some(m) = env.mods.get(n) {
                let m = m.clone();
                env = match m {
                    ModVal::Struct(e) => e,
                    ModVal::Functor(f) => {
                        self.diags.push(error(
                            q.span,
                            format!("`{}` is a parametric module: apply it first", f.name),
                        ));
                        return None;
                    }
                };
                i += 1;
            } else if let Some(t) = env.vals.get(n) {
                let mut fields: Vec<Name> = q.quals[i + 1..].to_vec();
                fields.push(q.name.clone());
                let name = QualName {
                    quals: t.quals.clone(),
                    name: t.name.clone(),
                    span: q.span,
                };
                return Some((name, fields));
            } else {
                self.diags.push(error(
                    q.span,
                    format!(
                        "module `{}` has no member `{}`",
                        path_text(&q.quals[..i]),
                        n
                    ),
                ));
                return None;
            }
        }
        match env.vals.get(&q.name) {
            Some(t) => Some((
                QualName {
                    quals: t.quals.clone(),
                    name: t.name.clone(),
                    span: q.span,
                },
                vec![],
            )),
            None => {
                self.diags.push(error(
                    q.span,
                    format!(
                        "module `{}` has no member `{}`",
                        path_text(&q.quals),
                        q.name
                    ),
                ));
                None
            }
        }
    }

    /// Resolves an operator name in place (operators are never projected).
    fn resolve_op(&mut self, op: &mut QualName) {
        if let Some((n, fields)) = self.resolve_val_name(op) {
            if fields.is_empty() {
                *op = n;
            } else {
                self.diags
                    .push(error(op.span, format!("`{op}` is not a function")));
            }
        }
    }

    // ----------------------------------------------------------- binders

    fn push_val(&mut self, name: &str) {
        self.frames.push(Frame::Val(name.to_string()));
    }

    fn bind_type_params(&mut self, tps: &[TypeParam]) {
        for tp in tps {
            match tp {
                TypeParam::Size(i) => self.frames.push(Frame::Val(i.name.clone())),
                TypeParam::Type(i, _) => self.frames.push(Frame::Type(i.name.clone())),
            }
        }
    }

    /// Resolves the types inside a pattern and returns the names it binds.
    fn pat(&mut self, p: &mut Pat, binds: &mut Vec<Name>) {
        match &mut p.kind {
            PatKind::Id(i) => binds.push(i.name.clone()),
            PatKind::Wildcard | PatKind::Lit(_) => {}
            PatKind::Tuple(ps) => {
                for p in ps {
                    self.pat(p, binds);
                }
            }
            PatKind::Record(fs) => {
                for (_, p) in fs {
                    self.pat(p, binds);
                }
            }
            PatKind::Ascribe(p, t) => {
                self.ty(t);
                self.pat(p, binds);
            }
            PatKind::Constr(_, ps) => {
                for p in ps {
                    self.pat(p, binds);
                }
            }
        }
    }

    /// Resolves a pattern's types and brings its names into scope.
    fn bind_pat(&mut self, p: &mut Pat) {
        let mut binds = Vec::new();
        self.pat(p, &mut binds);
        for b in binds {
            self.push_val(&b);
        }
    }

    // ------------------------------------------------------------- types

    /// Resolves the type names in a type expression.
    pub fn ty(&mut self, t: &mut TypeExp) {
        let mark = self.frames.len();
        self.ty_inner(t);
        self.frames.truncate(mark);
    }

    fn ty_inner(&mut self, t: &mut TypeExp) {
        match t {
            TypeExp::Prim(..) => {}
            TypeExp::Named(q, args, span) => {
                for a in args.iter_mut() {
                    match a {
                        TypeArg::Size(s) => self.size(s),
                        TypeArg::Type(t) => self.ty(t),
                    }
                }
                let target = if q.quals.is_empty() {
                    self.lookup_type(&q.name)
                } else if self.is_local_val(&q.quals[0]) {
                    None
                } else if let Some(first) = self.lookup_mod(&q.quals[0]) {
                    match self.descend(first, &q.quals, q.quals.len(), q.span) {
                        Ok(env) => match env.types.get(&q.name) {
                            Some(t) => Some(t.clone()),
                            None => {
                                self.diags.push(error(
                                    q.span,
                                    format!(
                                        "module `{}` has no type `{}`",
                                        path_text(&q.quals),
                                        q.name
                                    ),
                                ));
                                None
                            }
                        },
                        Err(d) => {
                            self.diags.push(d);
                            None
                        }
                    }
                } else {
                    None
                };
                match target {
                    Some(TypeTarget::Flat(n)) => {
                        q.quals.clear();
                        q.name = n;
                    }
                    Some(TypeTarget::Prim(p)) => {
                        if args.is_empty() {
                            *t = TypeExp::Prim(p, *span);
                        } else {
                            self.diags
                                .push(error(*span, format!("type `{q}` takes no arguments")));
                        }
                    }
                    None => {}
                }
            }
            TypeExp::Tuple(ts, _) => {
                for t in ts {
                    self.ty_inner(t);
                }
            }
            TypeExp::Record(fs, _) => {
                for (_, t) in fs {
                    self.ty_inner(t);
                }
            }
            TypeExp::Array(s, t, _) => {
                self.size(s);
                self.ty_inner(t);
            }
            TypeExp::Unique(t, _) => self.ty_inner(t),
            TypeExp::Arrow(name, a, b, _) => {
                self.ty_inner(a);
                if let Some(n) = name {
                    self.push_val(&n.name);
                }
                self.ty_inner(b);
            }
            TypeExp::Sum(cs, _) => {
                for (_, ts) in cs {
                    for t in ts {
                        self.ty_inner(t);
                    }
                }
            }
            TypeExp::Exists(names, t, _) => {
                for n in names.iter() {
                    self.push_val(&n.name);
                }
                self.ty_inner(t);
            }
        }
    }

    fn size(&mut self, s: &mut SizeExp) {
        if let SizeExp::Expr(e) = s {
            self.expr(e);
        }
    }

    // ------------------------------------------------------- declarations

    /// Resolves a value declaration (its name is not in scope in its body).
    pub fn val_bind(&mut self, vb: &mut ValBind) {
        let mark = self.frames.len();
        self.bind_type_params(&vb.type_params);
        for p in vb.params.iter_mut() {
            self.bind_pat(p);
        }
        if let Some(t) = &mut vb.ret {
            self.ty(t);
        }
        self.expr(&mut vb.body);
        self.frames.truncate(mark);
    }

    /// Resolves a type declaration.
    pub fn type_bind(&mut self, tb: &mut TypeBind) {
        let mark = self.frames.len();
        self.bind_type_params(&tb.params);
        self.ty(&mut tb.def);
        self.frames.truncate(mark);
    }

    // -------------------------------------------------------- expressions

    fn dims(&mut self, dims: &mut [DimIndex]) {
        for d in dims {
            match d {
                DimIndex::Fix(e) => self.expr(e),
                DimIndex::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.expr(e);
                    }
                }
            }
        }
    }

    /// Resolves the names in an expression.
    pub fn expr(&mut self, e: &mut Expr) {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Lit(_) | ExprKind::ProjSection(_) => {}
            ExprKind::Var { name, .. } => {
                if let Some((n, fields)) = self.resolve_val_name(name) {
                    let mut cur = Expr {
                        kind: ExprKind::Var {
                            name: n,
                            res: None,
                            inst: vec![],
                        },
                        span,
                        ty: None,
                    };
                    for f in fields {
                        cur = Expr {
                            kind: ExprKind::Project(Box::new(cur), Ident { name: f, span }),
                            span,
                            ty: None,
                        };
                    }
                    *e = cur;
                }
            }
            ExprKind::Parens(x)
            | ExprKind::Negate(x)
            | ExprKind::Not(x)
            | ExprKind::Project(x, _)
            | ExprKind::Attr(_, x) => self.expr(x),
            ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
                for x in xs {
                    self.expr(x);
                }
            }
            ExprKind::Record(fields) => {
                for f in fields.iter_mut() {
                    match f {
                        RecordField::Named(_, x) => self.expr(x),
                        RecordField::Pun(id) => {
                            if let Found::Target(t) = self.lookup_val(&id.name) {
                                let value = Expr {
                                    kind: ExprKind::Var {
                                        name: QualName {
                                            quals: t.quals,
                                            name: t.name,
                                            span: id.span,
                                        },
                                        res: None,
                                        inst: vec![],
                                    },
                                    span: id.span,
                                    ty: None,
                                };
                                *f = RecordField::Named(id.clone(), value);
                            }
                        }
                    }
                }
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start);
                if let Some(s) = second {
                    self.expr(s);
                }
                self.expr(end);
            }
            ExprKind::Index(x, dims) => {
                self.expr(x);
                self.dims(dims);
            }
            ExprKind::Apply(f, args) => {
                self.expr(f);
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::BinOp { op, lhs, rhs, .. } => {
                self.resolve_op(op);
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::OpSection { op, .. } => self.resolve_op(op),
            ExprKind::OpSectionLeft { op, lhs: x, .. }
            | ExprKind::OpSectionRight { op, rhs: x, .. } => {
                self.resolve_op(op);
                self.expr(x);
            }
            ExprKind::Lambda { params, ret, body } => {
                let mark = self.frames.len();
                for p in params.iter_mut() {
                    self.bind_pat(p);
                }
                if let Some(t) = ret {
                    self.ty(t);
                }
                self.expr(body);
                self.frames.truncate(mark);
            }
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => {
                self.expr(value);
                let mark = self.frames.len();
                for s in sizes.iter() {
                    self.push_val(&s.name);
                }
                self.bind_pat(pat);
                self.expr(body);
                self.frames.truncate(mark);
            }
            ExprKind::LetFun {
                name,
                type_params,
                params,
                ret,
                value,
                body,
            } => {
                let mark = self.frames.len();
                self.bind_type_params(type_params);
                for p in params.iter_mut() {
                    self.bind_pat(p);
                }
                if let Some(t) = ret {
                    self.ty(t);
                }
                self.expr(value);
                self.frames.truncate(mark);
                self.push_val(&name.name);
                self.expr(body);
                self.frames.truncate(mark);
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                dest,
            } => {
                self.dims(indices);
                self.expr(value);
                let mark = self.frames.len();
                self.push_val(&dest.name);
                self.expr(body);
                self.frames.truncate(mark);
            }
            ExprKind::If { cond, then_, else_ } => {
                self.expr(cond);
                self.expr(then_);
                self.expr(else_);
            }
            ExprKind::Match { scrutinee, cases } => {
                self.expr(scrutinee);
                for c in cases {
                    let mark = self.frames.len();
                    self.bind_pat(&mut c.pat);
                    self.expr(&mut c.body);
                    self.frames.truncate(mark);
                }
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
                    self.expr(i);
                }
                let mark = self.frames.len();
                match form {
                    LoopForm::For(_, bound) => self.expr(bound),
                    LoopForm::ForIn(_, xs) => self.expr(xs),
                    LoopForm::While(_) => {}
                }
                for s in sizes.iter() {
                    self.push_val(&s.name);
                }
                self.bind_pat(pat);
                match form {
                    LoopForm::For(i, _) => self.push_val(&i.name),
                    LoopForm::ForIn(p, _) => self.bind_pat(p),
                    LoopForm::While(c) => self.expr(c),
                }
                self.expr(body);
                self.frames.truncate(mark);
            }
            ExprKind::Update {
                src,
                indices,
                value,
                ..
            } => {
                self.expr(src);
                self.dims(indices);
                self.expr(value);
            }
            ExprKind::RecordUpdate { src, value, .. } => {
                self.expr(src);
                self.expr(value);
            }
            ExprKind::Ascribe(x, t) | ExprKind::Coerce(x, t) => {
                self.expr(x);
                self.ty(t);
            }
            ExprKind::LocalOpen(q, x) => match self.module_path(q) {
                Ok(env) => {
                    self.frames.push(Frame::Open(env));
                    self.expr(x);
                    self.frames.pop();
                    let inner = std::mem::replace(x.as_mut(), placeholder(span));
                    e.kind = ExprKind::Parens(Box::new(inner));
                }
                Err(d) => self.diags.push(d),
            },
        }
    }
}

/// A throw-away expression used while moving a subexpression out of its node.
fn placeholder(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Tuple(vec![]),
        span,
        ty: None,
    }
}
