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
    /// A type parameter, and how lifted it is.
    Type(Name, Liftedness),
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

/// What a type name refers to.
enum TypeRef {
    /// A type parameter in scope, with its liftedness.
    Param(Liftedness),
    Target(TypeTarget),
    /// Neither (the type checker reports it).
    Unknown,
}

/// Rewrites names in one declaration against the module-level `scope`.
pub(crate) struct Resolver<'a> {
    scope: &'a Env,
    frames: Vec<Frame>,
    pub diags: Vec<Diagnostic>,
    /// Report type names that are not in scope (in module types, which
    /// the type checker never sees; elsewhere it reports them).
    pub unknown_types_are_errors: bool,
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
            unknown_types_are_errors: false,
        }
    }

    fn lookup_val(&self, name: &str) -> Found {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Val(n) if n == name => return Found::Local,
                Frame::Open(env) => {
                    if let Some(t) = env.vals.get(name) {
                        if !(env.builtin && crate::env::is_operator(name))
                            || crate::env::typed_operator(t)
                        {
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

    fn lookup_type(&self, name: &str) -> TypeRef {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Type(n, l) if n == name => return TypeRef::Param(*l),
                Frame::Open(env) => {
                    if let Some(t) = env.types.get(name) {
                        return TypeRef::Target(t.clone());
                    }
                }
                _ => {}
            }
        }
        match self.scope.types.get(name) {
            Some(t) => TypeRef::Target(t.clone()),
            None => TypeRef::Unknown,
        }
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
        let Some(first) = self.lookup_mod(&q.quals[0]) else {
            // A field of a top-level record, or a member of the
            // intrinsics (both for the type checker); otherwise no such
            // name exists here (a module declared further down included).
            if !matches!(self.lookup_val(&q.quals[0]), Found::Target(_))
                && q.quals[0] != crate::INTRINSICS
            {
                self.diags.push(error(
                    q.span,
                    format!(
                        "Unknown name \"{q}\": no module or variable `{}` is in scope here",
                        q.quals[0]
                    ),
                ));
            }
            return None;
        };
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
                TypeParam::Type(i, l) => self.frames.push(Frame::Type(i.name.clone(), *l)),
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

    /// Resolves the type names in a type expression and returns how lifted
    /// the type is (Futhark's rules: a function type is lifted, an
    /// existential size makes a type size-lifted, a named type is as
    /// lifted as declared). An array of a lifted or size-lifted type is an
    /// error.
    pub fn ty(&mut self, t: &mut TypeExp) -> Liftedness {
        let mark = self.frames.len();
        let l = self.ty_inner(t);
        self.frames.truncate(mark);
        l
    }

    fn ty_inner(&mut self, t: &mut TypeExp) -> Liftedness {
        match t {
            TypeExp::Prim(..) => Liftedness::Unlifted,
            TypeExp::Named(q, args, span) => {
                // An application is as lifted as its most lifted argument.
                let mut arg_l = Liftedness::Unlifted;
                for a in args.iter_mut() {
                    match a {
                        TypeArg::Size(s) => self.size(s),
                        TypeArg::Type(t) => arg_l = arg_l.max(self.ty(t)),
                    }
                }
                let target = if q.quals.is_empty() {
                    self.lookup_type(&q.name)
                } else if self.is_local_val(&q.quals[0]) {
                    TypeRef::Unknown
                } else if let Some(first) = self.lookup_mod(&q.quals[0]) {
                    match self.descend(first, &q.quals, q.quals.len(), q.span) {
                        Ok(env) => match env.types.get(&q.name) {
                            Some(t) => TypeRef::Target(t.clone()),
                            None => {
                                self.diags.push(error(
                                    q.span,
                                    format!(
                                        "module `{}` has no type `{}`",
                                        path_text(&q.quals),
                                        q.name
                                    ),
                                ));
                                TypeRef::Unknown
                            }
                        },
                        Err(d) => {
                            self.diags.push(d);
                            TypeRef::Unknown
                        }
                    }
                } else {
                    TypeRef::Unknown
                };
                match target {
                    TypeRef::Target(TypeTarget::Flat(info)) => {
                        q.quals.clear();
                        q.name = info.flat.clone();
                        info.liftedness.max(arg_l)
                    }
                    TypeRef::Target(TypeTarget::Prim(p)) => {
                        if args.is_empty() {
                            *t = TypeExp::Prim(p, *span);
                        } else {
                            self.diags
                                .push(error(*span, format!("type `{q}` takes no arguments")));
                        }
                        Liftedness::Unlifted
                    }
                    TypeRef::Param(l) => l,
                    TypeRef::Unknown => {
                        if self.unknown_types_are_errors {
                            self.diags
                                .push(error(q.span, format!("Unknown type \"{q}\"")));
                        }
                        Liftedness::Unlifted
                    }
                }
            }
            TypeExp::Tuple(ts, _) => {
                let mut l = Liftedness::Unlifted;
                for t in ts {
                    l = l.max(self.ty_inner(t));
                }
                l
            }
            TypeExp::Record(fs, _) => {
                let mut l = Liftedness::Unlifted;
                for (_, t) in fs {
                    l = l.max(self.ty_inner(t));
                }
                l
            }
            TypeExp::Array(s, elem, span) => {
                self.size(s);
                let l = self.ty_inner(elem);
                let why = match l {
                    Liftedness::Unlifted => None,
                    Liftedness::SizeLifted => Some(("size-lifted", "might cause irregular array")),
                    Liftedness::Lifted => Some(("lifted", "might contain function")),
                };
                if let Some((what, why)) = why {
                    self.diags.push(error(
                        *span,
                        format!(
                            "Cannot create array with elements of {what} type \"{}\" ({why}).",
                            crate::types::show_type_exp(elem)
                        ),
                    ));
                }
                Liftedness::Unlifted
            }
            TypeExp::Unique(t, _) => self.ty_inner(t),
            TypeExp::Arrow(name, a, b, _) => {
                self.ty_inner(a);
                if let Some(n) = name {
                    self.push_val(&n.name);
                }
                self.ty_inner(b);
                Liftedness::Lifted
            }
            TypeExp::Sum(cs, _) => {
                let mut l = Liftedness::Unlifted;
                for (_, ts) in cs {
                    for t in ts {
                        l = l.max(self.ty_inner(t));
                    }
                }
                l
            }
            TypeExp::Exists(names, t, _) => {
                for n in names.iter() {
                    self.push_val(&n.name);
                }
                self.ty_inner(t).max(Liftedness::SizeLifted)
            }
        }
    }

    fn size(&mut self, s: &mut SizeExp) {
        if let SizeExp::Expr(e) = s {
            self.expr(e);
        }
    }

    // ------------------------------------------------------- declarations

    /// Resolves a value declaration. A function's own name is in scope in
    /// its body after its parameters (Futhark allows top-level functions to
    /// recurse; the type checker binds it), a constant's is not.
    pub fn val_bind(&mut self, vb: &mut ValBind) {
        let mark = self.frames.len();
        self.bind_type_params(&vb.type_params);
        for p in vb.params.iter_mut() {
            self.bind_pat(p);
        }
        if let Some(t) = &mut vb.ret {
            self.ty(t);
        }
        if !vb.params.is_empty() {
            self.push_val(&vb.name.name);
        }
        self.expr(&mut vb.body);
        self.frames.truncate(mark);
    }

    /// Resolves `t` with the type parameters `tps` in scope; returns how
    /// lifted it is.
    pub fn ty_with_params(&mut self, tps: &[TypeParam], t: &mut TypeExp) -> Liftedness {
        let mark = self.frames.len();
        self.bind_type_params(tps);
        let l = self.ty(t);
        self.frames.truncate(mark);
        l
    }

    /// Resolves a type declaration; returns how lifted its definition is.
    pub fn type_bind(&mut self, tb: &mut TypeBind) -> Liftedness {
        let mark = self.frames.len();
        self.bind_type_params(&tb.params);
        let l = self.ty(&mut tb.def);
        self.frames.truncate(mark);
        l
    }

    /// Resolves a type declaration written by the user and checks
    /// Futhark's rules on it: no parameter bound twice, the definition no
    /// more lifted than declared, no existential size in a non-lifted
    /// abbreviation, every size parameter used.
    pub fn check_type_bind(&mut self, tb: &mut TypeBind) {
        self.diags.extend(duplicate_type_params(&tb.params));
        let l = self.type_bind(tb);
        let name = &tb.name.name;
        let message = match (tb.liftedness, l) {
            (declared, Liftedness::Lifted) if declared < Liftedness::Lifted => Some(
                "Non-lifted type abbreviations may not contain functions.\nHint: consider using 'type^'."
                    .to_string(),
            ),
            (declared, Liftedness::SizeLifted) if declared < Liftedness::SizeLifted => Some(
                "Non-size-lifted type abbreviations may not contain size-lifted types.\nHint: consider using 'type~'."
                    .to_string(),
            ),
            (Liftedness::Unlifted, _) if crate::types::anonymous_size_outside_results(&tb.def) => {
                Some(format!(
                    "Non-lifted type abbreviations may not use existential sizes in their definition.\nHint: use 'type~' or add size parameters to \"{name}\"."
                ))
            }
            _ => tb.params.iter().find_map(|p| match p {
                TypeParam::Size(n) if !crate::types::mentions_size(&tb.def, &n.name) => {
                    Some(format!("Size parameter \"[{}]\" unused.", n.name))
                }
                _ => None,
            }),
        };
        if let Some(m) = message {
            self.diags.push(error(tb.span, m));
        }
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

/// Type parameters bound twice in one list (a size and a type parameter
/// may share a name).
pub(crate) fn duplicate_type_params(tps: &[TypeParam]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (i, tp) in tps.iter().enumerate() {
        let (id, size) = match tp {
            TypeParam::Size(n) => (n, true),
            TypeParam::Type(a, _) => (a, false),
        };
        let earlier = tps[..i].iter().find(|p| match p {
            TypeParam::Size(n) => size && n.name == id.name,
            TypeParam::Type(a, _) => !size && a.name == id.name,
        });
        if let Some(TypeParam::Size(first) | TypeParam::Type(first, _)) = earlier {
            let what = if size { "Size" } else { "Type" };
            diags.push(
                error(
                    id.span,
                    format!(
                        "{what} parameter \"{}\" previously defined in the same parameter list.",
                        id.name
                    ),
                )
                .with_label(first.span, "previously defined here"),
            );
        }
    }
    diags
}

/// A throw-away expression used while moving a subexpression out of its node.
fn placeholder(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Tuple(vec![]),
        span,
        ty: None,
    }
}
