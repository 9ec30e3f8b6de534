//! Copying code with fresh variables: the [`Copier`] (the redundant execution
//! of a scope's primal code in the return sweep runs such a copy), fresh copies
//! of bodies and lambdas, and the inlining of calls before a `vjp` is
//! differentiated.
//!
//! Not a traversal of its own: the [`Copier`] is a `nabla_ir::rewrite::Visitor`
//! run by `walk_body_deep`, and nested bodies come from
//! `Exp::nested_bodies_mut`. It stays here, beside nabla-ir's `Renamer`,
//! because its copies bind fresh variables through the AD's
//! `FunctionBuilder` (types from the builder's table, or from another
//! function's for a callee) and report free variables of a callee as errors.

use super::adjoints::Reverse;
use crate::{error, unsupported, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::rewrite::{dim_of_atom, walk_body_deep, Visitor};
use nabla_ir::{Atom, Body, Dim, Exp, Lambda, Param, Span, Var};
use std::collections::HashMap;

/// Copies code with fresh variables for everything it binds; `map` gives
/// the atoms that free variables (e.g. loop parameters) become. Code from
/// the same function keeps its other free variables; code from another
/// function (`source`: that function's variables) may have none, and its
/// binders take their names and types from `source`.
struct Copier<'a> {
    b: &'a mut FunctionBuilder,
    source: Option<&'a nabla_ir::builder::VarTable>,
    map: HashMap<Var, Atom>,
    failed: Option<String>,
}

impl Copier<'_> {
    fn unmapped(&mut self, v: Var) {
        if self.source.is_some() {
            self.failed = Some(format!(
                "internal error: free variable #{} in a callee",
                v.0
            ));
        }
    }
}

impl Visitor for Copier<'_> {
    fn atom(&mut self, a: &mut Atom) {
        if let Atom::Var(v) = a {
            match self.map.get(v) {
                Some(x) => *a = *x,
                None => self.unmapped(*v),
            }
        }
    }
    fn var(&mut self, v: &mut Var) {
        match self.map.get(v) {
            Some(Atom::Var(x)) => *v = *x,
            Some(Atom::Const(_)) => {
                self.failed = Some("internal error: a constant where an array is needed".into())
            }
            None => self.unmapped(*v),
        }
    }
    fn bind(&mut self, v: &mut Var) {
        let fresh = match self.source {
            None => self.b.vars.fresh_like(*v),
            Some(source) => source.type_of(*v).map(|t| {
                let name = nabla_ir::builder::base_name(source.name(*v)).to_string();
                self.b.vars.fresh(&name, t.clone())
            }),
        };
        match fresh {
            Ok(x) => {
                self.map.insert(*v, Atom::Var(x));
                *v = x;
            }
            Err(u) => self.failed = Some(u.to_string()),
        }
    }
    fn dim(&mut self, d: &mut Dim) {
        if let Dim::Var(v) = d {
            match self.map.get(v) {
                Some(x) => *d = dim_of_atom(*x),
                None if self.source.is_some() => *d = Dim::Ext,
                None => {}
            }
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || walk_body_deep(b, self))
    }
}

/// Whether a body calls a function anywhere.
fn has_calls(body: &Body) -> bool {
    let mut stack = vec![body];
    while let Some(b) = stack.pop() {
        for s in &b.stms {
            if matches!(s.exp, Exp::Apply(..)) {
                return true;
            }
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(nb) => stack.push(nb),
                nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
            });
        }
    }
    false
}

/// The callee's body copied into the caller with fresh variables, its
/// parameters replaced by the arguments (the result atoms are the call's
/// results).
fn copy_function_body(
    b: &mut FunctionBuilder,
    callee: &nabla_ir::Function,
    args: &[Atom],
    span: Span,
) -> Result<Body, AdError> {
    let source = nabla_ir::builder::VarTable::of_function(callee);
    let mut c = Copier {
        b,
        source: Some(&source),
        map: HashMap::new(),
        failed: None,
    };
    for (p, a) in callee.params.iter().zip(args) {
        c.map.insert(p.var, *a);
    }
    let mut body = callee.body.clone();
    c.body(&mut body);
    if let Some(m) = c.failed {
        return error(span, m);
    }
    b.vars.record_body(&body);
    Ok(body)
}

impl Reverse<'_> {
    /// A copy of `body` with fresh variables, free variables replaced by
    /// `map`; the types of the new variables are recorded.
    pub(super) fn fresh_copy(
        &self,
        b: &mut FunctionBuilder,
        body: &Body,
        map: HashMap<Var, Atom>,
    ) -> Result<Body, AdError> {
        let mut copy = body.clone();
        let mut c = Copier {
            b,
            source: None,
            map,
            failed: None,
        };
        c.body(&mut copy);
        if let Some(m) = c.failed {
            return error(self.span, m);
        }
        b.vars.record_body(&copy);
        Ok(copy)
    }

    /// A copy of a lambda with fresh variables.
    pub(super) fn fresh_lambda(
        &self,
        b: &mut FunctionBuilder,
        lam: &Lambda,
    ) -> Result<Lambda, AdError> {
        let mut map = HashMap::new();
        let mut params = Vec::with_capacity(lam.params.len());
        for p in &lam.params {
            let v = b.vars.fresh_like(p.var)?;
            map.insert(p.var, Atom::Var(v));
            params.push(Param::new(v, p.ty.clone()));
        }
        let body = self.fresh_copy(b, &lam.body, map)?;
        Ok(Lambda {
            params,
            body,
            ret: lam.ret.clone(),
        })
    }

    /// The body with every call inlined (recursively), so the sweeps see
    /// only the callees' statements. A call of a recursive function cannot
    /// be inlined: the `vjp` is left to the dynamic AD.
    pub(super) fn inline_calls(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
    ) -> Result<Body, AdError> {
        self.inline_calls_in(b, body, &mut Vec::new())
    }

    /// [`Reverse::inline_calls`] inside the bodies of the functions
    /// `inlining` (outermost first).
    fn inline_calls_in(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
        inlining: &mut Vec<nabla_ir::FunId>,
    ) -> Result<Body, AdError> {
        if !has_calls(&body) {
            return Ok(body);
        }
        let mut out = Vec::with_capacity(body.stms.len());
        for mut stm in body.stms {
            stm.exp = match stm.exp {
                Exp::Apply(f, args) => {
                    let Some(callee) = self.ad.functions.get(f.0 as usize).cloned() else {
                        return error(stm.span, "internal error: call of a missing function");
                    };
                    if inlining.contains(&f) {
                        return unsupported(
                            stm.span,
                            format!(
                                "a call of the recursive function {} (reverse mode inlines every call)",
                                callee.name
                            ),
                        );
                    }
                    let copied = copy_function_body(b, &callee, &args, stm.span)?;
                    inlining.push(f);
                    let copied = self.inline_calls_in(b, copied, inlining);
                    inlining.pop();
                    let copied = copied?;
                    out.extend(copied.stms);
                    Exp::Atoms(copied.result)
                }
                mut e => {
                    for nested in e.nested_bodies_mut() {
                        let taken = std::mem::take(nested);
                        *nested = self.inline_calls_in(b, taken, inlining)?;
                    }
                    e
                }
            };
            out.push(stm);
        }
        Ok(Body {
            stms: out,
            result: body.result,
        })
    }
}
