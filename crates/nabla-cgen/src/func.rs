//! Lowering of one IR function to a C function.
//!
//! Every IR variable becomes a C local `vN` declared at the top of the C
//! function (IR variables are bound once per function). Scalars are
//! unboxed; arrays are `nb_arr` values that own one reference to their
//! block; accumulators are `nb_arr` values that alias the array their
//! `with_acc` owns (they are linear, so they never own a reference).
//!
//! Ownership protocol: a statement's pattern variables own what they bind;
//! the arrays bound at the top level of a body are released when the body
//! ends (after its results were retained, or moved when the result is a
//! variable bound in the body); consuming an array (in-place update,
//! `scatter`/`hist` destination, `with_acc` input, unique call argument or
//! loop initial value) moves the reference out of the variable and copies
//! the block only when another reference to it exists.

use crate::scalar::{self, binop, c_type};
use crate::CgenError;
use nabla_ir::bounds::InBounds;
use nabla_ir::seg::{componentwise_operator, Component};
use nabla_ir::{
    AccOp, Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, FunId, Function, Lambda, LoopForm, Param,
    PrimType, PrimValue, Program, Soac, Span, Stm, Type, Var,
};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// What is known about an accumulator variable: the operator of the
/// `with_acc` that made it, its element type and rank.
#[derive(Clone)]
struct AccInfo {
    op: AccOp,
    elem: PrimType,
    rank: usize,
}

/// The C expression of the flat position of element `is` (one index per
/// dimension) of the C array `a`, with the bounds check: `nb_pos1` to
/// `nb_pos3` take the indices by value (kept in registers), higher ranks
/// go through `nb_pos` and an index array. `proven`: the indices are
/// provably in bounds ([`nabla_ir::bounds::InBounds`]), so `nb_in1` …
/// `nb_in` compute the position without the check.
fn position(loc: &str, a: &str, is: &[String], proven: bool) -> String {
    let f = if proven { "nb_in" } else { "nb_pos" };
    match is.len() {
        1..=3 => format!("{f}{}({loc}, &{a}, {})", is.len(), is.join(", ")),
        rank => format!("{f}({loc}, &{a}, {rank}, (int64_t[]){{{}}})", is.join(", ")),
    }
}

/// An array-valued result of a map: the C temporary holding the row, the
/// result's C variable, the row's rank, the element's C type, and the
/// inner map writing the row in place (see [`direct_row`]), if any.
type RowTemp = Option<(String, String, usize, &'static str, Option<Var>)>;

/// The rows a loop of a map runs: `from..to` (C expressions), split
/// among the threads of a parallel region where `parallel` is set, whose
/// threads other than the first update private copies of `accumulators`
/// (see [`FnGen::privatise_accumulators`]).
#[derive(Clone, Copy)]
struct Rows<'a> {
    from: &'a str,
    to: &'a str,
    parallel: bool,
    accumulators: &'a PrivateAccumulators,
}

/// The accumulators a map in parallel takes (multicore C): for each, the
/// lambda's parameter, the accumulator passed in, and the C array of the
/// threads' copies (`nb_arr [NB_MAX_THREADS]`); and the C variable that
/// gets the number of threads that ran.
struct PrivateAccumulators {
    each: Vec<(Var, Var, String)>,
    threads: String,
}

/// The C name of IR variable `v`.
pub(crate) fn var_name(v: Var) -> String {
    format!("v{}", v.0)
}

/// The C name of IR function `f`.
pub(crate) fn fun_name(f: FunId) -> String {
    format!("nb_fun_{}", f.0)
}

/// A C string literal for `s`.
pub(crate) fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
    out
}

/// The C prototype of function `f` (outputs first, as pointers).
pub(crate) fn prototype(id: FunId, f: &Function) -> Result<String, CgenError> {
    let mut parts = Vec::new();
    for (i, t) in f.ret.iter().enumerate() {
        parts.push(format!("{} *out{i}", c_decl_type(t)?));
    }
    for p in &f.params {
        // An f16 passed by value is `nb_f16_arg` (see runtime.c).
        let ty = match p.ty {
            Type::Prim(PrimType::F16) => "nb_f16_arg",
            _ => c_decl_type(&p.ty)?,
        };
        parts.push(format!("{ty} {}", var_name(p.var)));
    }
    if parts.is_empty() {
        parts.push("void".to_string());
    }
    Ok(format!(
        "static void {}({})",
        fun_name(id),
        parts.join(", ")
    ))
}

/// The C type of a variable of IR type `t`.
pub(crate) fn c_decl_type(t: &Type) -> Result<&'static str, CgenError> {
    match t {
        Type::Prim(p) => c_type(*p),
        Type::Array(p, d) | Type::Acc(p, d) => {
            c_type(*p)?;
            if d.len() > 8 {
                return Err(CgenError::unsupported("arrays of rank above 8"));
            }
            Ok("nb_arr")
        }
    }
}

/// One body being generated, for releasing dead arrays early.
#[derive(Clone)]
struct Frame {
    /// Per variable used in the body: the index of the last statement
    /// that uses it (`usize::MAX`: a result).
    last_use: HashMap<Var, usize>,
    /// Arrays bound by the statements generated so far (not yet released).
    bound: Vec<Var>,
    /// The statement being generated.
    index: usize,
    /// Whether the body may run several times per run of its enclosing
    /// body (loops, lambdas): arrays bound outside it stay alive.
    repeated: bool,
}

/// What a generated function does about the stack (see `stack.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StackCheck {
    /// Nothing.
    None,
    /// An entry point's function in a program with recursive functions:
    /// records where the stack starts.
    Start,
    /// A recursive function: fails cleanly where its calls use too much
    /// stack since the entry point started.
    Check,
}

/// Generates one function.
pub(crate) struct FnGen<'a> {
    prog: &'a Program,
    fun: &'a Function,
    locate: &'a dyn Fn(Span) -> String,
    types: HashMap<Var, Type>,
    accs: HashMap<Var, AccInfo>,
    out: String,
    indent: usize,
    tmp: usize,
    frames: Vec<Frame>,
    /// `iota(n, 0, 1)` arrays read only as inputs of maps, reductions and
    /// scans (see [`virtual_iotas`]), with their length: never stored, the
    /// element of row j is j.
    virtual_iotas: HashMap<Var, Atom>,
    /// Views built without a reference to their block (see
    /// [`crate::borrow`]).
    borrowed: HashSet<Var>,
    /// Rank-1 arrays made by a map (or a literal) in a map's lambda and
    /// returned as its row (see [`direct_row`]): where the inner map
    /// writes instead of into a block of its own.
    row_destinations: HashMap<Var, RowDestination>,
    /// The indexing statements whose indices are provably in bounds (by
    /// their first variable): generated without bounds checks.
    in_bounds: InBounds,
    stack: StackCheck,
    /// Multicore C: the outermost SOAC statements (by their first bound
    /// variable) that `lower` decided to run in parallel, with the fewest
    /// rows that do (see `nabla_ir::seg`). Empty for sequential C.
    parallel: HashMap<Var, u64>,
    /// Whether the SOAC statement being generated is the parallel copy
    /// ([`FnGen::parallel_or_sequential`]), taken by the code that emits
    /// its outermost loop (so that nested SOACs never see it).
    pending_parallel: bool,
    /// The parallel region being generated (multicore C; at most one:
    /// nested levels run sequentially).
    region: Option<OpenRegion>,
    /// Where, in the function's text, the parallel copy of the statement
    /// being generated starts ([`FnGen::parallel_or_sequential`]).
    parallel_copy_start: Option<usize>,
}

/// The line before a parallel region's code, in multicore C: the code up
/// to [`REGION_END`] runs while threads share the reference counts (it
/// calls `nb_shared_fun_N`, the rest of the function the unshared
/// helpers; see `multicore_variants` in lib.rs).
pub(crate) const REGION_BEGIN: &str = "/* parallel region: reference counts shared */";

/// The line after a parallel region's code (see [`REGION_BEGIN`]).
pub(crate) const REGION_END: &str = "/* end of the parallel region */";

/// The private variables of a parallel region ([`FnGen::bound_in`]).
struct Private {
    /// Each thread's own copy of these C locals.
    vars: Vec<Var>,
    /// Those that the lambdas take as parameters (and extra variables):
    /// the only ones whose value before the region may matter in it.
    params: HashSet<Var>,
}

/// A parallel region being generated ([`FnGen::open_parallel`]).
struct OpenRegion {
    /// Where, in the function's text, the block around the region opens.
    before: usize,
    /// Where its text starts, inside that block.
    inside: usize,
    /// The C names of its private variables.
    private: Vec<String>,
}

/// The C identifiers in `text`, in order, repeated as often as they
/// occur (words in string literals and comments too).
fn c_identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// Whether `text` declares the C variable `name`: a statement `TYPE
/// name;` or `TYPE name = …` (with `TYPE` equal to `ty` when given).
fn declares(text: &str, name: &str, ty: Option<&str>) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let (before, after) = (&text[..at], &text[at + name.len()..]);
        if before.ends_with(ident) || after.starts_with(ident) || !before.ends_with(' ') {
            return false;
        }
        let before = before.trim_end_matches(' ');
        let token = &before[before.trim_end_matches(ident).len()..];
        let after = after.trim_start_matches(' ');
        let declared =
            after.starts_with(';') || (after.starts_with('=') && !after.starts_with("=="));
        declared
            && !token.is_empty()
            && !matches!(token, "return" | "else")
            && ty.is_none_or(|t| token == t)
    })
}

impl<'a> FnGen<'a> {
    pub(crate) fn new(
        prog: &'a Program,
        fun: &'a Function,
        locate: &'a dyn Fn(Span) -> String,
    ) -> FnGen<'a> {
        FnGen {
            prog,
            fun,
            locate,
            types: HashMap::new(),
            accs: HashMap::new(),
            out: String::new(),
            indent: 1,
            tmp: 0,
            frames: Vec::new(),
            virtual_iotas: HashMap::new(),
            borrowed: HashSet::new(),
            row_destinations: HashMap::new(),
            in_bounds: InBounds::default(),
            stack: StackCheck::None,
            parallel: HashMap::new(),
            pending_parallel: false,
            region: None,
            parallel_copy_start: None,
        }
    }

    /// The statements to run in parallel (multicore C; see
    /// [`FnGen::parallel`]).
    pub(crate) fn with_parallel(mut self, parallel: HashMap<Var, u64>) -> FnGen<'a> {
        self.parallel = parallel;
        self
    }

    /// The parallel decision of the statement binding `pat` first.
    fn decision(&self, pat: &[Param]) -> Option<u64> {
        pat.first().and_then(|p| self.parallel.get(&p.var)).copied()
    }

    /// The generated function does `s` about the stack first.
    pub(crate) fn with_stack_check(mut self, s: StackCheck) -> FnGen<'a> {
        self.stack = s;
        self
    }

    /// The C definition of the function.
    pub(crate) fn generate(mut self, id: FunId) -> Result<String, CgenError> {
        let fun = self.fun;
        for p in &fun.params {
            self.types.insert(p.var, p.ty.clone());
        }
        collect_body(&fun.body, &mut self.types)?;
        self.virtual_iotas = virtual_iotas(&fun.body);
        self.in_bounds = InBounds::of_function(fun);
        self.borrowed = crate::borrow::borrowed_views(fun, &self.types);
        let params: HashSet<Var> = fun.params.iter().map(|p| p.var).collect();
        let mut decls = String::new();
        let mut vars: Vec<(&Var, &Type)> = self.types.iter().collect();
        vars.sort_by_key(|(v, _)| **v);
        for (v, t) in vars {
            if params.contains(v) {
                continue;
            }
            let ct = c_decl_type(t)?;
            let init = if ct == "nb_arr" { "{0}" } else { "0" };
            let _ = writeln!(decls, "  {ct} {} = {init};", var_name(*v));
        }
        let floc = c_string(&(self.locate)(fun.span));
        match self.stack {
            StackCheck::None => {}
            StackCheck::Start => self.line("NB_STACK_START();"),
            StackCheck::Check => {
                self.line(&format!("NB_STACK_CHECK({floc}, {});", c_string(&fun.name)))
            }
        }
        // Sizes of the parameters: bind or check.
        let mut bound: HashSet<Var> = params.clone();
        for (pi, p) in fun.params.iter().enumerate() {
            if let Type::Array(_, dims) = &p.ty {
                for (di, d) in dims.iter().enumerate() {
                    let actual = format!("{}.shape[{di}]", var_name(p.var));
                    let expected = match d {
                        Dim::Const(c) => format!("((int64_t){c}LL)"),
                        Dim::Var(v) if bound.contains(v) => var_name(*v),
                        Dim::Var(v) => {
                            bound.insert(*v);
                            self.line(&format!("{} = {actual};", var_name(*v)));
                            continue;
                        }
                        Dim::Ext => continue,
                    };
                    self.line(&format!(
                        "if ({actual} != {expected}) nb_fail({floc}, \"function %s: argument %d has size %\" PRId64 \" in dimension %d, but size %\" PRId64 \" was expected\", {}, {}, {actual}, {}, (int64_t){expected});",
                        c_string(&fun.name),
                        pi + 1,
                        di + 1
                    ));
                }
            }
        }
        let targets: Vec<Option<String>> = (0..fun.ret.len())
            .map(|i| Some(format!("(*out{i})")))
            .collect();
        self.body(&fun.body, &targets)?;
        for p in &fun.params {
            if matches!(p.ty, Type::Array(..)) {
                self.line(&format!("nb_release(&{});", var_name(p.var)));
            }
        }
        Ok(format!(
            "{} {{\n{decls}{}}}\n",
            prototype(id, fun)?,
            self.out
        ))
    }

    // ----- helpers -----------------------------------------------------------

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn open(&mut self, s: &str) {
        self.line(s);
        self.indent += 1;
    }

    fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }

    fn fresh(&mut self) -> String {
        self.tmp += 1;
        format!("t{}", self.tmp)
    }

    fn ty(&self, v: Var) -> Result<&Type, CgenError> {
        self.types.get(&v).ok_or_else(|| {
            CgenError::internal(&format!(
                "variable {} has no type in function {}",
                v.0, self.fun.name
            ))
        })
    }

    fn atom_type(&self, a: &Atom) -> Result<Type, CgenError> {
        match a {
            Atom::Var(v) => self.ty(*v).cloned(),
            Atom::Const(c) => Ok(Type::Prim(c.prim_type())),
        }
    }

    fn atom_prim(&self, a: &Atom) -> Result<PrimType, CgenError> {
        match self.atom_type(a)? {
            Type::Prim(p) => Ok(p),
            _ => Err(CgenError::internal("a scalar operand is an array")),
        }
    }

    fn atom(&self, a: &Atom) -> Result<String, CgenError> {
        match a {
            Atom::Var(v) => Ok(var_name(*v)),
            Atom::Const(c) => scalar::c_const(*c),
        }
    }

    /// A `printf` format and its arguments for an assertion's message whose
    /// `{}` holes show the values of `xs` (integers without a type suffix,
    /// as the interpreter shows them).
    fn assert_format(&self, msg: &str, xs: &[Atom]) -> Result<(String, Vec<String>), CgenError> {
        let mut fmt = String::new();
        let mut args = Vec::new();
        let mut values = xs.iter();
        for (k, part) in msg.split("{}").enumerate() {
            if k > 0 {
                let Some(x) = values.next() else {
                    return Err(CgenError::internal(
                        "an assertion message with too many holes",
                    ));
                };
                let a = self.atom(x)?;
                let p = self.atom_prim(x)?;
                if p == PrimType::Bool {
                    fmt.push_str("%s");
                    args.push(format!("({a} ? \"true\" : \"false\")"));
                } else if p.is_float() {
                    fmt.push_str("%.17g");
                    args.push(format!("(double)({a})"));
                } else if p.is_signed_int() {
                    fmt.push_str("%lld");
                    args.push(format!("(long long)({a})"));
                } else {
                    fmt.push_str("%llu");
                    args.push(format!("(unsigned long long)({a})"));
                }
            }
            fmt.push_str(&part.replace('%', "%%"));
        }
        Ok((fmt, args))
    }

    /// `(int64_t)atom`, for sizes and indices.
    fn int(&self, a: &Atom) -> Result<String, CgenError> {
        Ok(format!("((int64_t){})", self.atom(a)?))
    }

    /// Element type, rank and C element type of an array variable.
    fn array_info(&self, v: Var) -> Result<(PrimType, usize, &'static str), CgenError> {
        match self.ty(v)? {
            Type::Array(p, d) | Type::Acc(p, d) => Ok((*p, d.len(), c_type(*p)?)),
            Type::Prim(_) => Err(CgenError::internal("an array operand is a scalar")),
        }
    }

    fn is_array(&self, v: Var) -> bool {
        matches!(self.types.get(&v), Some(Type::Array(..)))
    }

    fn is_acc(&self, v: Var) -> bool {
        matches!(self.types.get(&v), Some(Type::Acc(..)))
    }

    /// Reading an atom into a new owner: arrays are retained.
    fn owned(&self, a: &Atom) -> Result<String, CgenError> {
        match a {
            Atom::Var(v) if self.is_array(*v) => Ok(format!("nb_retain({})", var_name(*v))),
            _ => self.atom(a),
        }
    }

    /// The initial value of a reduction's accumulator parameter `p` from
    /// its neutral element `n`: a reference to it ([`FnGen::owned`]), or,
    /// where the accumulator is a row combined in place
    /// ([`FnGen::reduce_rows_in_place`], in `rows_in_place`), a copy of
    /// its own made without touching the neutral row's reference count.
    /// A reference would be copied anyway (the row is made unique before
    /// the loop), and in multicore C each thread's reference to the
    /// shared neutral row was an atomic increment and decrement on one
    /// cache line for every element: ht's Jacobian on two threads took
    /// 2.5 times its one-thread time.
    fn initial_accumulator(
        &self,
        p: &Param,
        n: &Atom,
        rows_in_place: &HashSet<Var>,
    ) -> Result<String, CgenError> {
        match n {
            Atom::Var(v) if rows_in_place.contains(&p.var) && self.is_array(*v) => {
                let (_, rank, ct) = self.array_info(*v)?;
                Ok(format!("nb_copy(&{}, {rank}, sizeof({ct}))", var_name(*v)))
            }
            _ => self.owned(n),
        }
    }

    /// Consuming an array variable: its reference moves out.
    fn consume(&self, v: Var) -> String {
        format!("nb_move(&{})", var_name(v))
    }

    fn copy_acc_info(&mut self, to: Var, from: &Atom) {
        if let Atom::Var(f) = from {
            if let Some(i) = self.accs.get(f).cloned() {
                self.accs.insert(to, i);
            }
        }
    }

    /// A C expression for the value of dimension `d` (0 when unknown).
    fn dim(&self, d: &Dim) -> String {
        match d {
            Dim::Const(c) => format!("((int64_t){c}LL)"),
            Dim::Var(v) => format!("((int64_t){})", var_name(*v)),
            Dim::Ext => "((int64_t)0)".to_string(),
        }
    }

    // ----- bodies ------------------------------------------------------------

    /// Emits a body, assigning its results to `targets` (C lvalues; `None`
    /// drops the result) and releasing the arrays it bound.
    fn body(&mut self, body: &Body, targets: &[Option<String>]) -> Result<(), CgenError> {
        self.body_with(body, targets, true)
    }

    /// A body that runs at most once per run of its enclosing body (an
    /// `if` branch, a `with_acc` lambda): arrays of the enclosing bodies may
    /// be released early from inside it.
    fn body_once(&mut self, body: &Body, targets: &[Option<String>]) -> Result<(), CgenError> {
        self.body_with(body, targets, false)
    }

    fn body_with(
        &mut self,
        body: &Body,
        targets: &[Option<String>],
        repeated: bool,
    ) -> Result<(), CgenError> {
        let mut last_use: HashMap<Var, usize> = HashMap::new();
        for (k, stm) in body.stms.iter().enumerate() {
            for v in nabla_ir::free_vars_stm(stm) {
                last_use.insert(v, k);
            }
        }
        for a in &body.result {
            if let Atom::Var(v) = a {
                last_use.insert(*v, usize::MAX);
            }
        }
        self.frames.push(Frame {
            last_use,
            bound: Vec::new(),
            index: 0,
            repeated,
        });
        let mut skip_next = false;
        for (k, stm) in body.stms.iter().enumerate() {
            if let Some(f) = self.frames.last_mut() {
                f.index = k;
            }
            if std::mem::take(&mut skip_next) {
                // Emitted with the map before it (see map_into_reduce).
            } else {
                if self.consumes(stm) {
                    self.release_dead();
                }
                match (body.stms.get(k + 1), map_into_reduce(body, k)) {
                    (Some(next), Some(stored)) => {
                        // A fused map-reduce runs in parallel where both
                        // of its statements do, from the smaller of their
                        // widths: a row does the work of both lambdas, so
                        // it needs no more rows than either alone (the
                        // reduction's own width, for its cheap operator,
                        // kept gmm's objective over 1000 points sequential).
                        let decision = match (self.decision(&stm.pat), self.decision(&next.pat)) {
                            (Some(map), Some(reduce)) => Some(map.min(reduce)),
                            _ => None,
                        };
                        let Exp::Soac(Soac::Map { w, .. }) = &stm.exp else {
                            return Err(CgenError::internal("map_into_reduce on other statements"));
                        };
                        self.parallel_or_sequential(decision, w, |g| {
                            g.fused_map_reduce(stm, next, &stored)
                        })?;
                        skip_next = true;
                    }
                    _ => self.stm(stm)?,
                }
            }
            let arrays: Vec<Var> = stm
                .pat
                .iter()
                .map(|p| p.var)
                .filter(|v| self.is_array(*v))
                .collect();
            if let Some(f) = self.frames.last_mut() {
                f.bound.extend(arrays);
            }
        }
        self.frames.pop();
        self.finish_body(body, targets)
    }

    /// Whether a statement consumes an array (so that arrays no longer
    /// used should be released first, to let it update in place).
    fn consumes(&self, stm: &Stm) -> bool {
        match &stm.exp {
            Exp::Update(..)
            | Exp::WithAcc { .. }
            | Exp::Soac(Soac::Hist { .. } | Soac::Scatter { .. }) => true,
            Exp::Apply(f, _) => self
                .prog
                .functions
                .get(f.0 as usize)
                .is_some_and(|c| c.params.iter().any(|p| p.unique)),
            Exp::Loop { params, .. } => params.iter().any(|p| p.unique),
            _ => false,
        }
    }

    /// Releases the arrays bound earlier in the enclosing bodies that
    /// nothing uses any more (from the current statement on), up to and
    /// including the innermost repeated body (a loop body or lambda).
    fn release_dead(&mut self) {
        let mut dead = Vec::new();
        for f in self.frames.iter_mut().rev() {
            let index = f.index;
            let last_use = &f.last_use;
            f.bound.retain(|v| {
                let is_dead = last_use.get(v).is_none_or(|&k| k < index);
                if is_dead {
                    dead.push(*v);
                }
                !is_dead
            });
            if f.repeated {
                break;
            }
        }
        for v in dead {
            self.line(&format!("nb_release(&{});", var_name(v)));
        }
    }

    fn finish_body(&mut self, body: &Body, targets: &[Option<String>]) -> Result<(), CgenError> {
        if targets.len() != body.result.len() {
            return Err(CgenError::internal(
                "a body returns a different number of values",
            ));
        }
        let bound: HashSet<Var> = body
            .stms
            .iter()
            .flat_map(|s| s.pat.iter().map(|p| p.var))
            .filter(|v| self.is_array(*v))
            .collect();
        for (i, (r, t)) in body.result.iter().zip(targets).enumerate() {
            let Some(t) = t else { continue };
            let value = match r {
                Atom::Var(v) if bound.contains(v) && !body.result[i + 1..].contains(r) => {
                    self.consume(*v)
                }
                _ => self.owned(r)?,
            };
            self.line(&format!("{t} = {value};"));
        }
        let mut bound: Vec<Var> = bound.into_iter().collect();
        bound.sort();
        for v in bound {
            self.line(&format!("nb_release(&{});", var_name(v)));
        }
        Ok(())
    }

    fn pat_targets(pat: &[Param]) -> Vec<Option<String>> {
        pat.iter().map(|p| Some(var_name(p.var))).collect()
    }

    // ----- statements --------------------------------------------------------

    fn stm(&mut self, stm: &Stm) -> Result<(), CgenError> {
        let loc = c_string(&(self.locate)(stm.span));
        let pat = &stm.pat;
        let proven = pat.first().is_some_and(|p| self.in_bounds.contains(p.var));
        let one = || -> Result<String, CgenError> {
            match pat.as_slice() {
                [p] => Ok(var_name(p.var)),
                _ => Err(CgenError::internal(
                    "a statement binds the wrong number of values",
                )),
            }
        };
        match &stm.exp {
            Exp::Atoms(atoms) => {
                if atoms.len() != pat.len() {
                    return Err(CgenError::internal("copy of a different number of atoms"));
                }
                for (p, a) in pat.iter().zip(atoms) {
                    let value = self.owned(a)?;
                    self.line(&format!("{} = {value};", var_name(p.var)));
                    self.copy_acc_info(p.var, a);
                }
            }
            Exp::BinOp(op, a, b) => {
                let t = self.atom_prim(a)?;
                let e = scalar::binop(*op, t, &self.atom(a)?, &self.atom(b)?, &loc)?;
                self.line(&format!("{} = {e};", one()?));
            }
            Exp::CmpOp(op, a, b) => {
                let e = scalar::cmpop(*op, &self.atom(a)?, &self.atom(b)?);
                self.line(&format!("{} = {e};", one()?));
            }
            Exp::UnOp(op, a) => {
                let t = self.atom_prim(a)?;
                let e = scalar::unop(*op, t, &self.atom(a)?)?;
                self.line(&format!("{} = {e};", one()?));
            }
            Exp::TernOp(op, a, b, c) => {
                let t = self.atom_prim(a)?;
                let e = scalar::ternop(*op, t, &self.atom(a)?, &self.atom(b)?, &self.atom(c)?)?;
                self.line(&format!("{} = {e};", one()?));
            }
            Exp::Conv(op, a) => {
                let e = scalar::conv(*op, &self.atom(a)?)?;
                self.line(&format!("{} = {e};", one()?));
            }
            Exp::Apply(f, args) => self.apply(*f, args, pat)?,
            Exp::If { cond, then_, else_ } => {
                let c = self.atom(cond)?;
                let targets = Self::pat_targets(pat);
                self.open(&format!("if ({c}) {{"));
                self.body_once(then_, &targets)?;
                self.indent -= 1;
                self.open("} else {");
                self.body_once(else_, &targets)?;
                self.close();
                for (p, r) in pat.iter().zip(&then_.result) {
                    self.copy_acc_info(p.var, r);
                }
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => self.loop_(pat, params, init, form, body)?,
            Exp::Index(v, idx) => {
                let borrow = pat.first().is_some_and(|p| self.borrowed.contains(&p.var));
                self.index(&loc, &one()?, *v, idx, borrow, proven)?
            }
            Exp::Update(v, idx, x) => self.update(&loc, &one()?, *v, idx, x, proven)?,
            Exp::ArrayLit(atoms, row_ty) => {
                let into = pat
                    .first()
                    .and_then(|p| self.row_destinations.remove(&p.var));
                self.array_lit(&loc, &one()?, into, atoms, row_ty)?
            }
            Exp::Iota { n, start, step, ty } => {
                let p = one()?;
                let ct = c_type(*ty)?;
                if !ty.is_int() {
                    return Err(CgenError::internal("iota of a non-integer type"));
                }
                let n = self.int(n)?;
                let (start, step) = (self.atom(start)?, self.atom(step)?);
                let s = ty.name();
                self.open("{");
                self.line(&format!("int64_t n = {n};"));
                // `iota n` is Futhark's range 0..1..<n (its message).
                let signed = if ty.is_signed_int() { "" } else { "unsigned " };
                self.line(&format!(
                    "if (n < 0) nb_fail({loc}, \"Range %lld..%lld..<%\" PRId64 \" is invalid.\", (long long)({signed}long long){start}, (long long)({signed}long long)({start} + {step}), n);"
                ));
                if pat.len() == 1 && self.virtual_iotas.contains_key(&pat[0].var) {
                    // Its readers compute the elements (see bind_row).
                    self.line("(void)n;");
                    self.close();
                    return Ok(());
                }
                self.line(&format!(
                    "{p} = nb_alloc(1, (int64_t[]){{n}}, sizeof({ct}), {loc});"
                ));
                self.line(&format!("{ct} x = ({ct}){start}, d = ({ct}){step};"));
                self.line(&format!(
                    "for (int64_t j = 0; j < n; j++) {{ (({ct} *){p}.data)[j] = x; x = nb_add_{s}(x, d); }}"
                ));
                self.close();
            }
            Exp::Replicate(n, x) => {
                let p = one()?;
                let n = self.int(n)?;
                let xt = self.atom_type(x)?;
                match (&xt, x) {
                    (Type::Prim(t), _) => {
                        let ct = c_type(*t)?;
                        let xv = self.atom(x)?;
                        self.open("{");
                        self.line(&format!("int64_t n = {n};"));
                        self.line(&format!(
                            "if (n < 0) nb_fail({loc}, \"replicate: negative size %\" PRId64, n);"
                        ));
                        self.line(&format!(
                            "{p} = nb_alloc(1, (int64_t[]){{n}}, sizeof({ct}), {loc});"
                        ));
                        self.line(&format!(
                            "for (int64_t j = 0; j < n; j++) (({ct} *){p}.data)[j] = {xv};"
                        ));
                        self.close();
                    }
                    (Type::Array(t, d), Atom::Var(v)) => {
                        let ct = c_type(*t)?;
                        let xv = var_name(*v);
                        self.line(&format!(
                            "{p} = nb_replicate({loc}, {n}, {}, sizeof({ct}), {xv}.data, {xv}.shape, {});",
                            d.len() + 1,
                            d.len()
                        ));
                    }
                    _ => return Err(CgenError::unsupported("replicate of an accumulator")),
                }
            }
            Exp::Copy(v) => {
                let p = one()?;
                if self.is_array(*v) {
                    let (_, rank, ct) = self.array_info(*v)?;
                    self.line(&format!(
                        "{p} = nb_copy(&{}, {rank}, sizeof({ct}));",
                        var_name(*v)
                    ));
                } else {
                    self.line(&format!("{p} = {};", var_name(*v)));
                }
            }
            Exp::Size(v, d) => {
                let p = one()?;
                let (_, rank, _) = self.array_info(*v)?;
                if *d >= rank {
                    return Err(CgenError::internal("size of a dimension beyond the rank"));
                }
                self.line(&format!("{p} = {}.shape[{d}];", var_name(*v)));
            }
            Exp::Reshape(dims, v) => {
                let p = one()?;
                let (_, rank, _) = self.array_info(*v)?;
                if dims.is_empty() || dims.len() > 8 {
                    return Err(CgenError::unsupported("a reshape to rank 0 or above 8"));
                }
                let ds = dims
                    .iter()
                    .map(|d| self.int(d))
                    .collect::<Result<Vec<_>, _>>()?;
                self.line(&format!(
                    "{p} = nb_reshape({loc}, &{}, {rank}, {}, (int64_t[]){{{}}});",
                    var_name(*v),
                    dims.len(),
                    ds.join(", ")
                ));
            }
            Exp::Rearrange(perm, v) => {
                let p = one()?;
                let (_, rank, ct) = self.array_info(*v)?;
                let mut seen = vec![false; rank];
                let valid = perm.len() == rank
                    && perm
                        .iter()
                        .all(|&k| k < rank && !std::mem::replace(&mut seen[k], true));
                if !valid {
                    return Err(CgenError::internal("an invalid permutation"));
                }
                if perm.iter().enumerate().all(|(i, &k)| i == k) {
                    self.line(&format!("{p} = nb_retain({});", var_name(*v)));
                } else {
                    let ps: Vec<String> = perm.iter().map(|k| k.to_string()).collect();
                    self.line(&format!(
                        "{p} = nb_rearrange(&{}, {rank}, sizeof({ct}), (int[]){{{}}});",
                        var_name(*v),
                        ps.join(", ")
                    ));
                }
            }
            Exp::Concat(vs) => {
                let p = one()?;
                let Some(first) = vs.first() else {
                    return Err(CgenError::internal("concatenation of no arrays"));
                };
                let (_, rank, ct) = self.array_info(*first)?;
                let names: Vec<String> = vs.iter().map(|v| var_name(*v)).collect();
                self.line(&format!(
                    "{p} = nb_concat({loc}, {rank}, sizeof({ct}), {}, (nb_arr[]){{{}}});",
                    vs.len(),
                    names.join(", ")
                ));
            }
            Exp::Rotate(r, v) => {
                let p = one()?;
                let (_, rank, ct) = self.array_info(*v)?;
                self.line(&format!(
                    "{p} = nb_permute_rows(&{}, {rank}, sizeof({ct}), 0, {});",
                    var_name(*v),
                    self.int(r)?
                ));
            }
            Exp::Reverse(v) => {
                let p = one()?;
                let (_, rank, ct) = self.array_info(*v)?;
                self.line(&format!(
                    "{p} = nb_permute_rows(&{}, {rank}, sizeof({ct}), 1, 0);",
                    var_name(*v)
                ));
            }
            Exp::AssertEqSizes(atoms, msg) => {
                if atoms.len() >= 2 {
                    let ns = atoms
                        .iter()
                        .map(|a| self.int(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    self.line(&format!(
                        "nb_check_eq_sizes({loc}, {}, {}, (int64_t[]){{{}}});",
                        c_string(msg),
                        atoms.len(),
                        ns.join(", ")
                    ));
                }
            }
            Exp::Assert(c, msg, xs) => {
                let m = if msg.is_empty() {
                    "Assertion is false"
                } else {
                    msg
                };
                if xs.is_empty() {
                    self.line(&format!(
                        "if (!{}) nb_fail({loc}, \"%s\", {});",
                        self.atom(c)?,
                        c_string(m)
                    ));
                } else {
                    let (fmt, args) = self.assert_format(m, xs)?;
                    self.line(&format!(
                        "if (!{}) nb_fail({loc}, {}, {});",
                        self.atom(c)?,
                        c_string(&fmt),
                        args.join(", ")
                    ));
                }
            }
            Exp::Soac(soac) => {
                let decision = self.decision(pat);
                self.parallel_or_sequential(decision, soac.width(), |g| g.soac(&loc, pat, soac))?
            }
            Exp::WithAcc { inputs, lam } => {
                if lam.params.len() != inputs.len() || lam.body.result.len() < inputs.len() {
                    return Err(CgenError::internal("with_acc lambda of the wrong arity"));
                }
                for (input, p) in inputs.iter().zip(&lam.params) {
                    let (elem, rank, ct) = self.array_info(input.array)?;
                    let pv = var_name(p.var);
                    self.line(&format!("{pv} = {};", self.consume(input.array)));
                    self.line(&format!("nb_make_unique(&{pv}, {rank}, sizeof({ct}));"));
                    self.accs.insert(
                        p.var,
                        AccInfo {
                            op: input.op.clone(),
                            elem,
                            rank,
                        },
                    );
                }
                let n = inputs.len();
                let mut targets: Vec<Option<String>> = vec![None; n];
                for p in pat.iter().skip(n) {
                    targets.push(Some(var_name(p.var)));
                }
                self.body_once(&lam.body, &targets)?;
                for (p, lp) in pat.iter().zip(&lam.params) {
                    self.line(&format!("{} = {};", var_name(p.var), self.consume(lp.var)));
                }
                // An extra result may be an accumulator from outside (one
                // the lambda updated as a free variable).
                for (p, r) in pat.iter().zip(&lam.body.result).skip(n) {
                    self.copy_acc_info(p.var, r);
                }
            }
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => self.update_acc(&loc, pat, *acc, indices, value, proven)?,
            Exp::Jvp { .. } | Exp::Vjp { .. } => {
                return Err(CgenError::unsupported(
                    "a jvp/vjp that static AD leaves to dynamic AD",
                ))
            }
            // The `ad` pass replaces every with_vjp outside AD by its
            // function; one is left only where dynamic AD needs its rule.
            Exp::WithVjp { .. } => {
                return Err(CgenError::unsupported(
                    "a with_vjp that static AD leaves to dynamic AD",
                ))
            }
        }
        Ok(())
    }

    fn apply(&mut self, f: FunId, args: &[Atom], pat: &[Param]) -> Result<(), CgenError> {
        let Some(callee) = self.prog.functions.get(f.0 as usize) else {
            return Err(CgenError::internal("call of an unknown function"));
        };
        if callee.params.len() != args.len() || callee.ret.len() != pat.len() {
            return Err(CgenError::internal("call with the wrong number of values"));
        }
        let mut parts: Vec<String> = pat
            .iter()
            .map(|p| format!("&{}", var_name(p.var)))
            .collect();
        for (p, a) in callee.params.iter().zip(args) {
            parts.push(match a {
                Atom::Var(v) if self.is_array(*v) && p.unique => self.consume(*v),
                _ => self.owned(a)?,
            });
        }
        self.line(&format!("{}({});", fun_name(f), parts.join(", ")));
        Ok(())
    }

    fn loop_(
        &mut self,
        pat: &[Param],
        params: &[Param],
        init: &[Atom],
        form: &LoopForm,
        body: &Body,
    ) -> Result<(), CgenError> {
        if params.len() != init.len() || params.len() != pat.len() {
            return Err(CgenError::internal("loop of mismatched arity"));
        }
        for (p, a) in params.iter().zip(init) {
            let value = match a {
                Atom::Var(v) if self.is_array(*v) && p.unique => self.consume(*v),
                _ => self.owned(a)?,
            };
            self.line(&format!("{} = {value};", var_name(p.var)));
            self.copy_acc_info(p.var, a);
        }
        // Accumulators threaded through the body keep the initial one's info.
        let temps: Vec<String> = params.iter().map(|_| self.fresh()).collect();
        let decl_temps = |g: &mut FnGen| -> Result<(), CgenError> {
            for (p, t) in params.iter().zip(&temps) {
                g.line(&format!("{} {t};", c_decl_type(&p.ty)?));
            }
            Ok(())
        };
        let targets: Vec<Option<String>> = temps.iter().map(|t| Some(t.clone())).collect();
        match form {
            LoopForm::For { i, bound } => {
                let bt = self.atom_prim(bound)?;
                let ct = c_type(bt)?;
                let b = self.fresh();
                self.open("{");
                self.line(&format!("{ct} {b} = {};", self.atom(bound)?));
                let iv = var_name(*i);
                self.open(&format!("for ({iv} = 0; {iv} < {b}; {iv}++) {{"));
            }
            LoopForm::While { cond } => {
                let c = self.fresh();
                self.open("{");
                self.open("for (;;) {");
                self.line(&format!("bool {c};"));
                self.body(cond, &[Some(c.clone())])?;
                self.line(&format!("if (!{c}) break;"));
            }
        }
        decl_temps(self)?;
        self.body(body, &targets)?;
        for (p, t) in params.iter().zip(&temps) {
            let pv = var_name(p.var);
            if self.is_array(p.var) {
                self.line(&format!("nb_release(&{pv});"));
            }
            self.line(&format!("{pv} = {t};"));
        }
        self.close();
        self.close();
        for (p, q) in pat.iter().zip(params) {
            let value = if self.is_array(q.var) {
                self.consume(q.var)
            } else {
                var_name(q.var)
            };
            self.line(&format!("{} = {value};", var_name(p.var)));
            self.copy_acc_info(p.var, &Atom::Var(q.var));
        }
        Ok(())
    }

    /// The index list as a C `nb_ix[]` compound literal.
    fn ix_list(&self, idx: &[DimIndex]) -> Result<String, CgenError> {
        let mut parts = Vec::new();
        for d in idx {
            parts.push(match d {
                DimIndex::Fix(a) => format!("{{0, {}, 0, 0}}", self.int(a)?),
                DimIndex::Slice { start, len, stride } => format!(
                    "{{1, {}, {}, {}}}",
                    self.int(start)?,
                    self.int(len)?,
                    self.int(stride)?
                ),
            });
        }
        Ok(format!("(nb_ix[]){{{}}}", parts.join(", ")))
    }

    fn all_fixed(idx: &[DimIndex]) -> Option<Vec<&Atom>> {
        idx.iter()
            .map(|d| match d {
                DimIndex::Fix(a) => Some(a),
                DimIndex::Slice { .. } => None,
            })
            .collect()
    }

    /// `borrow`: a view result takes no reference (see [`crate::borrow`]).
    fn index(
        &mut self,
        loc: &str,
        p: &str,
        v: Var,
        idx: &[DimIndex],
        borrow: bool,
        proven: bool,
    ) -> Result<(), CgenError> {
        if !self.is_array(v) {
            if idx.is_empty() {
                self.line(&format!("{p} = {};", var_name(v)));
                return Ok(());
            }
            return Err(CgenError::internal("indexing of a non-array"));
        }
        let (_, rank, ct) = self.array_info(v)?;
        let a = var_name(v);
        if idx.len() > rank {
            return Err(CgenError::internal("more indices than the rank"));
        }
        if idx.is_empty() {
            self.line(&format!("{p} = nb_retain({a});"));
            return Ok(());
        }
        if let Some(fixed) = Self::all_fixed(idx) {
            let is = fixed
                .iter()
                .map(|x| self.int(x))
                .collect::<Result<Vec<_>, _>>()?;
            if fixed.len() == rank {
                let pos = position(loc, &a, &is, proven);
                self.line(&format!("{p} = (({ct} *){a}.data)[{pos}];"));
                return Ok(());
            }
            // A row (or a row of a row): a view, without nb_index's
            // general region walk.
            let borrow = u8::from(borrow);
            if let [i0] = &is[..] {
                self.line(&format!(
                    "nb_subarray1(&{p}, {loc}, &{a}, {rank}, sizeof({ct}), {i0}, {borrow});"
                ));
            } else {
                self.line(&format!(
                    "nb_subarray(&{p}, {loc}, &{a}, {rank}, sizeof({ct}), {}, (int64_t[]){{{}}}, {borrow});",
                    is.len(),
                    is.join(", "),
                ));
            }
            return Ok(());
        }
        self.line(&format!(
            "{p} = nb_index({loc}, &{a}, {rank}, sizeof({ct}), {}, {});",
            self.ix_list(idx)?,
            idx.len()
        ));
        Ok(())
    }

    fn update(
        &mut self,
        loc: &str,
        p: &str,
        v: Var,
        idx: &[DimIndex],
        x: &Atom,
        proven: bool,
    ) -> Result<(), CgenError> {
        let (_, rank, ct) = self.array_info(v)?;
        if idx.len() > rank {
            return Err(CgenError::internal("more indices than the rank"));
        }
        // Evaluate the value and indices before the array moves (the value
        // may not alias the array, so order matters only for clarity).
        self.line(&format!("{p} = {};", self.consume(v)));
        self.line(&format!("nb_make_unique(&{p}, {rank}, sizeof({ct}));"));
        let xt = self.atom_type(x)?;
        if let (Some(fixed), Type::Prim(_)) = (Self::all_fixed(idx), &xt) {
            if fixed.len() == rank {
                let is = fixed
                    .iter()
                    .map(|a| self.int(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let pos = position(loc, p, &is, proven);
                self.line(&format!("(({ct} *){p}.data)[{pos}] = {};", self.atom(x)?));
                return Ok(());
            }
        }
        let ixs = self.ix_list(idx)?;
        match (&xt, x) {
            (Type::Prim(_), _) => {
                let t = self.fresh();
                self.open("{");
                self.line(&format!("{ct} {t} = {};", self.atom(x)?));
                self.line(&format!(
                    "nb_update({loc}, &{p}, {rank}, sizeof({ct}), {ixs}, {}, &{t}, NULL, 0);",
                    idx.len()
                ));
                self.close();
            }
            (Type::Array(_, d), Atom::Var(xv)) => {
                let xn = var_name(*xv);
                self.line(&format!(
                    "nb_update({loc}, &{p}, {rank}, sizeof({ct}), {ixs}, {}, {xn}.data, {xn}.shape, {});",
                    idx.len(),
                    d.len()
                ));
            }
            _ => return Err(CgenError::internal("update with an accumulator value")),
        }
        Ok(())
    }

    /// `p = [atoms…]`; a literal of scalars with a row destination (`into`,
    /// see [`direct_row`]) is written there.
    fn array_lit(
        &mut self,
        loc: &str,
        p: &str,
        into: Option<RowDestination>,
        atoms: &[Atom],
        row_ty: &Type,
    ) -> Result<(), CgenError> {
        let ct = c_type(row_ty.elem())?;
        match row_ty {
            Type::Prim(_) => {
                match into {
                    Some(dest) => self.line(&dest.bind(p, ct)),
                    None => self.line(&format!(
                        "{p} = nb_alloc(1, (int64_t[]){{{}}}, sizeof({ct}), {loc});",
                        atoms.len()
                    )),
                }
                if let Some(table) = constant_table(atoms)? {
                    // One static table and a copy: a statement per element
                    // makes C compilers slow on long literals (30 000
                    // elements: minutes at -O3).
                    self.line(&format!(
                        "{{ static const {ct} nb_literal[] = {{{table}}}; memcpy({p}.data, nb_literal, sizeof nb_literal); }}"
                    ));
                } else {
                    for (k, a) in atoms.iter().enumerate() {
                        self.line(&format!("(({ct} *){p}.data)[{k}] = {};", self.atom(a)?));
                    }
                }
            }
            Type::Array(_, dims) => {
                let r = dims.len();
                if r + 1 > 8 {
                    return Err(CgenError::unsupported("arrays of rank above 8"));
                }
                let Some(Atom::Var(first)) = atoms.first() else {
                    let ds: Vec<String> = dims.iter().map(|d| self.dim(d)).collect();
                    self.line(&format!(
                        "{p} = nb_alloc({}, (int64_t[]){{0, {}}}, sizeof({ct}), {loc});",
                        r + 1,
                        ds.join(", ")
                    ));
                    return Ok(());
                };
                let f = var_name(*first);
                self.line(&format!(
                    "{p} = nb_alloc_rows({loc}, {}, {r}, {f}.shape, sizeof({ct}));",
                    atoms.len()
                ));
                for (k, a) in atoms.iter().enumerate() {
                    let Atom::Var(v) = a else {
                        return Err(CgenError::internal("array literal with a scalar row"));
                    };
                    let rv = var_name(*v);
                    self.line(&format!(
                        "nb_check_same_shape({loc}, \"array literal with rows of shapes\", {f}.shape, {rv}.shape, {r});"
                    ));
                    self.line(&format!(
                        "nb_store_row({loc}, &{p}, {r}, sizeof({ct}), {k}, &{rv});"
                    ));
                }
            }
            Type::Acc(..) => return Err(CgenError::unsupported("arrays of accumulators")),
        }
        Ok(())
    }

    // ----- SOACs -------------------------------------------------------------

    /// Binds lambda parameter `p` to row `j` of input `v`.
    fn bind_row(&mut self, p: &Param, v: Var, j: &str) -> Result<(), CgenError> {
        if self.virtual_iotas.contains_key(&v) {
            self.line(&format!("{} = (int64_t){j};", var_name(p.var)));
            return Ok(());
        }
        let (_, rank, ct) = self.array_info(v)?;
        let a = var_name(v);
        if rank == 1 {
            self.line(&format!("{} = (({ct} *){a}.data)[{j}];", var_name(p.var)));
        } else {
            self.line(&format!(
                "nb_row(&{}, &{a}, {rank}, sizeof({ct}), {j}, {});",
                var_name(p.var),
                u8::from(self.borrowed.contains(&p.var))
            ));
        }
        Ok(())
    }

    fn release_params(&mut self, ps: &[Param]) {
        for p in ps {
            if self.is_array(p.var) {
                self.line(&format!("nb_release(&{});", var_name(p.var)));
            }
        }
    }

    fn check_widths(
        &mut self,
        loc: &str,
        what: &str,
        w: &str,
        arrs: &[Var],
    ) -> Result<(), CgenError> {
        for v in arrs {
            if self.is_acc(*v) {
                continue;
            }
            let (_, rank, _) = self.array_info(*v)?;
            if rank == 0 {
                return Err(CgenError::internal("a SOAC input of rank 0"));
            }
            // A virtual iota has no array: check its length.
            let array = match self.virtual_iotas.get(v) {
                Some(n) => format!("&(nb_arr){{NULL, NULL, {{{}}}}}", self.int(n)?),
                None => format!("&{}", var_name(*v)),
            };
            let name = self
                .fun
                .var_names
                .get(v.0 as usize)
                .cloned()
                .unwrap_or_else(|| format!("#{}", v.0));
            self.line(&format!(
                "nb_check_width({loc}, {}, {}, {array}, {w});",
                c_string(what),
                c_string(&name),
            ));
        }
        Ok(())
    }

    fn soac(&mut self, loc: &str, pat: &[Param], soac: &Soac) -> Result<(), CgenError> {
        match soac {
            Soac::Map { w, lam, arrs } => self.map(loc, pat, w, lam, arrs),
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            } => self.reduce_scan(loc, pat, w, lam, neutral, arrs, false),
            Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => self.reduce_scan(loc, pat, w, lam, neutral, arrs, true),
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => self.hist(loc, pat, w, dest, lam, neutral, *indices, values),
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => self.scatter(loc, pat, w, dest, indices, values),
        }
    }

    fn map(
        &mut self,
        loc: &str,
        pat: &[Param],
        w: &Atom,
        lam: &Lambda,
        arrs: &[Var],
    ) -> Result<(), CgenError> {
        if lam.params.len() != arrs.len()
            || lam.ret.len() != pat.len()
            || lam.body.result.len() != pat.len()
        {
            return Err(CgenError::internal("map lambda of the wrong arity"));
        }
        let parallel = std::mem::take(&mut self.pending_parallel);
        let wv = self.fresh();
        self.open("{");
        self.line(&format!("int64_t {wv} = {};", self.int(w)?));
        self.check_widths(loc, "map", &wv, arrs)?;
        for (p, v) in lam.params.iter().zip(arrs) {
            if self.is_acc(*v) {
                self.line(&format!("{} = {};", var_name(p.var), var_name(*v)));
                self.copy_acc_info(p.var, &Atom::Var(*v));
            }
        }
        let accumulators = self.private_accumulators(parallel, lam, arrs);
        // Scalar results go straight into their arrays; array rows through
        // temporaries, the result allocated at the first row.
        let mut targets = Vec::new();
        let mut row_temps = Vec::new();
        for (i, (p, t)) in pat.iter().zip(&lam.ret).enumerate() {
            let pv = var_name(p.var);
            match t {
                Type::Prim(e) => {
                    let ct = c_type(*e)?;
                    match self.row_destinations.remove(&p.var) {
                        // Row j of the enclosing map's result (j is still
                        // its index here, before this map's loop), or a
                        // scratch row.
                        Some(dest) => self.line(&dest.bind(&pv, ct)),
                        None => self.line(&format!(
                            "{pv} = nb_alloc(1, (int64_t[]){{{wv}}}, sizeof({ct}), {loc});"
                        )),
                    }
                    targets.push(Some(format!("(({ct} *){pv}.data)[j]")));
                    row_temps.push(None);
                }
                Type::Array(e, dims) => {
                    let ct = c_type(*e)?;
                    if dims.len() + 1 > 8 {
                        return Err(CgenError::unsupported("arrays of rank above 8"));
                    }
                    let t = self.fresh();
                    targets.push(Some(t.clone()));
                    if let Some((v, width)) = direct_row(lam, i) {
                        // The rows are written in place: the result is
                        // allocated whole before the loop, and the inner
                        // map takes row j as its destination.
                        let width = self.int(&width)?;
                        self.line(&format!(
                            "{pv} = nb_alloc(2, (int64_t[]){{{wv}, {width}}}, sizeof({ct}), {loc});"
                        ));
                        self.row_destinations
                            .insert(v, RowDestination::RowOf(pv.clone()));
                        row_temps.push(Some((t, pv, dims.len(), ct, Some(v))));
                        continue;
                    }
                    let ds: Vec<String> = dims.iter().map(|d| self.dim(d)).collect();
                    self.line(&format!(
                        "if ({wv} == 0) {pv} = nb_alloc({}, (int64_t[]){{0, {}}}, sizeof({ct}), {loc});",
                        dims.len() + 1,
                        ds.join(", ")
                    ));
                    row_temps.push(Some((t, pv, dims.len(), ct, None)));
                }
                Type::Acc(..) => {
                    targets.push(None);
                    row_temps.push(None);
                }
            }
        }
        // The first row alone, then the others, where the lambda tests
        // whether its index is 0 (a boundary case): in the second loop the
        // C compiler knows the test is false and drops the branch, so the
        // loop can be vectorised. Only maps without array rows (whose
        // first row allocates the result) are split.
        // In parallel, a map whose first row allocates the result runs
        // that row first, alone, and the others in parallel.
        let peel = row_temps.iter().all(Option::is_none) && self.tests_first_row(lam, arrs);
        let allocates = row_temps
            .iter()
            .flatten()
            .any(|(.., direct)| direct.is_none());
        let loops = if peel || (parallel && allocates) {
            vec![("0", format!("({wv} < 1 ? {wv} : 1)")), ("1", wv.clone())]
        } else {
            vec![("0", wv.clone())]
        };
        let last = loops.len() - 1;
        // Each loop writes the rows in place into the same destinations:
        // the inner maps of the first take them (row_destinations), so the
        // second starts from the same ones (else its inner maps would
        // write into blocks of their own, and its rows stay unwritten).
        let destinations = self.row_destinations.clone();
        for (k, (from, to)) in loops.into_iter().enumerate() {
            if k > 0 {
                self.row_destinations = destinations.clone();
            }
            let rows = Rows {
                from,
                to: &to,
                parallel: parallel && k == last,
                accumulators: &accumulators,
            };
            self.map_loop(loc, &wv, lam, arrs, rows, &targets, &row_temps)?;
        }
        if parallel {
            self.combine_accumulators(&accumulators, loc)?;
        }
        // Accumulator results: the i-th is the i-th accumulator input.
        let acc_inputs: Vec<Var> = arrs.iter().copied().filter(|v| self.is_acc(*v)).collect();
        let mut k = 0;
        for (p, t) in pat.iter().zip(&lam.ret) {
            if t.is_acc() {
                let Some(src) = acc_inputs.get(k) else {
                    return Err(CgenError::internal(
                        "map returns more accumulators than it takes",
                    ));
                };
                self.line(&format!("{} = {};", var_name(p.var), var_name(*src)));
                self.copy_acc_info(p.var, &Atom::Var(*src));
                k += 1;
            }
        }
        self.close();
        Ok(())
    }

    /// The loop of [`FnGen::map`] over `rows`, in parallel where they say.
    #[allow(clippy::too_many_arguments)]
    fn map_loop(
        &mut self,
        loc: &str,
        wv: &str,
        lam: &Lambda,
        arrs: &[Var],
        rows: Rows<'_>,
        targets: &[Option<String>],
        row_temps: &[RowTemp],
    ) -> Result<(), CgenError> {
        let (from, to) = if rows.parallel {
            // The operators of the accumulators run in every thread too.
            let operators: Vec<Lambda> = rows
                .accumulators
                .each
                .iter()
                .filter_map(|(_, v, _)| match self.accs.get(v).map(|i| &i.op) {
                    Some(AccOp::Lambda(l, _)) => Some((**l).clone()),
                    _ => None,
                })
                .collect();
            let mut lams = vec![lam];
            lams.extend(operators.iter());
            let private = self.bound_in(&lams, &[]);
            let rows_of_thread = self.open_parallel(rows.from, rows.to, &private)?;
            self.privatise_accumulators(rows.accumulators, loc)?;
            rows_of_thread
        } else {
            (rows.from.to_string(), rows.to.to_string())
        };
        self.open(&format!("for (int64_t j = {from}; j < {to}; j++) {{"));
        for (_, (t, _, _, _, _)) in row_temps
            .iter()
            .enumerate()
            .filter_map(|(i, x)| x.as_ref().map(|x| (i, x)))
        {
            self.line(&format!("nb_arr {t};"));
        }
        for (p, v) in lam.params.iter().zip(arrs) {
            if !self.is_acc(*v) {
                self.bind_row(p, *v, "j")?;
            }
        }
        let r = self.body(&lam.body, targets);
        // Whether each in-place row was taken by its map (one generated
        // some other way leaves its destination here).
        let untaken: Vec<bool> = row_temps
            .iter()
            .flatten()
            .map(|(.., direct)| direct.is_some_and(|v| self.row_destinations.remove(&v).is_some()))
            .collect();
        r?;
        for ((t, pv, r, ct, direct), untaken) in row_temps.iter().flatten().zip(untaken) {
            if direct.is_none() {
                self.line(&format!(
                    "if (j == 0) {pv} = nb_alloc_rows({loc}, {wv}, {r}, {t}.shape, sizeof({ct}));"
                ));
            }
            // A row written in place is already there.
            if direct.is_none() || untaken {
                self.line(&format!(
                    "nb_store_row({loc}, &{pv}, {r}, sizeof({ct}), j, &{t});"
                ));
            }
            self.line(&format!("nb_release(&{t});"));
        }
        let row_params: Vec<Param> = lam
            .params
            .iter()
            .zip(arrs)
            .filter(|(_, v)| !self.is_acc(**v))
            .map(|(p, _)| p.clone())
            .collect();
        self.release_params(&row_params);
        self.close();
        if rows.parallel {
            self.close_parallel()?;
        }
        Ok(())
    }

    /// The accumulators a map over `arrs` with lambda `lam` takes, made
    /// private to the threads where the map runs in `parallel` (declares
    /// the C arrays of their copies and the thread count): none otherwise.
    fn private_accumulators(
        &mut self,
        parallel: bool,
        lam: &Lambda,
        arrs: &[Var],
    ) -> PrivateAccumulators {
        let mut accumulators = PrivateAccumulators {
            each: Vec::new(),
            threads: String::new(),
        };
        if !parallel {
            return accumulators;
        }
        for (p, v) in lam.params.iter().zip(arrs) {
            if self.is_acc(*v) {
                let copies = self.fresh();
                self.line(&format!("nb_arr {copies}[NB_MAX_THREADS];"));
                accumulators.each.push((p.var, *v, copies));
            }
        }
        if !accumulators.each.is_empty() {
            accumulators.threads = self.fresh();
            self.line(&format!("int {} = 1;", accumulators.threads));
        }
        accumulators
    }

    /// In a parallel region (multicore C): every thread but the first
    /// points each accumulator parameter at a copy of its own, of the
    /// accumulator's shape, filled with the operator's neutral element
    /// (`add`: zero, negative for floats, which leaves every value as it
    /// is); the copies are kept for [`FnGen::combine_accumulators`].
    fn privatise_accumulators(
        &mut self,
        accumulators: &PrivateAccumulators,
        loc: &str,
    ) -> Result<(), CgenError> {
        for (p, v, copies) in &accumulators.each {
            let Some(info) = self.accs.get(v).cloned() else {
                return Err(CgenError::internal(
                    "a parallel map of an untraced accumulator",
                ));
            };
            let ct = c_type(info.elem)?;
            let neutral = match &info.op {
                AccOp::Add => scalar::c_const(PrimValue::from_f64(info.elem, -0.0))?,
                AccOp::Lambda(_, neutral) => self.atom(neutral)?,
                AccOp::Write => {
                    return Err(CgenError::internal("a parallel map of a write accumulator"))
                }
            };
            let (p, v, rank) = (var_name(*p), var_name(*v), info.rank);
            self.open("if (omp_get_thread_num() != 0) {");
            self.line(&format!(
                "{p} = nb_alloc({rank}, {v}.shape, sizeof({ct}), {loc});"
            ));
            self.line(&format!("int64_t n = nb_count({v}.shape, {rank});"));
            self.line(&format!(
                "for (int64_t e = 0; e < n; e++) (({ct} *){p}.data)[e] = {neutral};"
            ));
            self.close();
            self.line(&format!("{copies}[omp_get_thread_num()] = {p};"));
        }
        if !accumulators.each.is_empty() {
            self.line(&format!(
                "if (omp_get_thread_num() == 0) {} = omp_get_num_threads();",
                accumulators.threads
            ));
        }
        Ok(())
    }

    /// After a parallel map (multicore C): the copies of the accumulators
    /// of threads 1, 2, … ([`FnGen::privatise_accumulators`]) are combined
    /// into the accumulators, cell by cell with their operator, in thread
    /// order (the first thread updated the accumulators themselves, and
    /// its rows come first), and released.
    fn combine_accumulators(
        &mut self,
        accumulators: &PrivateAccumulators,
        loc: &str,
    ) -> Result<(), CgenError> {
        if accumulators.each.is_empty() {
            return Ok(());
        }
        self.open(&format!(
            "for (int nb_t = 1; nb_t < {}; nb_t++) {{",
            accumulators.threads
        ));
        for (_, v, copies) in &accumulators.each {
            let Some(info) = self.accs.get(v).cloned() else {
                return Err(CgenError::internal(
                    "a parallel map of an untraced accumulator",
                ));
            };
            let (ct, v, rank) = (c_type(info.elem)?, var_name(*v), info.rank);
            self.open("{");
            self.line(&format!("int64_t n = nb_count({v}.shape, {rank});"));
            self.open("for (int64_t e = 0; e < n; e++) {");
            let cell = format!("(({ct} *){v}.data)[e]");
            let value = format!("(({ct} *){copies}[nb_t].data)[e]");
            self.combine_cell(&info, &cell, &value, loc)?;
            self.close();
            self.line(&format!("nb_release(&{copies}[nb_t]);"));
            self.close();
        }
        self.close();
        Ok(())
    }

    /// Whether `lam`'s body compares the index of a map over `iota` with 0
    /// (`p == 0` or `p != 0`, at its top level).
    fn tests_first_row(&self, lam: &Lambda, arrs: &[Var]) -> bool {
        let index: Vec<Var> = lam
            .params
            .iter()
            .zip(arrs)
            .filter(|(_, a)| self.virtual_iotas.contains_key(a))
            .map(|(p, _)| p.var)
            .collect();
        let zero = Atom::Const(PrimValue::I64(0));
        lam.body.stms.iter().any(|s| match &s.exp {
            Exp::CmpOp(CmpOp::Eq | CmpOp::Neq, Atom::Var(a), b)
            | Exp::CmpOp(CmpOp::Eq | CmpOp::Neq, b, Atom::Var(a)) => {
                index.contains(a) && *b == zero
            }
            _ => false,
        })
    }

    /// A map whose scalar results the reduction right after it reads (see
    /// [`map_into_reduce`]), as one loop: each element is computed by the
    /// map's lambda into the reduction's element parameters and combined
    /// at once. Only the results marked in `stored` are written to arrays
    /// (in the same loop); the others are never stored (they stay empty).
    fn fused_map_reduce(
        &mut self,
        map_stm: &Stm,
        red_stm: &Stm,
        stored: &[bool],
    ) -> Result<(), CgenError> {
        let (
            Exp::Soac(Soac::Map {
                w,
                lam: mlam,
                arrs: marrs,
            }),
            Exp::Soac(Soac::Reduce {
                lam: rlam,
                neutral,
                arrs: rarrs,
                ..
            }),
        ) = (&map_stm.exp, &red_stm.exp)
        else {
            return Err(CgenError::internal("map_into_reduce on other statements"));
        };
        let k = neutral.len();
        if rlam.params.len() != 2 * k
            || rarrs.len() != k
            || rlam.body.result.len() != k
            || red_stm.pat.len() != k
            || mlam.params.len() != marrs.len()
            || mlam.body.result.len() != map_stm.pat.len()
        {
            return Err(CgenError::internal("map/reduce of the wrong arity"));
        }
        if stored.len() != map_stm.pat.len() {
            return Err(CgenError::internal("map/reduce of the wrong arity"));
        }
        let parallel = std::mem::take(&mut self.pending_parallel);
        let loc = c_string(&(self.locate)(map_stm.span));
        let (accs, elems) = rlam.params.split_at(k);
        // The map's i-th result goes to the element parameter that reads
        // it, or to a scalar of its own (declared per element) where the
        // reduction does not read it; a stored result is then written to
        // its array at j.
        let mut targets = Vec::new();
        let mut locals = Vec::new();
        let mut allocs = Vec::new();
        let mut stores = Vec::new();
        for (p, &store) in map_stm.pat.iter().zip(stored) {
            let Type::Array(elem, _) = &p.ty else {
                return Err(CgenError::internal("a fused map's result is not an array"));
            };
            let ct = c_type(*elem)?;
            let pv = var_name(p.var);
            let target = match rarrs.iter().position(|a| *a == p.var) {
                Some(j) => var_name(elems[j].var),
                None => {
                    let t = self.fresh();
                    locals.push(format!("{ct} {t};"));
                    t
                }
            };
            if store {
                allocs.push((pv.clone(), ct));
                stores.push(format!("(({ct} *){pv}.data)[j] = {target};"));
            }
            targets.push(Some(target));
        }
        let wv = self.fresh();
        self.open("{");
        self.line(&format!("int64_t {wv} = {};", self.int(w)?));
        self.check_widths(&loc, "map", &wv, marrs)?;
        for (pv, ct) in &allocs {
            self.line(&format!(
                "{pv} = nb_alloc(1, (int64_t[]){{{wv}}}, sizeof({ct}), {loc});"
            ));
        }
        let rows_in_place = rows_combined_in_place(componentwise_operator(rlam).as_deref());
        for (p, n) in accs.iter().zip(neutral) {
            let value = self.initial_accumulator(p, n, &rows_in_place)?;
            self.line(&format!("{} = {value};", var_name(p.var)));
        }
        // One element of the map, at index j.
        let element = |g: &mut Self| -> Result<(), CgenError> {
            for l in &locals {
                g.line(l);
            }
            for (p, v) in mlam.params.iter().zip(marrs) {
                g.bind_row(p, *v, "j")?;
            }
            g.body(&mlam.body, &targets)?;
            for st in &stores {
                g.line(st);
            }
            g.release_params(&mlam.params);
            Ok(())
        };
        // Rows combined into one accumulator row each, in place: the map's
        // row results are never stored; each is made in a scratch row
        // allocated once, where the lambda's row comes from an inner map
        // or literal of a width known before the loop (else per element).
        if let Some(parts) = componentwise_operator(rlam) {
            if parallel {
                // Each thread its own scratch rows, made in the region.
                let private = self.bound_in(&[mlam, rlam], &[]);
                self.parallel_rows_reduction(
                    &wv,
                    &red_stm.pat,
                    &parts,
                    neutral,
                    &private,
                    |g, from, to| {
                        let scratch = g.scratch_rows(map_stm, mlam, &loc)?;
                        g.rows_in_place_loop(from, to, &parts, element)?;
                        g.release_scratch_rows(scratch);
                        Ok(())
                    },
                )?;
                self.close();
                return Ok(());
            }
            let scratch = self.scratch_rows(map_stm, mlam, &loc)?;
            self.reduce_rows_in_place(&wv, &red_stm.pat, &parts, element)?;
            self.release_scratch_rows(scratch);
            self.close();
            return Ok(());
        }
        // A minimum or maximum of elements that each run a loop of their
        // own keeps one chain: the chain is short next to the element,
        // and the copies of the element's loop cost more than they gain
        // (kmeans's nearest centroid: 1.2x the time in lanes).
        let chain_ok = |(op, _): &(BinOp, PrimType)| {
            !matches!(op, BinOp::Min | BinOp::Max) || !has_nested(&mlam.body)
        };
        if parallel {
            let lanes = lane_operator(rlam).filter(|op| {
                worth_lanes(w) && small_for_lanes(&mlam.body, LANE_BODY_LIMIT) && chain_ok(op)
            });
            let pat: Vec<Var> = red_stm.pat.iter().map(|p| p.var).collect();
            let private = self.bound_in(&[mlam, rlam], &pat);
            self.parallel_reduction(
                &wv,
                rlam,
                &red_stm.pat,
                &private,
                |g, from, to| match lanes {
                    Some(op) => {
                        let lanes = Lanes {
                            acc: &accs[0],
                            elem: &elems[0],
                            result: &red_stm.pat[0],
                            op,
                        };
                        g.reduce_in_lanes(from, to, lanes, element)
                    }
                    None => g.scalar_reduce_loop(from, to, rlam, &red_stm.pat, element),
                },
            )?;
            self.close();
            return Ok(());
        }
        if let Some(op) = lane_operator(rlam).filter(|op| {
            worth_lanes(w) && small_for_lanes(&mlam.body, LANE_BODY_LIMIT) && chain_ok(op)
        }) {
            let lanes = Lanes {
                acc: &accs[0],
                elem: &elems[0],
                result: &red_stm.pat[0],
                op,
            };
            self.reduce_in_lanes("0", &wv, lanes, element)?;
            self.close();
            return Ok(());
        }
        self.scalar_reduce_loop("0", &wv, rlam, &red_stm.pat, element)?;
        self.close();
        Ok(())
    }

    /// The scratch rows of a map fused with a reduction by a componentwise
    /// operator ([`FnGen::fused_map_reduce`]): for each row result of the
    /// map's lambda `mlam` made by an inner map or literal of a width
    /// known before the loop ([`direct_row`]), a rank-1 array made once
    /// (on the stack where it is short: the C compiler then knows it
    /// aliases nothing, and ht's Jacobian ran in 0.65x the time of a heap
    /// scratch row; else on the heap; a view without a block, `mem` NULL,
    /// is never freed) and registered as the row's destination. Returns
    /// the rows, for [`FnGen::release_scratch_rows`].
    fn scratch_rows(
        &mut self,
        map_stm: &Stm,
        mlam: &Lambda,
        loc: &str,
    ) -> Result<Vec<(Var, String)>, CgenError> {
        let mut scratch = Vec::new();
        for (i, p) in map_stm.pat.iter().enumerate() {
            let Type::Array(e, dims) = &p.ty else {
                continue;
            };
            let Some((v, width)) = direct_row(mlam, i).filter(|_| dims.len() == 2) else {
                continue;
            };
            let (ct, width) = (c_type(*e)?, self.int(&width)?);
            let (row, buffer, n) = (self.fresh(), self.fresh(), self.fresh());
            self.line(&format!("int64_t {n} = {width};"));
            self.line(&format!("{ct} {buffer}[{SCRATCH_ROW}];"));
            self.line(&format!(
                "nb_arr {row} = {n} >= 0 && {n} <= {SCRATCH_ROW} ? (nb_arr){{NULL, (char *){buffer}, {{{n}}}}} : nb_alloc(1, (int64_t[]){{{n}}}, sizeof({ct}), {loc});"
            ));
            self.row_destinations
                .insert(v, RowDestination::Scratch(row.clone()));
            scratch.push((v, row));
        }
        Ok(scratch)
    }

    /// Releases [`FnGen::scratch_rows`]'s rows and forgets them as
    /// destinations.
    fn release_scratch_rows(&mut self, scratch: Vec<(Var, String)>) {
        for (v, row) in scratch {
            self.row_destinations.remove(&v);
            self.line(&format!("nb_release(&{row});"));
        }
    }

    /// Emits a SOAC statement through `emit`, which generates it whole.
    /// Without a parallel decision (sequential C, or `lower` left the
    /// level sequential) it is emitted once, as sequential C prints it.
    /// With one (multicore C, parallel from `min_width` rows) it is
    /// emitted twice, and the program chooses at run time
    /// (`nb_parallel`, multicore_prelude.c): the parallel copy where the
    /// width `w` reaches `min_width` (or `--parallel-from`), there is more
    /// than one thread and no enclosing parallel region, and measuring
    /// both copies at this site found the parallel one faster
    /// (`nb_level_start`, `nb_level_end`); else the
    /// sequential copy, exactly as sequential C prints it (up to the names
    /// of temporaries). So one thread, small widths and nested levels run
    /// the code of `nabla c`, not an OpenMP region run by one thread
    /// (whose outlined body the C compiler optimises less: captured
    /// variables are loads through the region's closure).
    ///
    /// Both copies start from the same generator state (the accumulators,
    /// the arrays the enclosing bodies may release, the row destinations),
    /// and end in the same state, so what follows is generated once.
    fn parallel_or_sequential(
        &mut self,
        decision: Option<u64>,
        w: &Atom,
        mut emit: impl FnMut(&mut Self) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        let Some(min_width) = decision else {
            self.pending_parallel = false;
            return emit(self);
        };
        let (accs, frames, row_destinations) = (
            self.accs.clone(),
            self.frames.clone(),
            self.row_destinations.clone(),
        );
        let width = self.int(w)?;
        let (level, rows, parallel, start) =
            (self.fresh(), self.fresh(), self.fresh(), self.fresh());
        self.open("{");
        self.line(&format!("static nb_level {level};"));
        self.line(&format!("int64_t {rows} = {width};"));
        self.line(&format!(
            "int {parallel} = nb_parallel({rows}, {min_width});"
        ));
        self.line(&format!(
            "int64_t {start} = {parallel} ? nb_level_start(&{level}, &{parallel}) : 0;"
        ));
        self.open(&format!("if ({parallel}) {{"));
        self.pending_parallel = true;
        self.parallel_copy_start = Some(self.out.len());
        emit(self)?;
        self.parallel_copy_start = None;
        if std::mem::take(&mut self.pending_parallel) {
            return Err(CgenError::internal(
                "a parallel decision on a statement multicore C runs sequentially",
            ));
        }
        self.accs = accs;
        self.frames = frames;
        self.row_destinations = row_destinations;
        self.indent -= 1;
        self.open("} else {");
        self.pending_parallel = false;
        emit(self)?;
        self.close();
        self.line(&format!(
            "if ({start}) nb_level_end(&{level}, {parallel}, {start}, {rows});"
        ));
        self.close();
        Ok(())
    }

    /// The variables bound in `lams` (parameters included, nested bodies
    /// too) and `extra`, that are C locals of the function: in a parallel
    /// region each thread gets its own copy of them ([`Private`]).
    fn bound_in(&self, lams: &[&Lambda], extra: &[Var]) -> Private {
        let mut vars: Vec<Var> = extra.to_vec();
        let mut params: HashSet<Var> = extra.iter().copied().collect();
        for lam in lams {
            vars.extend(lam.params.iter().map(|p| p.var));
            params.extend(lam.params.iter().map(|p| p.var));
            nabla_ir::visit::for_each_var(&lam.body, |_, _| {}, |v| vars.push(v));
        }
        vars.retain(|v| self.types.contains_key(v));
        vars.sort();
        vars.dedup();
        Private { vars, params }
    }

    /// Opens a parallel region over the rows `from..to` (C expressions;
    /// multicore C), run by `nb_threads()` threads (the statement's
    /// sequential copy runs instead where they would not pay: see
    /// [`FnGen::parallel_or_sequential`]); each thread takes one contiguous chunk of the rows, in
    /// thread order, and has its own copy of the C locals `private`: a
    /// copy of the variable's value where the statement's parallel copy
    /// named it before the region, else one that starts as at the top of
    /// the function. Returns the C names of the thread's first row and of the row after
    /// its last. [`FnGen::close_parallel`] closes it; the runtime's side is
    /// `multicore.c`.
    ///
    /// The region names none of the function's own arrays (C locals and
    /// parameters of type `nb_arr`): GCC passes a struct that a region
    /// shares, or copies in (`firstprivate`), by its address, and an
    /// array whose address is taken lives in memory in the whole function,
    /// so the sequential copies of its statements reload its fields at
    /// every use (ht's Jacobian ran its sequential copies 2.6 times slower
    /// than `nb_seq_fun_N`, counted in instructions). So the private
    /// variables are declared inside the region, from copies made before
    /// it (`nb_in_vN`), and the arrays the region shares are copied into
    /// variables of the same name in a block around it (from and back to
    /// `nb_sh_X`; [`FnGen::close_parallel`] finds them in its text).
    fn open_parallel(
        &mut self,
        from: &str,
        to: &str,
        private: &Private,
    ) -> Result<(String, String), CgenError> {
        if self.region.is_some() {
            return Err(CgenError::internal("a parallel region inside another"));
        }
        let (first, end, lo, hi) = (self.fresh(), self.fresh(), self.fresh(), self.fresh());
        self.open("{");
        self.line(&format!("int64_t {first} = {from}, {end} = {to};"));
        // A parameter of the lambdas (or an extra variable) is copied in
        // where the parallel copy named it before the region (an
        // accumulator, a reduction's neutral element); every other private
        // variable, bound in the lambdas' bodies by each row (a first row
        // run alone before the region too), starts as at the function's
        // top. (Copying in every one would keep each alive across the
        // loops around the statement, in the sequential copy too.)
        let start = self.parallel_copy_start.ok_or_else(|| {
            CgenError::internal("a parallel region outside a statement's parallel copy")
        })?;
        let named: HashSet<&str> = c_identifiers(&self.out[start..]).collect();
        let mut copied_in = Vec::new();
        let mut declarations = Vec::with_capacity(private.vars.len());
        for v in &private.vars {
            let ty = self
                .types
                .get(v)
                .ok_or_else(|| CgenError::internal("a private variable without a type"))?;
            let (ct, name) = (c_decl_type(ty)?, var_name(*v));
            if private.params.contains(v) && named.contains(name.as_str()) {
                copied_in.push(format!("{ct} nb_in_{name} = {name};"));
                declarations.push(format!("{ct} {name} = nb_in_{name};"));
            } else {
                let init = if ct == "nb_arr" { "{0}" } else { "0" };
                declarations.push(format!("{ct} {name} = {init};"));
            }
        }
        for copy in &copied_in {
            self.line(copy);
        }
        let before = self.out.len();
        self.open("{");
        let inside = self.out.len();
        self.line(REGION_BEGIN);
        self.line("nb_threads_running = 1;");
        self.line("nb_regions_started++;");
        self.line("#pragma omp parallel num_threads(nb_threads())");
        self.open("{");
        for declaration in &declarations {
            self.line(declaration);
        }
        self.line("NB_WORKER_BEGIN");
        self.line("NB_NOTE_THREADS();");
        self.line(&format!("int64_t {lo}, {hi};"));
        self.line(&format!("nb_par_chunk({first}, {end}, &{lo}, &{hi});"));
        self.region = Some(OpenRegion {
            before,
            inside,
            private: private.vars.iter().map(|v| var_name(*v)).collect(),
        });
        Ok((lo, hi))
    }

    /// Closes [`FnGen::open_parallel`]'s region; a failure in one of its
    /// threads fails here, on the calling thread. The function's arrays
    /// that the region names (see [`FnGen::open_parallel`]) are copied
    /// into the block around it, and back after it.
    fn close_parallel(&mut self) -> Result<(), CgenError> {
        self.line("NB_WORKER_END");
        self.close();
        self.line("nb_threads_running = 0;");
        self.line(REGION_END);
        let region = self
            .region
            .take()
            .ok_or_else(|| CgenError::internal("a parallel region closed twice"))?;
        let shared = self.shared_arrays(&region);
        for name in &shared {
            self.line(&format!("nb_sh_{name} = {name};"));
        }
        self.close();
        for name in &shared {
            self.line(&format!("{name} = nb_sh_{name};"));
        }
        self.line("NB_PAR_END();");
        self.close();
        let pad = |indent: usize| "  ".repeat(indent);
        let outer = pad(self.indent + 1);
        let inner = pad(self.indent + 2);
        let mut copy_in = String::new();
        let mut shadow = String::new();
        for name in &shared {
            let _ = writeln!(copy_in, "{outer}nb_arr nb_sh_{name} = {name};");
            let _ = writeln!(shadow, "{inner}nb_arr {name} = nb_sh_{name};");
        }
        self.out.insert_str(region.inside, &shadow);
        self.out.insert_str(region.before, &copy_in);
        Ok(())
    }

    /// Closes [`FnGen::open_parallel`]'s region after each thread keeps
    /// its values: `array[thread] = value` for each pair of `kept` (C
    /// arrays of `NB_MAX_THREADS` entries and C expressions), and the
    /// first thread sets the C variable `used` to the number of threads
    /// that ran, the entries to combine after the region.
    fn close_parallel_keeping(
        &mut self,
        kept: &[(&str, String)],
        used: &str,
    ) -> Result<(), CgenError> {
        for (array, value) in kept {
            self.line(&format!("{array}[omp_get_thread_num()] = {value};"));
        }
        self.line(&format!(
            "if (omp_get_thread_num() == 0) {used} = omp_get_num_threads();"
        ));
        self.close_parallel()
    }

    /// The function's arrays (C variables of type `nb_arr` declared
    /// outside the region: IR variables, parameters and temporaries) that
    /// the text of `region` names, in the order first named. Every C
    /// identifier of the form `vN` or `tN` counts ([`c_identifiers`]), so
    /// a name in a string literal may add an array that need not be
    /// copied (harmless), and none is missed.
    fn shared_arrays(&self, region: &OpenRegion) -> Vec<String> {
        let text = &self.out[region.inside..];
        let declared_before = &self.out[..region.before];
        let private: HashSet<&str> = region.private.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut found: Vec<String> = Vec::new();
        for word in c_identifiers(text) {
            let (kind, digits) = word.split_at(1);
            if !(kind == "v" || kind == "t")
                || digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || private.contains(word)
                || !seen.insert(word)
            {
                continue;
            }
            let is_array = if kind == "v" {
                digits
                    .parse()
                    .ok()
                    .and_then(|n| self.types.get(&Var(n)))
                    .is_some_and(|t| matches!(t, Type::Array(..) | Type::Acc(..)))
            } else {
                // A temporary: declared outside the region, as an array.
                !declares(text, word, None) && declares(declared_before, word, Some("nb_arr"))
            };
            if is_array {
                found.push(word.to_string());
            }
        }
        found
    }

    /// A reduction of scalars in parallel (multicore C): `reduce` emits
    /// the reduction of the rows between its two C expressions from the
    /// neutral element (in the operator's accumulator parameters, copied
    /// into each thread) into the results `pat`; each thread's results
    /// are kept, and combined with the operator `op` in thread order, so
    /// a non-commutative operator gives the sequential result.
    fn parallel_reduction(
        &mut self,
        wv: &str,
        op: &Lambda,
        pat: &[Param],
        private: &Private,
        reduce: impl FnOnce(&mut Self, &str, &str) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        let k = pat.len();
        if op.params.len() != 2 * k || op.body.result.len() != k {
            return Err(CgenError::internal("reduce operator of the wrong arity"));
        }
        let (accs, elems) = op.params.split_at(k);
        let mut parts = Vec::with_capacity(k);
        for p in pat {
            let Type::Prim(t) = p.ty else {
                return Err(CgenError::internal("a parallel reduction of arrays"));
            };
            let part = self.fresh();
            self.line(&format!("{} {part}[NB_MAX_THREADS];", c_type(t)?));
            parts.push(part);
        }
        let used = self.fresh();
        self.line(&format!("int {used} = 1;"));
        let (lo, hi) = self.open_parallel("0", wv, private)?;
        reduce(self, &lo, &hi)?;
        let kept: Vec<(&str, String)> = parts
            .iter()
            .zip(pat)
            .map(|(part, p)| (part.as_str(), var_name(p.var)))
            .collect();
        self.close_parallel_keeping(&kept, &used)?;
        for (p, part) in pat.iter().zip(&parts) {
            self.line(&format!("{} = {part}[0];", var_name(p.var)));
        }
        let temps: Vec<String> = accs.iter().map(|_| self.fresh()).collect();
        self.open(&format!("for (int nb_t = 1; nb_t < {used}; nb_t++) {{"));
        for ((a, p), t) in accs.iter().zip(pat).zip(&temps) {
            self.line(&format!("{} {t};", c_decl_type(&a.ty)?));
            self.line(&format!("{} = {};", var_name(a.var), var_name(p.var)));
        }
        for (e, part) in elems.iter().zip(&parts) {
            self.line(&format!("{} = {part}[nb_t];", var_name(e.var)));
        }
        let targets: Vec<Option<String>> = temps.iter().map(|t| Some(t.clone())).collect();
        self.body(&op.body, &targets)?;
        for (p, t) in pat.iter().zip(&temps) {
            self.line(&format!("{} = {t};", var_name(p.var)));
        }
        self.close();
        Ok(())
    }

    /// A scan of scalars in parallel (multicore C), in two regions: in
    /// the first each thread scans its own contiguous rows from the
    /// neutral element (in the operator's accumulator parameters on
    /// entry) into the results `pat` and keeps its last value; the carry
    /// into each thread's rows, the operator over the last values of the
    /// threads before it, follows in thread order; in the second region
    /// the rows after the first thread's, split anew among the threads,
    /// become the operator applied to their carry and their value. The
    /// carry comes first, so a non-commutative operator gives the
    /// sequential result (up to floating-point reassociation). The
    /// operator runs about `w (2 - 1/T)` times on `T` threads, so a scan
    /// takes about `(2T - 1) / T²` of its sequential time: 0.75 on 2
    /// threads (Futhark's multicore scan also takes two passes).
    fn parallel_scan(
        &mut self,
        loc: &str,
        wv: &str,
        lam: &Lambda,
        pat: &[Param],
        arrs: &[Var],
        private: &Private,
    ) -> Result<(), CgenError> {
        let k = pat.len();
        let (accs, elems) = lam.params.split_at(k);
        let mut types = Vec::with_capacity(k);
        for p in accs {
            let Type::Prim(e) = p.ty else {
                return Err(CgenError::internal("a parallel scan of arrays"));
            };
            types.push(c_type(e)?);
        }
        let mut parts = Vec::with_capacity(k);
        for (p, ct) in pat.iter().zip(&types) {
            self.line(&format!(
                "{} = nb_alloc(1, (int64_t[]){{{wv}}}, sizeof({ct}), {loc});",
                var_name(p.var)
            ));
            let (part, carry) = (self.fresh(), self.fresh());
            self.line(&format!(
                "{ct} {part}[NB_MAX_THREADS], {carry}[NB_MAX_THREADS];"
            ));
            parts.push((part, carry));
        }
        let (ends, used) = (self.fresh(), self.fresh());
        self.line(&format!("int64_t {ends}[NB_MAX_THREADS];"));
        self.line(&format!("int {used} = 1;"));
        let temps: Vec<String> = accs.iter().map(|_| self.fresh()).collect();
        let targets: Vec<Option<String>> = temps.iter().map(|t| Some(t.clone())).collect();
        // Each thread scans its rows from the neutral element.
        let (lo, hi) = self.open_parallel("0", wv, private)?;
        self.open(&format!("for (int64_t j = {lo}; j < {hi}; j++) {{"));
        for (t, ct) in temps.iter().zip(&types) {
            self.line(&format!("{ct} {t};"));
        }
        for (p, v) in elems.iter().zip(arrs) {
            self.bind_row(p, *v, "j")?;
        }
        self.body(&lam.body, &targets)?;
        for ((p, a), (t, ct)) in pat.iter().zip(accs).zip(temps.iter().zip(&types)) {
            self.line(&format!("{} = {t};", var_name(a.var)));
            self.line(&format!("(({ct} *){}.data)[j] = {t};", var_name(p.var)));
        }
        self.close();
        let mut kept: Vec<(&str, String)> = accs
            .iter()
            .zip(&parts)
            .map(|(a, (part, _))| (part.as_str(), var_name(a.var)))
            .collect();
        kept.push((&ends, hi));
        self.close_parallel_keeping(&kept, &used)?;
        // The carries: the operator over the last values of the threads
        // before each, in thread order.
        for (a, (part, _)) in accs.iter().zip(&parts) {
            self.line(&format!("{} = {part}[0];", var_name(a.var)));
        }
        self.open(&format!("for (int nb_t = 1; nb_t < {used}; nb_t++) {{"));
        for ((a, x), (part, carry)) in accs.iter().zip(elems).zip(&parts) {
            self.line(&format!("{carry}[nb_t] = {};", var_name(a.var)));
            self.line(&format!("{} = {part}[nb_t];", var_name(x.var)));
        }
        for (t, ct) in temps.iter().zip(&types) {
            self.line(&format!("{ct} {t};"));
        }
        self.body(&lam.body, &targets)?;
        for (a, t) in accs.iter().zip(&temps) {
            self.line(&format!("{} = {t};", var_name(a.var)));
        }
        self.close();
        // The rows after the first thread's: carry, then value.
        self.open(&format!("if ({used} > 1 && {ends}[0] < {wv}) {{"));
        let (lo, hi) = self.open_parallel(&format!("{ends}[0]"), wv, private)?;
        self.open(&format!("for (int nb_t = 1; nb_t < {used}; nb_t++) {{"));
        self.line(&format!(
            "int64_t from = {ends}[nb_t - 1], to = {ends}[nb_t];"
        ));
        self.line(&format!("if (from < {lo}) from = {lo};"));
        self.line(&format!("if (to > {hi}) to = {hi};"));
        self.open("for (int64_t j = from; j < to; j++) {");
        for (t, ct) in temps.iter().zip(&types) {
            self.line(&format!("{ct} {t};"));
        }
        for (((p, a), x), ((_, carry), ct)) in pat
            .iter()
            .zip(accs)
            .zip(elems)
            .zip(parts.iter().zip(&types))
        {
            self.line(&format!("{} = {carry}[nb_t];", var_name(a.var)));
            self.line(&format!(
                "{} = (({ct} *){}.data)[j];",
                var_name(x.var),
                var_name(p.var)
            ));
        }
        self.body(&lam.body, &targets)?;
        for ((p, t), ct) in pat.iter().zip(&temps).zip(&types) {
            self.line(&format!("(({ct} *){}.data)[j] = {t};", var_name(p.var)));
        }
        self.close();
        self.close();
        self.close_parallel()?;
        self.close();
        Ok(())
    }

    /// A reduction of scalars over the rows `from..to` (C expressions),
    /// one element at a time in order: `element` binds the operator's
    /// element parameters at row `j`; the accumulator parameters hold the
    /// neutral element on entry; the results go to `pat`.
    fn scalar_reduce_loop(
        &mut self,
        from: &str,
        to: &str,
        op: &Lambda,
        pat: &[Param],
        mut element: impl FnMut(&mut Self) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        let accs = &op.params[..pat.len()];
        let temps: Vec<String> = accs.iter().map(|_| self.fresh()).collect();
        self.open(&format!("for (int64_t j = {from}; j < {to}; j++) {{"));
        for (p, t) in accs.iter().zip(&temps) {
            self.line(&format!("{} {t};", c_decl_type(&p.ty)?));
        }
        element(self)?;
        let targets: Vec<Option<String>> = temps.iter().map(|t| Some(t.clone())).collect();
        self.body(&op.body, &targets)?;
        for (p, t) in accs.iter().zip(&temps) {
            self.line(&format!("{} = {t};", var_name(p.var)));
        }
        self.close();
        for (p, a) in pat.iter().zip(accs) {
            self.line(&format!("{} = {};", var_name(p.var), var_name(a.var)));
        }
        Ok(())
    }

    /// The loop of a reduction of one value whose operator is
    /// reassociable ([`lane_operator`]), in [`LANES`] independent partial
    /// results: element `j` goes to lane `j % LANES` (the elements after
    /// the last full group of lanes to lane 0), every lane starts from the
    /// neutral element (in the accumulator parameter on entry), and the
    /// lanes are combined pairwise into the reduction's result at the end.
    /// A chain of dependent additions becomes `LANES` independent chains,
    /// which the processor overlaps. Futhark's `reduce` requires an
    /// associative operator and may combine the elements in any grouping,
    /// so this is one of the allowed results (for floats, rounded
    /// differently from a left-to-right sum). `element` emits the code that
    /// binds the element parameter at index `j`.
    fn reduce_in_lanes(
        &mut self,
        from: &str,
        wv: &str,
        lanes: Lanes<'_>,
        mut element: impl FnMut(&mut Self) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        let Lanes {
            acc,
            elem,
            result,
            op: (op, t),
        } = lanes;
        // Integer lanes are unsigned, at least as wide as `unsigned int`
        // (so no promotion to a signed type), and converted back at the
        // end: GCC 12 at -O3 -march=native miscompiled signed lanes whose
        // every step converted a wrapped unsigned sum back to the signed
        // type (a sum of `i32` squares went wrong from 8 elements on).
        let (lane_type, into_lane, from_lane) = if t.is_int() {
            let wide = if t.bits() == 64 {
                "uint64_t"
            } else {
                "uint32_t"
            };
            let unsigned = scalar::unsigned_of(t);
            (
                wide,
                format!("({wide})({unsigned})"),
                format!("({})({unsigned})", c_type(t)?),
            )
        } else {
            (c_type(t)?, String::new(), String::new())
        };
        let lane_op = |x: &str, y: &str| -> Result<String, CgenError> {
            if !t.is_int() {
                return binop(op, t, x, y, "NULL");
            }
            let c = match op {
                BinOp::Add => "+",
                BinOp::Mul => "*",
                BinOp::BitAnd => "&",
                BinOp::BitOr => "|",
                BinOp::BitXor => "^",
                _ => return Err(CgenError::internal("a lane operator")),
            };
            Ok(format!("({x} {c} {y})"))
        };
        let mut lanes = Vec::with_capacity(LANES);
        for _ in 0..LANES {
            let l = self.fresh();
            self.line(&format!(
                "{lane_type} {l} = {into_lane}{};",
                var_name(acc.var)
            ));
            lanes.push(l);
        }
        let e = format!("{into_lane}{}", var_name(elem.var));
        let jb = self.fresh();
        self.line(&format!("int64_t {jb} = {from};"));
        self.open(&format!(
            "for (; {jb} + {LANES} <= {wv}; {jb} += {LANES}) {{"
        ));
        for (k, l) in lanes.iter().enumerate() {
            self.open(&format!("{{ int64_t j = {jb} + {k};"));
            element(self)?;
            self.line(&format!("{l} = {};", lane_op(l, &e)?));
            self.close();
        }
        self.close();
        self.open(&format!("for (int64_t j = {jb}; j < {wv}; j++) {{"));
        element(self)?;
        self.line(&format!("{} = {};", lanes[0], lane_op(&lanes[0], &e)?));
        self.close();
        // Pairwise: ((l0 op l2) op (l1 op l3)).
        let mut width = LANES;
        while width > 1 {
            width /= 2;
            for k in 0..width {
                let (x, y) = (&lanes[k], &lanes[k + width]);
                self.line(&format!("{x} = {};", lane_op(x, y)?));
            }
        }
        self.line(&format!(
            "{} = {from_lane}{};",
            var_name(result.var),
            lanes[0]
        ));
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn reduce_scan(
        &mut self,
        loc: &str,
        pat: &[Param],
        w: &Atom,
        lam: &Lambda,
        neutral: &[Atom],
        arrs: &[Var],
        scan: bool,
    ) -> Result<(), CgenError> {
        let k = neutral.len();
        if lam.params.len() != 2 * k
            || arrs.len() != k
            || lam.body.result.len() != k
            || pat.len() != k
        {
            return Err(CgenError::internal(
                "reduce/scan operator of the wrong arity",
            ));
        }
        let parallel = std::mem::take(&mut self.pending_parallel);
        let what = if scan { "scan" } else { "reduce" };
        let wv = self.fresh();
        self.open("{");
        self.line(&format!("int64_t {wv} = {};", self.int(w)?));
        self.check_widths(loc, what, &wv, arrs)?;
        let (accs, elems) = lam.params.split_at(k);
        // The reduction's form, chosen once: in lanes, or (a reduction not
        // in lanes, by a componentwise operator) rows combined in place,
        // whose accumulators start from copies.
        let lanes = lane_operator(lam).filter(|_| worth_lanes(w));
        let rows_parts = componentwise_operator(lam).filter(|_| !scan && lanes.is_none());
        let rows_in_place = rows_combined_in_place(rows_parts.as_deref());
        for (p, n) in accs.iter().zip(neutral) {
            let value = self.initial_accumulator(p, n, &rows_in_place)?;
            self.line(&format!("{} = {value};", var_name(p.var)));
        }
        if parallel && scan {
            let private = self.bound_in(&[lam], &[]);
            self.parallel_scan(loc, &wv, lam, pat, arrs, &private)?;
            self.close();
            return Ok(());
        }
        // A componentwise operator's element parameters, bound to row j
        // of the reduced arrays.
        let bind_parts = |g: &mut Self, parts: &[Component<'_>]| -> Result<(), CgenError> {
            for (part, a) in parts.iter().zip(arrs) {
                g.bind_row(part.elem, *a, "j")?;
            }
            Ok(())
        };
        if let Some(parts) = rows_parts.as_deref().filter(|_| parallel) {
            let private = self.bound_in(&[lam], &[]);
            self.parallel_rows_reduction(&wv, pat, parts, neutral, &private, |g, from, to| {
                g.rows_in_place_loop(from, to, parts, |g| bind_parts(g, parts))
            })?;
            self.close();
            return Ok(());
        }
        if parallel {
            let private = self.bound_in(&[lam], &pat.iter().map(|p| p.var).collect::<Vec<_>>());
            let element = |g: &mut Self| -> Result<(), CgenError> {
                for (p, v) in elems.iter().zip(arrs) {
                    g.bind_row(p, *v, "j")?;
                }
                Ok(())
            };
            self.parallel_reduction(&wv, lam, pat, &private, |g, from, to| match lanes {
                Some(op) => {
                    let lanes = Lanes {
                        acc: &accs[0],
                        elem: &elems[0],
                        result: &pat[0],
                        op,
                    };
                    g.reduce_in_lanes(from, to, lanes, element)
                }
                None => g.scalar_reduce_loop(from, to, lam, pat, element),
            })?;
            self.close();
            return Ok(());
        }
        if let Some(op) = lanes.filter(|_| !scan) {
            let lanes = Lanes {
                acc: &accs[0],
                elem: &elems[0],
                result: &pat[0],
                op,
            };
            self.reduce_in_lanes("0", &wv, lanes, |g| g.bind_row(&elems[0], arrs[0], "j"))?;
            self.close();
            return Ok(());
        }
        if let Some(parts) = rows_parts {
            self.reduce_rows_in_place(&wv, pat, &parts, |g| bind_parts(g, &parts))?;
            self.close();
            return Ok(());
        }
        if scan {
            for (p, a) in pat.iter().zip(accs) {
                let pv = var_name(p.var);
                let (e, r) = match &a.ty {
                    Type::Prim(e) => (*e, 0),
                    Type::Array(e, d) => (*e, d.len()),
                    Type::Acc(..) => return Err(CgenError::unsupported("scan over accumulators")),
                };
                let ct = c_type(e)?;
                let an = var_name(a.var);
                if r == 0 {
                    self.line(&format!(
                        "{pv} = nb_alloc(1, (int64_t[]){{{wv}}}, sizeof({ct}), {loc});"
                    ));
                } else {
                    self.line(&format!(
                        "{pv} = nb_alloc_rows({loc}, {wv}, {r}, {an}.shape, sizeof({ct}));"
                    ));
                }
            }
        }
        let temps: Vec<String> = accs.iter().map(|_| self.fresh()).collect();
        self.open(&format!("for (int64_t j = 0; j < {wv}; j++) {{"));
        for (p, t) in accs.iter().zip(&temps) {
            self.line(&format!("{} {t};", c_decl_type(&p.ty)?));
        }
        for (p, v) in elems.iter().zip(arrs) {
            self.bind_row(p, *v, "j")?;
        }
        let targets: Vec<Option<String>> = temps.iter().map(|t| Some(t.clone())).collect();
        self.body(&lam.body, &targets)?;
        for (p, t) in accs.iter().zip(&temps) {
            let pv = var_name(p.var);
            if self.is_array(p.var) {
                self.line(&format!("nb_release(&{pv});"));
            }
            self.line(&format!("{pv} = {t};"));
        }
        self.release_params(elems);
        if scan {
            for (p, a) in pat.iter().zip(accs) {
                let pv = var_name(p.var);
                let an = var_name(a.var);
                match &a.ty {
                    Type::Prim(e) => {
                        let ct = c_type(*e)?;
                        self.line(&format!("(({ct} *){pv}.data)[j] = {an};"));
                    }
                    Type::Array(e, d) => {
                        let ct = c_type(*e)?;
                        self.line(&format!(
                            "nb_store_row({loc}, &{pv}, {}, sizeof({ct}), j, &{an});",
                            d.len()
                        ));
                    }
                    Type::Acc(..) => {}
                }
            }
        }
        self.close();
        for (p, a) in pat.iter().zip(accs) {
            if scan {
                if self.is_array(a.var) {
                    self.line(&format!("nb_release(&{});", var_name(a.var)));
                }
            } else {
                let value = if self.is_array(a.var) {
                    self.consume(a.var)
                } else {
                    var_name(a.var)
                };
                self.line(&format!("{} = {value};", var_name(p.var)));
            }
        }
        self.close();
        Ok(())
    }

    /// The loop of a reduction whose operator combines its components
    /// independently, at least one of them rows by a rowwise operator
    /// ([`componentwise_operator`]): each row accumulator (in the
    /// operator's accumulator parameter on entry, a reference to the
    /// neutral row) is made the only reference to its block (copied
    /// once), and each element's row is combined into it element by
    /// element, in place, instead of the operator's map allocating a new
    /// row per element; scalar components are combined as usual. The
    /// widths are checked as the operator's maps would check them.
    /// `element` binds the element parameters for index `j` (rows of the
    /// reduced arrays, or a fused map's results: [`FnGen::fused_map_reduce`]).
    fn reduce_rows_in_place(
        &mut self,
        wv: &str,
        pat: &[Param],
        parts: &[Component<'_>],
        element: impl FnMut(&mut Self) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        if pat.len() != parts.len() {
            return Err(CgenError::internal(
                "a componentwise operator of the wrong arity",
            ));
        }
        for part in parts.iter().filter(|p| p.rows) {
            self.line(&format!(
                "nb_make_unique(&{}, 1, sizeof({}));",
                var_name(part.acc.var),
                c_type(part.acc.ty.elem())?
            ));
        }
        self.rows_in_place_loop("0", wv, parts, element)?;
        for (p, part) in pat.iter().zip(parts) {
            let value = if part.rows {
                self.consume(part.acc.var)
            } else {
                var_name(part.acc.var)
            };
            self.line(&format!("{} = {value};", var_name(p.var)));
        }
        Ok(())
    }

    /// The loop of [`FnGen::reduce_rows_in_place`] over the elements
    /// `from..to` (C expressions), into the accumulators (each row one
    /// the loop may update in place).
    fn rows_in_place_loop(
        &mut self,
        from: &str,
        to: &str,
        parts: &[Component<'_>],
        mut element: impl FnMut(&mut Self) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        self.open(&format!("for (int64_t j = {from}; j < {to}; j++) {{"));
        element(self)?;
        for part in parts {
            let (av, ev) = (var_name(part.acc.var), var_name(part.elem.var));
            let t = part.acc.ty.elem();
            let ct = c_type(t)?;
            let loc = c_string(&(self.locate)(part.stm.span));
            // The accumulator's and the element's values (their element
            // s, for rows).
            let value = |v: &str| {
                if part.rows {
                    format!("(({ct} *){v}.data)[s]")
                } else {
                    v.to_string()
                }
            };
            let combined = combine_component(part, &value(&av), &value(&ev), &loc)?;
            if !part.rows {
                self.line(&format!("{av} = {combined};"));
                continue;
            }
            let Exp::Soac(Soac::Map { w, arrs: inner, .. }) = &part.stm.exp else {
                return Err(CgenError::internal("a rowwise operator without its map"));
            };
            let wi = self.fresh();
            self.line(&format!("int64_t {wi} = {};", self.int(w)?));
            self.check_widths(&loc, "map", &wi, inner)?;
            self.line(&format!(
                "for (int64_t s = 0; s < {wi}; s++) (({ct} *){av}.data)[s] = {combined};"
            ));
        }
        for part in parts {
            self.release_params(std::slice::from_ref(part.elem));
        }
        self.close();
        Ok(())
    }

    /// A reduction by a componentwise operator with rows
    /// ([`componentwise_operator`]) in parallel (multicore C): each
    /// thread combines its own contiguous elements, emitted by `reduce`
    /// over the rows between its two C expressions, into accumulators of
    /// its own: the first thread into the accumulators (each row a copy
    /// of the neutral row, made before the region), every other one into
    /// fresh copies of the neutral elements `neutral`. After the region
    /// the threads' accumulators are combined into the first's, in
    /// thread order and element by element, so a non-commutative
    /// operator gives the sequential result (up to floating-point
    /// reassociation), and become the results `pat`.
    fn parallel_rows_reduction(
        &mut self,
        wv: &str,
        pat: &[Param],
        parts: &[Component<'_>],
        neutral: &[Atom],
        private: &Private,
        reduce: impl FnOnce(&mut Self, &str, &str) -> Result<(), CgenError>,
    ) -> Result<(), CgenError> {
        if pat.len() != parts.len() || neutral.len() != parts.len() {
            return Err(CgenError::internal(
                "a componentwise operator of the wrong arity",
            ));
        }
        let mut partials = Vec::with_capacity(parts.len());
        for part in parts {
            let ct = c_type(part.acc.ty.elem())?;
            let partial = self.fresh();
            let declared = if part.rows { "nb_arr" } else { ct };
            self.line(&format!("{declared} {partial}[NB_MAX_THREADS];"));
            partials.push((partial, ct));
        }
        let used = self.fresh();
        self.line(&format!("int {used} = 1;"));
        let (lo, hi) = self.open_parallel("0", wv, private)?;
        for (part, n) in parts.iter().zip(neutral) {
            if !part.rows {
                continue;
            }
            let Atom::Var(n) = n else {
                return Err(CgenError::internal("a neutral row that is a constant"));
            };
            let ct = c_type(part.acc.ty.elem())?;
            self.line(&format!(
                "if (omp_get_thread_num() != 0) {} = nb_copy(&{}, 1, sizeof({ct}));",
                var_name(part.acc.var),
                var_name(*n)
            ));
        }
        reduce(self, &lo, &hi)?;
        let kept: Vec<(&str, String)> = partials
            .iter()
            .zip(parts)
            .map(|((partial, _), part)| (partial.as_str(), var_name(part.acc.var)))
            .collect();
        self.close_parallel_keeping(&kept, &used)?;
        // The first thread's accumulators, then every other thread's
        // combined into them.
        for (p, (partial, _)) in pat.iter().zip(&partials) {
            self.line(&format!("{} = {partial}[0];", var_name(p.var)));
        }
        self.open(&format!("for (int nb_t = 1; nb_t < {used}; nb_t++) {{"));
        for ((p, part), (partial, ct)) in pat.iter().zip(parts).zip(&partials) {
            let pv = var_name(p.var);
            let loc = c_string(&(self.locate)(part.stm.span));
            let combined = if part.rows {
                let (acc, elem) = (
                    format!("(({ct} *){pv}.data)[s]"),
                    format!("(({ct} *){partial}[nb_t].data)[s]"),
                );
                combine_component(part, &acc, &elem, &loc)?
            } else {
                combine_component(part, &pv, &format!("{partial}[nb_t]"), &loc)?
            };
            if part.rows {
                self.line(&format!(
                    "for (int64_t s = 0; s < {pv}.shape[0]; s++) (({ct} *){pv}.data)[s] = {combined};"
                ));
                self.line(&format!("nb_release(&{partial}[nb_t]);"));
            } else {
                self.line(&format!("{pv} = {combined};"));
            }
        }
        self.close();
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn hist(
        &mut self,
        loc: &str,
        pat: &[Param],
        w: &Atom,
        dest: &[Var],
        lam: &Lambda,
        neutral: &[Atom],
        indices: Var,
        values: &[Var],
    ) -> Result<(), CgenError> {
        let k = dest.len();
        if neutral.len() != k
            || values.len() != k
            || lam.params.len() != 2 * k
            || lam.body.result.len() != k
            || pat.len() != k
            || k == 0
        {
            return Err(CgenError::internal("reduce_by_index of the wrong arity"));
        }
        let parallel = std::mem::take(&mut self.pending_parallel);
        let wv = self.fresh();
        self.open("{");
        self.line(&format!("int64_t {wv} = {};", self.int(w)?));
        self.check_widths(loc, "reduce_by_index", &wv, values)?;
        self.check_widths(loc, "reduce_by_index", &wv, &[indices])?;
        let (it, irank, _) = self.array_info(indices)?;
        if it != PrimType::I64 || irank != 1 {
            return Err(CgenError::internal(
                "reduce_by_index indices must be [w]i64",
            ));
        }
        let d0 = var_name(pat[0].var);
        for (p, d) in pat.iter().zip(dest) {
            let (_, rank, ct) = self.array_info(*d)?;
            let pv = var_name(p.var);
            self.line(&format!("{pv} = {};", self.consume(*d)));
            self.line(&format!("nb_make_unique(&{pv}, {rank}, sizeof({ct}));"));
        }
        for ((p, d), v) in pat.iter().zip(dest).zip(values) {
            let (_, rank, _) = self.array_info(*d)?;
            let (_, vrank, _) = self.array_info(*v)?;
            if rank != vrank {
                return Err(CgenError::internal(
                    "reduce_by_index destination and values differ in rank",
                ));
            }
            let pv = var_name(p.var);
            let vn = var_name(*v);
            self.line(&format!(
                "if ({pv}.shape[0] != {d0}.shape[0]) nb_fail({loc}, \"size error: reduce_by_index: destinations of different sizes\");"
            ));
            if rank > 1 {
                self.line(&format!(
                    "nb_check_same_shape({loc}, \"reduce_by_index: destination rows and value rows do not fit:\", {pv}.shape + 1, {vn}.shape + 1, {});",
                    rank - 1
                ));
            }
        }
        let (accs, elems) = lam.params.split_at(k);
        if parallel {
            self.parallel_hist(loc, &wv, pat, lam, neutral, indices, values)?;
            self.close();
            return Ok(());
        }
        let iname = var_name(indices);
        self.open(&format!("for (int64_t j = 0; j < {wv}; j++) {{"));
        self.line(&format!("int64_t ix = ((int64_t *){iname}.data)[j];"));
        self.line(&format!("if (ix < 0 || ix >= {d0}.shape[0]) continue;"));
        let mut targets = Vec::new();
        let mut row_temps = Vec::new();
        for (p, a) in pat.iter().zip(accs) {
            let pv = var_name(p.var);
            let (_, rank, ct) = self.array_info(p.var)?;
            if rank == 1 {
                self.line(&format!("{} = (({ct} *){pv}.data)[ix];", var_name(a.var)));
                targets.push(Some(format!("(({ct} *){pv}.data)[ix]")));
            } else {
                let t = self.fresh();
                self.line(&format!("nb_arr {t};"));
                self.open("{");
                self.line(&format!(
                    "nb_arr row; nb_row(&row, &{pv}, {rank}, sizeof({ct}), ix, 0);"
                ));
                self.line(&format!(
                    "{} = nb_copy(&row, {}, sizeof({ct}));",
                    var_name(a.var),
                    rank - 1
                ));
                self.line("nb_release(&row);");
                self.close();
                targets.push(Some(t.clone()));
                row_temps.push((t, pv, rank - 1, ct));
            }
        }
        for (p, v) in elems.iter().zip(values) {
            self.bind_row(p, *v, "j")?;
        }
        self.body(&lam.body, &targets)?;
        for (t, pv, r, ct) in &row_temps {
            self.line(&format!(
                "nb_store_row({loc}, &{pv}, {r}, sizeof({ct}), ix, &{t});"
            ));
            self.line(&format!("nb_release(&{t});"));
        }
        self.release_params(accs);
        self.release_params(elems);
        self.close();
        self.close();
        Ok(())
    }

    /// A `reduce_by_index` of scalars in parallel (multicore C), after
    /// the destinations `pat` (one-dimensional, made unique) are checked:
    /// the first thread updates them in place over its rows, every other
    /// thread a histogram of its own, of the destinations' length and
    /// filled with the neutral element; after the region the threads'
    /// histograms are combined into the destinations bin by bin with the
    /// operator, in thread order. A bin thus combines its values in the
    /// order of the rows, regrouped (Futhark's `reduce_by_index` requires
    /// an associative and commutative operator; integer results are those
    /// of the sequential loop, floating-point ones may round differently).
    /// Each thread but the first costs one histogram's allocation and
    /// combination: the level's measurement (`nb_level`) keeps the
    /// sequential copy where the histogram is large for its rows.
    #[allow(clippy::too_many_arguments)]
    fn parallel_hist(
        &mut self,
        loc: &str,
        wv: &str,
        pat: &[Param],
        lam: &Lambda,
        neutral: &[Atom],
        indices: Var,
        values: &[Var],
    ) -> Result<(), CgenError> {
        let k = pat.len();
        let (accs, elems) = lam.params.split_at(k);
        let mut cells = Vec::with_capacity(k);
        for p in pat {
            let (_, rank, ct) = self.array_info(p.var)?;
            if rank != 1 {
                return Err(CgenError::internal("a parallel reduce_by_index of rows"));
            }
            cells.push((var_name(p.var), self.fresh(), self.fresh(), ct));
        }
        for (_, _, copies, _) in &cells {
            self.line(&format!("nb_arr {copies}[NB_MAX_THREADS];"));
        }
        let used = self.fresh();
        self.line(&format!("int {used} = 1;"));
        let d0 = cells[0].0.clone();
        let private = self.bound_in(&[lam], &[]);
        let (lo, hi) = self.open_parallel("0", wv, &private)?;
        // Each thread's histograms: the destinations themselves for the
        // first, copies filled with the neutral element for the others.
        for ((pv, own, copies, ct), n) in cells.iter().zip(neutral) {
            let neutral = self.atom(n)?;
            self.line(&format!("nb_arr {own} = {pv};"));
            self.open("if (omp_get_thread_num() != 0) {");
            self.line(&format!(
                "{own} = nb_alloc(1, {pv}.shape, sizeof({ct}), {loc});"
            ));
            self.line(&format!(
                "for (int64_t e = 0; e < {pv}.shape[0]; e++) (({ct} *){own}.data)[e] = {neutral};"
            ));
            self.close();
            self.line(&format!("{copies}[omp_get_thread_num()] = {own};"));
        }
        self.line(&format!(
            "if (omp_get_thread_num() == 0) {used} = omp_get_num_threads();"
        ));
        let iname = var_name(indices);
        self.open(&format!("for (int64_t j = {lo}; j < {hi}; j++) {{"));
        self.line(&format!("int64_t ix = ((int64_t *){iname}.data)[j];"));
        self.line(&format!("if (ix < 0 || ix >= {d0}.shape[0]) continue;"));
        let mut targets = Vec::with_capacity(k);
        for ((_, own, _, ct), a) in cells.iter().zip(accs) {
            self.line(&format!("{} = (({ct} *){own}.data)[ix];", var_name(a.var)));
            targets.push(Some(format!("(({ct} *){own}.data)[ix]")));
        }
        for (p, v) in elems.iter().zip(values) {
            self.bind_row(p, *v, "j")?;
        }
        self.body(&lam.body, &targets)?;
        self.close();
        self.close_parallel()?;
        // The other threads' histograms, bin by bin, in thread order.
        self.open(&format!("for (int nb_t = 1; nb_t < {used}; nb_t++) {{"));
        self.open(&format!("for (int64_t e = 0; e < {d0}.shape[0]; e++) {{"));
        let mut targets = Vec::with_capacity(k);
        for ((pv, _, copies, ct), (a, x)) in cells.iter().zip(accs.iter().zip(elems)) {
            self.line(&format!("{} = (({ct} *){pv}.data)[e];", var_name(a.var)));
            self.line(&format!(
                "{} = (({ct} *){copies}[nb_t].data)[e];",
                var_name(x.var)
            ));
            targets.push(Some(format!("(({ct} *){pv}.data)[e]")));
        }
        self.body(&lam.body, &targets)?;
        self.close();
        for (_, _, copies, _) in &cells {
            self.line(&format!("nb_release(&{copies}[nb_t]);"));
        }
        self.close();
        Ok(())
    }

    fn scatter(
        &mut self,
        loc: &str,
        pat: &[Param],
        w: &Atom,
        dest: &[Var],
        indices: &[Var],
        values: &[Var],
    ) -> Result<(), CgenError> {
        if dest.len() != values.len() || indices.is_empty() || pat.len() != dest.len() {
            return Err(CgenError::internal("scatter of the wrong arity"));
        }
        let parallel = std::mem::take(&mut self.pending_parallel);
        let wv = self.fresh();
        self.open("{");
        self.line(&format!("int64_t {wv} = {};", self.int(w)?));
        self.check_widths(loc, "scatter", &wv, values)?;
        self.check_widths(loc, "scatter", &wv, indices)?;
        let d_rank = indices.len();
        for is in indices {
            let (it, r, _) = self.array_info(*is)?;
            if it != PrimType::I64 || r != 1 {
                return Err(CgenError::internal("scatter indices must be [w]i64"));
            }
        }
        for ((p, d), v) in pat.iter().zip(dest).zip(values) {
            let (_, rank, ct) = self.array_info(*d)?;
            let (_, vrank, _) = self.array_info(*v)?;
            if rank < d_rank || rank - d_rank != vrank - 1 {
                return Err(CgenError::internal(
                    "scatter destination and values do not fit",
                ));
            }
            let pv = var_name(p.var);
            self.line(&format!("{pv} = {};", self.consume(*d)));
            self.line(&format!("nb_make_unique(&{pv}, {rank}, sizeof({ct}));"));
            if vrank > 1 {
                self.line(&format!(
                    "nb_check_same_shape({loc}, \"scatter: destination rows and value rows do not fit:\", {pv}.shape + {d_rank}, {}.shape + 1, {});",
                    var_name(*v),
                    vrank - 1
                ));
            }
        }
        // In parallel (multicore C), each thread writes the cells of its
        // own part of each destination, in the order of the rows: every
        // thread reads every index, and a cell written more than once
        // still gets its last write, as in the sequential loop.
        let mut cells = Vec::new();
        if parallel {
            self.open_parallel("0", &wv, &self.bound_in(&[], &[]))?;
            for p in pat {
                let (first, end) = (self.fresh(), self.fresh());
                self.line(&format!("int64_t {first}, {end};"));
                self.line(&format!(
                    "nb_par_chunk(0, nb_count({}.shape, {d_rank}), &{first}, &{end});",
                    var_name(p.var)
                ));
                cells.push((first, end));
            }
        }
        self.open(&format!("for (int64_t j = 0; j < {wv}; j++) {{"));
        for (k, (p, v)) in pat.iter().zip(values).enumerate() {
            let (_, rank, ct) = self.array_info(p.var)?;
            let pv = var_name(p.var);
            let vn = var_name(*v);
            let skip = self.fresh();
            self.open("{");
            self.line("int64_t pos = 0;");
            for (t, is) in indices.iter().enumerate() {
                self.line(&format!(
                    "int64_t i{t} = ((int64_t *){}.data)[j];",
                    var_name(*is)
                ));
                self.line(&format!(
                    "if (i{t} < 0 || i{t} >= {pv}.shape[{t}]) goto {skip}_skip;"
                ));
                self.line(&format!("pos = pos * {pv}.shape[{t}] + i{t};"));
            }
            if let Some((first, end)) = cells.get(k) {
                self.line(&format!(
                    "if (pos < {first} || pos >= {end}) goto {skip}_skip;"
                ));
            }
            if rank == d_rank {
                self.line(&format!(
                    "(({ct} *){pv}.data)[pos] = (({ct} *){vn}.data)[j];"
                ));
            } else {
                self.line(&format!(
                    "int64_t row = nb_count({pv}.shape + {d_rank}, {});",
                    rank - d_rank
                ));
                self.line(&format!(
                    "memmove((({ct} *){pv}.data) + pos * row, (({ct} *){vn}.data) + j * row, (size_t)row * sizeof({ct}));"
                ));
            }
            self.indent -= 1;
            self.line(&format!("{skip}_skip:;"));
            self.line("}");
        }
        self.close();
        if parallel {
            self.close_parallel()?;
        }
        self.close();
        Ok(())
    }

    fn update_acc(
        &mut self,
        loc: &str,
        pat: &[Param],
        acc: Var,
        indices: &[Atom],
        value: &Atom,
        proven: bool,
    ) -> Result<(), CgenError> {
        let Some(info) = self.accs.get(&acc).cloned() else {
            return Err(CgenError::unsupported(
                "an accumulator whose with_acc cannot be traced statically",
            ));
        };
        let [p] = pat else {
            return Err(CgenError::internal("update_acc binds one value"));
        };
        let ct = c_type(info.elem)?;
        let a = var_name(acc);
        if indices.len() > info.rank {
            return Err(CgenError::internal("update_acc with too many indices"));
        }
        let skip = self.fresh();
        self.open("{");
        self.line("int64_t pos = 0;");
        for (k, i) in indices.iter().enumerate() {
            self.line(&format!("int64_t i{k} = {};", self.int(i)?));
            let outside = format!("i{k} < 0 || i{k} >= {a}.shape[{k}]");
            if proven {
                self.line(&format!("nb_proof(!({outside}), {loc});"));
            } else {
                self.line(&format!("if ({outside}) goto {skip}_skip;"));
            }
            self.line(&format!("pos = pos * {a}.shape[{k}] + i{k};"));
        }
        let cell_rank = info.rank - indices.len();
        let vt = self.atom_type(value)?;
        let (src, n) = match (&vt, value) {
            (Type::Prim(_), _) => {
                if cell_rank != 0 {
                    return Err(CgenError::internal("update_acc of a scalar into a row"));
                }
                (self.atom(value)?, "1".to_string())
            }
            (Type::Array(_, d), Atom::Var(v)) => {
                let vn = var_name(*v);
                if d.len() != cell_rank {
                    return Err(CgenError::internal("update_acc value of the wrong rank"));
                }
                self.line(&format!(
                    "nb_check_same_shape({loc}, \"update_acc: a value does not fit a cell:\", {a}.shape + {}, {vn}.shape, {cell_rank});",
                    indices.len()
                ));
                (
                    format!("(({ct} *){vn}.data)[e]"),
                    format!("nb_count({vn}.shape, {cell_rank})"),
                )
            }
            _ => return Err(CgenError::internal("update_acc with an accumulator value")),
        };
        self.line(&format!("int64_t n = {n};"));
        self.open("for (int64_t e = 0; e < n; e++) {");
        let cell = format!("(({ct} *){a}.data)[pos * n + e]");
        self.combine_cell(&info, &cell, &src, loc)?;
        self.close();
        self.indent -= 1;
        if !proven {
            self.line(&format!("{skip}_skip:;"));
        }
        self.line("}");
        self.line(&format!("{} = {a};", var_name(p.var)));
        self.accs.insert(p.var, info);
        Ok(())
    }

    /// The C statements that combine `value` into `cell` (C lvalue and
    /// expression of the accumulator's element type) with the operator of
    /// an accumulator of `info`.
    fn combine_cell(
        &mut self,
        info: &AccInfo,
        cell: &str,
        value: &str,
        loc: &str,
    ) -> Result<(), CgenError> {
        match &info.op {
            AccOp::Write => self.line(&format!("{cell} = {value};")),
            AccOp::Add => {
                let e = scalar::binop(nabla_ir::BinOp::Add, info.elem, cell, value, loc)?;
                self.line(&format!("{cell} = {e};"));
            }
            AccOp::Lambda(l, _) => {
                let [x, y] = l.params.as_slice() else {
                    return Err(CgenError::internal(
                        "accumulator operator of the wrong arity",
                    ));
                };
                if l.body.result.len() != 1 {
                    return Err(CgenError::internal(
                        "accumulator operator of the wrong arity",
                    ));
                }
                for q in &l.params {
                    self.types.entry(q.var).or_insert_with(|| q.ty.clone());
                }
                self.line(&format!("{} = {cell};", var_name(x.var)));
                self.line(&format!("{} = {value};", var_name(y.var)));
                self.body(&l.body, &[Some(cell.to_string())])?;
            }
        }
        Ok(())
    }
}

// ----- calls ------------------------------------------------------------------

/// The functions a body calls (directly), as indices.
/// The `iota(n, 0i64, 1i64)` arrays of a function body that are read only
/// as input arrays of maps, reductions and scans (each reader binds row j
/// to j, see `FnGen::bind_row`), with their lengths.
fn virtual_iotas(body: &Body) -> HashMap<Var, Atom> {
    let mut iotas: HashMap<Var, Atom> = HashMap::new();
    let mut soac_reads: HashMap<Var, usize> = HashMap::new();
    let mut stack = vec![body];
    while let Some(b) = stack.pop() {
        for s in &b.stms {
            match (&s.exp, &s.pat[..]) {
                (
                    Exp::Iota {
                        n,
                        start: Atom::Const(nabla_ir::PrimValue::I64(0)),
                        step: Atom::Const(nabla_ir::PrimValue::I64(1)),
                        ty: PrimType::I64,
                    },
                    [p],
                ) => {
                    iotas.insert(p.var, *n);
                }
                (
                    Exp::Soac(
                        Soac::Map { arrs, .. }
                        | Soac::Reduce { arrs, .. }
                        | Soac::Scan { arrs, .. },
                    ),
                    _,
                ) => {
                    for a in arrs {
                        *soac_reads.entry(*a).or_default() += 1;
                    }
                }
                _ => {}
            }
            s.exp.for_each_nested(|n| match n {
                nabla_ir::Nested::Body(b) => stack.push(b),
                nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
            });
        }
    }
    let mut all_reads: HashMap<Var, usize> = HashMap::new();
    nabla_ir::visit::for_each_var(
        body,
        |v, _| {
            if iotas.contains_key(&v) {
                *all_reads.entry(v).or_default() += 1;
            }
        },
        |_| {},
    );
    iotas.retain(|v, _| {
        let soac = soac_reads.get(v).copied().unwrap_or(0);
        soac > 0 && all_reads.get(v).copied().unwrap_or(0) == soac
    });
    iotas
}

/// Whether result `i` of a map's lambda can be written in place, as row
/// `j` of the map's result: it is a rank-1 array made by a map statement of
/// the lambda's body (a scalar result of it) or by a literal of scalars,
/// that nothing else in the body reads, nor another result, and whose
/// width is known before the loop (a constant or a variable bound outside
/// the lambda). Returns the variable and the width.
fn direct_row(lam: &Lambda, i: usize) -> Option<(Var, Atom)> {
    let Atom::Var(v) = *lam.body.result.get(i)? else {
        return None;
    };
    if lam
        .body
        .result
        .iter()
        .filter(|a| **a == Atom::Var(v))
        .count()
        != 1
    {
        return None;
    }
    let Type::Array(_, dims) = lam.ret.get(i)? else {
        return None;
    };
    if dims.len() != 1 {
        return None;
    }
    let mut producer = None;
    for s in &lam.body.stms {
        if let Some(q) = s.pat.iter().position(|p| p.var == v) {
            producer = Some((s, q));
        } else if nabla_ir::free_vars_stm(s).contains(&v) {
            return None;
        }
    }
    let (s, q) = producer?;
    // A literal of scalars: its elements are stored into row j.
    if let Exp::ArrayLit(atoms, Type::Prim(_)) = &s.exp {
        return Some((v, Atom::Const(PrimValue::I64(atoms.len() as i64))));
    }
    let Exp::Soac(Soac::Map { w, lam: inner, .. }) = &s.exp else {
        return None;
    };
    if !matches!(inner.ret.get(q), Some(Type::Prim(_))) {
        return None;
    }
    let local = |x: &Var| {
        lam.params.iter().any(|p| p.var == *x)
            || lam
                .body
                .stms
                .iter()
                .any(|s| s.pat.iter().any(|p| p.var == *x))
    };
    match w {
        Atom::Var(x) if local(x) => None,
        _ => Some((v, *w)),
    }
}

/// The number of partial results of [`FnGen::reduce_in_lanes`].
const LANES: usize = 4;

/// The most statements (at any depth) that a fused map's lambda may have
/// to be emitted once per lane.
const LANE_BODY_LIMIT: usize = 16;

/// A reduction of one value in lanes ([`FnGen::reduce_in_lanes`]): the
/// operator's accumulator and element parameters, the reduction's result
/// and its operator (see [`lane_operator`]).
#[derive(Clone, Copy)]
struct Lanes<'a> {
    acc: &'a Param,
    elem: &'a Param,
    result: &'a Param,
    op: (BinOp, PrimType),
}

/// The operator of a reduction of one value that
/// [`FnGen::reduce_in_lanes`] may regroup: the operator's body is `a op x`
/// (or `x op a`) alone, with `op` exactly associative and commutative on
/// its type (integer `+`, `*` and bitwise operators, which wrap) or
/// floating-point `+`, which Futhark allows a reduction to regroup, or
/// floating-point `min` and `max` (regrouped, they may return the other
/// zero of `-0` and `+0` when those tie). Lanes also break the chain of a
/// running minimum or maximum, which runtime.c computes without branches.
/// Reductions of several values (such as forward mode's (primal, tangent)
/// pairs) keep one chain: in lanes, ht's Jacobian ran about 3% slower
/// (twice the live accumulators), while single sums gained up to a quarter
/// (gmm objective, kmeans cost).
fn lane_operator(lam: &Lambda) -> Option<(BinOp, PrimType)> {
    let ([acc, elem], [stm], [Atom::Var(r)]) =
        (&lam.params[..], &lam.body.stms[..], &lam.body.result[..])
    else {
        return None;
    };
    let Type::Prim(t) = acc.ty else {
        return None;
    };
    let Exp::BinOp(op, Atom::Var(x), Atom::Var(y)) = stm.exp else {
        return None;
    };
    let operands_ok = (x == acc.var && y == elem.var) || (x == elem.var && y == acc.var);
    let result_ok = matches!(&stm.pat[..], [p] if p.var == *r);
    let op_ok = match op {
        BinOp::Add => t.is_int() || t.is_float(),
        BinOp::Mul | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => t.is_int(),
        BinOp::Min | BinOp::Max => t.is_float(),
        _ => false,
    };
    (operands_ok && result_ok && op_ok && t != PrimType::F16).then_some((op, t))
}

/// The accumulator parameters of `parts` (a componentwise operator) that
/// are rows combined in place.
fn rows_combined_in_place(parts: Option<&[Component<'_>]>) -> HashSet<Var> {
    parts
        .unwrap_or_default()
        .iter()
        .filter(|p| p.rows)
        .map(|p| p.acc.var)
        .collect()
}

/// The C expression that combines one component of a componentwise
/// operator ([`componentwise_operator`]): its operator on the
/// accumulator's value `acc` and the element's value `elem` (C
/// expressions of its element type), in the operator's order.
fn combine_component(
    part: &Component<'_>,
    acc: &str,
    elem: &str,
    loc: &str,
) -> Result<String, CgenError> {
    let operand = |from_acc: bool| if from_acc { acc } else { elem };
    binop(
        part.op,
        part.acc.ty.elem(),
        operand(part.operands[0]),
        operand(part.operands[1]),
        loc,
    )
}

/// The longest scratch row ([`RowDestination::Scratch`]) kept on the
/// stack, in elements.
const SCRATCH_ROW: usize = 256;

/// Where a map in a lambda writes the row that the lambda returns (see
/// [`FnGen::row_destinations`]).
#[derive(Clone)]
enum RowDestination {
    /// Row `j` of the enclosing map's result (this C variable, allocated
    /// whole before its loop).
    RowOf(String),
    /// This rank-1 array, made once before a fused map-reduce loop (on the
    /// stack where short) and reused by every element
    /// ([`FnGen::fused_map_reduce`]): the row is combined into the
    /// reduction's accumulator right after.
    Scratch(String),
}

impl RowDestination {
    /// The C statement that makes `p` (a rank-1 array of `ct`) the
    /// destination.
    fn bind(&self, p: &str, ct: &str) -> String {
        match self {
            RowDestination::RowOf(outer) => {
                format!("nb_row(&{p}, &{outer}, 2, sizeof({ct}), j, 0);")
            }
            RowDestination::Scratch(row) => format!("{p} = nb_retain({row});"),
        }
    }
}

/// Whether a reduction over `w` elements is long enough for lanes: not a
/// constant width below twice [`LANES`].
fn worth_lanes(w: &Atom) -> bool {
    match w {
        Atom::Const(PrimValue::I64(c)) => *c >= 2 * LANES as i64,
        _ => true,
    }
}

/// Whether a statement of `body` has a body or lambda of its own.
fn has_nested(body: &Body) -> bool {
    body.stms.iter().any(|s| {
        let mut nested = false;
        s.exp.for_each_nested(|_| nested = true);
        nested
    })
}

/// Whether `body` has at most `limit` statements at any depth.
fn small_for_lanes(body: &Body, limit: usize) -> bool {
    fn count(body: &Body, n: &mut usize) {
        for s in &body.stms {
            *n += 1;
            s.exp.for_each_nested(|x| match x {
                nabla_ir::Nested::Body(b) => count(b, n),
                nabla_ir::Nested::Lambda(l) => count(&l.body, n),
            });
        }
    }
    let mut n = 0;
    count(body, &mut n);
    n <= limit
}

/// Whether statement `k` of `b` is a map that can run fused with the
/// reduction at `k + 1` ([`FnGen::fused_map_reduce`]), and if so, which of
/// the map's results are also stored as arrays. The map takes no
/// accumulators and returns scalars only; the reduction has the same width
/// (the same atom), scalar operands, and its input arrays are distinct
/// results of the map; its operator and neutral elements read none of
/// them. A result the reduction does not read, or that something else in
/// `b` reads (after the loop, when the array is complete), is stored
/// (Futhark's redomap with map outputs); the others never exist.
fn map_into_reduce(b: &Body, k: usize) -> Option<Vec<bool>> {
    let (map_stm, red_stm) = (b.stms.get(k)?, b.stms.get(k + 1)?);
    let (
        Exp::Soac(Soac::Map {
            w: mw,
            lam: mlam,
            arrs: marrs,
        }),
        Exp::Soac(Soac::Reduce {
            w: rw,
            lam: rlam,
            neutral,
            arrs: rarrs,
            ..
        }),
    ) = (&map_stm.exp, &red_stm.exp)
    else {
        return None;
    };
    let scalar = |t: &Type| matches!(t, Type::Prim(_));
    let results: Vec<Var> = map_stm.pat.iter().map(|p| p.var).collect();
    // A reduction whose operator combines rows componentwise also takes
    // rows from the map (made per element, combined in place), provided
    // nothing else reads them.
    let row_components: Vec<Var> = match componentwise_operator(rlam) {
        Some(parts) => parts
            .iter()
            .zip(rarrs)
            .filter(|(part, _)| part.rows)
            .map(|(_, a)| *a)
            .collect(),
        None => vec![],
    };
    let rank1 = |t: &Type| matches!(t, Type::Array(_, d) if d.len() == 1);
    let row_of_component = |v: &Var, t: &Type| {
        row_components.contains(v) && matches!(t, Type::Array(_, d) if d.len() == 2)
    };
    let ok = mw == rw
        && !rarrs.is_empty()
        && mlam.ret.iter().zip(&map_stm.pat).all(|(t, p)| {
            (scalar(t) && scalar_elems(&p.ty)) || (rank1(t) && row_of_component(&p.var, &p.ty))
        })
        && mlam.params.iter().all(|p| !p.ty.is_acc())
        && rlam.params.iter().all(|p| scalar(&p.ty) || rank1(&p.ty))
        && red_stm.pat.iter().all(|p| scalar(&p.ty) || rank1(&p.ty))
        && rarrs
            .iter()
            .all(|a| results.iter().filter(|v| *v == a).count() == 1)
        && results
            .iter()
            .all(|v| rarrs.iter().filter(|a| *a == v).count() <= 1)
        && !marrs.iter().any(|a| results.contains(a));
    if !ok {
        return None;
    }
    let mut operator = nabla_ir::free_vars_lambda(rlam);
    operator.extend(neutral.iter().filter_map(|a| match a {
        Atom::Var(v) => Some(*v),
        Atom::Const(_) => None,
    }));
    if operator.iter().any(|v| results.contains(v)) {
        return None;
    }
    let mut stored: Vec<bool> = results.iter().map(|v| !rarrs.contains(v)).collect();
    for (j, s) in b.stms.iter().enumerate() {
        if j == k + 1 {
            continue;
        }
        let free = nabla_ir::free_vars_stm(s);
        for (i, v) in results.iter().enumerate() {
            if free.contains(v) {
                stored[i] = true;
            }
        }
    }
    for a in &b.result {
        if let Atom::Var(v) = a {
            if let Some(i) = results.iter().position(|r| r == v) {
                stored[i] = true;
            }
        }
    }
    // Rows are never stored (only scalars are, into one-dimensional
    // arrays).
    let stores_rows = results
        .iter()
        .zip(&stored)
        .any(|(v, &store)| store && row_components.contains(v));
    if stores_rows {
        return None;
    }
    Some(stored)
}

/// A one-dimensional array of scalars.
fn scalar_elems(t: &Type) -> bool {
    matches!(t, Type::Array(_, dims) if dims.len() == 1)
}

pub(crate) fn callees(b: &Body) -> Vec<usize> {
    let mut out = Vec::new();
    callees_into(b, &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

fn callees_into(b: &Body, out: &mut Vec<usize>) {
    for stm in &b.stms {
        match &stm.exp {
            Exp::Apply(f, _) => out.push(f.0 as usize),
            Exp::If { then_, else_, .. } => {
                callees_into(then_, out);
                callees_into(else_, out);
            }
            Exp::Loop { form, body, .. } => {
                if let LoopForm::While { cond } = form {
                    callees_into(cond, out);
                }
                callees_into(body, out);
            }
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            ) => callees_into(&lam.body, out),
            Exp::WithAcc { inputs, lam } => {
                for i in inputs {
                    if let AccOp::Lambda(l, _) = &i.op {
                        callees_into(&l.body, out);
                    }
                }
                callees_into(&lam.body, out);
            }
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => callees_into(&lam.body, out),
            Exp::WithVjp { lam, rule, .. } => {
                callees_into(&lam.body, out);
                callees_into(&rule.body, out);
            }
            _ => {}
        }
    }
}

// ----- variable types ---------------------------------------------------------

pub(crate) fn collect_params(ps: &[Param], types: &mut HashMap<Var, Type>) {
    for p in ps {
        types.insert(p.var, p.ty.clone());
    }
}

fn collect_lambda(l: &Lambda, types: &mut HashMap<Var, Type>) -> Result<(), CgenError> {
    collect_params(&l.params, types);
    collect_body(&l.body, types)
}

/// Records the type of every variable bound in `b` (patterns, lambda and
/// loop parameters, loop counters).
pub(crate) fn collect_body(b: &Body, types: &mut HashMap<Var, Type>) -> Result<(), CgenError> {
    for stm in &b.stms {
        collect_params(&stm.pat, types);
        match &stm.exp {
            Exp::If { then_, else_, .. } => {
                collect_body(then_, types)?;
                collect_body(else_, types)?;
            }
            Exp::Loop {
                params, form, body, ..
            } => {
                collect_params(params, types);
                match form {
                    LoopForm::For { i, bound } => {
                        let t = match bound {
                            Atom::Const(c) => Type::Prim(c.prim_type()),
                            Atom::Var(v) => types
                                .get(v)
                                .cloned()
                                .ok_or_else(|| CgenError::internal("loop bound of unknown type"))?,
                        };
                        types.insert(*i, t);
                    }
                    LoopForm::While { cond } => collect_body(cond, types)?,
                }
                collect_body(body, types)?;
            }
            Exp::Soac(
                Soac::Map { lam, .. }
                | Soac::Reduce { lam, .. }
                | Soac::Scan { lam, .. }
                | Soac::Hist { lam, .. },
            ) => collect_lambda(lam, types)?,
            Exp::WithAcc { inputs, lam } => {
                for i in inputs {
                    if let AccOp::Lambda(l, _) = &i.op {
                        collect_lambda(l, types)?;
                    }
                }
                collect_lambda(lam, types)?;
            }
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => collect_lambda(lam, types)?,
            Exp::WithVjp { lam, rule, .. } => {
                collect_lambda(lam, types)?;
                collect_lambda(rule, types)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The shortest literal of scalars written as a static table (see
/// `array_lit`); shorter ones are a statement per element.
const TABLE_LITERAL_MIN: usize = 64;

/// The C initializer list of `atoms` when they are at least
/// [`TABLE_LITERAL_MIN`] constants that C can write in a static initializer
/// (not f16, nor a NaN or an infinity, which `c_const` writes as calls);
/// otherwise `None`.
fn constant_table(atoms: &[Atom]) -> Result<Option<String>, CgenError> {
    if atoms.len() < TABLE_LITERAL_MIN {
        return Ok(None);
    }
    let mut table = String::new();
    for (k, a) in atoms.iter().enumerate() {
        let Atom::Const(c) = a else {
            return Ok(None);
        };
        let constant = match *c {
            PrimValue::F16(_) => false,
            PrimValue::F32(x) => x.is_finite(),
            PrimValue::F64(x) => x.is_finite(),
            _ => true,
        };
        if !constant {
            return Ok(None);
        }
        if k > 0 {
            table.push_str(if k % 16 == 0 { ",\n" } else { ", " });
        }
        table.push_str(&scalar::c_const(*c)?);
    }
    Ok(Some(table))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Program {
        nabla_ir::parse::parse_program(text).expect("the test program parses")
    }

    /// The lambda of the first statement of `main` (a map).
    fn outer_lambda(prog: &Program) -> &Lambda {
        match &prog.functions[0].body.stms[1].exp {
            Exp::Soac(Soac::Map { lam, .. }) => lam,
            e => panic!("not a map: {e:?}"),
        }
    }

    const ROWS: &str = "
fun main (xss_0: [?][?]f64): ([?][?]f64) = {
  let n_1: i64 = size(xss_0, 1)
  let r_6: [?][n_1]f64 = map(n_1, \\(row_2: [n_1]f64): ([n_1]f64) -> {
    let m_5: [n_1]f64 = map(n_1, \\(x_3: f64): (f64) -> {
      let y_4: f64 = x_3 * 2.0f64
      in (y_4)
    }, row_2)
    in (m_5)
  }, xss_0)
  in (r_6)
}

entry main = main (params [1], results [1])
";

    #[test]
    fn declarations_are_told_from_uses() {
        let text = "  nb_arr t2;\n  int64_t t3 = 4, t4 = 5;\n  nb_release(&t5);\n  t6 = t2;\n  nb_arr t7 = t6;\n  if (t8 == 0) t9 = 1;\n  double t10 = (double)t11;\n  return t12;\n";
        assert!(declares(text, "t2", None) && declares(text, "t2", Some("nb_arr")));
        assert!(declares(text, "t3", Some("int64_t")) && !declares(text, "t3", Some("nb_arr")));
        assert!(declares(text, "t7", Some("nb_arr")) && declares(text, "t10", None));
        for used in ["t5", "t6", "t8", "t9", "t11", "t12", "t1"] {
            assert!(!declares(text, used, None), "{used}");
        }
        // `t1` is not `t10`'s prefix's declaration.
        assert!(!declares("  double t10 = 0;\n", "t1", None));
    }

    #[test]
    fn a_row_made_by_an_inner_map_is_written_in_place() {
        let prog = parse(ROWS);
        let (v, w) = direct_row(outer_lambda(&prog), 0).expect("a direct row");
        assert_eq!(prog.functions[0].var_names[v.0 as usize], "m_5");
        assert_eq!(w, Atom::Var(Var(1)));
        let c = crate::generate_c(&prog, &|_| String::new()).expect("C");
        // The result is allocated whole, the inner map writes into a view
        // of row j, and no row is copied.
        assert!(
            c.contains("v6 = nb_alloc(2, (int64_t[]){t1, ((int64_t)v1)}"),
            "{c}"
        );
        assert!(
            c.contains("nb_row(&v5, &v6, 2, sizeof(double), j, 0);"),
            "{c}"
        );
        let main = &c[c
            .find("static void nb_fun_0(nb_arr *out0, nb_arr v0) {")
            .expect("main")..];
        assert!(!main.contains("nb_store_row"), "{main}");
    }

    #[test]
    fn a_row_made_by_a_literal_is_written_in_place() {
        let lit = ROWS
            .replace("([n_1]f64) -> {", "([2]f64) -> {")
            .replace("let r_6: [?][n_1]f64", "let r_6: [?][2]f64")
            .replace("): ([?][?]f64) = {", "): ([?][2]f64) = {")
            .replace(
                "    let m_5: [n_1]f64 = map(n_1, \\(x_3: f64): (f64) -> {\n      let y_4: f64 = x_3 * 2.0f64\n      in (y_4)\n    }, row_2)\n",
                "    let y_4: f64 = row_2[0i64]\n    let m_5: [2]f64 = [y_4, y_4]: []f64\n",
            );
        let prog = parse(&lit);
        let (v, w) = direct_row(outer_lambda(&prog), 0).expect("a direct row");
        assert_eq!(prog.functions[0].var_names[v.0 as usize], "m_5");
        assert_eq!(w, Atom::Const(PrimValue::I64(2)));
        let c = crate::generate_c(&prog, &|_| String::new()).expect("C");
        assert!(
            c.contains("nb_row(&v5, &v6, 2, sizeof(double), j, 0);"),
            "{c}"
        );
        assert!(c.contains("((double *)v5.data)[1] = v4;"), "{c}");
        let main = &c[c.find("/* main */").expect("main")..];
        assert!(!main.contains("nb_store_row"), "{main}");
        assert_eq!(main.matches("nb_alloc").count(), 1, "{main}");
    }

    #[test]
    fn rows_read_elsewhere_or_of_local_width_are_stored() {
        // The row is also read by the body (its first element is a second
        // result), so it keeps a block of its own.
        let read = ROWS
            .replace("([n_1]f64) -> {", "([n_1]f64, f64) -> {")
            .replace(
                "    in (m_5)",
                "    let e_7: f64 = m_5[0i64]\n    in (m_5, e_7)",
            )
            .replace(
                "let r_6: [?][n_1]f64 =",
                "let (r_6: [?][n_1]f64, s_8: [?]f64) =",
            )
            .replace("results [1]", "results [1, 1]")
            .replace("): ([?][?]f64) = {", "): ([?][?]f64, [?]f64) = {")
            .replace("  in (r_6)\n", "  in (r_6, s_8)\n");
        let prog = parse(&read);
        assert_eq!(direct_row(outer_lambda(&prog), 0), None);
        // The inner map's width is bound inside the lambda.
        let local = ROWS.replace(
            "    let m_5: [n_1]f64 = map(n_1,",
            "    let k_9: i64 = size(row_2, 0)\n    let m_5: [n_1]f64 = map(k_9,",
        );
        let prog = parse(&local);
        assert_eq!(direct_row(outer_lambda(&prog), 0), None);
    }

    const SUM: &str = "
fun main (xs_0: [?]f64): (f64) = {
  let n_1: i64 = size(xs_0, 0)
  let s_5: f64 = reduce_comm(n_1, \\(a_2: f64, b_3: f64): (f64) -> {
    let c_4: f64 = a_2 + b_3
    in (c_4)
  }, (0.0f64), xs_0)
  in (s_5)
}

entry main = main (params [1], results [1])
";

    fn main_c(text: &str) -> String {
        let c = crate::generate_c(&parse(text), &|_| String::new()).expect("C");
        let start = c.find("/* main */").expect("main");
        c[start..].to_string()
    }

    /// A map over `iota n` reading `xs[i]` and, where `i != 0`,
    /// `xs[i - 1]`, and adding into an accumulator at `i`; then `xs[k]`
    /// with `k` an argument.
    const NEIGHBOURS: &str = "
fun main (xs_0: [?]f64, k_1: i64): ([?]f64, f64) = {
  let n_2: i64 = size(xs_0, 0)
  let is_3: [n_2]i64 = iota<i64>(n_2, 0i64, 1i64)
  let zeros_4: [n_2]f64 = replicate(n_2, 0.0f64)
  let out_16: [n_2]f64 = with_acc([zeros_4 add], \\(acc_5: acc([n_2]f64)): (acc([n_2]f64)) -> {
    let a_15: acc([n_2]f64) = map(n_2, \\(i_6: i64, c_7: acc([n_2]f64)): (acc([n_2]f64)) -> {
      let x_8: f64 = xs_0[i_6]
      let z_9: bool = i_6 == 0i64
      let y_12: f64 = if z_9 then {
        in (x_8)
      } else {
        let j_10: i64 = i_6 - 1i64
        let w_11: f64 = xs_0[j_10]
        in (w_11)
      }
      let s_13: f64 = x_8 + y_12
      let c_14: acc([n_2]f64) = update_acc(c_7, [i_6], s_13)
      in (c_14)
    }, is_3, acc_5)
    in (a_15)
  })
  let e_17: f64 = xs_0[k_1]
  in (out_16, e_17)
}

entry main = main (params [1, 1], results [1, 1])
";

    #[test]
    fn indices_proven_in_bounds_are_not_checked() {
        let c = main_c(NEIGHBOURS);
        // xs[i], xs[i - 1] and the accumulator's cell i: no check (in
        // both loops, see below).
        assert_eq!(c.matches("nb_in1(").count(), 4, "{c}");
        assert_eq!(c.matches("nb_proof(!(i0 < 0 || i0 >= ").count(), 2, "{c}");
        assert!(!c.contains("goto"), "{c}");
        // xs[k]: checked.
        assert_eq!(c.matches("nb_pos1(").count(), 1, "{c}");
        assert!(c.contains("nb_pos1(\"\", &v0, ((int64_t)v1))"), "{c}");
    }

    #[test]
    fn a_map_testing_for_its_first_row_runs_it_alone() {
        let c = main_c(NEIGHBOURS);
        assert!(
            c.contains("for (int64_t j = 0; j < (t1 < 1 ? t1 : 1); j++) {"),
            "{c}"
        );
        assert!(c.contains("for (int64_t j = 1; j < t1; j++) {"), "{c}");
        // Without the test, one loop.
        let c = main_c(&NEIGHBOURS.replace("i_6 == 0i64", "i_6 == k_1"));
        assert!(c.contains("for (int64_t j = 0; j < t1; j++) {"), "{c}");
        assert!(!c.contains("j = 1;"), "{c}");
    }

    /// A map with two results: the sum of the first, which the result
    /// also reads, and the second, which nothing reduces.
    const MAP_SUM_AND_KEEP: &str = "
fun main (xs_0: [?]f64): ([?]f64, [?]f64, f64) = {
  let n_1: i64 = size(xs_0, 0)
  let (e_3: [n_1]f64, d_4: [n_1]f64) = map(n_1, \\(x_2: f64): (f64, f64) -> {
    let y_5: f64 = exp(x_2)
    let z_6: f64 = x_2 * 2.0f64
    in (y_5, z_6)
  }, xs_0)
  let s_10: f64 = reduce_comm(n_1, \\(a_7: f64, b_8: f64): (f64) -> {
    let c_9: f64 = a_7 + b_8
    in (c_9)
  }, (0.0f64), e_3)
  in (e_3, d_4, s_10)
}

entry main = main (params [1], results [1, 1, 1])
";

    #[test]
    fn a_map_whose_results_are_read_after_its_reduction_runs_fused_with_it() {
        /// The C function of `main`.
        fn main_function(c: &str) -> &str {
            let start = c.find("/* main */").expect("main");
            let len = c[start..].find("\n}\n").expect("its end");
            &c[start..start + len]
        }
        let c = main_c(MAP_SUM_AND_KEEP);
        let main = main_function(&c);
        // One loop over the elements (in lanes, and the rest), storing
        // both results.
        assert_eq!(main.matches("for (").count(), 2, "{main}");
        assert!(main.contains(&format!("+= {LANES}) {{")), "{main}");
        assert!(main.contains("v3 = nb_alloc(1, (int64_t[]){t2}"), "{main}");
        assert!(main.contains("v4 = nb_alloc(1, (int64_t[]){t2}"), "{main}");
        assert!(main.contains("((double *)v3.data)[j] = v8;"), "{main}");
        assert!(main.contains("((double *)v4.data)[j] = t1;"), "{main}");
        // A reduction whose operator reads the map's result: a loop for
        // the map, then the reduction over the stored array.
        let c = main_c(&MAP_SUM_AND_KEEP.replace(
            "let c_9: f64 = a_7 + b_8",
            "let q_11: f64 = e_3[0i64]\n    let c_9: f64 = q_11 + b_8",
        ));
        let main = main_function(&c);
        assert!(
            main.contains("nb_check_width(\"\", \"reduce\", \"e_3\", &v3"),
            "{main}"
        );
    }

    /// `reduce (map2 (+)) zeros xss` beside a sum of `ys`, in one
    /// reduction (vector-mode forward AD's (primal, tangent row) pairs).
    const ROW_SUMS: &str = "
fun main (ys_0: [?]f64, xss_1: [?][?]f64): (f64, [?]f64) = {
  let n_2: i64 = size(xss_1, 0)
  let m_3: i64 = size(xss_1, 1)
  let z_4: [m_3]f64 = replicate(m_3, 0.0f64)
  let (s_15: f64, r_16: [m_3]f64) = reduce_comm(n_2, \\(a_5: f64, x_6: [m_3]f64, b_7: f64, y_8: [m_3]f64): (f64, [m_3]f64) -> {
    let c_9: f64 = a_5 + b_7
    let r_14: [m_3]f64 = map(m_3, \\(p_10: f64, q_11: f64): (f64) -> {
      let t_12: f64 = q_11 - p_10
      in (t_12)
    }, x_6, y_8)
    in (c_9, r_14)
  }, (0.0f64, z_4), ys_0, xss_1)
  in (s_15, r_16)
}

entry main = main (params [1, 1], results [1, 1])
";

    #[test]
    fn a_reduction_of_rows_by_a_rowwise_operator_combines_them_in_place() {
        let c = main_c(ROW_SUMS);
        let start = c.find("/* main */").expect("main");
        let main = &c[start..start + c[start..].find("\n}\n").expect("its end")];
        // The accumulator row is copied once from the neutral row, and
        // every row goes into it in place: no allocation in the loop, the
        // operands in the operator's order (the element's minus the
        // accumulator's), the widths checked as the map would. The copy
        // is made without a reference to the neutral row (threads would
        // share its reference count).
        assert!(
            main.contains("v6 = nb_copy(&v4, 1, sizeof(double));"),
            "{main}"
        );
        assert!(!main.contains("nb_retain(v4)"), "{main}");
        let body = &main[main.find("for (int64_t j = 0;").expect("the loop")..];
        assert!(!body.contains("nb_alloc"), "{main}");
        assert!(
            body.contains(
                "((double *)v6.data)[s] = (((double *)v8.data)[s] - ((double *)v6.data)[s]);"
            ),
            "{main}"
        );
        assert!(body.contains("v5 = (v5 + v7);"), "{main}");
        assert!(body.contains("nb_check_width("), "{main}");
        // An operator whose row result is not its map (it returns the
        // element's row itself) takes the general path.
        let c = main_c(&ROW_SUMS.replace("in (c_9, r_14)", "in (c_9, y_8)"));
        assert!(!c.contains("nb_make_unique(&v6, 1"), "{c}");
    }

    /// A map making a scalar and a row per element, reduced by an
    /// operator that adds scalars and rows componentwise.
    const MAPPED_ROW_SUMS: &str = "
fun main (ws_0: [?]f64, ts_1: [?]f64): (f64, [?]f64) = {
  let n_2: i64 = size(ws_0, 0)
  let m_3: i64 = size(ts_1, 0)
  let z_4: [m_3]f64 = replicate(m_3, 0.0f64)
  let (sq_20: [n_2]f64, rows_21: [n_2][m_3]f64) = map(n_2, \\(w_17: f64): (f64, [m_3]f64) -> {
    let s_18: f64 = w_17 * w_17
    let row_19: [m_3]f64 = map(m_3, \\(t_22: f64): (f64) -> {
      let u_23: f64 = w_17 * t_22
      in (u_23)
    }, ts_1)
    in (s_18, row_19)
  }, ws_0)
  let (s_15: f64, r_16: [m_3]f64) = reduce_comm(n_2, \\(a_5: f64, x_6: [m_3]f64, b_7: f64, y_8: [m_3]f64): (f64, [m_3]f64) -> {
    let c_9: f64 = a_5 + b_7
    let r_14: [m_3]f64 = map(m_3, \\(p_10: f64, q_11: f64): (f64) -> {
      let t_12: f64 = p_10 + q_11
      in (t_12)
    }, x_6, y_8)
    in (c_9, r_14)
  }, (0.0f64, z_4), sq_20, rows_21)
  in (s_15, r_16)
}

entry main = main (params [1, 1], results [1, 1])
";

    #[test]
    fn a_map_of_rows_runs_fused_with_their_rowwise_reduction() {
        let c = main_c(MAPPED_ROW_SUMS);
        let start = c.find("/* main */").expect("main");
        let main = &c[start..start + c[start..].find("\n}\n").expect("its end")];
        // One scratch row, on the stack where short (else on the heap),
        // made before the loop; the map never allocates its [n][m] rows.
        assert!(main.contains("(nb_arr){NULL, (char *)"), "{main}");
        assert!(!main.contains("nb_alloc(2"), "{main}");
        let fused = main
            .find("nb_make_unique(&v6, 1")
            .expect("the accumulator row");
        let body = &main[fused..];
        assert!(!body.contains("nb_alloc"), "{main}");
        // Each element's row is made in the scratch row, then added into
        // the accumulator row in place.
        assert!(body.contains("= nb_retain(t"), "{main}");
        assert!(
            body.contains(
                "((double *)v6.data)[s] = (((double *)v6.data)[s] + ((double *)v8.data)[s]);"
            ),
            "{main}"
        );
        assert!(body.contains("v5 = (v5 + v7);"), "{main}");
        // Where the rows are also read elsewhere (stored), no fusion.
        let stored = MAPPED_ROW_SUMS.replace("in (s_15, r_16)", "in (s_15, rows_21)");
        let stored = stored.replace("(f64, [?]f64) = {", "(f64, [?][?]f64) = {");
        let c = main_c(&stored);
        assert!(!c.contains("(nb_arr){NULL, (char *)"), "{c}");
    }

    #[test]
    fn reassociable_reductions_run_in_lanes() {
        let c = main_c(SUM);
        assert!(c.contains(&format!("+= {LANES}) {{")), "{c}");
        // Every lane starts from the neutral element; the lanes are
        // combined pairwise and the result goes to the reduction's result.
        assert!(c.contains("double t2 = v2;"), "{c}");
        assert!(c.contains("double t5 = v2;"), "{c}");
        assert!(c.contains("t5 = (t5 + v3);"), "{c}");
        assert!(c.contains("t2 = (t2 + t4);"), "{c}");
        assert!(c.contains("t3 = (t3 + t5);"), "{c}");
        assert!(c.contains("t2 = (t2 + t3);"), "{c}");
        assert!(c.contains("v5 = t2;"), "{c}");
        // Integer lanes are unsigned and converted back at the end.
        let c = main_c(&SUM.replace("f64", "i32").replace("0.0i32", "0i32"));
        assert!(c.contains("uint32_t t2 = (uint32_t)(uint32_t)v2;"), "{c}");
        assert!(c.contains("t5 = (t5 + (uint32_t)(uint32_t)v3);"), "{c}");
        assert!(c.contains("v5 = (int32_t)(uint32_t)t2;"), "{c}");
        let c = main_c(&SUM.replace("f64", "i8").replace("0.0i8", "0i8"));
        assert!(c.contains("uint32_t t2 = (uint32_t)(uint8_t)v2;"), "{c}");
        assert!(c.contains("v5 = (int8_t)(uint8_t)t2;"), "{c}");
        // Float minima and maxima too.
        let c = main_c(&SUM.replace("a_2 + b_3", "min(a_2, b_3)"));
        assert!(c.contains("t5 = nb_fmin64(t5, v3);"), "{c}");
        // Float products, scans and short constant widths: one chain.
        for other in [
            SUM.replace("a_2 + b_3", "a_2 * b_3"),
            SUM.replace("reduce_comm(n_1,", "scan(n_1,")
                .replace("(f64) = {", "([?]f64) = {")
                .replace("let s_5: f64", "let s_5: [n_1]f64"),
            SUM.replace("xs_0: [?]f64", "xs_0: [4]f64")
                .replace("reduce_comm(n_1,", "reduce_comm(4i64,"),
        ] {
            let c = main_c(&other);
            assert!(!c.contains(&format!("+= {LANES})")), "{other}\n{c}");
        }
    }
}
