//! Consumption, aliasing and accumulator linearity: the second half of the
//! validator, and the analyses it returns ([`Analysis`]).
//!
//! It runs on a function only once the type and scope checks of
//! `validate.rs` have passed on it, so every variable has a known type; it
//! still never panics on malformed IR (every lookup is checked).
//!
//! # The rules
//!
//! **Consumption** (Futhark's uniqueness rules, as described in
//! `/work/shared/design/futhark-internals.md` §1.10 and §2: "a parameter with
//! a unique type consumes its argument; a non-unique output aliases every
//! input that was not consumed"). These operands are *consumed*:
//! the array of an `Update`, the destinations of `hist` and `scatter`, the
//! inputs of a `with_acc`, an argument of a call whose callee parameter is
//! unique, the initial value of a unique loop parameter, and every use of an
//! accumulator. A map (or other SOAC, `jvp`, `vjp`) whose lambda consumes
//! one of its parameters consumes the corresponding input. After a
//! statement consumes `x`, no later statement of the function may use `x`,
//! nor any variable that `x` may alias, nor any variable that may alias
//! `x` (uses within the consuming statement itself are fine). Further:
//! * a function may consume only its unique parameters and the arrays it
//!   makes itself: consuming a non-unique parameter (or an alias of one) is
//!   an error; likewise a loop body may consume only its unique loop
//!   parameters among them;
//! * a loop body or the lambda of a SOAC, an accumulator operator, `jvp` or
//!   `vjp` runs many times: it may not consume a variable bound outside it
//!   (the `with_acc` lambda runs once and may);
//! * consuming in one branch of an `if` counts as consuming after the `if`.
//!
//! Not checked (yet): that a result marked unique (`Function::unique_ret`)
//! aliases no non-unique parameter. The front end's inferred result
//! uniqueness is too optimistic for that (`if c then fresh else xs` gets a
//! unique type), so callers must not rely on `unique_ret` for soundness.
//!
//! **Aliasing.** An array variable may alias (share memory with) others:
//! `Atoms` copies, `Index` results of rank ≥ 1, `Reshape`, `Rearrange`,
//! `Reverse` and `Rotate` alias their operand; `reduce` results alias its
//! array inputs and neutral elements; a non-unique result of a call aliases
//! the call's array arguments that it does not consume; results of `if`,
//! loops, `with_acc` (its extra results), `jvp` and `vjp` alias what the
//! corresponding body results alias (for loops, through any number of
//! iterations, and the initial value of non-unique loop parameters).
//! Everything else is fresh: `Copy`, `Update` and `hist`/`scatter`/`with_acc`
//! arrays (they take over their consumed input), `Concat`, literals,
//! `iota`, `replicate`, `map` and `scan` results, unique call results.
//! Parameters (of functions, lambdas and loops with a unique parameter) are
//! roots: they alias nothing inside their body.
//!
//! **Accumulators are linear** (Schenck et al., SC22, §5.4: the accumulator is threaded
//! through the computation, each update producing its successor): every
//! accumulator variable is used exactly once, by `update_acc`, as a `map`
//! input, as a loop's initial value, in an `Atoms` copy, or as the result of
//! a body or lambda; any other use (a call argument, `reduce`, `replicate`,
//! `jvp`, …) is an error. A use counts as a consumption, so a second use is
//! a use after consumption. An accumulator may not be free in a lambda
//! that runs many times (it enters those only as their parameters; it may
//! be free in a `with_acc`'s lambda, which runs once) nor, being consumed,
//! in a loop body; it must be consumed in both branches of an `if` or in neither, and
//! one that is never used is an error. Functions take and return no
//! accumulators.

use crate::error::{ValidationError, ValidationProblem};
use crate::{
    AccOp, Atom, Body, Exp, FunId, Function, Lambda, LoopForm, Program, Soac, Span, Type, Var,
};

/// What the validator learnt about a valid program, per function: see
/// [`FunctionAnalysis`]. Returned by [`crate::validate_program`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// One entry per `Program::functions`, same order.
    pub functions: Vec<FunctionAnalysis>,
}

impl Analysis {
    /// The analyses of function `f`.
    pub fn function(&self, f: FunId) -> Option<&FunctionAnalysis> {
        self.functions.get(f.0 as usize)
    }

    /// The type `v` is bound with in function `f` (see [`FunctionAnalysis::type_of`]).
    pub fn type_of(&self, f: FunId, v: Var) -> Option<&Type> {
        self.function(f)?.type_of(v)
    }

    /// How often `v` is read in `f` (see [`FunctionAnalysis::uses`]).
    pub fn uses(&self, f: FunId, v: Var) -> usize {
        self.function(f).map_or(0, |a| a.uses(v))
    }

    /// Whether a statement of `f` consumes `v` (see [`FunctionAnalysis::is_consumed`]).
    pub fn is_consumed(&self, f: FunId, v: Var) -> bool {
        self.function(f).is_some_and(|a| a.is_consumed(v))
    }

    /// The variables `v` may alias in `f` (see [`FunctionAnalysis::aliases`]).
    pub fn aliases(&self, f: FunId, v: Var) -> &[Var] {
        self.function(f).map_or(&[], |a| a.aliases(v))
    }
}

/// The analyses of one function, indexed by variable number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionAnalysis {
    types: Vec<Option<Type>>,
    uses: Vec<u32>,
    consumed: Vec<bool>,
    aliases: Vec<Vec<Var>>,
}

impl FunctionAnalysis {
    /// The type `v` is bound with: by a function, lambda or loop parameter,
    /// a `for` counter (the bound's type) or a statement pattern. `None` for
    /// a number the function never binds.
    pub fn type_of(&self, v: Var) -> Option<&Type> {
        self.types.get(v.0 as usize)?.as_ref()
    }

    /// The type of every variable, indexed by variable number (see
    /// [`FunctionAnalysis::type_of`]).
    pub fn types(&self) -> &[Option<Type>] {
        &self.types
    }

    /// The use count of every variable, indexed by variable number (see
    /// [`FunctionAnalysis::uses`] and [`use_counts`]).
    pub fn use_counts(&self) -> &[u32] {
        &self.uses
    }

    /// How many times `v` is read anywhere in the function, as
    /// [`crate::visit::for_each_var`] reports reads: operands of every
    /// expression (nested bodies and lambdas included), body and lambda
    /// results, and variables in the dimensions of types (of parameters,
    /// patterns, lambda results and the function's results). A variable
    /// read twice by one expression counts twice. 0 means dead.
    pub fn uses(&self, v: Var) -> usize {
        self.uses.get(v.0 as usize).map_or(0, |n| *n as usize)
    }

    /// Whether some statement consumes `v` directly (it is the operand in a
    /// consuming position: see the module docs). Every variable aliasing
    /// `v`, or aliased by it, is dead after that statement too.
    pub fn is_consumed(&self, v: Var) -> bool {
        self.consumed.get(v.0 as usize).copied().unwrap_or(false)
    }

    /// The variables directly consumed somewhere in the function, in order.
    pub fn consumed(&self) -> impl Iterator<Item = Var> + '_ {
        self.consumed
            .iter()
            .enumerate()
            .filter(|(_, c)| **c)
            .map(|(i, _)| Var(i as u32))
    }

    /// The variables the array variable `v` may share memory with, bound
    /// before it and in scope where it is bound (the relation is
    /// transitive: an alias of an alias is listed), sorted, `v` itself
    /// excluded. Empty for scalars, accumulators, fresh arrays and
    /// parameters (see the module docs for what aliases what).
    pub fn aliases(&self, v: Var) -> &[Var] {
        self.aliases.get(v.0 as usize).map_or(&[], |a| a.as_slice())
    }
}

/// How many times each variable of `fun` is read, indexed by variable
/// number (what [`FunctionAnalysis::uses`] reports: operands of every
/// expression, nested bodies included, body results, and the dimensions of
/// types, the parameters' and results' included). A pass that has changed
/// a function since it received its [`Analysis`] recounts with this.
pub fn use_counts(fun: &Function) -> Vec<u32> {
    let mut uses = vec![0u32; fun.var_names.len()];
    let mut count = |v: Var| {
        if let Some(u) = uses.get_mut(v.0 as usize) {
            *u = u.saturating_add(1);
        }
    };
    for p in &fun.params {
        p.ty.for_each_dim_var(&mut count);
    }
    for t in &fun.ret {
        t.for_each_dim_var(&mut count);
    }
    crate::visit::for_each_var(&fun.body, |v, _| count(v), |_| {});
    uses
}

/// The [`Analysis`] of `prog` without the checks: what
/// [`crate::validate_program`] returns for a valid program, computed
/// without looking for errors (the pass manager's analysis when it does
/// not validate). On an invalid program the tables are still filled in as
/// far as the walk gets; nothing panics.
pub fn analyse_program(prog: &Program) -> Analysis {
    Analysis {
        functions: (0..prog.functions.len())
            .map(|fi| check_function(prog, fi, &mut Vec::new()))
            .collect(),
    }
}

/// The consumption and linearity errors of function `f` of `prog`: the
/// checks [`crate::validate_program`] makes on a function once its types
/// and scopes are right (see the module docs). A pass that tries a rewrite
/// keeps it only where this stays empty. Empty for a function `prog` does
/// not have.
pub fn consumption_errors(prog: &Program, f: FunId) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    check_function(prog, f.0 as usize, &mut errors);
    errors
}

/// The [`FunctionAnalysis`] of function `f` of `prog` alone (what
/// [`analyse_program`] computes for it), for a pass that has changed it.
pub fn analyse_function(prog: &Program, f: FunId) -> FunctionAnalysis {
    check_function(prog, f.0 as usize, &mut Vec::new())
}

/// How a variable is bound (for the rules on what may be consumed).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Local,
    FunParam { unique: bool },
    LoopParam { unique: bool },
    LambdaParam,
}

/// Checks consumption and linearity in function `fi` of `prog`, appending
/// errors, and returns its analyses.
pub(crate) fn check_function(
    prog: &Program,
    fi: usize,
    errors: &mut Vec<ValidationError>,
) -> FunctionAnalysis {
    let Some(fun) = prog.functions.get(fi) else {
        return FunctionAnalysis::default();
    };
    let uses = use_counts(fun);
    let mut uq = Uq::new(prog, fun, errors);
    uq.function();
    FunctionAnalysis {
        types: uq.types,
        uses,
        consumed: uq.consumed,
        aliases: uq.aliases,
    }
}

/// Marks unique every array loop parameter that its loop body consumes
/// (directly or through an alias), as Futhark's type checker does for
/// merge parameters: the elaborator leaves them non-unique. Marking one
/// makes its loop consume its initial value, which may in turn be an
/// enclosing loop's parameter, so this repeats until nothing changes. Run
/// by the elaborator on its output; the validator then checks the result.
pub fn infer_loop_uniqueness(prog: &mut Program) {
    for fi in 0..prog.functions.len() {
        // Each round marks at least one more parameter.
        for _ in 0..=prog.functions[fi].var_names.len() {
            let found = {
                let mut errors = Vec::new();
                let mut uq = Uq::new(prog, &prog.functions[fi], &mut errors);
                uq.infer = Some(Vec::new());
                uq.function();
                uq.infer.unwrap_or_default()
            };
            if found.is_empty() {
                break;
            }
            mark_unique(&mut prog.functions[fi].body, &found);
        }
    }
}

/// Sets `unique` on the loop parameters among `vs` in `b` (recursively).
fn mark_unique(b: &mut Body, vs: &[Var]) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        for stm in &mut b.stms {
            mark_unique_exp(&mut stm.exp, vs);
        }
    })
}

fn mark_unique_lambda(l: &mut Lambda, vs: &[Var]) {
    mark_unique(&mut l.body, vs);
}

fn mark_unique_exp(e: &mut Exp, vs: &[Var]) {
    match e {
        Exp::If { then_, else_, .. } => {
            mark_unique(then_, vs);
            mark_unique(else_, vs);
        }
        Exp::Loop {
            params, form, body, ..
        } => {
            for p in params.iter_mut() {
                if vs.contains(&p.var) && matches!(p.ty, Type::Array(..)) {
                    p.unique = true;
                }
            }
            if let LoopForm::While { cond } = form {
                mark_unique(cond, vs);
            }
            mark_unique(body, vs);
        }
        Exp::Soac(
            Soac::Map { lam, .. }
            | Soac::Reduce { lam, .. }
            | Soac::Scan { lam, .. }
            | Soac::Hist { lam, .. },
        )
        | Exp::Jvp { lam, .. }
        | Exp::Vjp { lam, .. } => mark_unique_lambda(lam, vs),
        Exp::WithVjp { lam, rule, .. } => {
            mark_unique_lambda(lam, vs);
            mark_unique_lambda(rule, vs);
        }
        Exp::WithAcc { inputs, lam } => {
            for input in inputs.iter_mut() {
                if let AccOp::Lambda(op, _) = &mut input.op {
                    mark_unique_lambda(op, vs);
                }
            }
            mark_unique_lambda(lam, vs);
        }
        _ => {}
    }
}

impl<'a> Uq<'a> {
    fn new(prog: &'a Program, fun: &'a Function, errors: &'a mut Vec<ValidationError>) -> Self {
        let n = fun.var_names.len();
        Uq {
            prog,
            fun,
            errors,
            span: None,
            types: vec![None; n],
            aliases: vec![Vec::new(); n],
            kind: vec![Kind::Local; n],
            level: vec![0; n],
            lam_depth: vec![0; n],
            in_scope: vec![false; n],
            dead: vec![None; n],
            dead_log: Vec::new(),
            consumed: vec![false; n],
            cur_level: 0,
            cur_lam: 0,
            infer: None,
        }
    }
}

struct Uq<'a> {
    prog: &'a Program,
    fun: &'a Function,
    errors: &'a mut Vec<ValidationError>,
    span: Option<Span>,
    types: Vec<Option<Type>>,
    /// Per variable: what it may alias (transitively, `v` excluded, sorted).
    aliases: Vec<Vec<Var>>,
    kind: Vec<Kind>,
    /// Number of enclosing repeated bodies (loop bodies, SOAC lambdas) at the binding.
    level: Vec<u32>,
    /// Number of enclosing lambdas at the binding.
    lam_depth: Vec<u32>,
    in_scope: Vec<bool>,
    /// Consumed (dead), with the span of the consuming statement.
    dead: Vec<Option<Option<Span>>>,
    /// Variables in the order they died (undone for the other `if` branch).
    dead_log: Vec<Var>,
    /// Directly consumed operands (the analysis).
    consumed: Vec<bool>,
    cur_level: u32,
    cur_lam: u32,
    /// Inference mode ([`infer_loop_uniqueness`]): report nothing, collect
    /// the non-unique loop parameters that get consumed.
    infer: Option<Vec<Var>>,
}

/// `a ∪ b` of sorted, deduplicated vectors.
fn union(a: &mut Vec<Var>, b: &[Var]) {
    a.extend_from_slice(b);
    a.sort_unstable();
    a.dedup();
}

fn exp_name(e: &Exp) -> &'static str {
    match e {
        Exp::Atoms(_) => "a copy",
        Exp::BinOp(..) | Exp::CmpOp(..) | Exp::UnOp(..) | Exp::TernOp(..) | Exp::Conv(..) => {
            "a scalar operation"
        }
        Exp::Apply(..) => "a function call",
        Exp::If { .. } => "an if",
        Exp::Loop { .. } => "a loop",
        Exp::Index(..) => "an index",
        Exp::Update(..) => "an in-place update",
        Exp::ArrayLit(..) => "an array literal",
        Exp::Iota { .. } => "iota",
        Exp::Replicate(..) => "replicate",
        Exp::Copy(_) => "copy",
        Exp::Size(..) => "size",
        Exp::Reshape(..) => "reshape",
        Exp::Rearrange(..) => "rearrange",
        Exp::Concat(_) => "concat",
        Exp::Rotate(..) => "rotate",
        Exp::Reverse(_) => "reverse",
        Exp::AssertEqSizes(..) | Exp::Assert(..) => "an assertion",
        Exp::Soac(Soac::Map { .. }) => "map",
        Exp::Soac(Soac::Reduce { .. }) => "reduce",
        Exp::Soac(Soac::Scan { .. }) => "scan",
        Exp::Soac(Soac::Hist { .. }) => "reduce_by_index",
        Exp::Soac(Soac::Scatter { .. }) => "scatter",
        Exp::WithAcc { .. } => "with_acc",
        Exp::UpdateAcc { .. } => "update_acc",
        Exp::Jvp { .. } => "jvp",
        Exp::Vjp { .. } => "vjp",
        Exp::WithVjp { .. } => "with_vjp",
    }
}

impl Uq<'_> {
    fn err(&mut self, message: String) {
        if self.infer.is_some() {
            return;
        }
        self.errors.push(ValidationError {
            function: self.fun.name.clone(),
            span: self.span,
            problem: ValidationProblem::Uniqueness(message),
        });
    }

    fn name(&self, v: Var) -> String {
        match self.fun.var_names.get(v.0 as usize) {
            Some(n) => format!("{n}_{}", v.0),
            None => format!("#{}", v.0),
        }
    }

    fn ty(&self, v: Var) -> Option<&Type> {
        self.types.get(v.0 as usize)?.as_ref()
    }

    fn is_array(&self, v: Var) -> bool {
        matches!(self.ty(v), Some(Type::Array(..)))
    }

    fn is_acc(&self, v: Var) -> bool {
        matches!(self.ty(v), Some(Type::Acc(..)))
    }

    fn atom_var(a: &Atom) -> Option<Var> {
        match a {
            Atom::Var(v) => Some(*v),
            Atom::Const(_) => None,
        }
    }

    fn bind(&mut self, v: Var, ty: &Type, kind: Kind, aliases: Vec<Var>) {
        let i = v.0 as usize;
        if i >= self.types.len() {
            return;
        }
        let is_array = matches!(ty, Type::Array(..));
        self.types[i] = Some(ty.clone());
        self.kind[i] = kind;
        self.level[i] = self.cur_level;
        self.lam_depth[i] = self.cur_lam;
        self.in_scope[i] = true;
        self.dead[i] = None;
        self.aliases[i] = if is_array {
            let mut a: Vec<Var> = aliases
                .into_iter()
                .filter(|x| *x != v && self.in_scope(*x))
                .collect();
            a.sort_unstable();
            a.dedup();
            a
        } else {
            Vec::new()
        };
    }

    fn unbind(&mut self, vs: &[Var]) {
        for v in vs {
            if let Some(s) = self.in_scope.get_mut(v.0 as usize) {
                *s = false;
            }
        }
    }

    fn in_scope(&self, v: Var) -> bool {
        self.in_scope.get(v.0 as usize).copied().unwrap_or(false)
    }

    fn dead_at(&self, v: Var) -> Option<Option<Span>> {
        self.dead.get(v.0 as usize).copied().flatten()
    }

    /// `v` and everything it may alias (empty unless an array).
    fn closure(&self, v: Var) -> Vec<Var> {
        if !self.is_array(v) {
            return Vec::new();
        }
        let mut c = vec![v];
        union(&mut c, &self.aliases[v.0 as usize]);
        c
    }

    fn closure_atom(&self, a: &Atom) -> Vec<Var> {
        Self::atom_var(a).map_or_else(Vec::new, |v| self.closure(v))
    }

    /// Only the members still in scope and not consumed.
    fn live(&self, mut xs: Vec<Var>) -> Vec<Var> {
        xs.retain(|x| self.in_scope(*x) && self.dead_at(*x).is_none());
        xs
    }

    /// A read of `v`: an error if `v` was consumed.
    fn use_var(&mut self, v: Var) {
        if let Some(at) = self.dead_at(v) {
            let n = self.name(v);
            let what = if self.is_acc(v) {
                "accumulator"
            } else {
                "variable"
            };
            let _ = at;
            self.err(format!("{what} {n} is used after it was consumed"));
        }
    }

    /// A use of accumulator `v`: it consumes it; `v` must not be free in
    /// the lambda the use is in.
    fn use_acc(&mut self, v: Var) {
        if self.dead_at(v).is_some() {
            // Also a second use by the same statement.
            self.use_var(v);
            return;
        }
        let i = v.0 as usize;
        if self.lam_depth.get(i).is_some_and(|d| *d < self.cur_lam) {
            let n = self.name(v);
            self.err(format!(
                "accumulator {n} is free in a lambda (accumulators enter lambdas that run many times only as parameters)"
            ));
            // Dead from here on, without further complaints.
            self.dead[i] = Some(self.span);
            self.dead_log.push(v);
            return;
        }
        self.consume(v, "this statement");
    }

    /// Statement (or `what`) consumes `v`: `v`, what it aliases and what
    /// aliases it die; checks that this is allowed here.
    fn consume(&mut self, v: Var, what: &str) {
        let i = v.0 as usize;
        if i >= self.types.len() || self.dead_at(v).is_some() {
            return;
        }
        self.consumed[i] = true;
        let mut c = if self.is_array(v) {
            self.closure(v)
        } else {
            vec![v]
        };
        if self.is_array(v) {
            let base = c.clone();
            for y in 0..self.types.len() {
                let yv = Var(y as u32);
                if self.in_scope[y]
                    && self.dead[y].is_none()
                    && self.aliases[y]
                        .iter()
                        .any(|x| base.binary_search(x).is_ok())
                {
                    c.push(yv);
                }
            }
            c.sort_unstable();
            c.dedup();
        }
        // The operand itself first, so that messages name it when it is the culprit.
        if let Some(k) = c.iter().position(|x| *x == v) {
            c[..=k].rotate_right(1);
        }
        let mut reported = false;
        for x in c {
            let xi = x.0 as usize;
            if !self.in_scope(x) || self.dead[xi].is_some() {
                continue;
            }
            let is_array = self.is_array(x);
            if let (Some(found), Kind::LoopParam { unique: false }, true) =
                (self.infer.as_mut(), self.kind[xi], is_array)
            {
                found.push(x);
            }
            if !reported {
                let via = if x == v {
                    String::new()
                } else {
                    format!(" (through {}, which may alias it)", self.name(v))
                };
                let problem = match self.kind[xi] {
                    Kind::FunParam { unique: false } => Some(format!(
                        "{what} consumes {}, a non-unique parameter of the function{via}",
                        self.name(x)
                    )),
                    Kind::LoopParam { unique: false } => Some(format!(
                        "{what} consumes {}, a non-unique loop parameter{via}",
                        self.name(x)
                    )),
                    _ if self.level[xi] < self.cur_level => Some(format!(
                        "{what} consumes {}, which is bound outside the enclosing loop body or lambda, on every iteration{via}",
                        self.name(x)
                    )),
                    _ => None,
                };
                if let Some(m) = problem {
                    self.err(m);
                    reported = true;
                }
            }
            self.dead[xi] = Some(self.span);
            self.dead_log.push(x);
        }
    }

    // ------------------------------------------------------------ structure

    fn function(&mut self) {
        let f = self.fun;
        self.span = Some(f.span);
        for p in &f.params {
            if p.ty.is_acc() {
                let n = self.name(p.var);
                self.err(format!("function parameter {n} is an accumulator"));
            }
            self.bind(
                p.var,
                &p.ty,
                Kind::FunParam { unique: p.unique },
                Vec::new(),
            );
        }
        if f.ret.iter().any(Type::is_acc) {
            self.err(format!("function {} returns an accumulator", f.name));
        }
        // `unique_ret` is not checked against the result's aliases: the
        // type checker infers unique result types too optimistically (an
        // `if` takes the uniqueness of its `then` branch), so the
        // elaborator's flags are not reliable yet.
        self.body(&f.body);
    }

    /// Checks a body; returns, per result, what it may alias (itself
    /// included, possibly out of scope now).
    fn body(&mut self, b: &Body) -> Vec<Vec<Var>> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.body_inner(b))
    }

    fn body_inner(&mut self, b: &Body) -> Vec<Vec<Var>> {
        let saved = self.span;
        let mut bound = Vec::new();
        for stm in &b.stms {
            self.span = Some(stm.span);
            self.stm(&stm.exp, &stm.pat);
            bound.extend(stm.pat.iter().map(|p| p.var));
        }
        self.span = saved;
        let mut res = Vec::with_capacity(b.result.len());
        for a in &b.result {
            let Some(v) = Self::atom_var(a) else {
                res.push(Vec::new());
                continue;
            };
            if self.is_acc(v) {
                self.use_acc(v);
            } else {
                self.use_var(v);
            }
            res.push(self.closure(v));
        }
        for v in &bound {
            self.check_acc_used(*v);
        }
        self.unbind(&bound);
        res
    }

    /// Linearity at the end of `v`'s scope: an accumulator must have been used.
    fn check_acc_used(&mut self, v: Var) {
        if self.is_acc(v) && self.in_scope(v) && self.dead_at(v).is_none() {
            let n = self.name(v);
            self.err(format!(
                "accumulator {n} is never used (every accumulator is used exactly once)"
            ));
        }
    }

    /// Checks a lambda: its parameters are fresh roots. `repeated`: it runs
    /// many times (may not consume what is bound outside it). Returns which
    /// parameters it consumes and what its results may alias (its
    /// parameters and variables bound inside included).
    fn lambda(&mut self, lam: &Lambda, repeated: bool) -> (Vec<bool>, Vec<Vec<Var>>) {
        if repeated {
            self.cur_level += 1;
            // An accumulator may be free only in a lambda that runs once
            // (a `with_acc`'s), where using it is one use.
            self.cur_lam += 1;
        }
        for p in &lam.params {
            self.bind(p.var, &p.ty, Kind::LambdaParam, Vec::new());
        }
        let res = self.body(&lam.body);
        let consumed: Vec<bool> = lam
            .params
            .iter()
            .map(|p| self.dead_at(p.var).is_some())
            .collect();
        for p in &lam.params {
            self.check_acc_used(p.var);
        }
        let params: Vec<Var> = lam.params.iter().map(|p| p.var).collect();
        self.unbind(&params);
        if repeated {
            self.cur_lam -= 1;
            self.cur_level -= 1;
        }
        (consumed, res)
    }

    /// Binds a statement's pattern with the given alias sets (missing: fresh).
    fn bind_pat(&mut self, pat: &[crate::Param], mut aliases: Vec<Vec<Var>>) {
        aliases.resize(pat.len(), Vec::new());
        for (p, a) in pat.iter().zip(aliases) {
            self.bind(p.var, &p.ty, Kind::Local, a);
        }
    }

    fn stm(&mut self, e: &Exp, pat: &[crate::Param]) {
        let mut uses = Vec::new();
        e.for_each_use(|v, _| uses.push(v));
        for v in &uses {
            if !self.is_acc(*v) {
                self.use_var(*v);
            }
        }
        // Accumulators: where they may appear (each use consumes them, so
        // a second use, even by the same statement, is an error).
        let acc_ok: Vec<Var> = match e {
            Exp::UpdateAcc { acc, .. } => vec![*acc],
            Exp::Atoms(xs) | Exp::Loop { init: xs, .. } => {
                xs.iter().filter_map(Self::atom_var).collect()
            }
            Exp::Soac(Soac::Map { arrs, .. }) => arrs.clone(),
            _ => Vec::new(),
        };
        let mut seen_bad = false;
        for v in &uses {
            if !self.is_acc(*v) {
                continue;
            }
            if acc_ok.contains(v) {
                self.use_acc(*v);
            } else if !seen_bad {
                seen_bad = true;
                let n = self.name(*v);
                self.err(format!(
                    "accumulator {n} cannot be used by {} (only by update_acc, map, a loop, a copy or as a result)",
                    exp_name(e)
                ));
            }
        }
        match e {
            Exp::Atoms(xs) => {
                let al = xs.iter().map(|a| self.closure_atom(a)).collect();
                self.bind_pat(pat, al);
            }
            Exp::Apply(f, args) => {
                let callee = self.prog.functions.get(f.0 as usize);
                let mut kept = Vec::new();
                for (k, a) in args.iter().enumerate() {
                    let Some(v) = Self::atom_var(a) else { continue };
                    if !self.is_array(v) {
                        continue;
                    }
                    let unique = callee
                        .and_then(|c| c.params.get(k))
                        .is_some_and(|p| p.unique);
                    if unique {
                        let what = format!(
                            "the call to {} (unique parameter {})",
                            callee.map_or("?", |c| c.name.as_str()),
                            k + 1
                        );
                        self.consume(v, &what);
                    } else {
                        union(&mut kept, &self.closure(v));
                    }
                }
                let kept = self.live(kept);
                let al = (0..pat.len())
                    .map(|k| {
                        let unique = callee
                            .and_then(|c| c.unique_ret.get(k))
                            .copied()
                            .unwrap_or(false);
                        if unique {
                            Vec::new()
                        } else {
                            kept.clone()
                        }
                    })
                    .collect();
                self.bind_pat(pat, al);
            }
            Exp::If { then_, else_, .. } => {
                let mark = self.dead_log.len();
                let t = self.body(then_);
                let killed_then: Vec<(Var, Option<Option<Span>>)> = self
                    .dead_log
                    .drain(mark..)
                    .map(|v| (v, self.dead[v.0 as usize]))
                    .collect();
                for (v, _) in &killed_then {
                    self.dead[v.0 as usize] = None;
                }
                let f = self.body(else_);
                let killed_else: Vec<Var> = self.dead_log[mark..].to_vec();
                for (v, at) in &killed_then {
                    if self.dead[v.0 as usize].is_none() {
                        self.dead[v.0 as usize] = *at;
                        self.dead_log.push(*v);
                    }
                }
                let killed_then: Vec<Var> = killed_then.into_iter().map(|(v, _)| v).collect();
                let mut one_sided: Vec<Var> = killed_then
                    .iter()
                    .filter(|v| !killed_else.contains(v))
                    .chain(killed_else.iter().filter(|v| !killed_then.contains(v)))
                    .copied()
                    .filter(|v| self.in_scope(*v) && self.is_acc(*v))
                    .collect();
                one_sided.sort_unstable();
                if let Some(v) = one_sided.first() {
                    let n = self.name(*v);
                    self.err(format!(
                        "accumulator {n} is used in one branch of an if but not in the other"
                    ));
                }
                let mut al = Vec::new();
                for k in 0..pat.len() {
                    let mut a = t.get(k).cloned().unwrap_or_default();
                    union(&mut a, f.get(k).map_or(&[][..], |x| x.as_slice()));
                    al.push(self.live(a));
                }
                self.bind_pat(pat, al);
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => self.loop_(pat, params, init, form, body),
            Exp::Index(v, _)
            | Exp::Reshape(_, v)
            | Exp::Rearrange(_, v)
            | Exp::Reverse(v)
            | Exp::Rotate(_, v) => {
                let al = self.closure(*v);
                self.bind_pat(pat, vec![al]);
            }
            Exp::Update(v, _, _) => {
                self.consume(*v, "the in-place update");
                self.bind_pat(pat, Vec::new());
            }
            Exp::Soac(soac) => self.soac(soac, pat),
            Exp::WithAcc { inputs, lam } => {
                for input in inputs {
                    self.consume(input.array, "with_acc");
                }
                for input in inputs {
                    if let AccOp::Lambda(op, _) = &input.op {
                        self.lambda(op, true);
                    }
                }
                let (_, res) = self.lambda(lam, false);
                let mut al = vec![Vec::new(); inputs.len()];
                for r in res.into_iter().skip(inputs.len()) {
                    al.push(self.live(r));
                }
                self.bind_pat(pat, al);
            }
            Exp::Jvp {
                lam,
                primals,
                tangents: extra,
            }
            | Exp::Vjp {
                lam,
                primals,
                adjoints: extra,
            } => {
                let (consumed, res) = self.lambda(lam, true);
                for (c, a) in consumed.iter().zip(primals) {
                    if let (true, Some(v)) = (*c, Self::atom_var(a)) {
                        if self.is_array(v) {
                            self.consume(v, "the differentiated lambda");
                        }
                    }
                }
                // A primal result aliases what the lambda's result aliases,
                // a parameter standing for its primal argument. A tangent
                // (jvp) of a result that may be parameter j may be tangent
                // j; an adjoint (vjp) of parameter j may be the adjoint of a
                // result that may be parameter j; others are fresh.
                let params: Vec<Var> = lam.params.iter().map(|p| p.var).collect();
                let is_jvp = matches!(e, Exp::Jvp { .. });
                let mut al = Vec::new();
                for r in &res {
                    let mut a = r.clone();
                    for (j, pv) in params.iter().enumerate() {
                        if r.binary_search(pv).is_ok() {
                            if let Some(x) = primals.get(j) {
                                union(&mut a, &self.closure_atom(x));
                            }
                        }
                    }
                    al.push(self.live(a));
                }
                let mut derivs = Vec::new();
                if is_jvp {
                    for r in &res {
                        let mut a = Vec::new();
                        for (j, pv) in params.iter().enumerate() {
                            if r.binary_search(pv).is_ok() {
                                if let Some(x) = extra.get(j) {
                                    union(&mut a, &self.closure_atom(x));
                                }
                            }
                        }
                        derivs.push(self.live(a));
                    }
                } else {
                    for pv in &params {
                        let mut a = Vec::new();
                        for (k, r) in res.iter().enumerate() {
                            if r.binary_search(pv).is_ok() {
                                if let Some(x) = extra.get(k) {
                                    union(&mut a, &self.closure_atom(x));
                                }
                            }
                        }
                        derivs.push(self.live(a));
                    }
                }
                al.extend(derivs);
                self.bind_pat(pat, al);
            }
            Exp::WithVjp {
                lam, rule, args, ..
            } => {
                let (consumed, res) = self.lambda(lam, true);
                for (c, a) in consumed.iter().zip(args) {
                    if let (true, Some(v)) = (*c, Self::atom_var(a)) {
                        if self.is_array(v) {
                            self.consume(v, "the function given to with_vjp");
                        }
                    }
                }
                // The derivative rule runs in reverse mode's return sweep on
                // saved values and adjoints: it may consume none of them.
                let (rule_consumed, _) = self.lambda(rule, true);
                if rule_consumed.iter().any(|c| *c) {
                    self.err("the derivative rule of with_vjp consumes its parameter".into());
                }
                // A result aliases what the lambda's result aliases, a
                // parameter standing for its argument.
                let params: Vec<Var> = lam.params.iter().map(|p| p.var).collect();
                let mut al = Vec::new();
                for r in &res {
                    let mut a = r.clone();
                    for (j, pv) in params.iter().enumerate() {
                        if r.binary_search(pv).is_ok() {
                            if let Some(x) = args.get(j) {
                                union(&mut a, &self.closure_atom(x));
                            }
                        }
                    }
                    al.push(self.live(a));
                }
                self.bind_pat(pat, al);
            }
            // UpdateAcc consumed its accumulator above; the rest make fresh values.
            _ => self.bind_pat(pat, Vec::new()),
        }
    }

    fn loop_(
        &mut self,
        pat: &[crate::Param],
        params: &[crate::Param],
        init: &[Atom],
        form: &LoopForm,
        body: &Body,
    ) {
        // Initial values: unique parameters consume theirs (accumulators
        // were consumed by their use).
        let mut p_al = Vec::with_capacity(params.len());
        for (p, a) in params.iter().zip(init) {
            let v = Self::atom_var(a);
            if p.ty.is_acc() || !matches!(p.ty, Type::Array(..)) {
                p_al.push(Vec::new());
            } else if p.unique {
                if let Some(v) = v.filter(|v| self.is_array(*v)) {
                    self.consume(v, "the loop (unique loop parameter)");
                }
                p_al.push(Vec::new());
            } else {
                p_al.push(self.closure_atom(a));
            }
        }
        self.cur_level += 1;
        let mut bound = Vec::new();
        if let LoopForm::For { i, bound: b } = form {
            let t = match b {
                Atom::Const(c) => Type::Prim(c.prim_type()),
                Atom::Var(v) => self
                    .ty(*v)
                    .cloned()
                    .unwrap_or(Type::Prim(crate::PrimType::I64)),
            };
            self.bind(*i, &t, Kind::Local, Vec::new());
            bound.push(*i);
        }
        for (k, p) in params.iter().enumerate() {
            let unique = p.unique || p.ty.is_acc();
            let al = p_al.get(k).cloned().unwrap_or_default();
            self.bind(p.var, &p.ty, Kind::LoopParam { unique }, al);
            bound.push(p.var);
        }
        if let LoopForm::While { cond } = form {
            self.body(cond);
        }
        let res = self.body(body);
        for p in params {
            self.check_acc_used(p.var);
        }
        // The next value of a unique parameter is consumed by the next
        // iteration: a non-unique parameter of this loop whose value it may
        // be (`loop (a, b) = … do (b with [0] = 1, a)`) is consumed then,
        // so it is unique too (inference mode).
        if let Some(found) = self.infer.as_mut() {
            for (k, p) in params.iter().enumerate() {
                if !p.unique || !matches!(p.ty, Type::Array(..)) {
                    continue;
                }
                for x in res.get(k).into_iter().flatten() {
                    let other = params
                        .iter()
                        .find(|q| q.var == *x && !q.unique && matches!(q.ty, Type::Array(..)));
                    if let Some(q) = other {
                        found.push(q.var);
                    }
                }
            }
        }
        // It may not alias a live variable from outside the loop.
        for (k, p) in params.iter().enumerate() {
            if !p.unique || !matches!(p.ty, Type::Array(..)) {
                continue;
            }
            let outer = res.get(k).and_then(|r| {
                r.iter().copied().find(|x| {
                    self.in_scope(*x)
                        && self.dead_at(*x).is_none()
                        && self
                            .level
                            .get(x.0 as usize)
                            .is_some_and(|l| *l < self.cur_level)
                })
            });
            if let Some(x) = outer {
                let (pn, xn) = (self.name(p.var), self.name(x));
                self.err(format!(
                    "the loop body's next value of the unique parameter {pn} may alias {xn}, bound outside the loop (the next iteration would consume it)"
                ));
            }
        }
        self.cur_level -= 1;
        // What each result may alias after any number of iterations: the
        // body result's aliases, where a loop parameter stands for what it
        // may be bound to (its initial value, or a body result).
        let pvars: Vec<Var> = params.iter().map(|p| p.var).collect();
        let mut r: Vec<Vec<Var>> = (0..params.len())
            .map(|k| {
                let mut a = res.get(k).cloned().unwrap_or_default();
                union(&mut a, p_al.get(k).map_or(&[][..], |x| x.as_slice()));
                a
            })
            .collect();
        loop {
            let mut changed = false;
            for k in 0..r.len() {
                let mut add = Vec::new();
                for (j, pv) in pvars.iter().enumerate() {
                    if j != k && r[k].binary_search(pv).is_ok() {
                        add.extend(r[j].iter().copied());
                    }
                }
                let before = r[k].len();
                union(&mut r[k], &add);
                changed |= r[k].len() != before;
            }
            if !changed {
                break;
            }
        }
        self.unbind(&bound);
        let al = r.into_iter().map(|a| self.live(a)).collect();
        self.bind_pat(pat, al);
    }

    fn soac(&mut self, soac: &Soac, pat: &[crate::Param]) {
        match soac {
            Soac::Map { lam, arrs, .. } => {
                let (consumed, _) = self.lambda(lam, true);
                for (c, v) in consumed.iter().zip(arrs) {
                    if *c && self.is_array(*v) {
                        self.consume(*v, "the map (its lambda consumes the row)");
                    }
                }
                self.bind_pat(pat, Vec::new());
            }
            Soac::Reduce {
                lam, neutral, arrs, ..
            }
            | Soac::Scan {
                lam, neutral, arrs, ..
            } => {
                let mut inputs: Vec<Option<Var>> = neutral.iter().map(Self::atom_var).collect();
                inputs.extend(arrs.iter().map(|v| Some(*v)));
                let mut all = Vec::new();
                for v in inputs.iter().flatten() {
                    union(&mut all, &self.closure(*v));
                }
                let (consumed, _) = self.lambda(lam, true);
                for (c, v) in consumed.iter().zip(&inputs) {
                    if let (true, Some(v)) = (*c, v) {
                        if self.is_array(*v) {
                            self.consume(*v, "the operator (it consumes a parameter)");
                        }
                    }
                }
                let all = self.live(all);
                if matches!(soac, Soac::Reduce { .. }) {
                    self.bind_pat(pat, vec![all; pat.len()]);
                } else {
                    self.bind_pat(pat, Vec::new());
                }
            }
            Soac::Hist {
                dest, lam, values, ..
            } => {
                for d in dest {
                    self.consume(*d, "reduce_by_index");
                }
                let (consumed, _) = self.lambda(lam, true);
                for (c, v) in consumed.iter().skip(dest.len()).zip(values) {
                    if *c && self.is_array(*v) {
                        self.consume(*v, "the operator (it consumes a parameter)");
                    }
                }
                self.bind_pat(pat, Vec::new());
            }
            Soac::Scatter { dest, .. } => {
                for d in dest {
                    self.consume(*d, "scatter");
                }
                self.bind_pat(pat, Vec::new());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{p, stm, v};
    use crate::*;

    const F64: Type = Type::Prim(PrimType::F64);
    const I64: Type = Type::Prim(PrimType::I64);
    const BOOL: Type = Type::Prim(PrimType::Bool);
    fn arr() -> Type {
        Type::Array(PrimType::F64, vec![Dim::Ext])
    }
    fn acc() -> Type {
        Type::Acc(PrimType::F64, vec![Dim::Ext])
    }
    fn c64(x: f64) -> Atom {
        Atom::Const(PrimValue::F64(x))
    }
    fn ci(x: i64) -> Atom {
        Atom::Const(PrimValue::I64(x))
    }
    fn up(var: u32, ty: Type) -> Param {
        Param {
            unique: true,
            ..p(var, ty)
        }
    }
    /// `dst = src with [i] = x`
    fn upd(dst: u32, src: u32, i: i64, x: f64) -> Stm {
        stm(
            vec![p(dst, arr())],
            Exp::Update(Var(src), vec![DimIndex::Fix(ci(i))], c64(x)),
        )
    }
    /// `dst = src[i]` (a scalar)
    fn idx(dst: u32, src: u32, i: i64) -> Stm {
        stm(
            vec![p(dst, F64)],
            Exp::Index(Var(src), vec![DimIndex::Fix(ci(i))]),
        )
    }
    /// `dst = update_acc a [i] x`
    fn upd_acc(dst: u32, a: u32, i: Atom, x: f64) -> Stm {
        stm(
            vec![p(dst, acc())],
            Exp::UpdateAcc {
                acc: Var(a),
                indices: vec![i],
                value: c64(x),
            },
        )
    }
    fn function(name: &str, params: Vec<Param>, ret: Vec<Type>, b: Body, n: usize) -> Function {
        Function {
            name: name.into(),
            params,
            unique_ret: vec![false; ret.len()],
            ret,
            body: b,
            var_names: (0..n).map(|i| format!("x{i}")).collect(),
            span: Span::default(),
        }
    }
    fn program(fs: Vec<Function>) -> Program {
        let entries = vec![EntryPoint {
            name: "main".into(),
            fun: FunId(0),
            param_arity: vec![1; fs[0].params.len()],
            result_arity: vec![1; fs[0].ret.len()],
            signature: None,
        }];
        Program {
            functions: fs,
            entries,
            ..Default::default()
        }
    }
    fn one(params: Vec<Param>, ret: Vec<Type>, stms: Vec<Stm>, result: Vec<Atom>) -> Program {
        program(vec![function(
            "main",
            params,
            ret,
            Body { stms, result },
            40,
        )])
    }
    fn errors(pr: &Program) -> String {
        match validate_program(pr) {
            Ok(_) => String::new(),
            Err(es) => es
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
    fn rejects(pr: &Program, what: &str) {
        let e = errors(pr);
        assert!(e.contains(what), "expected `{what}`, got: {e:?}");
    }
    fn accepts(pr: &Program) {
        assert_eq!(errors(pr), "");
    }

    /// `with_acc [x0 add] (\x1 -> body)` binding `x2` (and the extra results).
    fn with_acc(body: Body, extra: Vec<Param>) -> Stm {
        let mut ret = vec![acc()];
        ret.extend(extra.iter().map(|p| p.ty.clone()));
        let mut pat = vec![p(2, arr())];
        pat.extend(extra);
        stm(
            pat,
            Exp::WithAcc {
                inputs: vec![AccInput {
                    array: Var(0),
                    op: AccOp::Add,
                }],
                lam: Lambda {
                    params: vec![p(1, acc())],
                    body,
                    ret,
                },
            },
        )
    }

    #[test]
    fn use_after_update() {
        let pr = one(
            vec![up(0, arr())],
            vec![F64],
            vec![upd(1, 0, 0, 1.0), idx(2, 0, 1)],
            vec![v(2)],
        );
        rejects(&pr, "variable x0_0 is used after it was consumed");
    }

    #[test]
    fn update_then_use_the_result() {
        let pr = one(
            vec![up(0, arr())],
            vec![F64, arr()],
            vec![upd(1, 0, 0, 1.0), idx(2, 1, 1)],
            vec![v(2), v(1)],
        );
        accepts(&pr);
    }

    #[test]
    fn use_of_an_alias_after_consumption() {
        // x1 = reverse x0; x2 = x0 with [0] = 1; x3 = x1[0]
        let pr = one(
            vec![up(0, arr())],
            vec![F64],
            vec![
                stm(vec![p(1, arr())], Exp::Reverse(Var(0))),
                upd(2, 0, 0, 1.0),
                idx(3, 1, 0),
            ],
            vec![v(3)],
        );
        rejects(&pr, "variable x1_1 is used after it was consumed");
        // The other way round: consuming the alias kills the original.
        let pr = one(
            vec![up(0, arr())],
            vec![F64],
            vec![
                stm(
                    vec![p(1, arr())],
                    Exp::Index(
                        Var(0),
                        vec![DimIndex::Slice {
                            start: ci(0),
                            len: ci(1),
                            stride: ci(1),
                        }],
                    ),
                ),
                upd(2, 1, 0, 1.0),
                idx(3, 0, 0),
            ],
            vec![v(3)],
        );
        rejects(&pr, "variable x0_0 is used after it was consumed");
        // Through a copy of atoms as well.
        let pr = one(
            vec![up(0, arr())],
            vec![F64],
            vec![
                stm(vec![p(1, arr())], Exp::Atoms(vec![v(0)])),
                upd(2, 1, 0, 1.0),
                idx(3, 0, 0),
            ],
            vec![v(3)],
        );
        rejects(&pr, "x0_0 is used after it was consumed");
    }

    #[test]
    fn consuming_a_non_unique_parameter() {
        let pr = one(
            vec![p(0, arr())],
            vec![arr()],
            vec![upd(1, 0, 0, 1.0)],
            vec![v(1)],
        );
        rejects(&pr, "consumes x0_0, a non-unique parameter of the function");
        // Through an alias.
        let pr = one(
            vec![p(0, arr())],
            vec![arr()],
            vec![
                stm(vec![p(1, arr())], Exp::Reverse(Var(0))),
                upd(2, 1, 0, 1.0),
            ],
            vec![v(2)],
        );
        rejects(
            &pr,
            "consumes x0_0, a non-unique parameter of the function (through x1_1",
        );
    }

    #[test]
    fn copy_then_update() {
        // The parameter is not unique, but its copy is fresh; the parameter
        // stays usable.
        let pr = one(
            vec![p(0, arr())],
            vec![arr(), F64],
            vec![
                stm(vec![p(1, arr())], Exp::Copy(Var(0))),
                upd(2, 1, 0, 1.0),
                idx(3, 0, 0),
            ],
            vec![v(2), v(3)],
        );
        accepts(&pr);
    }

    /// `if x1 then (x2 = x0 with [0] = 1; x2) else x0` binding x3, then `rest`.
    fn branch(rest: Vec<Stm>, result: Vec<Atom>, ret: Vec<Type>) -> Program {
        let mut stms = vec![stm(
            vec![p(3, arr())],
            Exp::If {
                cond: v(1),
                then_: Body {
                    stms: vec![upd(2, 0, 0, 1.0)],
                    result: vec![v(2)],
                },
                else_: Body {
                    stms: vec![],
                    result: vec![v(0)],
                },
            },
        )];
        stms.extend(rest);
        one(vec![up(0, arr()), p(1, BOOL)], ret, stms, result)
    }

    #[test]
    fn consumption_in_one_branch_only() {
        accepts(&branch(vec![idx(4, 3, 0)], vec![v(4)], vec![F64]));
        // …counts as consumed after the if.
        rejects(
            &branch(vec![idx(4, 0, 0)], vec![v(4)], vec![F64]),
            "x0_0 is used after it was consumed",
        );
    }

    #[test]
    fn unique_call_argument_is_consumed() {
        // f (x: *[]f64) = x with [0] = 1; main calls f x0 and then reads x0.
        let f = Function {
            unique_ret: vec![true],
            ..function(
                "f",
                vec![up(0, arr())],
                vec![arr()],
                Body {
                    stms: vec![upd(1, 0, 0, 1.0)],
                    result: vec![v(1)],
                },
                2,
            )
        };
        let call = |x: u32| stm(vec![p(1, arr())], Exp::Apply(FunId(1), vec![v(x)]));
        let main = function(
            "main",
            vec![up(0, arr())],
            vec![F64],
            Body {
                stms: vec![call(0), idx(2, 0, 0)],
                result: vec![v(2)],
            },
            3,
        );
        let pr = program(vec![main, f.clone()]);
        rejects(&pr, "x0_0 is used after it was consumed");
        // A non-unique parameter cannot be passed on to a unique one.
        let main = function(
            "main",
            vec![p(0, arr())],
            vec![arr()],
            Body {
                stms: vec![call(0)],
                result: vec![v(1)],
            },
            2,
        );
        rejects(
            &program(vec![main, f]),
            "consumes x0_0, a non-unique parameter",
        );
    }

    #[test]
    fn loop_body_may_not_consume_outer_arrays() {
        // loop (x2 = 0.0) for x3 < 2 do (x4 = x0 with [0] = 1; x5 = x4[0]; x5)
        let pr = one(
            vec![up(0, arr())],
            vec![F64],
            vec![stm(
                vec![p(1, F64)],
                Exp::Loop {
                    params: vec![p(2, F64)],
                    init: vec![c64(0.0)],
                    form: LoopForm::For {
                        i: Var(3),
                        bound: ci(2),
                    },
                    body: Body {
                        stms: vec![upd(4, 0, 0, 1.0), idx(5, 4, 0)],
                        result: vec![v(5)],
                    },
                },
            )],
            vec![v(1)],
        );
        rejects(&pr, "bound outside the enclosing loop body or lambda");
    }

    #[test]
    fn loop_uniqueness_is_inferred() {
        // loop (x2 = x0) for x3 < 2 do x2 with [0] = 1: the parameter must
        // become unique, and then the loop consumes x0.
        let mk = |rest: Vec<Stm>, res: Vec<Atom>, ret: Vec<Type>| {
            let mut stms = vec![stm(
                vec![p(1, arr())],
                Exp::Loop {
                    params: vec![p(2, arr())],
                    init: vec![v(0)],
                    form: LoopForm::For {
                        i: Var(3),
                        bound: ci(2),
                    },
                    body: Body {
                        stms: vec![upd(4, 2, 0, 1.0)],
                        result: vec![v(4)],
                    },
                },
            )];
            stms.extend(rest);
            one(vec![up(0, arr())], ret, stms, res)
        };
        let mut pr = mk(vec![], vec![v(1)], vec![arr()]);
        rejects(&pr, "consumes x2_2, a non-unique loop parameter");
        infer_loop_uniqueness(&mut pr);
        accepts(&pr);
        let mut pr = mk(vec![idx(5, 0, 0)], vec![v(5)], vec![F64]);
        infer_loop_uniqueness(&mut pr);
        rejects(&pr, "x0_0 is used after it was consumed");
    }

    #[test]
    fn unique_loop_parameter_may_not_become_an_outer_array() {
        // loop (x2: *[]f64 = x4) for x3 < 2 do (x5 = x2 with [0] = 1; x0)
        // with x4 = copy x0: the second iteration would update x0.
        let mk = |next: u32| {
            one(
                vec![p(0, arr())],
                vec![arr()],
                vec![
                    stm(vec![p(4, arr())], Exp::Copy(Var(0))),
                    stm(
                        vec![p(1, arr())],
                        Exp::Loop {
                            params: vec![up(2, arr())],
                            init: vec![v(4)],
                            form: LoopForm::For {
                                i: Var(3),
                                bound: ci(2),
                            },
                            body: Body {
                                stms: vec![upd(5, 2, 0, 1.0)],
                                result: vec![v(next)],
                            },
                        },
                    ),
                ],
                vec![v(1)],
            )
        };
        rejects(
            &mk(0),
            "next value of the unique parameter x2_2 may alias x0_0, bound outside the loop",
        );
        accepts(&mk(5));
    }

    #[test]
    fn accumulator_used_twice() {
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![upd_acc(3, 1, ci(0), 1.0), upd_acc(4, 1, ci(1), 2.0)],
                    result: vec![v(4)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        rejects(&pr, "accumulator x1_1 is used after it was consumed");
        // Twice by one statement.
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![
                        stm(vec![p(3, acc()), p(4, acc())], Exp::Atoms(vec![v(1), v(1)])),
                        upd_acc(5, 4, ci(0), 1.0),
                    ],
                    result: vec![v(3)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        rejects(&pr, "accumulator x1_1 is used after it was consumed");
    }

    #[test]
    fn accumulator_threaded_linearly() {
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![upd_acc(3, 1, ci(0), 1.0), upd_acc(4, 3, ci(1), 2.0)],
                    result: vec![v(4)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        accepts(&pr);
        // The input is consumed by with_acc.
        let mut pr = pr;
        pr.functions[0].body.stms.push(idx(5, 0, 0));
        pr.functions[0].body.result = vec![v(5)];
        pr.functions[0].ret = vec![F64];
        rejects(&pr, "x0_0 is used after it was consumed");
    }

    #[test]
    fn accumulator_never_used_or_dropped() {
        // The update's result is dropped: the lambda returns the old one.
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![upd_acc(3, 1, ci(0), 1.0)],
                    result: vec![v(1)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        rejects(&pr, "used after it was consumed");
        rejects(&pr, "accumulator x3_3 is never used");
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![
                        upd_acc(3, 1, ci(0), 1.0),
                        stm(vec![p(4, acc())], Exp::Atoms(vec![v(3)])),
                        upd_acc(5, 4, ci(0), 1.0),
                    ],
                    result: vec![v(4)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        rejects(&pr, "accumulator x4_4 is used after it was consumed");
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![upd_acc(3, 1, ci(0), 1.0), upd_acc(4, 3, ci(0), 1.0)],
                    result: vec![v(3)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        let e = errors(&pr);
        assert!(e.contains("x3_3 is used after it was consumed"), "{e}");
    }

    #[test]
    fn accumulator_free_in_a_lambda() {
        // with_acc (\x1 -> map (\x5 -> update_acc x1 [x5] 1) (iota 3)) — x1 free.
        let map = stm(
            vec![p(4, acc())],
            Exp::Soac(Soac::Map {
                w: ci(3),
                lam: Lambda {
                    params: vec![p(5, I64)],
                    body: Body {
                        stms: vec![upd_acc(6, 1, v(5), 1.0)],
                        result: vec![v(6)],
                    },
                    ret: vec![acc()],
                },
                arrs: vec![Var(3)],
            }),
        );
        let iota = stm(
            vec![p(3, Type::Array(PrimType::I64, vec![Dim::Const(3)]))],
            Exp::Iota {
                n: ci(3),
                start: ci(0),
                step: ci(1),
                ty: PrimType::I64,
            },
        );
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![iota.clone(), map],
                    result: vec![v(4)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        rejects(&pr, "accumulator x1_1 is free in a lambda");
        // Passed as the map's input instead, it is fine.
        let map = stm(
            vec![p(4, acc())],
            Exp::Soac(Soac::Map {
                w: ci(3),
                lam: Lambda {
                    params: vec![p(7, acc()), p(5, I64)],
                    body: Body {
                        stms: vec![upd_acc(6, 7, v(5), 1.0)],
                        result: vec![v(6)],
                    },
                    ret: vec![acc()],
                },
                arrs: vec![Var(1), Var(3)],
            }),
        );
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![iota, map],
                    result: vec![v(4)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        accepts(&pr);
    }

    #[test]
    fn accumulator_in_one_branch_or_in_a_call() {
        let pr = one(
            vec![up(0, arr()), p(5, BOOL)],
            vec![arr()],
            vec![with_acc(
                Body {
                    stms: vec![stm(
                        vec![p(4, F64)],
                        Exp::If {
                            cond: v(5),
                            then_: Body {
                                stms: vec![upd_acc(3, 1, ci(0), 1.0)],
                                result: vec![c64(0.0)],
                            },
                            else_: Body {
                                stms: vec![],
                                result: vec![c64(1.0)],
                            },
                        },
                    )],
                    result: vec![v(1)],
                },
                vec![],
            )],
            vec![v(2)],
        );
        let e = errors(&pr);
        assert!(
            e.contains("accumulator x1_1 is used in one branch of an if but not in the other"),
            "{e}"
        );
        let g = function(
            "g",
            vec![p(0, acc())],
            vec![F64],
            Body {
                stms: vec![],
                result: vec![c64(0.0)],
            },
            1,
        );
        let main = function(
            "main",
            vec![up(0, arr())],
            vec![arr()],
            Body {
                stms: vec![with_acc(
                    Body {
                        stms: vec![stm(vec![p(3, F64)], Exp::Apply(FunId(1), vec![v(1)]))],
                        result: vec![v(1)],
                    },
                    vec![],
                )],
                result: vec![v(2)],
            },
            4,
        );
        let e = errors(&program(vec![main, g]));
        assert!(
            e.contains("in function main: accumulator x1_1 cannot be used by a function call"),
            "{e}"
        );
        assert!(
            e.contains("in function g: function parameter x0_0 is an accumulator"),
            "{e}"
        );
    }

    #[test]
    fn analysis_contents() {
        // main (x0: *[]f64) = let x1 = reverse x0 in let x2 = x1[0]
        //                     let x3 = copy x1 in let x4 = x3 with [0] = x2 in x4
        let pr = one(
            vec![up(0, arr())],
            vec![arr()],
            vec![
                stm(vec![p(1, arr())], Exp::Reverse(Var(0))),
                idx(2, 1, 0),
                stm(vec![p(3, arr())], Exp::Copy(Var(1))),
                stm(
                    vec![p(4, arr())],
                    Exp::Update(Var(3), vec![DimIndex::Fix(ci(0))], v(2)),
                ),
            ],
            vec![v(4)],
        );
        let a = validate_program(&pr).expect("valid");
        let f = FunId(0);
        assert_eq!(a.type_of(f, Var(2)), Some(&F64));
        assert_eq!(a.type_of(f, Var(4)), Some(&arr()));
        assert_eq!(a.type_of(f, Var(30)), None);
        assert_eq!(a.uses(f, Var(1)), 2);
        assert_eq!(a.uses(f, Var(4)), 1);
        assert_eq!(a.uses(f, Var(0)), 1);
        assert!(a.is_consumed(f, Var(3)));
        assert!(!a.is_consumed(f, Var(1)));
        let consumed: Vec<Var> = a.function(f).unwrap().consumed().collect();
        assert_eq!(consumed, vec![Var(3)]);
        assert_eq!(a.aliases(f, Var(1)), &[Var(0)]);
        assert_eq!(a.aliases(f, Var(3)), &[] as &[Var]);
        assert_eq!(a.aliases(f, Var(4)), &[] as &[Var]);
        assert_eq!(a.aliases(f, Var(2)), &[] as &[Var]);
    }
}
