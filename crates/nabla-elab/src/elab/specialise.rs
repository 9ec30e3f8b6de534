//! Recursive functions: which definitions are recursive, and the static
//! arguments of a recursive higher-order function.
//!
//! A non-recursive higher-order function is inlined at each application;
//! a recursive one cannot be (its inlining would not end). It becomes one
//! IR function per instance and per *static shape* of its function-valued
//! arguments instead: the closures passed to it are known at compile time
//! (the type checker makes every recursive call pass its higher-order
//! parameters unchanged), so the function is specialised to their code,
//! and the run-time values they capture become further parameters. A
//! recursive call passes the same closures, rebuilt over those parameters,
//! so it has the same static shape and calls the instance being built.

use super::*;
use std::collections::BTreeSet;

/// The static (function-valued) arguments of a call of a recursive
/// function, and the caller's variables they capture.
pub(crate) struct Statics<'a> {
    /// Per parameter: the static value passed, or `None` for a dynamic
    /// (first-order) argument, passed as usual.
    pub args: Vec<Option<SV<'a>>>,
    /// The variables of the caller that the static values capture, in
    /// order, with their types there: the specialisation's last parameters.
    pub caps: Vec<(Var, ir::Type)>,
    /// The static shape of `args`: code, types and the positions of the
    /// captured variables (not their identity), part of the instance's key.
    pub key: String,
}

/// Pass one over static values: the key and the captured variables.
struct Capture<'a> {
    key: String,
    caps: Vec<(Var, ir::Type)>,
    index: HashMap<Var, usize>,
    /// Closures already described (shared ones are written once).
    seen: HashMap<*const Clo<'a>, usize>,
}

impl<'a> Elab<'a> {
    /// The static arguments of a call of a recursive function whose
    /// (instantiated) parameter types are `ptys`: those of a higher-order
    /// type.
    pub(super) fn static_args(
        &mut self,
        fb: &FunBuilder,
        ptys: &[STy],
        args: &[SV<'a>],
    ) -> Statics<'a> {
        let mut c = Capture {
            key: String::new(),
            caps: vec![],
            index: HashMap::new(),
            seen: HashMap::new(),
        };
        let mut out = vec![];
        for (k, a) in args.iter().enumerate() {
            let dynamic = ptys.get(k).is_none_or(first_order);
            if dynamic {
                c.key.push_str("|d");
                out.push(None);
            } else {
                c.key.push('|');
                self.capture(fb, &mut c, a);
                out.push(Some(a.clone()));
            }
        }
        Statics {
            args: out,
            caps: c.caps,
            key: c.key,
        }
    }

    fn capture_atoms(fb: &FunBuilder, c: &mut Capture<'a>, atoms: &[Atom]) {
        for a in atoms {
            match a {
                Atom::Var(v) => {
                    let i = match c.index.get(v) {
                        Some(i) => *i,
                        None => {
                            let i = c.caps.len();
                            c.caps.push((*v, fb.var_ty(*v)));
                            c.index.insert(*v, i);
                            i
                        }
                    };
                    c.key.push_str(&format!("v{i},"));
                }
                Atom::Const(k) => c.key.push_str(&format!("c{k:?},")),
            }
        }
    }

    /// Describes the values bound to `names` in `env` (the part of a
    /// closure's environment its code can use).
    fn capture_env(&mut self, fb: &FunBuilder, c: &mut Capture<'a>, env: &Env<'a>, names: &[Name]) {
        c.key.push('[');
        for n in names {
            if let Some(v) = env.get(n) {
                c.key.push_str(n);
                c.key.push('=');
                let v = v.clone();
                self.capture(fb, c, &v);
                c.key.push(';');
            }
        }
        c.key.push(']');
    }

    fn capture(&mut self, fb: &FunBuilder, c: &mut Capture<'a>, sv: &SV<'a>) {
        match sv {
            SV::Dyn(atoms, t) => {
                c.key.push_str(&format!("D{}(", strip_sizes(t)));
                Self::capture_atoms(fb, c, atoms);
                c.key.push(')');
            }
            SV::Rec(fs) => {
                c.key.push('{');
                for (n, v) in fs {
                    c.key.push_str(n);
                    c.key.push('=');
                    self.capture(fb, c, v);
                    c.key.push(';');
                }
                c.key.push('}');
            }
            SV::Constr(name, payload) => {
                c.key.push('#');
                c.key.push_str(name);
                c.key.push('(');
                for v in payload {
                    self.capture(fb, c, v);
                    c.key.push(';');
                }
                c.key.push(')');
            }
            SV::Fun(clo) => {
                let ptr = Rc::as_ptr(clo);
                if let Some(k) = c.seen.get(&ptr) {
                    c.key.push_str(&format!("#{k}"));
                    return;
                }
                let k = c.seen.len();
                c.seen.insert(ptr, k);
                c.key.push_str(&format!("@{k}"));
                match &**clo {
                    Clo::Lambda {
                        params,
                        body,
                        env,
                        subst,
                        ..
                    } => {
                        c.key.push_str(&format!(
                            "L{:p}<{}>",
                            *body as *const Expr,
                            subst_key(subst)
                        ));
                        let names = self.lambda_names(params, body, subst);
                        self.capture_env(fb, c, env, &names);
                    }
                    Clo::Global {
                        id,
                        subst,
                        ty,
                        env,
                        hints,
                    } => {
                        c.key.push_str(&format!("G{}<{}>", id.0, subst_key(subst)));
                        let names = type_names(ty.as_ref());
                        if let Some(t) = ty {
                            c.key.push_str(&format!(":{t}"));
                        }
                        self.capture_env(fb, c, env, &names);
                        for (n, a) in hints {
                            c.key.push_str(n);
                            Self::capture_atoms(fb, c, std::slice::from_ref(a));
                        }
                    }
                    Clo::Intrinsic {
                        name,
                        ty,
                        env,
                        hints,
                    } => {
                        c.key.push_str(&format!("I{name}:{ty}"));
                        let names = type_names(Some(ty));
                        self.capture_env(fb, c, env, &names);
                        Self::capture_atoms(fb, c, hints);
                    }
                    Clo::Partial { f, args } => {
                        c.key.push_str("P(");
                        self.capture(fb, c, &SV::Fun(f.clone()));
                        for a in args {
                            c.key.push(';');
                            self.capture(fb, c, a);
                        }
                        c.key.push(')');
                    }
                    Clo::RightSection { op, rhs } => {
                        c.key.push_str("R(");
                        self.capture(fb, c, op);
                        c.key.push(';');
                        self.capture(fb, c, rhs);
                        c.key.push(')');
                    }
                    Clo::ProjSection(fields) => {
                        c.key.push('S');
                        for f in fields.iter() {
                            c.key.push('.');
                            c.key.push_str(&f.name);
                        }
                    }
                }
            }
        }
    }

    /// A static value with its captured variables replaced by `map` (the
    /// specialisation's parameters), closures' environments cut down to
    /// what their code can use, and the sizes of its types forgotten
    /// (they named the caller's sizes).
    pub(super) fn rebuild_static(
        &mut self,
        sv: &SV<'a>,
        map: &HashMap<Var, Var>,
        memo: &mut HashMap<*const Clo<'a>, Rc<Clo<'a>>>,
    ) -> SV<'a> {
        let atom = |a: &Atom| match a {
            Atom::Var(v) => Atom::Var(map.get(v).copied().unwrap_or(*v)),
            a => *a,
        };
        match sv {
            SV::Dyn(atoms, t) => SV::Dyn(atoms.iter().map(atom).collect(), forget_sizes(t)),
            SV::Rec(fs) => SV::Rec(
                fs.iter()
                    .map(|(n, v)| (n.clone(), self.rebuild_static(v, map, memo)))
                    .collect(),
            ),
            SV::Constr(name, payload) => SV::Constr(
                name.clone(),
                payload
                    .iter()
                    .map(|v| self.rebuild_static(v, map, memo))
                    .collect(),
            ),
            SV::Fun(clo) => {
                let ptr = Rc::as_ptr(clo);
                if let Some(r) = memo.get(&ptr) {
                    return SV::Fun(r.clone());
                }
                let new = match &**clo {
                    Clo::Lambda {
                        params,
                        body,
                        env,
                        subst,
                        type_params,
                    } => {
                        let names = self.lambda_names(params, body, subst);
                        Clo::Lambda {
                            params,
                            body,
                            env: self.rebuild_env(env, &names, map, memo),
                            subst: subst.clone(),
                            type_params,
                        }
                    }
                    Clo::Global {
                        id,
                        subst,
                        ty,
                        env,
                        hints,
                    } => Clo::Global {
                        id: *id,
                        subst: subst.clone(),
                        ty: ty.clone(),
                        env: self.rebuild_env(env, &type_names(ty.as_ref()), map, memo),
                        hints: hints.iter().map(|(n, a)| (n.clone(), atom(a))).collect(),
                    },
                    Clo::Intrinsic {
                        name,
                        ty,
                        env,
                        hints,
                    } => Clo::Intrinsic {
                        name: name.clone(),
                        ty: ty.clone(),
                        env: self.rebuild_env(env, &type_names(Some(ty)), map, memo),
                        hints: hints.iter().map(atom).collect(),
                    },
                    Clo::Partial { f, args } => {
                        let f = match self.rebuild_static(&SV::Fun(f.clone()), map, memo) {
                            SV::Fun(f) => f,
                            _ => f.clone(),
                        };
                        Clo::Partial {
                            f,
                            args: args
                                .iter()
                                .map(|a| self.rebuild_static(a, map, memo))
                                .collect(),
                        }
                    }
                    Clo::RightSection { op, rhs } => Clo::RightSection {
                        op: self.rebuild_static(op, map, memo),
                        rhs: self.rebuild_static(rhs, map, memo),
                    },
                    Clo::ProjSection(fields) => Clo::ProjSection(fields),
                };
                let new = Rc::new(new);
                memo.insert(ptr, new.clone());
                SV::Fun(new)
            }
        }
    }

    fn rebuild_env(
        &mut self,
        env: &Env<'a>,
        names: &[Name],
        map: &HashMap<Var, Var>,
        memo: &mut HashMap<*const Clo<'a>, Rc<Clo<'a>>>,
    ) -> Env<'a> {
        let mut out = Env::default();
        for n in names {
            if let Some(v) = env.get(n) {
                let v = v.clone();
                out = out.bind(n, self.rebuild_static(&v, map, memo));
            }
        }
        out
    }

    /// Every name the code of a lambda (or local function) may look up in
    /// its environment: the names it mentions, the sizes named in its
    /// types and in its type substitution (an over-approximation: names it
    /// binds itself are included too). Sorted; cached per body.
    fn lambda_names(&mut self, params: &'a [Pat], body: &'a Expr, subst: &Subst) -> Vec<Name> {
        let key = body as *const Expr;
        let base = match self.lambda_names.get(&key) {
            Some(ns) => ns.clone(),
            None => {
                let mut out = BTreeSet::new();
                for p in params {
                    pat_names(p, &mut out);
                }
                expr_names(body, &mut out);
                let ns: Rc<Vec<Name>> = Rc::new(out.into_iter().collect());
                self.lambda_names.insert(key, ns.clone());
                ns
            }
        };
        if subst.is_empty() {
            return (*base).clone();
        }
        let mut out: BTreeSet<Name> = base.iter().cloned().collect();
        for t in subst.values() {
            sty_names(t, &mut out);
        }
        out.into_iter().collect()
    }
}

/// The instantiation of a closure as part of a key.
fn subst_key(s: &Subst) -> String {
    let mut ks: Vec<String> = s
        .iter()
        .map(|(n, t)| format!("{n}={}", strip_sizes(t)))
        .collect();
    ks.sort();
    ks.join(",")
}

/// The size names in an optional type, sorted.
fn type_names(t: Option<&STy>) -> Vec<Name> {
    let mut out = BTreeSet::new();
    if let Some(t) = t {
        sty_names(t, &mut out);
    }
    out.into_iter().collect()
}

/// A type with every named size made unknown.
fn forget_sizes(t: &STy) -> STy {
    match t {
        STy::Array {
            elem,
            shape,
            unique,
        } => STy::Array {
            elem: Box::new(forget_sizes(elem)),
            shape: shape
                .iter()
                .map(|s| match s {
                    Size::Var(_) => Size::Any,
                    s => s.clone(),
                })
                .collect(),
            unique: *unique,
        },
        t => t.map_children(forget_sizes),
    }
}

/// The size names in a semantic type (including function types).
fn sty_names(t: &STy, out: &mut BTreeSet<Name>) {
    if let STy::Array { shape, .. } = t {
        for s in shape {
            if let Size::Var(n) = s {
                out.insert(n.clone());
            }
        }
    }
    t.for_each_child(|c| sty_names(c, out));
}

fn typeexp_names(te: &TypeExp, out: &mut BTreeSet<Name>) {
    match te {
        TypeExp::Prim(..) => {}
        TypeExp::Named(_, args, _) => {
            for a in args {
                match a {
                    ast::TypeArg::Size(s) => sizeexp_names(s, out),
                    ast::TypeArg::Type(t) => typeexp_names(t, out),
                }
            }
        }
        TypeExp::Tuple(ts, _) => ts.iter().for_each(|t| typeexp_names(t, out)),
        TypeExp::Record(fs, _) => fs.iter().for_each(|(_, t)| typeexp_names(t, out)),
        TypeExp::Array(s, t, _) => {
            sizeexp_names(s, out);
            typeexp_names(t, out);
        }
        TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => typeexp_names(t, out),
        TypeExp::Arrow(_, a, b, _) => {
            typeexp_names(a, out);
            typeexp_names(b, out);
        }
        TypeExp::Sum(cs, _) => cs
            .iter()
            .for_each(|(_, ts)| ts.iter().for_each(|t| typeexp_names(t, out))),
    }
}

fn sizeexp_names(s: &SizeExp, out: &mut BTreeSet<Name>) {
    if let SizeExp::Expr(e) = s {
        expr_names(e, out);
    }
}

/// The names a pattern binds or mentions in its types.
fn pat_names(p: &Pat, out: &mut BTreeSet<Name>) {
    if let Some(t) = &p.ty {
        sty_names(t, out);
    }
    match &p.kind {
        PatKind::Id(i) => {
            out.insert(i.name.clone());
        }
        PatKind::Wildcard | PatKind::Lit(_) => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|p| pat_names(p, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, p)| pat_names(p, out)),
        PatKind::Ascribe(p, te) => {
            pat_names(p, out);
            typeexp_names(te, out);
        }
    }
}

/// The names an expression mentions (see [`Elab::lambda_names`]).
fn expr_names(e: &Expr, out: &mut BTreeSet<Name>) {
    visit_exprs(e, &mut |e| {
        if let Some(t) = &e.ty {
            sty_names(t, out);
        }
        match &e.kind {
            ExprKind::Var { name, inst, .. }
            | ExprKind::OpSection {
                op: name,
                op_inst: inst,
                ..
            }
            | ExprKind::OpSectionLeft {
                op: name,
                op_inst: inst,
                ..
            }
            | ExprKind::OpSectionRight {
                op: name,
                op_inst: inst,
                ..
            }
            | ExprKind::BinOp {
                op: name,
                op_inst: inst,
                ..
            } => {
                if name.quals.is_empty() {
                    out.insert(name.name.clone());
                }
                inst.iter().for_each(|(_, t)| sty_names(t, out));
            }
            ExprKind::Ascribe(_, te) | ExprKind::Coerce(_, te) => typeexp_names(te, out),
            ExprKind::Record(fs) => {
                for f in fs {
                    if let ast::RecordField::Pun(i) = f {
                        out.insert(i.name.clone());
                    }
                }
            }
            ExprKind::Lambda { params, ret, .. } | ExprKind::LetFun { params, ret, .. } => {
                params.iter().for_each(|p| pat_names(p, out));
                if let Some(te) = ret {
                    typeexp_names(te, out);
                }
            }
            ExprKind::LetPat { pat, .. } => pat_names(pat, out),
            ExprKind::LetWith { dest, .. } => {
                out.insert(dest.name.clone());
            }
            ExprKind::Match { cases, .. } => cases.iter().for_each(|c| pat_names(&c.pat, out)),
            // Without an initial value, the pattern's variables are read
            // from the enclosing scope.
            ExprKind::Loop { pat, form, .. } => {
                pat_names(pat, out);
                match form {
                    ast::LoopForm::For(i, _) => {
                        out.insert(i.name.clone());
                    }
                    ast::LoopForm::ForIn(p, _) => pat_names(p, out),
                    ast::LoopForm::While(_) => {}
                }
            }
            _ => {}
        }
    });
}

/// Whether the body of the definition `vb` refers to `vb` itself.
pub(super) fn is_recursive(vb: &ValBind) -> bool {
    if vb.params.is_empty() {
        return false;
    }
    let own = |res: &Option<Res>| matches!(res, Some(Res::Global(id)) if *id == vb.id);
    let mut found = false;
    visit_exprs(&vb.body, &mut |e| match &e.kind {
        ExprKind::Var { res, .. } => found |= own(res),
        ExprKind::OpSection { op_res, .. }
        | ExprKind::OpSectionLeft { op_res, .. }
        | ExprKind::OpSectionRight { op_res, .. }
        | ExprKind::BinOp { op_res, .. } => found |= own(op_res),
        _ => {}
    });
    found
}

/// Calls `f` on every expression in `e` (`e` included), sizes in type
/// expressions excepted.
fn visit_exprs<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        f(e);
        let dims = |idx: &'e [ast::DimIndex], stack: &mut Vec<&'e Expr>| {
            for d in idx {
                match d {
                    ast::DimIndex::Fix(x) => stack.push(x),
                    ast::DimIndex::Slice { start, end, stride } => {
                        stack.extend([start, end, stride].into_iter().flatten())
                    }
                }
            }
        };
        match &e.kind {
            ExprKind::Lit(_)
            | ExprKind::ProjSection(_)
            | ExprKind::Var { .. }
            | ExprKind::OpSection { .. } => {}
            ExprKind::OpSectionLeft { lhs: x, .. }
            | ExprKind::OpSectionRight { rhs: x, .. }
            | ExprKind::Parens(x)
            | ExprKind::Attr(_, x)
            | ExprKind::LocalOpen(_, x)
            | ExprKind::Negate(x)
            | ExprKind::Not(x)
            | ExprKind::Project(x, _)
            | ExprKind::Ascribe(x, _)
            | ExprKind::Coerce(x, _)
            | ExprKind::Lambda { body: x, .. } => stack.push(x),
            ExprKind::BinOp { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
                stack.extend(xs)
            }
            ExprKind::Record(fs) => {
                for fl in fs {
                    if let ast::RecordField::Named(_, x) = fl {
                        stack.push(x);
                    }
                }
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                stack.push(start);
                if let Some(s) = second {
                    stack.push(s);
                }
                stack.push(end);
            }
            ExprKind::Index(x, idx) => {
                stack.push(x);
                dims(idx, &mut stack);
            }
            ExprKind::Apply(g, args) => {
                stack.push(g);
                stack.extend(args);
            }
            ExprKind::LetPat { value, body, .. } | ExprKind::LetFun { value, body, .. } => {
                stack.push(value);
                stack.push(body);
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                ..
            } => {
                dims(indices, &mut stack);
                stack.push(value);
                stack.push(body);
            }
            ExprKind::If { cond, then_, else_ } => {
                stack.push(cond);
                stack.push(then_);
                stack.push(else_);
            }
            ExprKind::Match { scrutinee, cases } => {
                stack.push(scrutinee);
                stack.extend(cases.iter().map(|c| &c.body));
            }
            ExprKind::Loop {
                init, form, body, ..
            } => {
                if let Some(i) = init {
                    stack.push(i);
                }
                match form {
                    ast::LoopForm::For(_, b) => stack.push(b),
                    ast::LoopForm::ForIn(_, xs) => stack.push(xs),
                    ast::LoopForm::While(c) => stack.push(c),
                }
                stack.push(body);
            }
            ExprKind::Update {
                src,
                indices,
                value,
                ..
            } => {
                stack.push(src);
                dims(indices, &mut stack);
                stack.push(value);
            }
            ExprKind::RecordUpdate { src, value, .. } => {
                stack.push(src);
                stack.push(value);
            }
        }
    }
}

/// A type as part of a key, without its sizes: instantiations differing
/// only in sizes share one specialisation.
fn strip_sizes(t: &STy) -> String {
    fn go(t: &STy, o: &mut String) {
        match t {
            STy::Array { elem, shape, .. } => {
                for _ in shape {
                    o.push_str("[]");
                }
                go(elem, o);
            }
            STy::Record(fs) => {
                o.push('{');
                for (n, t) in fs {
                    o.push_str(n);
                    o.push(':');
                    go(t, o);
                    o.push(',');
                }
                o.push('}');
            }
            STy::Sum(cs) => {
                o.push('<');
                for (n, ts) in cs {
                    o.push('#');
                    o.push_str(n);
                    for t in ts {
                        o.push(' ');
                        go(t, o);
                    }
                    o.push('|');
                }
                o.push('>');
            }
            STy::Arrow { param, ret, .. } => {
                o.push('(');
                go(param, o);
                o.push_str("->");
                go(ret, o);
                o.push(')');
            }
            STy::Acc { arr, .. } => {
                o.push_str("acc(");
                go(arr, o);
                o.push(')');
            }
            t => o.push_str(&t.to_string()),
        }
    }
    let mut o = String::new();
    go(t, &mut o);
    o
}
