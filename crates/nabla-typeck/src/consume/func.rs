//! Functions (top-level definitions, local functions, lambdas), their
//! parameters and results, and applications.

use super::expr::result_expr;
use super::*;

/// An application `f a b` with nested partial applications `(f a) b`
/// flattened: the function applied and all its arguments, in order.
pub(super) fn flatten_apply<'e>(f: &'e Expr, args: &'e [Expr]) -> (&'e Expr, Vec<&'e Expr>) {
    let mut f = f;
    let mut all: Vec<&Expr> = args.iter().collect();
    loop {
        match &f.kind {
            ExprKind::Parens(x) => f = x,
            ExprKind::Apply(g, xs) => {
                let mut v: Vec<&Expr> = xs.iter().collect();
                v.extend(all);
                all = v;
                f = g;
            }
            _ => return (f, all),
        }
    }
}

/// The declared uniqueness of a parameter pattern: each part as the
/// innermost type annotation around it declares it, unannotated parts not
/// unique.
pub(super) fn pat_uniq(p: &Pat) -> Uniq {
    pat_uniq_in(p, None)
}

fn pat_uniq_in(p: &Pat, outer: Option<&Uniq>) -> Uniq {
    match &p.kind {
        PatKind::Ascribe(inner, te) => {
            let u = match p.ty.as_ref() {
                Some(t) => Uniq::of(Some(te), t, false),
                None => Uniq::plain(None),
            };
            pat_uniq_in(inner, Some(&u))
        }
        PatKind::Tuple(ps) if ps.len() == 1 => pat_uniq_in(&ps[0], outer),
        PatKind::Tuple(ps) => Uniq::Rec(
            ps.iter()
                .enumerate()
                .map(|(k, q)| {
                    let n = k.to_string();
                    let u = pat_uniq_in(q, outer.and_then(|u| u.field(&n)));
                    (n, u)
                })
                .collect(),
        ),
        PatKind::Record(fs) => {
            let mut us: Vec<(Name, Uniq)> = fs
                .iter()
                .map(|(f, q)| {
                    (
                        f.name.clone(),
                        pat_uniq_in(q, outer.and_then(|u| u.field(&f.name))),
                    )
                })
                .collect();
            us.sort_by(|a, b| a.0.cmp(&b.0));
            Uniq::Rec(us)
        }
        _ => outer.cloned().unwrap_or_else(|| Uniq::plain(p.ty.as_ref())),
    }
}

/// The signature a definition declares (its parameters' annotations and
/// its declared result), for use when its body has an error.
pub(super) fn declared_sig(vb: &ValBind) -> FnSig {
    let ret_t = vb.body.ty.as_ref();
    FnSig {
        params: vb.params.iter().map(pat_uniq).collect(),
        ret: match (vb.ret.as_ref(), ret_t) {
            (Some(te), Some(t)) => Uniq::of(Some(te), t, false),
            _ => Uniq::plain(ret_t),
        },
    }
}

/// Where a function is defined: its body may not consume what is bound
/// outside it, for this reason.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Scope {
    TopLevel,
    Local,
    Lambda,
}

impl Scope {
    fn reason(self) -> &'static str {
        match self {
            Scope::TopLevel => "it is bound outside the function",
            Scope::Local => "it is bound outside the local function, which may not consume its free variables (it may be applied more than once)",
            Scope::Lambda => "it is bound outside the lambda, which may not consume its free variables (it may be applied more than once)",
        }
    }
}

/// A parameter variable: its group (first id), name, binding span and
/// declared uniqueness.
pub(super) struct ParamVar {
    pub id: u32,
    pub name: Name,
    pub span: Span,
    pub uniq: Uniq,
    /// Whether a type annotation declares its type.
    pub declared: bool,
}

/// How the variables of a parameter-like pattern are bound.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ParamMode {
    /// A function parameter: consumable if declared unique.
    Fun,
    /// A loop parameter: consumable unless declared non-unique.
    Loop,
    /// The element of `for … in`: never consumable.
    ForIn,
}

/// The value of a checked function: its signature, and what its result
/// aliases.
pub(super) struct Checked {
    pub sig: FnSig,
    pub body: Als,
}

impl<'a> Cx<'a> {
    // ------------------------------------------------------------ parameters

    /// Binds the variables of a parameter pattern: each aliases only itself
    /// (plus, for `for … in`, the array `extra`), is consumable as `mode`
    /// says, and gets the function signature its annotation declares.
    pub(super) fn bind_param_pat(
        &mut self,
        p: &Pat,
        declared: Option<&Uniq>,
        mode: ParamMode,
        extra: &Ids,
        out: &mut Vec<ParamVar>,
    ) {
        match &p.kind {
            PatKind::Id(i) => {
                let u = declared
                    .cloned()
                    .unwrap_or_else(|| Uniq::plain(p.ty.as_ref()));
                let why = match mode {
                    ParamMode::Fun if !u.is_unique() => Why::Param,
                    ParamMode::Loop if declared.is_some() && !u.is_unique() => Why::LoopDeclared,
                    ParamMode::ForIn => Why::ForIn,
                    _ => Why::No,
                };
                let a = Als::of_type(p.ty.as_ref(), extra).with_sigs(&u);
                let (als, id) = self.bind_locations(&a, &i.name, i.span, why);
                self.vars.push(Var {
                    name: i.name.clone(),
                    als,
                });
                out.push(ParamVar {
                    id,
                    name: i.name.clone(),
                    span: i.span,
                    uniq: u,
                    declared: declared.is_some(),
                });
            }
            PatKind::Ascribe(q, te) => {
                let u = match p.ty.as_ref() {
                    Some(t) => Uniq::of(Some(te), t, false),
                    None => Uniq::plain(None),
                };
                self.bind_param_pat(q, Some(&u), mode, extra, out);
            }
            PatKind::Tuple(ps) if ps.len() == 1 => {
                self.bind_param_pat(&ps[0], declared, mode, extra, out)
            }
            PatKind::Tuple(ps) => {
                for (k, q) in ps.iter().enumerate() {
                    let d = declared.and_then(|u| u.field(&k.to_string())).cloned();
                    self.bind_param_pat(q, d.as_ref(), mode, extra, out);
                }
            }
            PatKind::Record(fs) => {
                for (f, q) in fs {
                    let d = declared.and_then(|u| u.field(&f.name)).cloned();
                    self.bind_param_pat(q, d.as_ref(), mode, extra, out);
                }
            }
            PatKind::Constr(c, ps) => {
                for (k, q) in ps.iter().enumerate() {
                    let d = match declared {
                        Some(Uniq::Sum(cs)) => cs
                            .iter()
                            .find(|(n, _)| n == &c.name)
                            .and_then(|(_, us)| us.get(k))
                            .cloned(),
                        _ => None,
                    };
                    self.bind_param_pat(q, d.as_ref(), mode, extra, out);
                }
            }
            PatKind::Wildcard | PatKind::Lit(_) => {}
        }
    }

    /// Checks the size expressions in a parameter's type annotations, which
    /// may consume nothing bound so far.
    fn check_pat_sizes(&mut self, p: &Pat) -> R<()> {
        match &p.kind {
            PatKind::Ascribe(q, te) => {
                self.check_type_sizes(te)?;
                self.check_pat_sizes(q)
            }
            PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
                ps.iter().try_for_each(|q| self.check_pat_sizes(q))
            }
            PatKind::Record(fs) => fs.iter().try_for_each(|(_, q)| self.check_pat_sizes(q)),
            PatKind::Id(_) | PatKind::Wildcard | PatKind::Lit(_) => Ok(()),
        }
    }

    fn check_type_sizes(&mut self, te: &TypeExp) -> R<()> {
        match te {
            TypeExp::Array(se, t, _) => {
                self.check_size(se)?;
                self.check_type_sizes(t)
            }
            TypeExp::Named(_, args, _) => args.iter().try_for_each(|a| match a {
                TypeArg::Size(se) => self.check_size(se),
                TypeArg::Type(t) => self.check_type_sizes(t),
            }),
            TypeExp::Tuple(ts, _) => ts.iter().try_for_each(|t| self.check_type_sizes(t)),
            TypeExp::Record(fs, _) => fs.iter().try_for_each(|(_, t)| self.check_type_sizes(t)),
            TypeExp::Sum(cs, _) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .try_for_each(|t| self.check_type_sizes(t)),
            TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => self.check_type_sizes(t),
            TypeExp::Arrow(_, a, b, _) => {
                self.check_type_sizes(a)?;
                self.check_type_sizes(b)
            }
            TypeExp::Prim(..) => Ok(()),
        }
    }

    fn check_size(&mut self, se: &SizeExp) -> R<()> {
        let SizeExp::Expr(e) = se else {
            return Ok(());
        };
        if matches!(e.kind, ExprKind::Lit(_) | ExprKind::Var { .. }) {
            return Ok(());
        }
        self.barriers.push(Barrier {
            first: self.ids.len() as u32,
            reason: "a size in a parameter's type may not consume anything bound outside it",
        });
        let r = self.expr(e);
        self.barriers.pop();
        r.map(|_| ())
    }

    // ------------------------------------------------------------- functions

    /// A function (top-level, local, lambda): binds the parameters, checks
    /// the body (its consumption does not escape), and the rules on its
    /// result; gives its signature (with the declared result type for a
    /// top-level function, else the inferred one) and its result's aliases.
    pub(super) fn function(
        &mut self,
        params: &[Pat],
        ret: Option<&TypeExp>,
        body: &Expr,
        scope: Scope,
    ) -> R<Checked> {
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        self.barriers.push(Barrier {
            first: imark as u32,
            reason: scope.reason(),
        });
        let cmark = self.consumed.mark();
        let r = self.function_body(params, ret, body, scope);
        self.consumed.take_since(cmark);
        self.barriers.pop();
        self.unbind(vmark, imark);
        r
    }

    fn function_body(
        &mut self,
        params: &[Pat],
        ret: Option<&TypeExp>,
        body: &Expr,
        scope: Scope,
    ) -> R<Checked> {
        let mut pvars = Vec::new();
        let mut puniq = Vec::new();
        for p in params {
            self.check_pat_sizes(p)?;
            let u = pat_uniq(p);
            self.bind_param_pat(p, None, ParamMode::Fun, &Ids::new(), &mut pvars);
            puniq.push(u);
        }
        let a = self.expr(body)?;
        let ret_t = body.ty.as_ref();
        let declared = match (ret, ret_t) {
            (Some(te), Some(t)) => Some(Uniq::of(Some(te), t, false)),
            _ => None,
        };
        let span = result_expr(body).span;
        let rt = declared.clone().unwrap_or_else(|| Uniq::plain(ret_t));
        self.check_return_alias(&pvars, &rt, &a, span)?;
        if !params.is_empty() && self.global_aliases {
            self.check_global_aliases(&a, span)?;
        }
        let ret = match (scope, declared) {
            (Scope::TopLevel, Some(d)) => d,
            _ if params.is_empty() => self.ret_uniq(ret_t, &a, &|_| false),
            _ => {
                let consuming: Ids = pvars
                    .iter()
                    .filter(|p| p.uniq.is_unique())
                    .map(|p| p.id)
                    .collect();
                let forbidden = a.shared_between_parts();
                self.ret_uniq(ret_t, &a, &|x: &Als| {
                    self.groups(&self.bound(&x.array_flat()))
                        .is_subset(&consuming)
                        && x.flat().is_disjoint(&forbidden)
                })
            }
        };
        Ok(Checked {
            sig: FnSig { params: puniq, ret },
            body: a,
        })
    }

    /// The uniqueness of a result of type `t` aliasing `a`: an array part is
    /// unique if `unique` says so of its aliases (Futhark's
    /// `inferReturnUniqueness`); functions keep their signatures.
    fn ret_uniq(&self, t: Option<&Type>, a: &Als, unique: &dyn Fn(&Als) -> bool) -> Uniq {
        match t {
            Some(Type::Prim(_)) => Uniq::Prim,
            Some(Type::Arrow { .. }) => Uniq::Fun(a.sig().cloned()),
            Some(Type::Record(fs)) => Uniq::Rec(
                fs.iter()
                    .map(|(n, ft)| (n.clone(), self.ret_uniq(Some(ft), &a.field(n), unique)))
                    .collect(),
            ),
            Some(Type::Sum(cs)) => Uniq::Sum(
                cs.iter()
                    .map(|(n, ts)| {
                        let ps = ts
                            .iter()
                            .enumerate()
                            .map(|(k, pt)| {
                                let pa = match a.payloads(n) {
                                    Some(pl) if k < pl.len() => pl[k].clone(),
                                    _ => Als::Arr(a.flat()),
                                };
                                self.ret_uniq(Some(pt), &pa, unique)
                            })
                            .collect();
                        (n.clone(), ps)
                    })
                    .collect(),
            ),
            _ => Uniq::Arr(unique(a)),
        }
    }

    /// Error index "return-aliased" and "unique-return-aliased": a unique
    /// part of the result may not alias a parameter that is not consumable,
    /// nor another part of the result (Futhark's `checkReturnAlias`).
    fn check_return_alias(&self, pvars: &[ParamVar], ret: &Uniq, a: &Als, span: Span) -> R<()> {
        fn pairs(ret: &Uniq, a: &Als, out: &mut Vec<(bool, Ids)>) {
            match (ret, a) {
                (Uniq::Rec(us), Als::Rec(_)) => {
                    for (n, u) in us {
                        pairs(u, &a.field(n), out);
                    }
                }
                (u, a) => out.push((u.is_unique(), a.flat())),
            }
        }
        let mut parts = Vec::new();
        pairs(ret, a, &mut parts);
        let mut seen: Vec<(bool, u32)> = Vec::new();
        for (unique, names) in parts {
            let clash = names
                .iter()
                .find(|n| seen.iter().any(|(u, s)| s == *n && (unique || *u)));
            if let Some(&i) = clash {
                return Err(err_index(
                    span,
                    format!(
                        "A unique-typed component of the return value is aliased to some other component (both may alias {}). A unique result must not share memory with anything else; return a \"copy\" of one of them.",
                        self.describe(i)
                    ),
                    "unique-return-aliased",
                ));
            }
            if unique {
                let groups = self.groups(&names);
                if let Some(p) = pvars
                    .iter()
                    .find(|p| !p.uniq.consumable_param() && groups.contains(&p.id))
                {
                    return Err(err_index(
                        span,
                        format!(
                            "Unique-typed return value is aliased to \"{}\", which is not consumable. Return a \"copy\" of it, or declare the parameter's type unique (`*`).",
                            display(&p.name)
                        ),
                        "return-aliased",
                    )
                    .with_label(p.span, "the parameter is bound here"));
                }
            }
            seen.extend(names.into_iter().map(|n| (unique, n)));
        }
        Ok(())
    }

    /// Error index "alias-free-variable": a function's result may alias its
    /// parameters, but not a top-level constant.
    fn check_global_aliases(&self, a: &Als, span: Span) -> R<()> {
        let global = a.array_flat().into_iter().find(|&i| {
            self.ids
                .get(i as usize)
                .is_some_and(|x| x.origin == Origin::Global)
        });
        match global {
            None => Ok(()),
            Some(i) => Err(err_index(
                span,
                format!(
                    "Function result aliases the free variable \"{}\". Use \"copy\" to break the aliasing.",
                    display(&self.ids[i as usize].name)
                ),
                "alias-free-variable",
            )),
        }
    }

    /// A top-level definition.
    pub(super) fn valbind(&mut self, vb: &ValBind) -> R<FnSig> {
        let c = self.function(&vb.params, vb.ret.as_ref(), &vb.body, Scope::TopLevel)?;
        if let (true, Some(te)) = (vb.params.is_empty(), vb.ret.as_ref()) {
            if let Some(t) = vb.body.ty.as_ref() {
                let u = Uniq::of(Some(te), t, false);
                self.check_fun_value(&c.body, &u, vb.name.span, false)?;
                if u.is_unique() {
                    return Err(err(
                        te.span(),
                        "A top-level constant cannot have a unique type.",
                    ));
                }
            }
        }
        // A constant whose value is a function is applied like that function.
        if vb.params.is_empty() {
            if let Some(s) = c.body.sig() {
                return Ok((**s).clone());
            }
        }
        Ok(c.sig)
    }

    /// A lambda: a function value aliasing its free variables.
    pub(super) fn lambda(&mut self, params: &[Pat], ret: Option<&TypeExp>, body: &Expr) -> R<Als> {
        let (c, closure) = self.closure(|cx| cx.function(params, ret, body, Scope::Lambda))?;
        Ok(Als::Fun(closure, Some(Rc::new(c.sig))))
    }

    /// Runs `f` collecting the uses of variables bound before it; gives its
    /// result and what those variables alias (a closure's aliases).
    fn closure<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(T, Ids)> {
        self.push_collector();
        let r = f(self);
        let c = self.pop_collector();
        let mut closure = Ids::new();
        for (k, _) in c {
            if let Some(v) = self.vars.get(k) {
                closure.extend(v.als.flat());
            }
        }
        Ok((r?, closure))
    }

    /// `let name params = value in body` (a local function).
    pub(super) fn let_fun(
        &mut self,
        name: &Ident,
        params: &[Pat],
        ret: Option<&TypeExp>,
        value: &Expr,
        body: &Expr,
    ) -> R<Als> {
        let (c, closure) = self.closure(|cx| cx.function(params, ret, value, Scope::Local))?;
        let vmark = self.vars.len();
        self.vars.push(Var {
            name: name.name.clone(),
            als: Als::Fun(closure, Some(Rc::new(c.sig))),
        });
        let r = self.expr(body);
        self.vars.truncate(vmark);
        r
    }

    // ----------------------------------------------------------- applications

    /// The declared uniqueness of the first `n` parameters of a function of
    /// signature `sig` (through the functions it returns).
    fn arg_params(sig: &FnSig, n: usize) -> Vec<Uniq> {
        let mut out: Vec<Uniq> = sig.params.iter().take(n).cloned().collect();
        let mut ret = &sig.ret;
        while out.len() < n {
            match ret {
                Uniq::Fun(Some(s)) => {
                    out.extend(s.params.iter().take(n - out.len()).cloned());
                    ret = &s.ret;
                }
                _ => out.push(Uniq::Arr(false)),
            }
        }
        out
    }

    /// `f a1 … an`: the arguments right to left, then the function (a
    /// variable; another expression is checked first).
    pub(super) fn apply(&mut self, f: &Expr, args: &[&Expr], span: Span) -> R<Als> {
        let fp = super::expr::peel(f);
        let var = match &fp.kind {
            ExprKind::Var { name, res, .. } => Some((name, res.as_ref())),
            _ => None,
        };
        let mut f_als = match var {
            Some((name, res)) => self.name_als(name, res, fp.ty.as_ref(), fp.span),
            None => self.expr(f)?,
        };
        let sig = f_als
            .sig()
            .cloned()
            .unwrap_or_else(|| Rc::new(FnSig::observing(f.ty.as_ref(), args.len())));
        let params = Self::arg_params(&sig, args.len());
        let mut arg_als: Vec<Als> = vec![Als::Prim; args.len()];
        let mut prev: Vec<(Span, Ids)> = Vec::new();
        for k in (0..args.len()).rev() {
            let a = self.check_arg(args[k], &params[k], &prev, true)?;
            prev.push((args[k].span, self.bound(&a.flat())));
            arg_als[k] = a;
        }
        if var.is_some() {
            f_als = self.expr(f)?;
        }
        let fname = var.map(|(n, _)| n.name.clone());
        Ok(self.funcall(fname, &f_als, &sig, &arg_als, span))
    }

    /// A binary operator: a function of two arguments, checked left to right.
    pub(super) fn binop(
        &mut self,
        op: &QualName,
        res: Option<&Res>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> R<Als> {
        let op_als = self.observe(op, res, None, op.span)?;
        let sig = op_als
            .sig()
            .cloned()
            .unwrap_or_else(|| Rc::new(FnSig::observing(None, 2)));
        let params = Self::arg_params(&sig, 2);
        let la = self.check_arg(lhs, &params[0], &[], false)?;
        let prev = [(lhs.span, self.bound(&la.flat()))];
        let ra = self.check_arg(rhs, &params[1], &prev, false)?;
        Ok(self.funcall(Some(op.name.clone()), &op_als, &sig, &[la, ra], span))
    }

    /// An operator section `(x op)` (`fixed` = 0) or `(op y)` (1): a
    /// function of the other operand, aliasing the operator and the operand
    /// it holds.
    pub(super) fn section(
        &mut self,
        op: &QualName,
        res: Option<&Res>,
        arg: &Expr,
        fixed: usize,
    ) -> R<Als> {
        let op_als = self.observe(op, res, None, op.span)?;
        let a = self.expr(arg)?;
        let sig = op_als.sig().cloned();
        if sig
            .as_ref()
            .and_then(|s| s.params.get(fixed))
            .is_some_and(Uniq::is_unique)
        {
            self.consume_aliases(&a.flat(), arg.span)?;
        }
        let rest = sig.map(|s| {
            let mut params = s.params.clone();
            if fixed < params.len() {
                params.remove(fixed);
            }
            Rc::new(FnSig {
                params,
                ret: s.ret.clone(),
            })
        });
        let mut closure = op_als.flat();
        closure.extend(a.flat());
        Ok(Als::Fun(closure, rest))
    }

    /// One argument, for a parameter declared as `param` (Futhark's
    /// `checkArg`); `prev` are the bound aliases of the arguments checked
    /// before it. A consumed argument is consumed as a whole (`whole`) or
    /// field by field.
    fn check_arg(&mut self, arg: &Expr, param: &Uniq, prev: &[(Span, Ids)], whole: bool) -> R<Als> {
        let mark = self.consumed.mark();
        let a = self.expr(arg)?;
        if let Some(&i) = self.consumed.since(mark).iter().next() {
            if !a.order_zero() {
                return Err(err_index(
                    arg.span,
                    format!(
                        "Argument of functional type contains consumption, which is not allowed: evaluating it consumes {}, and the function it is passed to may apply it more than once.",
                        self.describe(i)
                    ),
                    "consuming-argument",
                ));
            }
        }
        self.check_fun_value(&a, param, arg.span, true)?;
        if param.is_unique() {
            self.no_self_aliases(&a, arg.span)?;
            if whole {
                self.consume_aliases(&a.flat(), arg.span)?;
            } else {
                self.consume_as_needed(&param.diet(), &a, arg.span)?;
            }
            let mine = self.bound(&a.flat());
            for (pspan, ids) in prev {
                if let Some(&v) = mine.intersection(ids).next() {
                    return Err(err(
                        arg.span,
                        format!(
                            "Argument is consumed, but aliases {}, which is also aliased by another argument. Pass a \"copy\" of one of them.",
                            self.describe(v)
                        ),
                    )
                    .with_label(*pspan, "the other argument"));
                }
            }
        }
        Ok(a)
    }

    /// A function value `a` given where a function declared as `expected`
    /// is wanted (an argument, or an ascription): it may not consume an
    /// argument the declared type does not consume (Futhark: a consuming
    /// function passed to a higher-order function could be applied to the
    /// same array more than once), nor return a non-unique result where a
    /// unique one is declared.
    pub(super) fn check_fun_value(
        &self,
        a: &Als,
        expected: &Uniq,
        span: Span,
        argument: bool,
    ) -> R<()> {
        let Some(actual) = a.sig() else {
            return Ok(());
        };
        let declared = match expected {
            Uniq::Fun(s) => s.as_ref(),
            Uniq::Arr(_) => None,
            _ => return Ok(()),
        };
        let what = if argument {
            "Argument of functional type"
        } else {
            "Expression"
        };
        for (k, p) in actual.params.iter().enumerate() {
            let ok = declared
                .and_then(|d| d.params.get(k))
                .is_some_and(Uniq::is_unique);
            if p.is_unique() && !ok {
                return Err(err_index(
                    span,
                    format!(
                        "{what} does not have expected type: it is a consuming function (its parameter {} is unique, `*`), but the expected function type does not consume that parameter, and a function may apply it more than once. Pass a function that consumes a \"copy\" instead.",
                        k + 1
                    ),
                    "consuming-argument",
                ));
            }
        }
        if let Some(d) = declared {
            if d.ret.is_unique() && !actual.ret.is_unique() {
                return Err(err(
                    span,
                    format!(
                        "{what} does not have expected type: the expected function type declares a unique (`*`) result, but this function's result is not unique (it may alias its arguments or free variables)."
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The result of applying a function (aliasing `f_als`, of signature
    /// `sig`) to arguments aliasing `args` (Futhark's `checkFuncall`): a
    /// non-unique part aliases a fresh id for this application, the
    /// function's closure and the arguments not consumed.
    fn funcall(
        &mut self,
        fname: Option<Name>,
        f_als: &Als,
        sig: &FnSig,
        args: &[Als],
        span: Span,
    ) -> Als {
        let app = self.new_id(
            fname.as_deref().unwrap_or(""),
            span,
            Origin::AppRes(fname.clone()),
            Why::No,
        );
        let mut appres = f_als.flat();
        appres.insert(app);
        apply_sig(sig, appres, args)
    }
}

/// The aliases of the result of applying a function of signature `sig`,
/// whose application aliases `appres`, to arguments aliasing `args`.
fn apply_sig(sig: &FnSig, mut appres: Ids, args: &[Als]) -> Als {
    let n = sig.params.len();
    for (p, a) in sig.params.iter().zip(args) {
        if !p.is_unique() {
            appres.extend(a.flat());
        }
    }
    if args.len() < n {
        return Als::Fun(
            appres,
            Some(Rc::new(FnSig {
                params: sig.params[args.len()..].to_vec(),
                ret: sig.ret.clone(),
            })),
        );
    }
    let r = ret_als(&sig.ret, &appres);
    if args.len() == n {
        return r;
    }
    match r {
        Als::Fun(ids, Some(s)) => apply_sig(&s, ids, &args[n..]),
        r => {
            let mut all = r.flat();
            args[n..].iter().for_each(|a| all.extend(a.flat()));
            Als::Arr(all)
        }
    }
}

/// A result declared as `ret` of an application aliasing `appres`.
fn ret_als(ret: &Uniq, appres: &Ids) -> Als {
    match ret {
        Uniq::Prim => Als::Prim,
        Uniq::Arr(true) => Als::Arr(Ids::new()),
        Uniq::Arr(false) => Als::Arr(appres.clone()),
        Uniq::Fun(s) => Als::Fun(appres.clone(), s.clone()),
        Uniq::Rec(fs) => Als::Rec(
            fs.iter()
                .map(|(n, u)| (n.clone(), ret_als(u, appres)))
                .collect(),
        ),
        Uniq::Sum(cs) => Als::Sum(
            cs.iter()
                .map(|(n, us)| (n.clone(), us.iter().map(|u| ret_als(u, appres)).collect()))
                .collect(),
        ),
    }
}
