//! Static automatic differentiation: `jvp` and `vjp` compiled away as
//! transformations of the core IR (the AD note, Schenck et al., SC22, and
//! Shaikhha et al., ICFP19; see `docs/references.md`).
//!
//! [`differentiate`] removes every [`Exp::Jvp`] from a program, innermost
//! first, so nesting of any depth works: a `jvp` inside the lambda of
//! another is turned into ordinary IR before the outer one is
//! differentiated, and the outer transformation then differentiates that
//! IR like any other code (no perturbation confusion is possible: every
//! `jvp` gets its own tangent variables).
//!
//! Forward mode ([`forward`]) follows Schenck et al., SC22, §3 and
//! Shaikhha et al., ICFP19, §3 and §4.2: every statement is followed by the
//! statements of its tangent; tangents of scalar operations come from the
//! shared rule table ([`nabla_ir::derivatives`]), emitted as IR; SOACs carry primal and
//! tangent together (a `map` over both, `reduce`/`scan`/`reduce_by_index`
//! with the operator lifted to (primal, tangent) pairs, `scatter` on both);
//! loops get tangent loop parameters; branches return tangents; calls go to
//! a derived function that returns the results and their tangents.
//!
//! A tangent that is known to be zero is not computed at all (a missing
//! entry of the tangent map); it is materialised as a zero constant or a
//! `replicate` of zeros only where a construct needs a value (a branch whose
//! other side has a tangent, a SOAC input, a call argument).
//!
//! Reverse mode ([`reverse`]): a forward sweep and a return sweep by
//! redundant execution (Schenck et al., SC22, §4); what it cannot differentiate yet is
//! left in the program for the interpreter's dynamic AD ([`Report`] counts
//! what was done each way).
//!
//! Custom derivatives (`with_vjp f f' x`, `with_vjp_tape`; IR
//! [`Exp::WithVjp`]; the rule is Futhark's, futhark-internals.md §2):
//! - reverse mode: the innermost `vjp` around one runs `f` as primal code
//!   in its forward sweep (inlined, so enclosing `jvp`/`vjp`s differentiate
//!   `f` itself) and, in its return sweep, the rule `f'` applied to the
//!   saved values (for `with_vjp` the primal result, for `with_vjp_tape`
//!   the tape) and the results' adjoints; the rule's results are added to
//!   the arguments' adjoints. The free variables of `f` get no adjoint.
//!   Inside maps, branches and loops the statement is re-executed and its
//!   rule applied like any other statement's rule;
//! - forward mode ignores the rule and differentiates `f`;
//! - outside AD it is `f x`: after static AD, [`lower_custom_vjps`]
//!   replaces every one left outside AD constructs by `f` inlined, so the
//!   optimiser and the C backend never see one.
//!
//! The interpreter's dynamic AD has the same semantics (a tape entry whose
//! sweep step runs the rule).

use nabla_ir::builder::{FunctionBuilder, VarTable};
use nabla_ir::{Atom, Body, Exp, FunId, Function, Program, Span, Stm, Var};
use std::collections::HashMap;
use std::collections::HashSet;

pub mod forward;
pub mod reverse;
mod util;

/// Why a program could not be differentiated statically. Displayed as its
/// message alone (the span is reported by the caller).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AdError {
    /// The construct is valid but not differentiated statically yet (a
    /// `vjp` of some constructs, an accumulator, `lgamma`/`gamma`, a call
    /// of a recursive function in reverse mode): the enclosing `jvp` or
    /// `vjp` is left to the interpreter's dynamic AD instead.
    #[error("{message}")]
    Unsupported {
        /// What is not differentiated, as a sentence (`static AD does not
        /// differentiate accumulators yet`).
        message: String,
        /// The statement it comes from.
        span: Span,
    },
    /// An invariant of the IR or of the transformation does not hold (a
    /// malformed operator, a variable without a type, an adjoint of the
    /// wrong kind): a bug in the compiler, not in the program.
    #[error("{message}")]
    Internal {
        /// What is wrong (`internal error: …`, or the builder's
        /// unknown-variable message).
        message: String,
        /// The statement it comes from.
        span: Span,
    },
}

impl AdError {
    /// A construct static AD does not handle yet (see
    /// [`AdError::Unsupported`]).
    pub fn unsupported(span: Span, message: impl Into<String>) -> AdError {
        AdError::Unsupported {
            message: message.into(),
            span,
        }
    }

    /// An invariant violation (see [`AdError::Internal`]).
    pub fn internal(span: Span, message: impl Into<String>) -> AdError {
        AdError::Internal {
            message: message.into(),
            span,
        }
    }

    /// A variable the builder has no type for, at `span`: an
    /// [`AdError::Internal`].
    pub fn unknown_variable(span: Span, u: nabla_ir::builder::UnknownVariable) -> AdError {
        AdError::internal(span, u.to_string())
    }

    /// Whether the construct is only not handled yet (the `jvp` or `vjp` is
    /// left to the dynamic AD) rather than an internal error.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, AdError::Unsupported { .. })
    }

    /// The message, as displayed.
    pub fn message(&self) -> &str {
        match self {
            AdError::Unsupported { message, .. } | AdError::Internal { message, .. } => message,
        }
    }

    /// The statement the error comes from (the default span where the
    /// builder reported an unknown variable outside any statement).
    pub fn span(&self) -> Span {
        match self {
            AdError::Unsupported { span, .. } | AdError::Internal { span, .. } => *span,
        }
    }
}

impl From<nabla_ir::builder::UnknownVariable> for AdError {
    fn from(u: nabla_ir::builder::UnknownVariable) -> AdError {
        AdError::unknown_variable(Span::default(), u)
    }
}

impl From<nabla_ir::builder::InferError> for AdError {
    fn from(e: nabla_ir::builder::InferError) -> AdError {
        AdError::internal(Span::default(), e.to_string())
    }
}

/// An internal error (see [`AdError::Internal`]).
pub(crate) fn error<T>(span: Span, message: impl Into<String>) -> Result<T, AdError> {
    Err(AdError::internal(span, message))
}

/// A construct that static AD does not handle yet (see
/// [`AdError::Unsupported`]).
pub(crate) fn unsupported<T>(span: Span, message: impl Into<String>) -> Result<T, AdError> {
    Err(AdError::unsupported(span, message))
}

/// Whether the program contains a `jvp` or `vjp` anywhere.
pub fn has_ad(prog: &Program) -> bool {
    prog.functions.iter().any(|f| body_has_ad(&f.body))
}

pub(crate) fn body_has_ad(b: &Body) -> bool {
    let mut found = false;
    let mut stack = vec![b];
    while let Some(b) = stack.pop() {
        for s in &b.stms {
            if matches!(s.exp, Exp::Jvp { .. } | Exp::Vjp { .. }) {
                found = true;
            }
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(nb) => stack.push(nb),
                nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
            });
        }
    }
    found
}

/// Removes every `jvp` from the program (see the crate documentation).
/// Returns whether anything changed. Functions derived for calls made
/// inside a `jvp` are appended to the program.
///
/// Errors: a `vjp` (not yet transformed statically), an accumulator inside
/// a `jvp`, or `lgamma`/`gamma` inside a `jvp` (their derivative, the
/// polygamma function, has no IR operation).
pub fn differentiate(prog: &mut Program) -> Result<bool, AdError> {
    differentiate_with_options(prog, Options::default()).map(|r| r.changed())
}

/// Choices of the static AD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Vector mode for a `map` of a `jvp` at one primal point (`jmp`, or a
    /// Jacobian built one column per seed): the primal once, and every
    /// tangent with the seeds as an innermost dimension
    /// ([`forward::expand_batched_jvp`]). Off (the default of this
    /// struct; the pipeline's `ad` pass turns it on, `ad-per-seed` does
    /// not), each seed gets its own `jvp`, whose primal the optimiser then
    /// hoists out of the map over the seeds where it can. Vector mode does
    /// less arithmetic: ht's Jacobian compiled runs in 0.55× the time.
    pub vector_jvps: bool,
    /// The target runs segmented operations in parallel (`nabla
    /// multicore`): reverse rules that have a parallel form use it at the
    /// outermost level, where it pays (the generic `reduce_by_index` rule
    /// in chunks). Off, the sequential forms, which do the least work.
    pub parallel_target: bool,
}

/// What [`differentiate_with_report`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// `jvp`s replaced by forward-mode code.
    pub static_jvps: usize,
    /// Of those, `map`s of a `jvp` differentiated for all their seeds at
    /// once (vector mode, `jmp`).
    pub batched_jvps: usize,
    /// `jvp`s left to the dynamic AD (they contain something static AD does
    /// not handle yet), with the reason of the first.
    pub dynamic_jvps: usize,
    /// `vjp`s replaced by their forward and return sweeps.
    pub static_vjps: usize,
    /// `vjp`s left to the dynamic AD.
    pub dynamic_vjps: usize,
    /// Why the first construct was left to the dynamic AD.
    pub first_reason: Option<String>,
    /// `with_vjp`s outside any AD construct replaced by their function
    /// (see [`lower_custom_vjps`]).
    pub lowered_custom_vjps: usize,
}

impl Report {
    /// Whether the program changed: something was compiled away or lowered.
    pub fn changed(&self) -> bool {
        self.static_jvps + self.static_vjps + self.lowered_custom_vjps > 0
    }
}

/// [`differentiate`], also saying what was left to the dynamic AD.
pub fn differentiate_with_report(prog: &mut Program) -> Result<Report, AdError> {
    differentiate_with_options(prog, Options::default())
}

/// [`differentiate_with_report`] with the given [`Options`].
pub fn differentiate_with_options(prog: &mut Program, options: Options) -> Result<Report, AdError> {
    if !has_ad(prog) {
        let lowered_custom_vjps = lower_custom_vjps(&mut prog.functions);
        return Ok(Report {
            lowered_custom_vjps,
            ..Report::default()
        });
    }
    let mut ad = Ad {
        functions: std::mem::take(&mut prog.functions),
        derived: HashMap::new(),
        zeros: Vec::new(),
        done: Vec::new(),
        transforming: HashSet::new(),
        report: Report::default(),
        options,
    };
    ad.done = vec![false; ad.functions.len()];
    let n = ad.functions.len();
    let mut result = Ok(());
    for fid in 0..n {
        if let Err(e) = ad.eliminate_in_function(fid) {
            result = Err(e);
            break;
        }
    }
    prog.functions = ad.functions;
    result?;
    ad.report.lowered_custom_vjps = lower_custom_vjps(&mut prog.functions);
    Ok(ad.report)
}

/// Replaces each `with_vjp` (`Exp::WithVjp`) that no AD construct encloses
/// by its function inlined: its parameters bound to the arguments, its
/// body, the statement's pattern bound to its results (the rule is dead
/// outside reverse mode). Runs after static AD, so the later passes and the
/// C backend never see one. Left alone: those inside a `jvp`/`vjp` that
/// static AD left to the dynamic AD, and those in functions such a
/// construct calls (the interpreter still needs their rules). Returns how
/// many were replaced.
pub fn lower_custom_vjps(functions: &mut [Function]) -> usize {
    // Functions a remaining jvp/vjp calls, directly or not.
    let mut calls: Vec<Vec<usize>> = Vec::with_capacity(functions.len());
    let mut keep = vec![false; functions.len()];
    let mut stack: Vec<usize> = Vec::new();
    for f in functions.iter() {
        let mut out = Vec::new();
        let mut roots = Vec::new();
        collect_calls(&f.body, false, &mut out, &mut roots);
        calls.push(out);
        stack.extend(roots);
    }
    while let Some(g) = stack.pop() {
        if g < keep.len() && !keep[g] {
            keep[g] = true;
            stack.extend(calls[g].iter().copied());
        }
    }
    let mut n = 0;
    for (f, keep) in functions.iter_mut().zip(keep) {
        if !keep {
            n += lower_in_body(&mut f.body, &|_| false);
        }
    }
    n
}

/// The functions `b` calls (into `out`), and those called inside a
/// `jvp`/`vjp` (into `in_ad`; everything when `inside`).
fn collect_calls(b: &Body, inside: bool, out: &mut Vec<usize>, in_ad: &mut Vec<usize>) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        for s in &b.stms {
            if let Exp::Apply(f, _) = s.exp {
                out.push(f.0 as usize);
                if inside {
                    in_ad.push(f.0 as usize);
                }
            }
            let inner = inside || matches!(s.exp, Exp::Jvp { .. } | Exp::Vjp { .. });
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(nb) => collect_calls(nb, inner, out, in_ad),
                nabla_ir::Nested::Lambda(l) => collect_calls(&l.body, inner, out, in_ad),
            });
        }
    })
}

/// [`lower_custom_vjps`] in one body (not inside a `jvp`/`vjp`), except
/// the statements `keep` names.
pub(crate) fn lower_in_body(body: &mut Body, keep: &dyn Fn(&Stm) -> bool) -> usize {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        let mut n = 0;
        for mut s in std::mem::take(&mut body.stms) {
            if keep(&s) {
                body.stms.push(s);
                continue;
            }
            match s.exp {
                Exp::WithVjp { mut lam, args, .. } => {
                    n += 1 + lower_in_body(&mut lam.body, keep);
                    body.stms.push(Stm {
                        pat: lam
                            .params
                            .iter()
                            .map(|p| nabla_ir::Param::new(p.var, p.ty.clone()))
                            .collect(),
                        exp: Exp::Atoms(args),
                        span: s.span,
                    });
                    body.stms.append(&mut lam.body.stms);
                    body.stms.push(Stm {
                        pat: s.pat,
                        exp: Exp::Atoms(lam.body.result),
                        span: s.span,
                    });
                }
                Exp::Jvp { .. } | Exp::Vjp { .. } => body.stms.push(s),
                _ => {
                    for nb in s.exp.nested_bodies_mut() {
                        n += lower_in_body(nb, keep);
                    }
                    body.stms.push(s);
                }
            }
        }
        n
    })
}

/// The state of one run of [`differentiate`].
pub(crate) struct Ad {
    /// The program's functions (derived functions are appended).
    pub(crate) functions: Vec<Function>,
    /// The forward-mode derivative of each function that a `jvp` calls,
    /// for each set of active parameters it is called with, in scalar or
    /// vector mode (the flag).
    pub(crate) derived: HashMap<(FunId, Vec<bool>, bool), FunId>,
    /// The variables of the function being transformed (innermost last)
    /// whose values are known to be zero (see [`known_zeros`]).
    pub(crate) zeros: Vec<HashSet<Var>>,
    /// Functions whose `jvp`s are already eliminated.
    done: Vec<bool>,
    /// Functions whose `jvp`s are being eliminated (a derivative of one of
    /// them cannot be made from its body yet).
    pub(crate) transforming: HashSet<usize>,
    /// What was done.
    pub(crate) report: Report,
    /// The choices it was made with.
    options: Options,
}

/// Whether `a` is a constant zero (`0`, `0.0`, `-0.0` or `false`).
fn is_zero_constant(a: &Atom) -> bool {
    match a {
        Atom::Const(c) => *c == nabla_prim::PrimValue::zero(c.prim_type()),
        Atom::Var(_) => false,
    }
}

/// Adds to `zeros` the variables of `body` (at any depth) whose values are
/// zero whatever the inputs: `replicate n z`, array literals and `map`s
/// whose elements or results are zero constants or such variables, and
/// copies of them. Variables are unique within a function, so one set
/// serves all its scopes.
fn known_zeros(body: &Body, zeros: &mut HashSet<Var>) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        let zero = |a: &Atom, zeros: &HashSet<Var>| match a {
            Atom::Var(v) => zeros.contains(v),
            Atom::Const(_) => is_zero_constant(a),
        };
        for s in &body.stms {
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(nb) => known_zeros(nb, zeros),
                nabla_ir::Nested::Lambda(l) => known_zeros(&l.body, zeros),
            });
            let all_zero = match &s.exp {
                Exp::Replicate(_, x) => zero(x, zeros),
                Exp::ArrayLit(xs, _) => xs.iter().all(|x| zero(x, zeros)),
                Exp::Atoms(xs) => xs.iter().all(|x| zero(x, zeros)),
                Exp::Copy(v) => zeros.contains(v),
                Exp::Soac(nabla_ir::Soac::Map { lam, .. }) => {
                    lam.body.result.iter().all(|x| zero(x, zeros))
                }
                _ => false,
            };
            if all_zero {
                zeros.extend(s.pat.iter().map(|p| p.var));
            }
        }
    })
}

impl Ad {
    /// Whether `a` is known to be zero in the function being transformed.
    pub(crate) fn is_known_zero(&self, a: &Atom) -> bool {
        match a {
            Atom::Var(v) => self.zeros.last().is_some_and(|z| z.contains(v)),
            Atom::Const(_) => is_zero_constant(a),
        }
    }

    /// Eliminates the `jvp`s of function `fid` (once).
    pub(crate) fn eliminate_in_function(&mut self, fid: usize) -> Result<(), AdError> {
        if self.done.get(fid).copied().unwrap_or(true) {
            return Ok(());
        }
        self.done[fid] = true;
        if !body_has_ad(&self.functions[fid].body) {
            return Ok(());
        }
        let mut f = std::mem::replace(&mut self.functions[fid], placeholder());
        let mut b = FunctionBuilder::with_vars(VarTable::of_function(&f));
        let body = std::mem::take(&mut f.body);
        let mut zeros = HashSet::new();
        known_zeros(&body, &mut zeros);
        self.zeros.push(zeros);
        self.transforming.insert(fid);
        let r = self.eliminate_in_body(&mut b, body);
        self.transforming.remove(&fid);
        self.zeros.pop();
        match r {
            Ok(body) => {
                f.body = body;
                f.var_names = b.vars.into_names();
                self.functions[fid] = f;
                Ok(())
            }
            Err(e) => {
                self.functions[fid] = f;
                Err(e)
            }
        }
    }

    /// The body with every `jvp` and `vjp` in it (nested ones first)
    /// replaced by its derivative code where static AD can.
    pub(crate) fn eliminate_in_body(
        &mut self,
        b: &mut FunctionBuilder,
        body: Body,
    ) -> Result<Body, AdError> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            b.begin();
            for mut stm in body.stms {
                match self.try_batched_jvp(b, &stm) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => {
                        b.end(vec![]);
                        return Err(e);
                    }
                }
                if let Err(e) = self.eliminate_nested(b, &mut stm.exp) {
                    b.end(vec![]);
                    return Err(e);
                }
                let r = match &stm.exp {
                    Exp::Jvp { .. } | Exp::Vjp { .. } => self.expand_or_keep(b, stm),
                    _ => {
                        b.push(stm);
                        Ok(())
                    }
                };
                if let Err(e) = r {
                    b.end(vec![]);
                    return Err(e);
                }
            }
            Ok(b.end(body.result))
        })
    }

    /// A `map` of a `jvp` whose primal is the same for every element (the
    /// vector form, `jmp`): its forward-mode code with the whole batch of
    /// seeds at once ([`forward::expand_batched_jvp`]), in a scope of its
    /// own that is kept only if that succeeds. `Ok(false)`: not of that
    /// shape, or using something vector mode does not handle; the map is
    /// then differentiated one seed at a time.
    fn try_batched_jvp(&mut self, b: &mut FunctionBuilder, stm: &Stm) -> Result<bool, AdError> {
        if !self.options.vector_jvps {
            return Ok(false);
        }
        if !matches!(stm.exp, Exp::Soac(nabla_ir::Soac::Map { .. })) {
            return Ok(false);
        }
        let depth = b.depth();
        b.begin();
        let r = forward::expand_batched_jvp(self, b, stm);
        let emitted = close_scope(b, depth);
        match r {
            Ok(true) => {
                self.report.static_jvps += 1;
                self.report.batched_jvps += 1;
                emitted.stms.into_iter().for_each(|s| b.push(s));
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) if e.is_unsupported() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Emits the static derivative code of a `jvp`/`vjp` statement (whose
    /// nested ones are already eliminated), in a scope of its own that is
    /// kept only if the whole construct could be transformed; one that uses
    /// something static AD does not handle yet is kept as it is, for the
    /// dynamic AD.
    fn expand_or_keep(&mut self, b: &mut FunctionBuilder, stm: Stm) -> Result<(), AdError> {
        b.set_span(stm.span);
        let original = stm.clone();
        let Stm { pat, exp, span } = stm;
        let depth = b.depth();
        b.begin();
        let (r, forward_mode) = match exp {
            Exp::Jvp {
                lam,
                primals,
                tangents,
            } => (
                forward::expand_jvp(self, b, &pat, lam, primals, tangents, span)
                    .map(|()| std::collections::HashSet::new()),
                true,
            ),
            Exp::Vjp {
                lam,
                primals,
                adjoints,
            } => (
                reverse::expand_vjp(self, b, &pat, lam, primals, adjoints, span),
                false,
            ),
            _ => (
                error::<HashSet<Var>>(span, "internal error: not a jvp or vjp"),
                true,
            ),
        };
        let mut emitted = close_scope(b, depth);
        match r {
            Ok(rules) => {
                // The `with_vjp`s this `vjp` handled are primal code now
                // (Futhark: the primal is the function inlined), so outer
                // `jvp`/`vjp`s differentiate the function itself; those in
                // the rules it emitted are left to the outer ones.
                if !rules.is_empty() || !forward_mode {
                    lower_in_body(&mut emitted, &|s| {
                        s.pat.first().is_some_and(|p| rules.contains(&p.var))
                    });
                }
                if forward_mode {
                    self.report.static_jvps += 1;
                } else {
                    self.report.static_vjps += 1;
                }
                emitted.stms.into_iter().for_each(|s| b.push(s));
                Ok(())
            }
            Err(AdError::Unsupported { message, .. }) => {
                if forward_mode {
                    self.report.dynamic_jvps += 1;
                } else {
                    self.report.dynamic_vjps += 1;
                }
                self.report.first_reason.get_or_insert(message);
                b.push(original);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Eliminates `jvp`s in the bodies and lambdas nested in `e`.
    fn eliminate_nested(&mut self, b: &mut FunctionBuilder, e: &mut Exp) -> Result<(), AdError> {
        let bodies = e.nested_bodies_mut();
        for body in bodies {
            if body_has_ad(body) {
                let taken = std::mem::take(body);
                *body = self.eliminate_in_body(b, taken)?;
            }
        }
        Ok(())
    }
}

/// Closes the scope opened at builder depth `depth` (one `begin` above it)
/// and returns its statements. A rule that fails part-way returns with the
/// scopes it opened still open (a lambda or branch being built); those are
/// dropped first, so none of their statements leak into the enclosing body
/// (where they would bind the names of the construct kept for the dynamic
/// AD a second time).
fn close_scope(b: &mut FunctionBuilder, depth: usize) -> Body {
    while b.depth() > depth + 1 {
        b.end(vec![]);
    }
    b.end(vec![])
}

/// An empty function, standing in for one being transformed.
pub(crate) fn placeholder() -> Function {
    Function {
        name: String::new(),
        params: vec![],
        ret: vec![],
        unique_ret: vec![],
        body: Body::default(),
        var_names: vec![],
        span: Span::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_whether_the_construct_is_only_unsupported() {
        let span = Span::default();
        let e = AdError::unsupported(span, "static AD does not differentiate accumulators yet");
        assert!(e.is_unsupported());
        assert_eq!(
            e.to_string(),
            "static AD does not differentiate accumulators yet"
        );
        let e: Result<(), AdError> = error(span, "internal error: not a scan");
        let e = e.unwrap_err();
        assert!(!e.is_unsupported());
        assert!(
            matches!(&e, AdError::Internal { message, .. } if message == "internal error: not a scan")
        );
        assert_eq!(e.to_string(), "internal error: not a scan");
        assert_eq!(e.message(), "internal error: not a scan");
    }
}
