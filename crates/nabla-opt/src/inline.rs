//! Inlining of calls (`Exp::Apply`) to small or once-called functions.
//!
//! A call `let pat = f(args)` becomes, in the caller:
//!
//! 1. the size checks the interpreter makes on entry to `f` (its
//!    `bind_sizes`): for each dimension of each array parameter, in order, an
//!    implicit size variable seen for the first time is *bound* to the
//!    argument's dimension (the caller's own size variable or constant when
//!    its type has one, otherwise a fresh `size(arg, d)`), and every other
//!    dimension (an explicit size parameter, a repeated size, a constant) is
//!    *checked* with `assert_eq_sizes` unless the caller's type shows it
//!    equal statically. The checks carry `f`'s span, as the interpreter's
//!    errors on entry do;
//! 2. parameters: each parameter is replaced by its argument, except array
//!    parameters that `f` consumes (updated in place) or whose type does not
//!    match the argument's statically, which are bound to fresh variables by
//!    one `Atoms` statement (with the call's span);
//! 3. `f`'s body with every variable renamed to a fresh variable of the
//!    caller (appended to its `var_names`, names kept), sizes in types
//!    renamed alike, and each statement keeping its own span, so run-time
//!    errors still point at the user's source;
//! 4. `let pat = result` (an `Atoms` statement with the call's span), left
//!    to copy propagation.

use crate::walk;
use nabla_ir::rewrite::Renamer;
use nabla_ir::{
    Atom, Body, Dim, Exp, FunId, Function, LoopForm, Param, PrimType, PrimValue, Program, Span,
    Stm, Type, Var,
};

/// When to inline a call.
#[derive(Clone, Copy, Debug)]
pub struct InlinePolicy {
    /// Callees with at most this many statements (counted recursively) are
    /// inlined everywhere.
    pub small: usize,
    /// Callees with at most this many statements are inlined when the call
    /// sits in a SOAC or AD lambda or a loop body.
    pub small_in_loop: usize,
    /// Callees with at most this many statements and at most
    /// [`InlinePolicy::few_calls`] call sites are inlined when the call sits
    /// in a SOAC or AD lambda or a loop body: there, inlining lets
    /// loop-invariant code motion hoist the callee's work that does not
    /// depend on the iteration (e.g. the primal of a forward-mode
    /// derivative mapped over a batch of seeds).
    pub large_in_loop: usize,
    /// See [`InlinePolicy::large_in_loop`].
    pub few_calls: usize,
    /// No inlining into a caller once it has this many statements.
    pub max_caller: usize,
    /// No inlining that would make the whole program larger than this many
    /// statements: a size budget, so that long call chains (each function
    /// inlining the one below, whose copy stays until dead functions are
    /// removed) cost memory linear in the program, not quadratic.
    pub max_program: usize,
}

impl Default for InlinePolicy {
    fn default() -> Self {
        InlinePolicy {
            small: 30,
            small_in_loop: 120,
            large_in_loop: 2000,
            few_calls: 3,
            max_caller: 20_000,
            max_program: 400_000,
        }
    }
}

/// Facts about every function, computed once per round.
pub(crate) struct CallInfo {
    /// Number of call sites of each function in the whole program.
    pub calls: Vec<usize>,
    /// The function can reach itself through calls (never inlined).
    pub recursive: Vec<bool>,
    /// The function is an entry point.
    pub entry: Vec<bool>,
}

impl CallInfo {
    pub(crate) fn new(prog: &Program) -> CallInfo {
        let n = prog.functions.len();
        let graph: Vec<Vec<usize>> = prog
            .functions
            .iter()
            .map(|f| {
                walk::callees(&f.body)
                    .into_iter()
                    .map(|g| g.0 as usize)
                    .filter(|&g| g < n)
                    .collect()
            })
            .collect();
        let mut calls = vec![0; n];
        for es in &graph {
            for &g in es {
                calls[g] += 1;
            }
        }
        let recursive = nabla_ir::callgraph::on_cycles(&graph);
        let mut entry = vec![false; n];
        for e in &prog.entries {
            if let Some(x) = entry.get_mut(e.fun.0 as usize) {
                *x = true;
            }
        }
        CallInfo {
            calls,
            recursive,
            entry,
        }
    }
}

/// Functions in bottom-up call order (callees before callers; cycles broken
/// arbitrarily), so that a callee is already optimised when it is inlined.
pub(crate) fn bottom_up_order(prog: &Program) -> Vec<usize> {
    let n = prog.functions.len();
    let graph: Vec<Vec<usize>> = prog
        .functions
        .iter()
        .map(|f| {
            let mut g: Vec<usize> = walk::callees(&f.body)
                .into_iter()
                .map(|g| g.0 as usize)
                .filter(|&g| g < n)
                .collect();
            g.sort_unstable();
            g.dedup();
            g
        })
        .collect();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        // Iterative post-order DFS.
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (f, ref mut k)) = stack.last_mut() {
            if *k < graph[f].len() {
                let g = graph[f][*k];
                *k += 1;
                if state[g] == 0 {
                    state[g] = 1;
                    stack.push((g, 0));
                }
            } else {
                state[f] = 2;
                order.push(f);
                stack.pop();
            }
        }
    }
    order
}

/// Inlines eligible calls in function `fid` (one level: calls inside the
/// inlined code wait for the next round). Returns whether anything changed.
/// `budget`: how many statements inlining may still add to the program.
/// `analysis`: function `fid`'s analysis, when it is as analysed.
pub(crate) fn inline_into(
    prog: &mut Program,
    fid: usize,
    info: &CallInfo,
    policy: &InlinePolicy,
    budget: &mut usize,
    analysis: Option<&nabla_ir::FunctionAnalysis>,
) -> bool {
    let Some(slot) = prog.functions.get_mut(fid) else {
        return false;
    };
    let mut caller = std::mem::replace(
        slot,
        Function {
            name: String::new(),
            params: vec![],
            unique_ret: vec![],
            ret: vec![],
            body: Body::default(),
            var_names: vec![],
            span: Span::default(),
        },
    );
    let mut cx = Inliner {
        prog,
        fid,
        info,
        policy,
        types: walk::var_types(&caller, analysis),
        in_scope: vec![false; caller.var_names.len()],
        size: walk::count_stms(&caller.body),
        var_names: std::mem::take(&mut caller.var_names),
        changed: false,
        budget,
        nesting: 0,
    };
    for p in &caller.params {
        cx.enter(p.var);
    }
    cx.body(&mut caller.body, false);
    caller.var_names = std::mem::take(&mut cx.var_names);
    let changed = cx.changed;
    prog.functions[fid] = caller;
    changed
}

struct Inliner<'a> {
    prog: &'a Program,
    fid: usize,
    info: &'a CallInfo,
    policy: &'a InlinePolicy,
    /// Types of the caller's original variables.
    types: Vec<Option<Type>>,
    /// Caller variables in scope at the current point.
    in_scope: Vec<bool>,
    /// Current statement count of the caller.
    size: usize,
    var_names: Vec<String>,
    changed: bool,
    /// Statements inlining may still add to the program (see
    /// [`InlinePolicy::max_program`]).
    budget: &'a mut usize,
    /// How many bodies deep the statement being visited is.
    nesting: usize,
}

/// No call is inlined where the inlined body would end up nested more than
/// this many bodies deep: inlining chains of deeply nested functions into
/// each other makes IR whose depth is their sum, which every later pass
/// and the interpreter must recurse through.
const MAX_INLINED_NESTING: usize = 1000;

/// How many bodies deep the statements of `b` nest (1 for a flat body).
fn nesting_depth(b: &Body) -> usize {
    stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
        1 + b
            .stms
            .iter()
            .flat_map(|s| s.exp.nested_bodies())
            .map(|(nb, _)| nesting_depth(nb))
            .max()
            .unwrap_or(0)
    })
}

impl Inliner<'_> {
    fn enter(&mut self, v: Var) {
        let i = v.0 as usize;
        if i >= self.in_scope.len() {
            self.in_scope.resize(i + 1, false);
        }
        self.in_scope[i] = true;
    }

    fn leave(&mut self, vs: &[Var]) {
        for v in vs {
            if let Some(x) = self.in_scope.get_mut(v.0 as usize) {
                *x = false;
            }
        }
    }

    fn fresh(&mut self, name: &str) -> Var {
        nabla_ir::rewrite::fresh_var(&mut self.var_names, name)
    }

    fn body(&mut self, b: &mut Body, hot: bool) {
        self.nesting += 1;
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            let mut bound = Vec::new();
            let old = std::mem::take(&mut b.stms);
            let mut out = Vec::with_capacity(old.len());
            for mut s in old {
                self.nested(&mut s.exp, hot);
                let expanded = match &s.exp {
                    Exp::Apply(g, args) if self.eligible(*g, hot) => {
                        self.expand(*g, args, &s.pat, s.span)
                    }
                    _ => None,
                };
                for p in &s.pat {
                    self.enter(p.var);
                    bound.push(p.var);
                }
                match expanded {
                    Some(stms) => {
                        self.changed = true;
                        self.size += stms.len();
                        *self.budget = self.budget.saturating_sub(stms.len());
                        out.extend(stms);
                    }
                    None => out.push(s),
                }
            }
            b.stms = out;
            self.leave(&bound);
        });
        self.nesting -= 1;
    }

    /// Inlines inside the bodies nested in `e`, with their binders in scope.
    fn nested(&mut self, e: &mut Exp, hot: bool) {
        match e {
            Exp::If { then_, else_, .. } => {
                self.body(then_, hot);
                self.body(else_, hot);
            }
            Exp::Loop {
                params, form, body, ..
            } => {
                let mut vs: Vec<Var> = params.iter().map(|p| p.var).collect();
                if let LoopForm::For { i, .. } = form {
                    vs.push(*i);
                }
                vs.iter().for_each(|v| self.enter(*v));
                if let LoopForm::While { cond } = form {
                    self.body(cond, true);
                }
                self.body(body, true);
                self.leave(&vs);
            }
            Exp::Soac(nabla_ir::Soac::Scatter { .. }) => {}
            Exp::Soac(
                nabla_ir::Soac::Map { lam, .. }
                | nabla_ir::Soac::Reduce { lam, .. }
                | nabla_ir::Soac::Scan { lam, .. }
                | nabla_ir::Soac::Hist { lam, .. },
            )
            | Exp::Jvp { lam, .. }
            | Exp::Vjp { lam, .. } => {
                let vs: Vec<Var> = lam.params.iter().map(|p| p.var).collect();
                vs.iter().for_each(|v| self.enter(*v));
                self.body(&mut lam.body, true);
                self.leave(&vs);
            }
            Exp::WithVjp { lam, rule, .. } => {
                for l in [lam, rule] {
                    let vs: Vec<Var> = l.params.iter().map(|p| p.var).collect();
                    vs.iter().for_each(|v| self.enter(*v));
                    self.body(&mut l.body, true);
                    self.leave(&vs);
                }
            }
            _ => {}
        }
    }

    fn eligible(&self, g: FunId, hot: bool) -> bool {
        let gi = g.0 as usize;
        if gi == self.fid || gi >= self.prog.functions.len() || self.info.recursive[gi] {
            return false;
        }
        if self.size >= self.policy.max_caller {
            return false;
        }
        let n = walk::count_stms(&self.prog.functions[gi].body);
        if n > *self.budget {
            return false;
        }
        if self.nesting + nesting_depth(&self.prog.functions[gi].body) > MAX_INLINED_NESTING {
            return false;
        }
        n <= self.policy.small
            || (hot && n <= self.policy.small_in_loop)
            || (hot
                && n <= self.policy.large_in_loop
                && self.info.calls[gi] <= self.policy.few_calls
                && !self.info.entry[gi])
            || (self.info.calls[gi] == 1 && !self.info.entry[gi])
    }

    fn in_scope(&self, v: Var) -> bool {
        self.in_scope.get(v.0 as usize).copied().unwrap_or(false)
    }

    /// The caller's static knowledge of dimension `d` of atom `a`.
    fn arg_dim(&self, a: &Atom, d: usize) -> Dim {
        let Atom::Var(x) = a else { return Dim::Ext };
        match self.types.get(x.0 as usize) {
            Some(Some(Type::Array(_, ds))) => match ds.get(d) {
                Some(Dim::Var(m)) if self.in_scope(*m) => Dim::Var(*m),
                Some(Dim::Const(c)) => Dim::Const(*c),
                _ => Dim::Ext,
            },
            _ => Dim::Ext,
        }
    }

    /// The statements replacing `let pat = g(args)`, or `None` when the call
    /// cannot be inlined (ill-formed IR: wrong arity, array constants).
    fn expand(&mut self, g: FunId, args: &[Atom], pat: &[Param], span: Span) -> Option<Vec<Stm>> {
        let prog = self.prog;
        let callee = &prog.functions[g.0 as usize];
        if callee.params.len() != args.len() || callee.body.result.len() != pat.len() {
            return None;
        }
        let mut out = Vec::new();
        let mut map: Vec<Option<Atom>> = vec![None; callee.var_names.len()];
        let param_index = |v: Var| callee.params.iter().position(|p| p.var == v);
        let consumed = walk::consumed_vars(callee);
        let name_of = |v: Var| {
            callee
                .var_names
                .get(v.0 as usize)
                .cloned()
                .unwrap_or_else(|| "v".to_string())
        };
        let i64_size = |c: i64| Atom::Const(PrimValue::I64(c));

        // 1. Scalar parameters are their arguments.
        for (p, a) in callee.params.iter().zip(args) {
            if let Type::Prim(_) = p.ty {
                set(&mut map, p.var, *a);
            }
        }
        // 2. Sizes, in the interpreter's order.
        for (pi, p) in callee.params.iter().enumerate() {
            let Type::Array(_, dims) = &p.ty else {
                continue;
            };
            let arg = args[pi];
            let Atom::Var(arg_var) = arg else { return None };
            for (d, dim) in dims.iter().enumerate() {
                let known = self.arg_dim(&arg, d);
                let expected = match dim {
                    Dim::Ext => continue,
                    Dim::Const(c) => i64_size(*c),
                    Dim::Var(v) => {
                        let bound = match param_index(*v) {
                            Some(j) => Some(args[j]),
                            None => get(&map, *v),
                        };
                        match bound {
                            Some(a) => a,
                            None => {
                                // First occurrence of an implicit size: bind it.
                                let a = match known {
                                    Dim::Var(m) => Atom::Var(m),
                                    Dim::Const(c) => i64_size(c),
                                    Dim::Ext => {
                                        let s = self.fresh(&name_of(*v));
                                        out.push(size_stm(s, arg_var, d, callee.span));
                                        Atom::Var(s)
                                    }
                                };
                                set(&mut map, *v, a);
                                continue;
                            }
                        }
                    }
                };
                let statically_equal = match (expected, known) {
                    (Atom::Var(a), Dim::Var(b)) => a == b,
                    (Atom::Const(PrimValue::I64(a)), Dim::Const(b)) => a == b,
                    _ => false,
                };
                if !statically_equal {
                    let s = self.fresh("size");
                    out.push(size_stm(s, arg_var, d, callee.span));
                    out.push(Stm {
                        pat: vec![],
                        exp: Exp::AssertEqSizes(
                            vec![expected, Atom::Var(s)],
                            format!(
                                "function {}: argument {} has the wrong size in dimension {}",
                                callee.name,
                                pi + 1,
                                d + 1
                            ),
                        ),
                        span: callee.span,
                    });
                }
            }
        }
        // 3. Array parameters: the argument itself where safe, else a copy binding.
        let mut binds: Vec<Param> = Vec::new();
        let mut bind_args: Vec<Atom> = Vec::new();
        for (p, a) in callee.params.iter().zip(args) {
            if let Type::Prim(_) = p.ty {
                continue;
            }
            let Atom::Var(x) = a else { return None };
            let ty = rename_type(&p.ty, &map);
            let (Type::Array(pe, pd), Some(Some(Type::Array(ae, ad)))) =
                (&ty, self.types.get(x.0 as usize))
            else {
                return None;
            };
            if pe != ae || pd.len() != ad.len() {
                return None;
            }
            // The argument's type is at least as precise as the parameter's.
            let precise = pd.iter().zip(ad).all(|(want, have)| match have {
                Dim::Ext => true,
                h => h == want,
            });
            // The validator accepts binding the argument at the parameter's type.
            let fits = pd.iter().zip(ad).all(|(want, have)| match (want, have) {
                (Dim::Var(a), Dim::Var(b)) => a == b,
                (Dim::Const(a), Dim::Const(b)) => a == b,
                _ => true,
            });
            let is_consumed = consumed.get(p.var.0 as usize).copied().unwrap_or(false);
            if precise && !is_consumed {
                set(&mut map, p.var, *a);
                continue;
            }
            let v = self.fresh(&name_of(p.var));
            set(&mut map, p.var, Atom::Var(v));
            if fits {
                binds.push(Param::new(v, ty));
                bind_args.push(*a);
            } else {
                // Sizes differ statically (they were checked above): view the
                // argument at the parameter's shape.
                let mut shape = Vec::with_capacity(pd.len());
                for (d, dim) in pd.iter().enumerate() {
                    shape.push(match dim {
                        Dim::Var(m) => Atom::Var(*m),
                        Dim::Const(c) => i64_size(*c),
                        Dim::Ext => {
                            let s = self.fresh("size");
                            out.push(size_stm(s, *x, d, callee.span));
                            Atom::Var(s)
                        }
                    });
                }
                out.push(Stm {
                    pat: vec![Param::new(v, ty)],
                    exp: Exp::Reshape(shape, *x),
                    span,
                });
            }
        }
        if !binds.is_empty() {
            out.push(Stm {
                pat: binds,
                exp: Exp::Atoms(bind_args),
                span,
            });
        }
        // 4. The renamed body and the result binding.
        let mut body = callee.body.clone();
        let mut r = Renamer::new(map, &callee.var_names, &mut self.var_names);
        walk::walk_body_deep(&mut body, &mut r);
        out.extend(body.stms);
        out.push(Stm {
            pat: pat.to_vec(),
            exp: Exp::Atoms(body.result),
            span,
        });
        Some(out)
    }
}

fn size_stm(s: Var, arr: Var, d: usize, span: Span) -> Stm {
    Stm {
        pat: vec![Param::new(s, Type::Prim(PrimType::I64))],
        exp: Exp::Size(arr, d),
        span,
    }
}

fn get(map: &[Option<Atom>], v: Var) -> Option<Atom> {
    map.get(v.0 as usize).copied().flatten()
}

fn set(map: &mut Vec<Option<Atom>>, v: Var, a: Atom) {
    let i = v.0 as usize;
    if i >= map.len() {
        map.resize(i + 1, None);
    }
    map[i] = Some(a);
}

pub(crate) use nabla_ir::rewrite::dim_of_atom;

fn rename_type(t: &Type, map: &[Option<Atom>]) -> Type {
    t.map_dims(|d| match d {
        Dim::Var(v) => get(map, v).map_or(Dim::Ext, dim_of_atom),
        d => d,
    })
}
