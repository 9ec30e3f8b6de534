//! Loops (Futhark's `checkLoop`): the body is checked first with every
//! loop parameter consumable; the parameters it consumes (and those
//! declared unique) are consuming, which decides what the initial value
//! consumes; the values the body returns for them are checked, and the
//! body may not use what the initial value consumes.

use super::expr::result_expr;
use super::func::{ParamMode, ParamVar};
use super::*;

const LOOP_REASON: &str = "it is bound outside the loop, and a loop body may not consume what is bound outside it (the body runs more than once)";

/// The diet of a loop's parameter pattern once the consuming parameters
/// (ids) are known.
fn loop_diet(p: &Pat, pvars: &[ParamVar], consuming: &Ids) -> Diet {
    match &p.kind {
        PatKind::Id(i) => match pvars.iter().find(|v| v.span == i.span) {
            Some(v) if consuming.contains(&v.id) => Diet::Consume,
            _ => Diet::Observe,
        },
        PatKind::Ascribe(q, _) => loop_diet(q, pvars, consuming),
        PatKind::Tuple(ps) if ps.len() == 1 => loop_diet(&ps[0], pvars, consuming),
        PatKind::Tuple(ps) => Diet::Rec(
            ps.iter()
                .enumerate()
                .map(|(k, q)| (k.to_string(), loop_diet(q, pvars, consuming)))
                .collect(),
        ),
        PatKind::Record(fs) => Diet::Rec(
            fs.iter()
                .map(|(f, q)| (f.name.clone(), loop_diet(q, pvars, consuming)))
                .collect(),
        ),
        _ => Diet::Observe,
    }
}

/// A loop's result, from the initial value: the consumed parts are fresh;
/// the others alias the loop's result id `res` and the initial value (all
/// of it, `all`, if nothing is consumed; else their own part of it).
fn loop_result(diet: &Diet, init: &Als, res: u32, all: Option<&Ids>) -> Als {
    match diet {
        Diet::Consume => init.replace_ids(&Ids::new()),
        Diet::Observe => {
            let mut ids = all.cloned().unwrap_or_else(|| init.flat());
            ids.insert(res);
            init.replace_ids(&ids)
        }
        Diet::Rec(ds) => Als::Rec(
            ds.iter()
                .map(|(n, d)| (n.clone(), loop_result(d, &init.field(n), res, all)))
                .collect(),
        ),
    }
}

/// What the value returned for each loop parameter aliases so far: of
/// the consuming ones, and of the others.
#[derive(Default)]
struct Returned {
    cons: Ids,
    obs: Ids,
}

impl<'a> Cx<'a> {
    pub(super) fn loop_(
        &mut self,
        pat: &Pat,
        init: Option<&Expr>,
        form: &LoopForm,
        body: &Expr,
        span: Span,
    ) -> R<Als> {
        // The bound of `for i < n` and the array of `for x in xs` are
        // evaluated once, before the loop.
        let mut elements = Ids::new();
        let mut array = None;
        match form {
            LoopForm::For(_, b) => {
                self.expr(b)?;
            }
            LoopForm::ForIn(_, xs) => {
                elements = self.expr(xs)?.flat();
                array = Some((elements.clone(), xs.span));
            }
            LoopForm::While(_) => {}
        }
        let (vmark, imark) = (self.vars.len(), self.ids.len());
        self.barriers.push(Barrier {
            first: imark as u32,
            reason: LOOP_REASON,
        });
        self.push_collector();
        let cmark = self.consumed.mark();
        let mut pvars = Vec::new();
        let r = self.loop_body(pat, form, body, &elements, &mut pvars);
        let body_cons: Ids = self
            .consumed
            .take_since(cmark)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        let uses = self.pop_collector();
        self.barriers.pop();
        self.unbind(vmark, imark);
        let body_als = r?.reshape(pat.ty.as_ref());
        let consuming = self.converge(pat, &pvars, body_cons, &body_als, result_expr(body).span)?;
        let diet = loop_diet(pat, &pvars, &consuming);
        // The initial value, checked after the body (as Futhark does).
        let amark = self.consumed.mark();
        let ia = match init {
            Some(i) => self.expr(i)?,
            None => self.implicit_init(pat)?,
        };
        let ispan = init.map(|i| i.span).unwrap_or(pat.span);
        if diet.consumes() {
            self.no_self_aliases(&ia, ispan)?;
            self.consume_as_needed(&diet, &ia, ispan)?;
        }
        let arg_cons = self.consumed.since(amark);
        if !arg_cons.is_empty() {
            self.check_body_uses(&uses, array, &arg_cons, ispan)?;
        }
        let res = self.new_id("", span, Origin::LoopRes, Why::No);
        let all = (!diet.consumes()).then(|| ia.flat());
        let result = loop_result(&diet, &ia, res, all.as_ref()).reshape(pat.ty.as_ref());
        Ok(result.combine(&body_als))
    }

    fn loop_body(
        &mut self,
        pat: &Pat,
        form: &LoopForm,
        body: &Expr,
        elements: &Ids,
        pvars: &mut Vec<ParamVar>,
    ) -> R<Als> {
        self.bind_param_pat(pat, None, ParamMode::Loop, &Ids::new(), pvars);
        match form {
            LoopForm::For(i, _) => {
                self.new_id(&i.name, i.span, Origin::Var, Why::ForIn);
                self.vars.push(Var {
                    name: i.name.clone(),
                    als: Als::Prim,
                });
            }
            LoopForm::ForIn(p, _) => {
                self.bind_param_pat(p, None, ParamMode::ForIn, elements, &mut Vec::new());
            }
            LoopForm::While(c) => {
                self.expr(c)?;
            }
        }
        self.expr(body)
    }

    /// Which loop parameters are consuming (Futhark's `convergeLoopParam`):
    /// those the body consumes, or declared unique, and, until nothing
    /// changes, those whose values the body returns for a consuming one.
    fn converge(
        &self,
        pat: &Pat,
        pvars: &[ParamVar],
        mut cons: Ids,
        body: &Als,
        span: Span,
    ) -> R<Ids> {
        loop {
            let groups = self.groups(&cons);
            let consuming: Ids = pvars
                .iter()
                .filter(|v| {
                    if v.declared {
                        v.uniq.is_unique()
                    } else {
                        groups.contains(&v.id)
                    }
                })
                .map(|v| v.id)
                .collect();
            let mut st = Returned::default();
            self.check_returned(pat, body, pvars, &consuming, span, &mut st)?;
            let next: Ids = cons.union(&st.cons).copied().collect();
            if next == cons {
                return Ok(consuming);
            }
            cons = next;
        }
    }

    /// The values the body returns (`a`) for the parameters of `p`.
    fn check_returned(
        &self,
        p: &Pat,
        a: &Als,
        pvars: &[ParamVar],
        consuming: &Ids,
        span: Span,
        st: &mut Returned,
    ) -> R<()> {
        match &p.kind {
            PatKind::Id(i) => {
                let Some(v) = pvars.iter().find(|v| v.span == i.span) else {
                    return Ok(());
                };
                let d = consuming.contains(&v.id);
                let name = display(&v.name);
                let t = a.flat();
                if d {
                    if let Some(&o) = self.bound(&t).iter().next() {
                        return Err(err_index(
                            span,
                            format!(
                                "Return value for consuming loop parameter \"{name}\" aliases \"{}\". The loop updates \"{name}\" in place, so in the next iteration it may not share memory with anything bound outside the loop; return a \"copy\".",
                                display(&self.ids[o as usize].name)
                            ),
                            "consuming-loop-param-aliases",
                        ));
                    }
                }
                if !t.is_disjoint(&st.cons) {
                    return Err(err_index(
                        span,
                        format!(
                            "Return value for loop parameter \"{name}\" aliases other consumed loop parameter. Return a \"copy\" of one of them."
                        ),
                        "loop-parameter-aliases-other",
                    ));
                }
                if d && (!t.is_disjoint(&st.obs)) {
                    return Err(err_index(
                        span,
                        format!(
                            "Return value for consuming loop parameter \"{name}\" aliases previously returned value. Return a \"copy\" of one of them."
                        ),
                        "aliases-previously-returned",
                    ));
                }
                if d {
                    st.cons.extend(t);
                } else {
                    st.obs.extend(t);
                }
                Ok(())
            }
            PatKind::Ascribe(q, _) => self.check_returned(q, a, pvars, consuming, span, st),
            PatKind::Tuple(ps) if ps.len() == 1 => {
                self.check_returned(&ps[0], a, pvars, consuming, span, st)
            }
            PatKind::Tuple(ps) => {
                for (k, q) in ps.iter().enumerate() {
                    self.check_returned(q, &a.field(&k.to_string()), pvars, consuming, span, st)?;
                }
                Ok(())
            }
            PatKind::Record(fs) => {
                let mut fs: Vec<&(Ident, Pat)> = fs.iter().collect();
                fs.sort_by(|x, y| x.0.name.cmp(&y.0.name));
                for (f, q) in fs {
                    self.check_returned(q, &a.field(&f.name), pvars, consuming, span, st)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Futhark: "Loop body uses x (or an alias), but this is consumed by
    /// the initial loop argument". Also the `while` condition, evaluated
    /// after each iteration, and the array of `for … in`.
    fn check_body_uses(
        &self,
        uses: &[(usize, Span)],
        array: Option<(Ids, Span)>,
        arg_cons: &Ids,
        ispan: Span,
    ) -> R<()> {
        for &(k, at) in uses {
            let Some(v) = self.vars.get(k) else {
                continue;
            };
            if !self.bound(&v.als.flat()).is_disjoint(arg_cons) {
                return Err(err(
                    at,
                    format!(
                        "Loop body uses variable \"{}\" (or an alias), but this is consumed by the initial loop argument (the loop updates it in place). Pass a \"copy\" as the initial value.",
                        display(&v.name)
                    ),
                )
                .with_label(ispan, "the initial loop argument"));
            }
        }
        if let Some((ids, at)) = array {
            if !self.bound(&ids).is_disjoint(arg_cons) {
                return Err(err(
                    at,
                    "The loop iterates over an array that is consumed by the initial loop argument (the loop updates it in place). Pass a \"copy\" as the initial value.",
                )
                .with_label(ispan, "the initial loop argument"));
            }
        }
        Ok(())
    }

    /// `loop x for …`: the initial values are the variables of the same
    /// names in the enclosing scope.
    fn implicit_init(&mut self, pat: &Pat) -> R<Als> {
        Ok(match &pat.kind {
            PatKind::Id(i) => {
                let q = QualName {
                    quals: vec![],
                    name: i.name.clone(),
                    span: i.span,
                };
                self.observe(&q, Some(&Res::Local), pat.ty.as_ref(), i.span)?
            }
            PatKind::Ascribe(p, _) => self.implicit_init(p)?,
            PatKind::Tuple(ps) if ps.len() == 1 => self.implicit_init(&ps[0])?,
            PatKind::Tuple(ps) => {
                let mut out = Vec::new();
                for (k, p) in ps.iter().enumerate() {
                    out.push((k.to_string(), self.implicit_init(p)?));
                }
                Als::Rec(out)
            }
            PatKind::Record(fs) => {
                let mut out = Vec::new();
                for (f, p) in fs {
                    out.push((f.name.clone(), self.implicit_init(p)?));
                }
                out.sort_by(|a, b| a.0.cmp(&b.0));
                Als::Rec(out)
            }
            _ => Als::Prim,
        })
    }
}
