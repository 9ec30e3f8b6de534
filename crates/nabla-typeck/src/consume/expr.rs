//! Expressions: what each construct aliases, observes and consumes.

use super::*;

/// `e` without parentheses and attributes around it.
pub(super) fn peel(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Parens(x) | ExprKind::Attr(_, x) => peel(x),
        _ => e,
    }
}

/// The innermost result expression of a body (through `let`s), for spans.
pub(super) fn result_expr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::LetPat { body, .. }
        | ExprKind::LetFun { body, .. }
        | ExprKind::LetWith { body, .. } => result_expr(body),
        ExprKind::Parens(x) | ExprKind::Attr(_, x) => result_expr(x),
        _ => e,
    }
}

/// A value of type `t` aliasing only the top-level constant `gid` in its
/// array parts (Futhark's `selfAlias`; values of type parameters and
/// functions do not).
fn self_alias(t: Option<&Type>, gid: u32) -> Als {
    match t {
        Some(Type::Array { .. } | Type::Acc { .. }) | None => Als::Arr(Ids::from([gid])),
        Some(Type::Record(fs)) => Als::Rec(
            fs.iter()
                .map(|(n, t)| (n.clone(), self_alias(Some(t), gid)))
                .collect(),
        ),
        Some(Type::Sum(cs)) => Als::Sum(
            cs.iter()
                .map(|(n, ts)| {
                    (
                        n.clone(),
                        ts.iter().map(|t| self_alias(Some(t), gid)).collect(),
                    )
                })
                .collect(),
        ),
        t => Als::fresh(t),
    }
}

impl<'a> Cx<'a> {
    pub(super) fn expr(&mut self, e: &Expr) -> R<Als> {
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            Err(err(e.span, "expression nested too deeply"))
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        Ok(r?.reshape(e.ty.as_ref()))
    }

    fn expr_inner(&mut self, e: &Expr) -> R<Als> {
        let ty = e.ty.as_ref();
        match &e.kind {
            ExprKind::Lit(_) => Ok(Als::fresh(ty)),
            ExprKind::ArrayLit(xs) => {
                for x in xs {
                    self.expr(x)?;
                }
                Ok(Als::fresh(ty))
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start)?;
                if let Some(s) = second {
                    self.expr(s)?;
                }
                self.expr(end)?;
                Ok(Als::fresh(ty))
            }
            ExprKind::Negate(x) | ExprKind::Not(x) => {
                self.expr(x)?;
                Ok(Als::fresh(ty))
            }
            ExprKind::Var { name, res, .. } => self.observe(name, res.as_ref(), ty, e.span),
            ExprKind::OpSection { op, op_res, .. } => self.observe(op, op_res.as_ref(), ty, e.span),
            ExprKind::Parens(x)
            | ExprKind::Attr(_, x)
            | ExprKind::Coerce(x, _)
            | ExprKind::LocalOpen(_, x) => self.expr(x),
            ExprKind::Ascribe(x, te) => {
                let a = self.expr(x)?;
                if let Some(t) = ty {
                    self.check_fun_value(&a, &Uniq::of(Some(te), t, false), e.span, false)?;
                }
                Ok(a)
            }
            ExprKind::Tuple(xs) if xs.len() == 1 => self.expr(&xs[0]),
            ExprKind::Tuple(xs) => {
                let mut out = Vec::new();
                for (k, x) in xs.iter().enumerate() {
                    out.push((k.to_string(), self.expr(x)?));
                }
                Ok(Als::Rec(out))
            }
            ExprKind::Record(fs) => self.record(fs),
            ExprKind::Project(x, f) => Ok(self.expr(x)?.field(&f.name)),
            ExprKind::Index(x, idx) => {
                let a = self.expr(x)?;
                self.dims(idx)?;
                Ok(Als::of_type(ty, &a.flat()))
            }
            ExprKind::Apply(f, args) => {
                let (f, args) = func::flatten_apply(f, args);
                self.apply(f, &args, e.span)
            }
            ExprKind::BinOp {
                op,
                op_res,
                lhs,
                rhs,
                ..
            } => self.binop(op, op_res.as_ref(), lhs, rhs, e.span),
            ExprKind::OpSectionLeft {
                op, op_res, lhs, ..
            } => self.section(op, op_res.as_ref(), lhs, 0),
            ExprKind::OpSectionRight {
                op, op_res, rhs, ..
            } => self.section(op, op_res.as_ref(), rhs, 1),
            ExprKind::ProjSection(_) => {
                let sig = ty.map(|t| Rc::new(FnSig::observing(Some(t), 1)));
                Ok(Als::Fun(Ids::new(), sig))
            }
            ExprKind::Lambda { params, ret, body } => self.lambda(params, ret.as_ref(), body),
            ExprKind::LetPat {
                pat, value, body, ..
            } => self.let_pat(pat, value, body),
            ExprKind::LetFun {
                name,
                params,
                ret,
                value,
                body,
                ..
            } => self.let_fun(name, params, ret.as_ref(), value, body),
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => self.let_with(dest, indices, value, body),
            ExprKind::Update {
                src,
                path,
                indices,
                value,
            } => {
                // Futhark: the indices, the value, then the array.
                self.dims(indices)?;
                let va = self.expr(value)?;
                let sa = self.expr(src)?;
                // `r with a.b[i] = v` updates the array in field `a.b`.
                let mut fa = sa.clone();
                for f in path {
                    fa = fa.field(&f.name);
                }
                self.overlap_check(&fa, &va, value.span, src.span)?;
                let mark = self.consumed.mark();
                self.consume_aliases(&fa.flat(), e.span)?;
                let gone = self.consumed.since(mark);
                // The updated array is fresh; the other fields keep their
                // aliases, except what this update consumed.
                Ok(sa
                    .set_field(path, fa.replace_ids(&Ids::new()))
                    .retain(&|i| !gone.contains(&i)))
            }
            ExprKind::RecordUpdate { src, path, value } => {
                let sa = self.expr(src)?;
                let va = self.expr(value)?;
                Ok(sa.set_field(path, va))
            }
            ExprKind::If { cond, then_, else_ } => {
                self.expr(cond)?;
                self.branches(2, |cx, k| cx.expr(if k == 0 { then_ } else { else_ }))
            }
            ExprKind::Match { scrutinee, cases } => {
                let sa = self.expr(scrutinee)?;
                self.branches(cases.len(), |cx, k| {
                    let c = &cases[k];
                    let (vmark, imark) = (cx.vars.len(), cx.ids.len());
                    cx.bind_let_pat(&c.pat, &sa);
                    let r = cx.expr(&c.body);
                    cx.unbind(vmark, imark);
                    r
                })
            }
            ExprKind::Constr(c, xs) => {
                let mut payload = Vec::new();
                for x in xs {
                    payload.push(self.expr(x)?);
                }
                Ok(match ty {
                    Some(Type::Sum(cs)) => Als::Sum(
                        cs.iter()
                            .map(|(n, ts)| {
                                if n == &c.name && ts.len() == payload.len() {
                                    (n.clone(), payload.clone())
                                } else {
                                    (n.clone(), ts.iter().map(|t| Als::fresh(Some(t))).collect())
                                }
                            })
                            .collect(),
                    ),
                    _ => {
                        let mut all = Ids::new();
                        payload.iter().for_each(|a| all.extend(a.flat()));
                        Als::of_type(ty, &all)
                    }
                })
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
                ..
            } => self.loop_(pat, init.as_deref(), form, body, e.span),
        }
    }

    fn dims(&mut self, idx: &[DimIndex]) -> R<()> {
        for d in idx {
            match d {
                DimIndex::Fix(e) => {
                    self.expr(e)?;
                }
                DimIndex::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.expr(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn record(&mut self, fs: &[RecordField]) -> R<Als> {
        let mut out: Vec<(Name, Als)> = Vec::new();
        for f in fs {
            match f {
                RecordField::Named(i, x) => out.push((i.name.clone(), self.expr(x)?)),
                RecordField::Pun(i) => {
                    let q = QualName {
                        quals: vec![],
                        name: i.name.clone(),
                        span: i.span,
                    };
                    let a = self.observe(&q, Some(&Res::Local), None, i.span)?;
                    out.push((i.name.clone(), a));
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Als::Rec(out))
    }

    /// What the name `name` (resolved to `res`, of type `ty` where known)
    /// aliases, without observing it.
    pub(super) fn name_als(
        &mut self,
        name: &QualName,
        res: Option<&Res>,
        ty: Option<&Type>,
        span: Span,
    ) -> Als {
        match res {
            Some(Res::Local) => match self.lookup(&name.name) {
                Some(k) => self.vars[k].als.clone(),
                None => Als::fresh(ty),
            },
            Some(Res::Global(id)) => {
                let Some(g) = self.globals.get(id) else {
                    return Als::fresh(ty);
                };
                let is_fun = matches!(ty, Some(Type::Arrow { .. }))
                    || (ty.is_none() && !g.constant)
                    || matches!(g.ty, Some(Type::Arrow { .. }));
                if is_fun {
                    return Als::Fun(Ids::new(), Some(g.sig.clone()));
                }
                if !g.constant {
                    return Als::fresh(ty);
                }
                let gid = match self.global_ids.get(id) {
                    Some(&i) => i,
                    None => {
                        let n = g.name.clone();
                        let i = self.new_id(&n, span, Origin::Global, Why::Global);
                        self.global_ids.insert(*id, i);
                        i
                    }
                };
                self_alias(ty.or(g.ty.as_ref()), gid)
            }
            Some(Res::Intrinsic(n)) => {
                if matches!(ty, Some(t) if !matches!(t, Type::Arrow { .. })) {
                    return Als::fresh(ty);
                }
                match self.intrinsic_sig(n) {
                    Some(s) => Als::Fun(Ids::new(), Some(s)),
                    None => Als::fresh(ty),
                }
            }
            Some(Res::Size) | None => Als::fresh(ty),
        }
    }

    /// Observes the name `name`: what it aliases must not be consumed.
    pub(super) fn observe(
        &mut self,
        name: &QualName,
        res: Option<&Res>,
        ty: Option<&Type>,
        span: Span,
    ) -> R<Als> {
        let a = self.name_als(name, res, ty, span);
        if let Some(Res::Local) = res {
            if let Some(k) = self.lookup(&name.name) {
                self.record_use(k, span);
            }
            self.check_not_consumed(&a.flat(), span, Some(&name.name))?;
        }
        Ok(a)
    }

    /// The signature of an intrinsic, from its type scheme. `copy`'s result
    /// is unique; `transpose`, `flatten` and `unflatten` (and their 3-D
    /// forms) return an array that aliases their argument, as in Futhark's
    /// prelude.
    fn intrinsic_sig(&mut self, n: &str) -> Option<Rc<FnSig>> {
        if let Some(s) = self.intr_sigs.get(n) {
            return Some(s.clone());
        }
        let scheme = self.intrinsics.get(n)?;
        let mut s = FnSig::of_scheme(&scheme.ty);
        match n {
            "copy" => s.ret = s.ret.set_unique(true),
            "transpose" | "flatten" | "flatten_3d" | "unflatten" | "unflatten_3d" => {
                s.ret = s.ret.set_unique(false)
            }
            _ => {}
        }
        let s = Rc::new(s);
        self.intr_sigs.insert(n.to_string(), s.clone());
        Some(s)
    }

    /// Checks branches (of `if`/`match`) separately from the same state;
    /// afterwards everything consumed in any branch is consumed, and the
    /// result aliases what any branch's result aliases, except what a branch
    /// consumed.
    fn branches(&mut self, n: usize, mut f: impl FnMut(&mut Self, usize) -> R<Als>) -> R<Als> {
        let mark = self.consumed.mark();
        let mut all: Vec<(u32, Span)> = Vec::new();
        let mut res: Option<Als> = None;
        for k in 0..n {
            let a = f(self, k);
            let cons = self.consumed.take_since(mark);
            let a = a?;
            all.extend(cons);
            res = Some(match res {
                None => a,
                Some(r) => r.combine(&a),
            });
        }
        for &(i, s) in &all {
            self.consumed.add(i, s);
        }
        let gone: Ids = all.iter().map(|(i, _)| *i).collect();
        Ok(res.unwrap_or(Als::Prim).retain(&|i| !gone.contains(&i)))
    }

    /// `let pat = value in body`.
    fn let_pat(&mut self, pat: &Pat, value: &Expr, body: &Expr) -> R<Als> {
        let mark = self.consumed.mark();
        let a = self.expr(value)?;
        let cons = self.consumed.since(mark);
        if let Some(&i) = cons.iter().next() {
            if !a.order_zero() {
                return Err(err_index(
                    value.span,
                    format!(
                        "Let-bound expression of higher-order type contains consumption, which is not allowed: evaluating it consumes {}, and the function it binds could be applied more than once. Consume a \"copy\" instead, or apply the function at once.",
                        self.describe(i)
                    ),
                    "contains-consumption",
                ));
            }
        }
        if let (PatKind::Ascribe(_, te), Some(t)) = (&pat.kind, value.ty.as_ref()) {
            self.check_fun_value(&a, &Uniq::of(Some(te), t, false), pat.span, false)?;
        }
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        self.bind_let_pat(pat, &a);
        let r = self.expr(body);
        self.unbind(vmark, imark);
        r
    }

    /// `let dest[indices] = value in body`.
    fn let_with(
        &mut self,
        dest: &Ident,
        indices: &[DimIndex],
        value: &Expr,
        body: &Expr,
    ) -> R<Als> {
        let q = QualName {
            quals: vec![],
            name: dest.name.clone(),
            span: dest.span,
        };
        let src = self.observe(&q, Some(&Res::Local), None, dest.span)?;
        self.dims(indices)?;
        let va = self.expr(value)?;
        self.consume_aliases(&src.flat(), dest.span)?;
        self.overlap_check(&src, &va, value.span, dest.span)?;
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        let fresh = src.replace_ids(&Ids::new());
        let (als, _) = self.bind_locations(&fresh, &dest.name, dest.span, Why::No);
        self.vars.push(Var {
            name: dest.name.clone(),
            als,
        });
        let r = self.expr(body);
        self.unbind(vmark, imark);
        r
    }
}
