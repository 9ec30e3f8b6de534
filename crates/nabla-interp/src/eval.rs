//! The evaluator: one frame (`Vec<Value>` indexed by variable number) per
//! function call; statements write their results into frame slots.
//!
//! Consumption: `Update`, `Hist`, `Scatter` and `WithAcc` *take* their
//! consumed array out of its slot (the IR guarantees, as Futhark's uniqueness types do, that a
//! consumed variable is not used afterwards), so an unshared buffer is
//! updated in place; a shared one is copied first (copy-on-write). Results of
//! `if` branches and loop bodies that are arrays bound inside that body are
//! moved, not cloned, for the same reason.

use crate::array::{self, int_of, int_to, Builder, Ix, Region};
use crate::scalar;
use crate::RuntimeError;
use nabla_ir::{
    AccInput, AccOp, Atom, Body, Dim, DimIndex, Exp, FunId, Lambda, LoopForm, Param, Program, Soac,
    Stm, Type, Var,
};
use nabla_prim::{PrimType, PrimValue};
use nabla_values::{shape_elems, ArrayValue, Value};
use std::rc::Rc;

pub(crate) type Res<T> = Result<T, Box<RuntimeError>>;

/// The value of a slot that holds nothing (unbound or consumed).
pub(crate) const DEAD: Value = Value::Prim(PrimValue::Bool(false));

/// Maximum depth of nested function calls before a run-time error: deep
/// enough for recursive functions (as deep as compiled code gets with an
/// 8 MiB stack, for small functions), shallow enough that runaway
/// recursion stops before its frames (about 4 KiB of native stack each,
/// grown on the heap) take more than about 400 MB.
pub const MAX_CALL_DEPTH: usize = 100_000;

/// How many emptied frames an interpreter keeps for reuse.
const MAX_FREE_FRAMES: usize = 64;

use crate::{RED_ZONE, STACK_SEGMENT};

#[cold]
pub(crate) fn err<T>(msg: impl Into<String>) -> Res<T> {
    Err(Box::new(RuntimeError::new(msg)))
}

/// Makes `a` the sole owner of exactly its elements (to be updated in
/// place: `scatter`/`reduce_by_index` destinations, accumulators), copying
/// them — fallibly — when its buffer is shared or larger.
pub(crate) fn materialize(a: &mut ArrayValue) -> Res<()> {
    let n = a.num_elems();
    if a.offset == 0 && a.buffer.len() == n && a.buffer.is_unique() {
        return Ok(());
    }
    *a = alloc_res(array::copy_array(a))?;
    Ok(())
}

/// A fallible allocation's result as a run-time error (located later, at
/// the statement).
pub(crate) fn alloc_res<T>(r: Result<T, String>) -> Res<T> {
    r.map_err(|m| Box::new(RuntimeError::new(m)))
}

/// `AssertEqSizes`: all of `ns` equal, else the size error naming `msg` and the sizes.
pub(crate) fn check_eq_sizes(ns: &[i64], msg: &str) -> Res<()> {
    if ns.windows(2).any(|w| w[0] != w[1]) {
        let shown: Vec<String> = ns.iter().map(|n| n.to_string()).collect();
        return err(format!(
            "size error: {msg} (sizes {} differ)",
            shown.join(", ")
        ));
    }
    Ok(())
}

/// An assertion's message with each `{}` replaced by the next of `vals`
/// (integers and booleans as Futhark shows them, without a type suffix).
pub(crate) fn fill_message(msg: &str, vals: &[PrimValue]) -> String {
    let mut out = String::new();
    let mut parts = msg.split("{}");
    out.push_str(parts.next().unwrap_or(""));
    for (part, v) in parts.zip(vals.iter().map(Some).chain(std::iter::repeat(None))) {
        if let Some(v) = v {
            out.push_str(&plain_value(v));
        }
        out.push_str(part);
    }
    out
}

/// A scalar as Futhark's run-time errors show it: integers without their
/// type suffix, other values in the value format.
fn plain_value(v: &PrimValue) -> String {
    match int_of(*v) {
        Some(x) if v.prim_type().is_int() => x.to_string(),
        _ => v.to_string(),
    }
}

/// `Assert`: fails with `msg` (or a generic message when it is empty) unless `ok`.
pub(crate) fn check_assert(ok: bool, msg: &str) -> Res<()> {
    if ok {
        Ok(())
    } else if msg.is_empty() {
        err("Assertion is false")
    } else {
        err(msg)
    }
}

/// The parameters of a SOAC's lambda (none for `scatter`), whose slots die with the SOAC.
pub(crate) fn soac_lambda_params(soac: &Soac) -> &[Param] {
    match soac {
        Soac::Map { lam, .. }
        | Soac::Reduce { lam, .. }
        | Soac::Scan { lam, .. }
        | Soac::Hist { lam, .. } => &lam.params,
        Soac::Scatter { .. } => &[],
    }
}

/// One size to bind or check when a function is entered: dimension `dim` of
/// parameter `param` must equal `size`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SizeBind {
    Var { param: usize, dim: usize, var: Var },
    Const { param: usize, dim: usize, size: i64 },
}

pub(crate) struct Interp<'p> {
    pub(crate) prog: &'p Program,
    /// Number of slots in each function's frame.
    pub(crate) frame_size: Vec<usize>,
    /// Sizes bound or checked on entry to each function.
    pub(crate) size_binds: Vec<Vec<SizeBind>>,
    pub(crate) depth: usize,
    /// The function being executed (for variable names in messages).
    pub(crate) cur: usize,
    /// Active `jvp`/`vjp` calls (see [`crate::ad`]); untouched by programs without AD.
    pub(crate) ad: crate::ad::AdState,
    /// Frames of returned calls, emptied, for reuse by later calls (no
    /// allocation per call).
    pub(crate) frames: Vec<Vec<Value>>,
    /// Per consuming statement (`Update`, `Hist`, `Scatter`): array slots
    /// that are dead once it runs (see [`crate::live`]), filled per function
    /// when first needed.
    pub(crate) dead_after: crate::live::DeadTable,
    /// Counters of the paths taken (see [`crate::Stats`]).
    pub(crate) stats: crate::Stats,
    /// The live accumulators, innermost `with_acc` last (see [`AccState`]).
    pub(crate) accs: Vec<AccState>,
    /// Checked at every loop iteration and SOAC element: a run stops when it
    /// is set.
    pub(crate) cancel: crate::cancel::Cancel,
    /// The debugger of a debugged run (see [`crate::debug`]).
    pub(crate) debug: Option<crate::debug::Debugging<'p>>,
    /// Whether scalar operators check for new NaNs (a debugged run whose
    /// hook asks for it); off, the fast path of `exec_stm` applies.
    pub(crate) nan_checks: bool,
}

/// One live accumulator of a running `with_acc`: the array it writes into
/// (taken from the consumed input, unshared, updated in place) and how an
/// update combines with a cell. At run time an accumulator *value* is
/// `Value::Prim(PrimValue::I64(k))`, the index of its state in
/// [`Interp::accs`]: updates mutate the state and return the same index, so
/// threading an accumulator through a `map`, a loop or a branch is copying
/// that index. `with_acc` is lexically scoped, so the states form a stack.
pub(crate) struct AccState {
    array: ArrayValue,
    op: AccKind,
}

/// The operator of an accumulator ([`nabla_ir::AccOp`] with the lambda shared).
#[derive(Clone)]
enum AccKind {
    Add,
    Write,
    Lambda(Rc<Lambda>),
}

/// The run-time value of the accumulator with state index `k`.
fn acc_value(k: usize) -> Value {
    Value::Prim(PrimValue::I64(k as i64))
}

impl<'p> Interp<'p> {
    /// A run stopped through [`Interp::cancel`] ends here, at the next loop
    /// iteration or SOAC element.
    #[inline(always)]
    pub(crate) fn check_cancel(&self) -> Res<()> {
        match self.cancel.reason() {
            None => Ok(()),
            Some(r) => err(crate::cancel::stopped_message(r)),
        }
    }

    pub(crate) fn new(prog: &'p Program) -> Interp<'p> {
        let mut frame_size = Vec::with_capacity(prog.functions.len());
        let mut size_binds = Vec::with_capacity(prog.functions.len());
        for f in &prog.functions {
            let mut m = f.var_names.len();
            for p in &f.params {
                max_param(p, &mut m);
            }
            max_body(&f.body, &mut m);
            frame_size.push(m);
            let mut sb = Vec::new();
            for (pi, p) in f.params.iter().enumerate() {
                if let Type::Array(_, dims) = &p.ty {
                    for (di, d) in dims.iter().enumerate() {
                        match d {
                            Dim::Var(v) => sb.push(SizeBind::Var {
                                param: pi,
                                dim: di,
                                var: *v,
                            }),
                            Dim::Const(c) => sb.push(SizeBind::Const {
                                param: pi,
                                dim: di,
                                size: *c,
                            }),
                            Dim::Ext => {}
                        }
                    }
                }
            }
            size_binds.push(sb);
        }
        Interp {
            prog,
            frame_size,
            size_binds,
            depth: 0,
            cur: 0,
            ad: crate::ad::AdState::default(),
            frames: Vec::new(),
            dead_after: Default::default(),
            stats: crate::Stats::default(),
            accs: Vec::new(),
            cancel: crate::cancel::Cancel::new(),
            debug: None,
            nan_checks: false,
        }
    }

    /// Whether variable `v` holds an array whose buffer is shared (an
    /// in-place write would copy it).
    #[inline]
    fn is_shared(&self, s: &[Value], v: Var) -> bool {
        matches!(s.get(v.0 as usize), Some(Value::Array(a)) if !a.buffer.is_unique())
    }

    /// Counts a write into the consumed array `a` (see [`crate::Stats`]):
    /// a copy when the write cannot be in place.
    #[inline]
    fn count_write(&mut self, a: &ArrayValue) {
        self.stats.array_writes += 1;
        if a.offset != 0 || a.buffer.len() != a.num_elems() || !a.buffer.is_unique() {
            self.stats.cow_copies += 1;
        }
    }

    /// Clears the slots of the arrays that are dead once the consuming
    /// statement `stm` runs (see [`crate::live`]), so that they do not
    /// keep its array's buffer shared.
    #[cold]
    #[inline(never)]
    fn release_dead(&mut self, s: &mut [Value], stm: &Stm) {
        if let Some(dead) = self.dead_after.at(self.prog, self.cur, stm) {
            for v in dead.iter() {
                if let Some(x) = s.get_mut(v.0 as usize) {
                    *x = DEAD;
                }
            }
        }
    }

    /// A frame of `n` dead slots (a reused one when available).
    #[inline]
    pub(crate) fn new_frame(&mut self, n: usize) -> Vec<Value> {
        let mut f = self.frames.pop().unwrap_or_default();
        f.resize(n, DEAD);
        f
    }

    /// Empties a frame (dropping its values) and keeps it for reuse.
    #[inline]
    pub(crate) fn free_frame(&mut self, mut f: Vec<Value>) {
        f.clear();
        if self.frames.len() < MAX_FREE_FRAMES {
            self.frames.push(f);
        }
    }

    pub(crate) fn var_name(&self, v: Var) -> String {
        self.prog
            .functions
            .get(self.cur)
            .and_then(|f| f.var_names.get(v.0 as usize))
            .cloned()
            .unwrap_or_else(|| format!("v{}", v.0))
    }

    // ----- slot access ---------------------------------------------------

    #[inline]
    pub(crate) fn slot<'s>(&self, s: &'s [Value], v: Var) -> Res<&'s Value> {
        match s.get(v.0 as usize) {
            Some(x) => Ok(x),
            None => err(format!("internal error: variable {} out of frame", v.0)),
        }
    }

    #[inline(always)]
    pub(crate) fn set(&self, s: &mut [Value], v: Var, x: Value) -> Res<()> {
        match s.get_mut(v.0 as usize) {
            Some(slot) => {
                *slot = x;
                Ok(())
            }
            None => err(format!("internal error: variable {} out of frame", v.0)),
        }
    }

    #[inline(always)]
    pub(crate) fn prim(&self, s: &[Value], a: &Atom) -> Res<PrimValue> {
        match a {
            Atom::Const(c) => Ok(*c),
            Atom::Var(v) => match s.get(v.0 as usize) {
                Some(Value::Prim(p)) => Ok(*p),
                _ => self.not_prim(*v),
            },
        }
    }

    #[cold]
    #[inline(never)]
    fn not_prim(&self, v: Var) -> Res<PrimValue> {
        err(format!(
            "internal error: variable {} is an array or out of frame, expected a scalar",
            self.var_name(v)
        ))
    }

    #[inline]
    pub(crate) fn value(&self, s: &[Value], a: &Atom) -> Res<Value> {
        match a {
            Atom::Const(c) => Ok(Value::Prim(*c)),
            Atom::Var(v) => Ok(self.slot(s, *v)?.clone()),
        }
    }

    pub(crate) fn array<'s>(&self, s: &'s [Value], v: Var) -> Res<&'s ArrayValue> {
        match self.slot(s, v)? {
            Value::Array(a) => Ok(a),
            Value::Prim(_) => err(format!(
                "internal error: variable {} is a scalar (or was consumed), expected an array",
                self.var_name(v)
            )),
        }
    }

    /// Takes a consumed array out of its slot (leaving it dead).
    pub(crate) fn take_array(&self, s: &mut [Value], v: Var) -> Res<ArrayValue> {
        self.array(s, v)?;
        match std::mem::replace(&mut s[v.0 as usize], DEAD) {
            Value::Array(a) => Ok(a),
            Value::Prim(_) => unreachable!("checked above"),
        }
    }

    pub(crate) fn bool(&self, s: &[Value], a: &Atom) -> Res<bool> {
        match self.prim(s, a)? {
            PrimValue::Bool(b) => Ok(b),
            p => err(format!(
                "internal error: condition of type {}, expected bool",
                p.prim_type()
            )),
        }
    }

    /// An integer atom as an `i64` (any integer type).
    pub(crate) fn int(&self, s: &[Value], a: &Atom) -> Res<i64> {
        let p = self.prim(s, a)?;
        match int_of(p) {
            Some(x) => Ok(x.clamp(i64::MIN as i128, i64::MAX as i128) as i64),
            None => err(format!(
                "internal error: expected an integer, got a {}",
                p.prim_type()
            )),
        }
    }

    /// A size (non-negative integer atom).
    pub(crate) fn size(&self, s: &[Value], a: &Atom, what: &str) -> Res<usize> {
        let n = self.int(s, a)?;
        if n < 0 {
            return err(format!("{what}: negative size {n}"));
        }
        Ok(n as usize)
    }

    #[inline(always)]
    pub(crate) fn bind1(&self, s: &mut [Value], pat: &[Param], x: Value) -> Res<()> {
        match pat {
            [p] => self.set(s, p.var, x),
            _ => err(format!(
                "internal error: expression returns 1 value, pattern binds {}",
                pat.len()
            )),
        }
    }

    pub(crate) fn bind_all(&self, s: &mut [Value], pat: &[Param], xs: Vec<Value>) -> Res<()> {
        if pat.len() != xs.len() {
            return err(format!(
                "internal error: expression returns {} values, pattern binds {}",
                xs.len(),
                pat.len()
            ));
        }
        for (p, x) in pat.iter().zip(xs) {
            self.set(s, p.var, x)?;
        }
        Ok(())
    }

    /// Value of a type's dimension if it can be known here (0 otherwise).
    pub(crate) fn dim(&self, s: &[Value], d: &Dim) -> i64 {
        match d {
            Dim::Const(c) => *c,
            Dim::Var(v) => match s.get(v.0 as usize) {
                Some(Value::Prim(p)) => int_of(*p).map_or(0, |x| x as i64),
                _ => 0,
            },
            Dim::Ext => 0,
        }
    }

    /// The shape of a type (dimension values from the frame; see [`Interp::dim`]).
    pub(crate) fn type_shape(&self, s: &[Value], t: &Type) -> Vec<i64> {
        match t {
            Type::Prim(_) | Type::Acc(..) => vec![],
            Type::Array(_, ds) => ds.iter().map(|d| self.dim(s, d).max(0)).collect(),
        }
    }

    // ----- calls ---------------------------------------------------------

    /// Calls function `f` on `args`. `entry` selects the wording of size errors.
    pub(crate) fn call(&mut self, f: FunId, args: Vec<Value>, entry: bool) -> Res<Vec<Value>> {
        let prog = self.prog;
        let fi = f.0 as usize;
        let Some(fun) = prog.functions.get(fi) else {
            return err(format!("internal error: call of unknown function #{}", f.0));
        };
        if args.len() != fun.params.len() {
            return err(format!(
                "internal error: function {} called with {} arguments, takes {}",
                fun.name,
                args.len(),
                fun.params.len()
            ));
        }
        if self.depth >= MAX_CALL_DEPTH {
            return err(format!(
                "call depth limit ({MAX_CALL_DEPTH}) exceeded in function {} (unbounded recursion?)",
                fun.name
            ));
        }
        let mut slots = self.new_frame(self.frame_size[fi]);
        for (p, a) in fun.params.iter().zip(args) {
            self.set(&mut slots, p.var, a)?;
        }
        let saved = self.cur;
        self.cur = fi;
        self.depth += 1;
        let r = self.bind_sizes(fi, &mut slots, entry).and_then(|()| {
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                self.exec_body(&mut slots, &fun.body)
            })
        });
        self.depth -= 1;
        let r = r.and_then(|()| {
            fun.body
                .result
                .iter()
                .map(|a| self.value(&slots, a))
                .collect::<Res<Vec<Value>>>()
        });
        self.cur = saved;
        self.free_frame(slots);
        r.map_err(|mut e| {
            if e.span.is_none() {
                e.span = Some(fun.span);
            }
            e
        })
    }

    /// Binds the size variables of the parameters' types of function `fi` (or
    /// checks them when already bound: explicit size parameters, repeated sizes,
    /// constant sizes).
    pub(crate) fn bind_sizes(&self, fi: usize, s: &mut [Value], entry: bool) -> Res<()> {
        let fun = &self.prog.functions[fi];
        for sb in &self.size_binds[fi] {
            let (param, dim) = match *sb {
                SizeBind::Var { param, dim, .. } | SizeBind::Const { param, dim, .. } => {
                    (param, dim)
                }
            };
            let p = &fun.params[param];
            let actual = match self.slot(s, p.var)? {
                Value::Array(a) if dim < a.rank() => a.shape()[dim],
                v => {
                    return err(format!(
                        "{} {}: argument {} has rank {}, expected {}",
                        if entry { "entry point" } else { "function" },
                        fun.name,
                        param + 1,
                        v.rank(),
                        p.ty.rank()
                    ))
                }
            };
            let expected = match *sb {
                SizeBind::Const { size, .. } => Some(size),
                SizeBind::Var { var, .. } => match self.slot(s, var)? {
                    Value::Prim(PrimValue::I64(x)) => Some(*x),
                    _ => {
                        self.set(s, var, Value::Prim(PrimValue::I64(actual)))?;
                        None
                    }
                },
            };
            if let Some(e) = expected {
                if e != actual {
                    return err(format!(
                        "{} {}: argument {} has size {} in dimension {}, but size {} was expected",
                        if entry { "entry point" } else { "function" },
                        fun.name,
                        param + 1,
                        actual,
                        dim + 1,
                        e
                    ));
                }
            }
        }
        Ok(())
    }

    // ----- bodies and statements -------------------------------------------

    pub(crate) fn exec_body(&mut self, s: &mut [Value], body: &Body) -> Res<()> {
        for stm in &body.stms {
            self.exec_stm(s, stm)?;
        }
        Ok(())
    }

    /// Reads a body's results after executing it; arrays bound at the body's
    /// top level are moved out of their slots (they are dead afterwards).
    fn body_results(&self, s: &mut [Value], body: &Body, out: &mut Vec<Value>) -> Res<()> {
        for (i, a) in body.result.iter().enumerate() {
            let x = match a {
                Atom::Const(c) => Value::Prim(*c),
                Atom::Var(v) => {
                    let cur = self.slot(s, *v)?;
                    if matches!(cur, Value::Array(_))
                        && !body.result[i + 1..].contains(a)
                        && body
                            .stms
                            .iter()
                            .any(|st| st.pat.iter().any(|p| p.var == *v))
                    {
                        std::mem::replace(&mut s[v.0 as usize], DEAD)
                    } else {
                        cur.clone()
                    }
                }
            };
            out.push(x);
        }
        Ok(())
    }

    /// The single result of a body (see [`Interp::body_results`]).
    #[inline]
    fn result1(&self, s: &mut [Value], body: &Body) -> Res<Value> {
        match body.result.first() {
            Some(Atom::Const(c)) => Ok(Value::Prim(*c)),
            Some(Atom::Var(v)) => {
                let cur = self.slot(s, *v)?;
                if matches!(cur, Value::Array(_))
                    && body
                        .stms
                        .iter()
                        .any(|st| st.pat.iter().any(|p| p.var == *v))
                {
                    Ok(std::mem::replace(&mut s[v.0 as usize], DEAD))
                } else {
                    Ok(cur.clone())
                }
            }
            None => err("internal error: body without results"),
        }
    }

    #[inline(always)]
    pub(crate) fn exec_stm(&mut self, s: &mut [Value], stm: &Stm) -> Res<()> {
        // Fast path: arithmetic and comparisons on the common scalar types,
        // computed and stored without intermediate `Result`s. Everything else
        // (and every case this does not cover) goes through `exec_exp`.
        if let ([p], Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b)) = (stm.pat.as_slice(), &stm.exp) {
            if self.nan_checks {
                // Checked in `exec_exp`.
            } else if let (Some(x), Some(y)) = (peek_prim(s, a), peek_prim(s, b)) {
                let r = match &stm.exp {
                    Exp::BinOp(op, ..) => scalar::fast_binop(*op, x, y),
                    Exp::CmpOp(op, ..) => scalar::fast_cmpop(*op, x, y),
                    _ => None,
                };
                if let (Some(r), Some(slot)) = (r, s.get_mut(p.var.0 as usize)) {
                    *slot = Value::Prim(r);
                    return Ok(());
                }
            }
        }
        match self.exec_exp(s, stm) {
            Ok(()) => Ok(()),
            Err(mut e) => {
                if e.span.is_none() {
                    e.span = Some(stm.span);
                }
                Err(e)
            }
        }
    }

    fn exec_exp(&mut self, s: &mut [Value], stm: &Stm) -> Res<()> {
        let pat = &stm.pat;
        match &stm.exp {
            Exp::WithAcc { inputs, lam } => {
                if inputs.iter().any(|i| self.is_shared(s, i.array)) {
                    self.release_dead(s, stm);
                }
                stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                    self.exec_with_acc(s, pat, inputs, lam)
                })
            }
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => {
                let k = self.acc_id(s, *acc)?;
                self.update_acc(s, k, indices, value)?;
                self.bind1(s, pat, acc_value(k))
            }
            Exp::BinOp(op, a, b) => {
                let (x, y) = (self.prim(s, a)?, self.prim(s, b)?);
                let r = scalar::binop(*op, x, y).or_else(err)?;
                if self.nan_checks {
                    self.check_new_nan(s, stm, &[x, y], r);
                }
                self.bind1(s, pat, Value::Prim(r))
            }
            Exp::CmpOp(op, a, b) => {
                let (x, y) = (self.prim(s, a)?, self.prim(s, b)?);
                let r = scalar::cmpop(*op, x, y).or_else(err)?;
                self.bind1(s, pat, Value::Prim(r))
            }
            Exp::UnOp(op, a) => {
                let x = self.prim(s, a)?;
                let r = scalar::unop(*op, x).or_else(err)?;
                if self.nan_checks {
                    self.check_new_nan(s, stm, &[x], r);
                }
                self.bind1(s, pat, Value::Prim(r))
            }
            Exp::TernOp(op, a, b, c) => {
                let (x, y, z) = (self.prim(s, a)?, self.prim(s, b)?, self.prim(s, c)?);
                let r = scalar::ternop(*op, x, y, z).or_else(err)?;
                if self.nan_checks {
                    self.check_new_nan(s, stm, &[x, y, z], r);
                }
                self.bind1(s, pat, Value::Prim(r))
            }
            Exp::Conv(op, a) => {
                let x = self.prim(s, a)?;
                let r = scalar::conv(*op, x).or_else(err)?;
                if self.nan_checks {
                    self.check_new_nan(s, stm, &[x], r);
                }
                self.bind1(s, pat, Value::Prim(r))
            }
            Exp::Atoms(atoms) => {
                if atoms.len() == 1 {
                    let x = self.value(s, &atoms[0])?;
                    self.bind1(s, pat, x)?;
                } else {
                    let xs = atoms
                        .iter()
                        .map(|a| self.value(s, a))
                        .collect::<Res<Vec<_>>>()?;
                    self.bind_all(s, pat, xs)?;
                }
                if self.debug.is_some() {
                    self.possible_breakpoint(s, stm)?;
                }
                Ok(())
            }
            Exp::Apply(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.value(s, a))
                    .collect::<Res<Vec<_>>>()?;
                let rs = if self.debug.is_some() {
                    self.call_debugged(*f, xs, stm.span)?
                } else {
                    self.call(*f, xs, false)?
                };
                self.bind_all(s, pat, rs)
            }
            Exp::If { cond, then_, else_ } => {
                let body = if self.bool(s, cond)? { then_ } else { else_ };
                stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.exec_body(s, body))?;
                if pat.len() == 1 && body.result.len() == 1 {
                    let x = self.result1(s, body)?;
                    return self.set(s, pat[0].var, x);
                }
                let mut xs = Vec::with_capacity(body.result.len());
                self.body_results(s, body, &mut xs)?;
                self.bind_all(s, pat, xs)
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                self.exec_loop(s, pat, params, init, form, body)
            }),
            Exp::Index(v, idx) => {
                let x = self.index(s, *v, idx)?;
                self.bind1(s, pat, x)
            }
            Exp::Update(v, idx, x) => {
                let x = self.value(s, x)?;
                if self.is_shared(s, *v) {
                    self.release_dead(s, stm);
                }
                if let Some(Value::Array(a)) = s.get(v.0 as usize) {
                    self.count_write(a);
                }
                let a = self.update(s, *v, idx, x)?;
                self.bind1(s, pat, Value::Array(a))
            }
            Exp::ArrayLit(atoms, row_ty) => {
                let x = self.array_lit(s, atoms, row_ty)?;
                self.bind1(s, pat, Value::Array(x))
            }
            Exp::Iota { .. }
            | Exp::Replicate(..)
            | Exp::Copy(_)
            | Exp::Size(..)
            | Exp::Reshape(..)
            | Exp::Rearrange(..)
            | Exp::Concat(_)
            | Exp::Rotate(..)
            | Exp::Reverse(_) => self.exec_array_exp(s, stm),
            Exp::AssertEqSizes(atoms, msg) => {
                let ns = atoms
                    .iter()
                    .map(|a| self.int(s, a))
                    .collect::<Res<Vec<_>>>()?;
                check_eq_sizes(&ns, msg)
            }
            Exp::Assert(c, msg, xs) => {
                let ok = self.bool(s, c)?;
                if ok || xs.is_empty() {
                    check_assert(ok, msg)
                } else {
                    let vals = xs
                        .iter()
                        .map(|x| self.prim(s, x))
                        .collect::<Res<Vec<_>>>()?;
                    check_assert(false, &fill_message(msg, &vals))
                }
            }
            Exp::Soac(soac) => {
                if let Soac::Hist { dest, .. } | Soac::Scatter { dest, .. } = soac {
                    if dest.iter().any(|d| self.is_shared(s, *d)) {
                        self.release_dead(s, stm);
                    }
                }
                let r =
                    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.exec_soac(s, pat, soac));
                // Drop the row views the lambda parameters still hold, so that
                // a later in-place update of an input array need not copy it.
                for p in soac_lambda_params(soac) {
                    if let Some(slot) = s.get_mut(p.var.0 as usize) {
                        *slot = DEAD;
                    }
                }
                r
            }
            Exp::Jvp { .. } | Exp::Vjp { .. } => self.exec_ad_stm(s, stm),
            // Outside reverse-mode AD a custom derivative is its function.
            Exp::WithVjp { lam, args, .. } => {
                for (p, a) in lam.params.iter().zip(args) {
                    let x = self.value(s, a)?;
                    self.set(s, p.var, x)?;
                }
                stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.exec_body(s, &lam.body))?;
                let mut xs = Vec::with_capacity(lam.body.result.len());
                self.body_results(s, &lam.body, &mut xs)?;
                self.bind_all(s, pat, xs)
            }
        }
    }

    /// [`Self::exec_exp`] of an array construct: `iota`, `replicate`, `copy`,
    /// `size`, and the shape changes (`reshape`, `rearrange`, `concat`,
    /// `rotate`, `reverse`).
    fn exec_array_exp(&mut self, s: &mut [Value], stm: &Stm) -> Res<()> {
        let pat = &stm.pat;
        match &stm.exp {
            Exp::Iota { n, start, step, ty } => {
                let n0 = self.int(s, n)?;
                let (st, sp) = (self.prim(s, start)?, self.prim(s, step)?);
                let (Some(st), Some(sp)) = (int_of(st), int_of(sp)) else {
                    return err("internal error: iota with non-integer start or step");
                };
                if n0 < 0 {
                    // `iota n` is Futhark's range 0..1..<n.
                    return err(format!("Range {st}..{}..<{n0} is invalid.", st + sp));
                }
                let Some(buf) = alloc_res(array::iota(*ty, n0 as usize, st, sp))? else {
                    return err(format!("internal error: iota of non-integer type {ty}"));
                };
                self.bind1(
                    s,
                    pat,
                    Value::Array(ArrayValue {
                        shape: Rc::from([n0]),
                        offset: 0,
                        buffer: buf,
                    }),
                )
            }
            Exp::Replicate(n, x) => {
                let n0 = self.int(s, n)?;
                if n0 < 0 {
                    return err(format!("replicate: negative size {n0}"));
                }
                let x = self.value(s, x)?;
                let mut shape = vec![n0];
                shape.extend_from_slice(x.shape());
                alloc_res(crate::alloc::checked_elems(
                    &shape,
                    crate::alloc::elem_bytes(x.elem_type()),
                    "the result of replicate",
                ))?;
                let buffer = alloc_res(array::replicate_buffer(n0 as usize, &x))?;
                self.bind1(
                    s,
                    pat,
                    Value::Array(ArrayValue {
                        shape: shape.into(),
                        offset: 0,
                        buffer,
                    }),
                )
            }
            Exp::Copy(v) => {
                let x = match self.slot(s, *v)? {
                    Value::Array(a) => Value::Array(alloc_res(array::copy_array(a))?),
                    p => p.clone(),
                };
                self.bind1(s, pat, x)
            }
            Exp::Size(v, d) => {
                let a = self.array(s, *v)?;
                let Some(&n) = a.shape().get(*d) else {
                    return err(format!(
                        "internal error: size of dimension {d} of an array of rank {}",
                        a.rank()
                    ));
                };
                self.bind1(s, pat, Value::Prim(PrimValue::I64(n)))
            }
            Exp::Reshape(dims, v) => {
                let shape = dims
                    .iter()
                    .map(|d| self.int(s, d))
                    .collect::<Res<Vec<i64>>>()?;
                let a = self.array(s, *v)?;
                let ok = shape_elems(&shape) == Some(a.num_elems()) && !shape.is_empty();
                if !ok {
                    return err(format!(
                        "size error: cannot reshape an array of shape {} to shape {}",
                        array::show_shape(a.shape()),
                        array::show_shape(&shape)
                    ));
                }
                let r = ArrayValue {
                    shape: shape.into(),
                    offset: a.offset,
                    buffer: a.buffer.clone(),
                };
                self.bind1(s, pat, Value::Array(r))
            }
            Exp::Rearrange(perm, v) => {
                let a = self.array(s, *v)?;
                let mut seen = vec![false; a.rank()];
                let valid = perm.len() == a.rank()
                    && perm
                        .iter()
                        .all(|&p| p < seen.len() && !std::mem::replace(&mut seen[p], true));
                if !valid {
                    return err(format!(
                        "internal error: invalid permutation {perm:?} for an array of rank {}",
                        a.rank()
                    ));
                }
                let r = if perm.iter().enumerate().all(|(i, &p)| i == p) {
                    a.clone()
                } else {
                    array::rearrange(a, perm)
                };
                self.bind1(s, pat, Value::Array(r))
            }
            Exp::Concat(vs) => {
                let arrs = vs
                    .iter()
                    .map(|v| self.array(s, *v))
                    .collect::<Res<Vec<_>>>()?;
                let Some(first) = arrs.first() else {
                    return err("internal error: concatenation of no arrays");
                };
                let t = first.elem_type();
                if first.rank() == 0 {
                    return err("internal error: concatenation of rank-0 arrays");
                }
                let row = &first.shape()[1..];
                let mut n: i64 = 0;
                for a in &arrs {
                    if a.elem_type() != t || a.rank() != first.rank() {
                        return err("internal error: concatenation of arrays of different types");
                    }
                    if &a.shape()[1..] != row {
                        return err(format!(
                            "size error: cannot concatenate arrays of shapes {} and {}",
                            array::show_shape(first.shape()),
                            array::show_shape(a.shape())
                        ));
                    }
                    n += a.shape()[0];
                }
                let Some(buffer) = alloc_res(array::concat_buffers(t, &arrs))? else {
                    return err("internal error: concatenation of arrays of different types");
                };
                let mut shape = vec![n];
                shape.extend_from_slice(row);
                self.bind1(
                    s,
                    pat,
                    Value::Array(ArrayValue {
                        shape: shape.into(),
                        offset: 0,
                        buffer,
                    }),
                )
            }
            Exp::Rotate(r, v) => {
                let r = self.int(s, r)?;
                let a = self.array(s, *v)?;
                let n = a.len() as i64;
                let r = if n == 0 { 0 } else { r.rem_euclid(n) as usize };
                let n = n as usize;
                let x = if r == 0 {
                    a.clone()
                } else {
                    array::permute_rows(a, |i| (i + r) % n)
                };
                self.bind1(s, pat, Value::Array(x))
            }
            Exp::Reverse(v) => {
                let a = self.array(s, *v)?;
                let n = a.len();
                let x = array::permute_rows(a, |i| n - 1 - i);
                self.bind1(s, pat, Value::Array(x))
            }
            _ => unreachable!("exec_exp passes only array constructs to exec_array_exp"),
        }
    }

    fn exec_loop(
        &mut self,
        s: &mut [Value],
        pat: &[Param],
        params: &[Param],
        init: &[Atom],
        form: &LoopForm,
        body: &Body,
    ) -> Res<()> {
        if init.len() != params.len() || body.result.len() != params.len() {
            return err(
                "internal error: loop parameters, initial values and body results differ in number",
            );
        }
        let mut tmp = Vec::with_capacity(params.len());
        for a in init {
            tmp.push(self.value(s, a)?);
        }
        for (p, x) in params.iter().zip(tmp.drain(..)) {
            self.set(s, p.var, x)?;
        }
        match form {
            LoopForm::For { i, bound } => {
                let b = self.prim(s, bound)?;
                let t = b.prim_type();
                let Some(n) = int_of(b) else {
                    return err("internal error: loop bound is not an integer");
                };
                let mut j: i128 = 0;
                while j < n {
                    self.check_cancel()?;
                    let iv = int_to(t, j).unwrap_or(PrimValue::I64(j as i64));
                    self.set(s, *i, Value::Prim(iv))?;
                    self.exec_body(s, body)?;
                    if params.len() == 1 {
                        // Common case: no temporary vector.
                        let x = self.result1(s, body)?;
                        self.set(s, params[0].var, x)?;
                    } else {
                        self.body_results(s, body, &mut tmp)?;
                        for (p, x) in params.iter().zip(tmp.drain(..)) {
                            self.set(s, p.var, x)?;
                        }
                    }
                    j += 1;
                }
            }
            LoopForm::While { cond } => loop {
                self.check_cancel()?;
                self.exec_body(s, cond)?;
                let c = match cond.result.as_slice() {
                    [a] => self.bool(s, a)?,
                    _ => return err("internal error: while condition must return one bool"),
                };
                if !c {
                    break;
                }
                self.exec_body(s, body)?;
                self.body_results(s, body, &mut tmp)?;
                for (p, x) in params.iter().zip(tmp.drain(..)) {
                    self.set(s, p.var, x)?;
                }
            },
        }
        if pat.len() != params.len() {
            return err("internal error: loop pattern and parameters differ in number");
        }
        for (p, q) in pat.iter().zip(params) {
            let x = match s.get_mut(q.var.0 as usize) {
                Some(slot) => std::mem::replace(slot, DEAD),
                None => return err("internal error: loop parameter out of frame"),
            };
            self.set(s, p.var, x)?;
        }
        Ok(())
    }

    // ----- accumulators ----------------------------------------------------

    /// The state index of the accumulator held by `v`.
    fn acc_id(&self, s: &[Value], v: Var) -> Res<usize> {
        match self.slot(s, v)? {
            Value::Prim(PrimValue::I64(k)) if *k >= 0 && (*k as usize) < self.accs.len() => {
                Ok(*k as usize)
            }
            _ => err(format!(
                "internal error: variable {} does not hold a live accumulator",
                self.var_name(v)
            )),
        }
    }

    /// `with_acc`: takes each input array (consumed) as the state of a new
    /// accumulator, runs the lambda on their indices, then binds the final
    /// arrays followed by the lambda's other results. The states are popped
    /// whether the lambda succeeds or fails.
    fn exec_with_acc(
        &mut self,
        s: &mut [Value],
        pat: &[Param],
        inputs: &[AccInput],
        lam: &Lambda,
    ) -> Res<()> {
        let n = inputs.len();
        if lam.params.len() != n || lam.body.result.len() < n {
            return err(format!(
                "internal error: with_acc of {n} arrays with a lambda of {} parameters and {} results",
                lam.params.len(),
                lam.body.result.len()
            ));
        }
        let base = self.accs.len();
        let r = self.with_acc_run(s, pat, inputs, lam, base);
        self.accs.truncate(base);
        r
    }

    fn with_acc_run(
        &mut self,
        s: &mut [Value],
        pat: &[Param],
        inputs: &[AccInput],
        lam: &Lambda,
        base: usize,
    ) -> Res<()> {
        for (input, p) in inputs.iter().zip(&lam.params) {
            let mut array = self.take_array(s, input.array)?;
            if array.rank() == 0 {
                return err("internal error: with_acc of a rank-0 array");
            }
            materialize(&mut array)?;
            let op = match &input.op {
                AccOp::Add => AccKind::Add,
                AccOp::Write => AccKind::Write,
                AccOp::Lambda(l, _) => {
                    if l.params.len() != 2 || l.body.result.len() != 1 {
                        return err(
                            "internal error: with_acc operator must take two values and return one",
                        );
                    }
                    AccKind::Lambda(Rc::new((**l).clone()))
                }
            };
            let k = self.accs.len();
            self.accs.push(AccState { array, op });
            self.set(s, p.var, acc_value(k))?;
        }
        self.exec_body(s, &lam.body)?;
        let n = inputs.len();
        let mut states: Vec<Option<AccState>> = self.accs.drain(base..).map(Some).collect();
        let mut xs = Vec::with_capacity(lam.body.result.len());
        for a in &lam.body.result[..n] {
            let k = match a {
                Atom::Var(v) => match self.slot(s, *v)? {
                    Value::Prim(PrimValue::I64(k)) if *k >= base as i64 => Some(*k as usize - base),
                    _ => None,
                },
                Atom::Const(_) => None,
            };
            match k.and_then(|k| states.get_mut(k)).and_then(Option::take) {
                Some(st) => xs.push(Value::Array(st.array)),
                None => {
                    return err(
                        "internal error: with_acc lambda does not return its own accumulators",
                    )
                }
            }
        }
        for a in &lam.body.result[n..] {
            xs.push(self.value(s, a)?);
        }
        self.bind_all(s, pat, xs)
    }

    /// `update_acc`: combines `value` into the cell (or row) of accumulator
    /// `k` at `indices` with its operator, in place; out-of-bounds indices
    /// make it do nothing.
    fn update_acc(&mut self, s: &mut [Value], k: usize, indices: &[Atom], value: &Atom) -> Res<()> {
        let x = self.value(s, value)?;
        let Some(st) = self.accs.get(k) else {
            return err("internal error: update of a dead accumulator");
        };
        let shape = st.array.shape();
        if indices.len() > shape.len() {
            return err(format!(
                "internal error: update_acc with {} indices into an accumulator of rank {}",
                indices.len(),
                shape.len()
            ));
        }
        let mut pos = 0usize;
        for (a, &d) in indices.iter().zip(shape) {
            let i = self.int(s, a)?;
            if i < 0 || i >= d {
                return Ok(());
            }
            pos = pos * d as usize + i as usize;
        }
        let cell = &shape[indices.len()..];
        if x.shape() != cell {
            return err(format!(
                "size error: update_acc: a value of shape {} does not fit a cell of shape {}",
                array::show_shape(x.shape()),
                array::show_shape(cell)
            ));
        }
        let len = shape_elems(cell).unwrap_or(0);
        let start = pos * len;
        let op = st.op.clone();
        match op {
            AccKind::Write => {
                let reg = Region::Contiguous { start, len };
                if !array::write_region(&mut self.accs[k].array, &reg, &x) {
                    return err("internal error: update_acc with a value of another element type");
                }
            }
            AccKind::Add => {
                for e in 0..len {
                    let y = match &x {
                        Value::Prim(p) => *p,
                        Value::Array(a) => array::get_prim(&a.buffer, a.offset + e),
                    };
                    let dst = &mut self.accs[k].array;
                    let old = array::get_prim(&dst.buffer, dst.offset + start + e);
                    let r = scalar::binop(nabla_prim::BinOp::Add, old, y).or_else(err)?;
                    self.write_cell(k, start + e, r)?;
                }
            }
            AccKind::Lambda(l) => {
                for e in 0..len {
                    let y = match &x {
                        Value::Prim(p) => *p,
                        Value::Array(a) => array::get_prim(&a.buffer, a.offset + e),
                    };
                    let dst = &self.accs[k].array;
                    let old = array::get_prim(&dst.buffer, dst.offset + start + e);
                    self.set(s, l.params[0].var, Value::Prim(old))?;
                    self.set(s, l.params[1].var, Value::Prim(y))?;
                    self.exec_body(s, &l.body)?;
                    let r = self.prim(s, &l.body.result[0])?;
                    if k >= self.accs.len() {
                        return err("internal error: accumulator operator ended its accumulator");
                    }
                    self.write_cell(k, start + e, r)?;
                }
            }
        }
        Ok(())
    }

    /// Writes one element of accumulator `k`'s array (in place: the array
    /// is unshared since `with_acc` took it).
    #[inline]
    fn write_cell(&mut self, k: usize, at: usize, x: PrimValue) -> Res<()> {
        let reg = Region::Contiguous { start: at, len: 1 };
        if !array::write_region(&mut self.accs[k].array, &reg, &Value::Prim(x)) {
            return err("internal error: accumulator operator changes the element type");
        }
        Ok(())
    }

    /// `map` with accumulators among its inputs: each accumulator is passed
    /// whole to every iteration (not indexed) and threaded through them in
    /// order; the `i`-th accumulator result of the lambda is the next value
    /// of the `i`-th accumulator input, and the map binds its final value.
    fn exec_map_acc(
        &mut self,
        s: &mut [Value],
        pat: &[Param],
        w: usize,
        lam: &Lambda,
        arrs: &[Var],
    ) -> Res<()> {
        if lam.params.len() != arrs.len() || lam.body.result.len() != lam.ret.len() {
            return err("internal error: map lambda arity differs from its inputs or results");
        }
        let mut rows = Vec::new();
        let mut cur = Vec::new();
        for (p, v) in lam.params.iter().zip(arrs) {
            if p.ty.is_acc() {
                let k = self.acc_id(s, *v)?;
                cur.push(acc_value(k));
            } else {
                rows.push(
                    self.soac_inputs(s, std::slice::from_ref(v), w, "map")?
                        .remove(0),
                );
            }
        }
        let n_acc_res = lam.ret.iter().filter(|t| t.is_acc()).count();
        if n_acc_res != cur.len() {
            return err("internal error: map with accumulators returns a different number of them");
        }
        let mut outs: Vec<Option<Collector>> = lam
            .ret
            .iter()
            .map(|t| (!t.is_acc()).then(|| Collector::try_new(t, w)).transpose())
            .collect::<Res<_>>()?;
        for j in 0..w {
            self.check_cancel()?;
            let (mut ai, mut ri) = (0, 0);
            for p in &lam.params {
                let x = if p.ty.is_acc() {
                    ai += 1;
                    cur[ai - 1].clone()
                } else {
                    ri += 1;
                    rows[ri - 1].row(j)
                };
                self.set(s, p.var, x)?;
            }
            self.exec_body(s, &lam.body)?;
            let mut ai = 0;
            for (c, a) in outs.iter_mut().zip(&lam.body.result) {
                let x = self.value(s, a)?;
                match c {
                    Some(c) => c.push(&x)?,
                    None => {
                        cur[ai] = x;
                        ai += 1;
                    }
                }
            }
        }
        let mut cur = cur.into_iter();
        let mut xs = Vec::with_capacity(outs.len());
        for (c, t) in outs.into_iter().zip(&lam.ret) {
            xs.push(match c {
                Some(c) => Value::Array(c.finish(w, &self.type_shape(s, t))),
                None => cur.next().unwrap_or(DEAD),
            });
        }
        self.bind_all(s, pat, xs)
    }

    // ----- indexing --------------------------------------------------------

    pub(crate) fn resolve_indices(&self, s: &[Value], idx: &[DimIndex]) -> Res<Vec<Ix>> {
        idx.iter()
            .map(|d| match d {
                DimIndex::Fix(a) => Ok(Ix::Fix(self.int(s, a)?)),
                DimIndex::Slice { start, len, stride } => Ok(Ix::Slice {
                    start: self.int(s, start)?,
                    len: self.int(s, len)?,
                    stride: self.int(s, stride)?,
                }),
            })
            .collect()
    }

    fn index(&self, s: &[Value], v: Var, idx: &[DimIndex]) -> Res<Value> {
        let a = match self.slot(s, v)? {
            Value::Array(a) => a,
            p if idx.is_empty() => return Ok(p.clone()),
            _ => return self.array(s, v).map(|_| DEAD),
        };
        // Fast path: a[i] on a one-dimensional array.
        if let ([DimIndex::Fix(i)], 1) = (idx, a.rank()) {
            let i = self.int(s, i)?;
            if i < 0 || i >= a.shape()[0] {
                return err(format!(
                    "Index [{i}] out of bounds for array of shape {}.",
                    array::show_shape(a.shape())
                ));
            }
            return Ok(Value::Prim(array::get_prim(
                &a.buffer,
                a.offset + i as usize,
            )));
        }
        let ix = self.resolve_indices(s, idx)?;
        let (shape, reg) = array::region(a.shape(), &ix).or_else(err)?;
        Ok(array::select(a, shape, reg))
    }

    fn update(&self, s: &mut [Value], v: Var, idx: &[DimIndex], x: Value) -> Res<ArrayValue> {
        let ix = self.resolve_indices(s, idx)?;
        let mut a = self.take_array(s, v)?;
        let (shape, reg) = array::region(a.shape(), &ix).or_else(err)?;
        if x.shape() != shape.as_slice() {
            return err(format!(
                "size error: cannot write a value of shape {} into a slice of shape {}",
                array::show_shape(x.shape()),
                array::show_shape(&shape)
            ));
        }
        if !array::write_region(&mut a, &reg, &x) {
            return err(format!(
                "internal error: cannot write a {} value into a {} array",
                x.elem_type(),
                a.elem_type()
            ));
        }
        Ok(a)
    }

    fn array_lit(&self, s: &[Value], atoms: &[Atom], row_ty: &Type) -> Res<ArrayValue> {
        let t = row_ty.elem();
        if atoms.is_empty() {
            let mut shape = vec![0];
            shape.extend(self.type_shape(s, row_ty));
            return Ok(ArrayValue::zeros(t, &shape));
        }
        let rows = atoms
            .iter()
            .map(|a| self.value(s, a))
            .collect::<Res<Vec<_>>>()?;
        let row_shape = rows[0].shape().to_vec();
        let mut b = alloc_res(Builder::try_new(
            t,
            rows.len() * shape_elems(&row_shape).unwrap_or(0),
            "an array literal",
        ))?;
        for r in &rows {
            if r.shape() != row_shape.as_slice() {
                return err(format!(
                    "size error: array literal with rows of shapes {} and {}",
                    array::show_shape(&row_shape),
                    array::show_shape(r.shape())
                ));
            }
            if !b.push_value(r) {
                return err(format!(
                    "internal error: array literal of {t} with a {} element",
                    r.elem_type()
                ));
            }
        }
        let mut shape = vec![rows.len() as i64];
        shape.extend_from_slice(&row_shape);
        Ok(ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: b.finish(),
        })
    }

    // ----- SOACs -----------------------------------------------------------

    /// The common start of `reduce` and `scan`: the width, the input rows
    /// (checked against it), the operator's arity check, and the accumulator
    /// initialised to the neutral element.
    fn operator_setup(
        &self,
        s: &[Value],
        w: &Atom,
        lam: &Lambda,
        neutral: &[Atom],
        arrs: &[Var],
        what: &str,
    ) -> Res<(usize, Vec<Rows>, Vec<Value>)> {
        let w = self.size(s, w, what)?;
        let inputs = self.soac_inputs(s, arrs, w, what)?;
        self.check_op_lambda(lam, neutral.len(), inputs.len(), what)?;
        let acc = neutral
            .iter()
            .map(|a| self.value(s, a))
            .collect::<Res<Vec<_>>>()?;
        Ok((w, inputs, acc))
    }

    /// The input arrays of a SOAC, checked to have outer size `w`.
    fn soac_inputs(&self, s: &[Value], arrs: &[Var], w: usize, what: &str) -> Res<Vec<Rows>> {
        arrs.iter()
            .map(|v| {
                let a = self.array(s, *v)?;
                if a.len() != w || a.rank() == 0 {
                    return err(format!(
                        "size error: {what}: input array {} has outer size {}, but the width is {w}",
                        self.var_name(*v),
                        a.shape().first().copied().unwrap_or(0)
                    ));
                }
                Ok(Rows::new(a.clone()))
            })
            .collect()
    }

    fn exec_soac(&mut self, s: &mut [Value], pat: &[Param], soac: &Soac) -> Res<()> {
        match soac {
            Soac::Map { w, lam, arrs } => {
                let w = self.size(s, w, "map")?;
                if lam.params.iter().any(|p| p.ty.is_acc()) {
                    return self.exec_map_acc(s, pat, w, lam, arrs);
                }
                let inputs = self.soac_inputs(s, arrs, w, "map")?;
                if lam.params.len() != inputs.len() {
                    return err(
                        "internal error: map lambda arity differs from the number of arrays",
                    );
                }
                let mut outs: Vec<Collector> = lam
                    .ret
                    .iter()
                    .map(|t| Collector::try_new(t, w))
                    .collect::<Res<_>>()?;
                if lam.body.result.len() != outs.len() {
                    return err("internal error: map lambda returns a different number of values than declared");
                }
                for j in 0..w {
                    self.check_cancel()?;
                    for (p, r) in lam.params.iter().zip(&inputs) {
                        self.set(s, p.var, r.row(j))?;
                    }
                    self.exec_body(s, &lam.body)?;
                    for (c, a) in outs.iter_mut().zip(&lam.body.result) {
                        match a {
                            Atom::Const(k) => c.push(&Value::Prim(*k))?,
                            Atom::Var(v) => c.push(self.slot(s, *v)?)?,
                        }
                    }
                }
                let xs = outs
                    .into_iter()
                    .zip(&lam.ret)
                    .map(|(c, t)| Value::Array(c.finish(w, &self.type_shape(s, t))))
                    .collect();
                self.bind_all(s, pat, xs)
            }
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            } => {
                let (w, inputs, mut acc) =
                    self.operator_setup(s, w, lam, neutral, arrs, "reduce")?;
                if let Some(fast) = simple_binop(lam).filter(|_| !self.nan_checks) {
                    if let ([Value::Prim(a0)], [r]) = (acc.as_slice(), inputs.as_slice()) {
                        if r.arr.rank() == 1 {
                            let mut a = *a0;
                            for j in 0..w {
                                self.check_cancel()?;
                                let x = array::get_prim(&r.arr.buffer, r.arr.offset + j);
                                a = fast.apply(a, x).or_else(err)?;
                            }
                            return self.bind1(s, pat, Value::Prim(a));
                        }
                    }
                }
                for j in 0..w {
                    self.check_cancel()?;
                    self.apply_op(s, lam, &mut acc, &inputs, j)?;
                }
                self.bind_all(s, pat, acc)
            }
            Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => {
                let (w, inputs, mut acc) = self.operator_setup(s, w, lam, neutral, arrs, "scan")?;
                let mut outs: Vec<Collector> = lam
                    .ret
                    .iter()
                    .map(|t| Collector::try_new(t, w))
                    .collect::<Res<_>>()?;
                for j in 0..w {
                    self.check_cancel()?;
                    self.apply_op(s, lam, &mut acc, &inputs, j)?;
                    for (c, x) in outs.iter_mut().zip(&acc) {
                        c.push(x)?;
                    }
                }
                let row_shapes: Vec<Vec<i64>> = acc.iter().map(|x| x.shape().to_vec()).collect();
                let xs = outs
                    .into_iter()
                    .zip(row_shapes)
                    .map(|(c, rs)| Value::Array(c.finish(w, &rs)))
                    .collect();
                self.bind_all(s, pat, xs)
            }
            Soac::Hist {
                w,
                dest,
                lam,
                indices,
                values,
                ..
            } => {
                let w = self.size(s, w, "reduce_by_index")?;
                let inputs = self.soac_inputs(s, values, w, "reduce_by_index")?;
                let is =
                    self.soac_inputs(s, std::slice::from_ref(indices), w, "reduce_by_index")?;
                let is = &is[0].arr;
                let Some(is) = is.as_slice::<i64>().filter(|_| is.rank() == 1) else {
                    return err("internal error: reduce_by_index indices must be a one-dimensional i64 array");
                };
                self.check_op_lambda(lam, dest.len(), inputs.len(), "reduce_by_index")?;
                if dest.len() != inputs.len() {
                    return err("internal error: reduce_by_index with different numbers of destinations and values");
                }
                let mut dsts = Vec::with_capacity(dest.len());
                for d in dest {
                    let mut a = self.take_array(s, *d)?;
                    if a.rank() == 0 {
                        return err("internal error: reduce_by_index into a rank-0 array");
                    }
                    self.count_write(&a);
                    materialize(&mut a)?;
                    dsts.push(a);
                }
                let Some(m) = dsts.first().map(|d| d.len()) else {
                    return err("internal error: reduce_by_index without destinations");
                };
                for (d, v) in dsts.iter().zip(&inputs) {
                    if d.len() != m || d.shape()[1..] != v.arr.shape()[1..] {
                        return err(format!(
                            "size error: reduce_by_index: destination of shape {} and values of shape {} do not fit",
                            array::show_shape(d.shape()),
                            array::show_shape(v.arr.shape())
                        ));
                    }
                }
                let k = dsts.len();
                let fast =
                    simple_binop(lam).filter(|_| k == 1 && dsts[0].rank() == 1 && !self.nan_checks);
                let mut acc = Vec::with_capacity(k);
                for (j, &ix) in is.iter().enumerate() {
                    if ix < 0 || ix as usize >= m {
                        continue;
                    }
                    let ix = ix as usize;
                    if let Some(f) = fast {
                        let d = &mut dsts[0];
                        let old = array::get_prim(&d.buffer, ix);
                        let x = array::get_prim(&inputs[0].arr.buffer, inputs[0].arr.offset + j);
                        let r = f.apply(old, x).or_else(err)?;
                        let reg = Region::Contiguous { start: ix, len: 1 };
                        if !array::write_region(d, &reg, &Value::Prim(r)) {
                            return err(
                                "internal error: reduce_by_index operator changes the element type",
                            );
                        }
                        continue;
                    }
                    acc.clear();
                    for d in &dsts {
                        acc.push(match d.rank() {
                            1 => Value::Prim(array::get_prim(&d.buffer, d.offset + ix)),
                            _ => {
                                let r = Rows::new(d.clone()).row(ix);
                                match r {
                                    Value::Array(ra) => {
                                        Value::Array(alloc_res(array::copy_array(&ra))?)
                                    }
                                    p => p,
                                }
                            }
                        });
                    }
                    self.apply_op(s, lam, &mut acc, &inputs, j)?;
                    for (d, x) in dsts.iter_mut().zip(&acc) {
                        let row = shape_elems(&d.shape()[1..]).unwrap_or(0);
                        if x.num_elems() != row || x.shape() != &d.shape()[1..] {
                            return err("size error: reduce_by_index operator returned a value of the wrong shape");
                        }
                        let reg = Region::Contiguous {
                            start: ix * row,
                            len: row,
                        };
                        if !array::write_region(d, &reg, x) {
                            return err(
                                "internal error: reduce_by_index operator changes the element type",
                            );
                        }
                    }
                }
                self.bind_all(s, pat, dsts.into_iter().map(Value::Array).collect())
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                let w = self.size(s, w, "scatter")?;
                let vals = self.soac_inputs(s, values, w, "scatter")?;
                let iss = self.soac_inputs(s, indices, w, "scatter")?;
                let mut is: Vec<&[i64]> = Vec::with_capacity(iss.len());
                for r in &iss {
                    match r.arr.as_slice::<i64>() {
                        Some(x) if r.arr.rank() == 1 => is.push(x),
                        _ => return err(
                            "internal error: scatter indices must be one-dimensional i64 arrays",
                        ),
                    }
                }
                if dest.len() != vals.len() || is.is_empty() {
                    return err(
                        "internal error: scatter with mismatched destinations, indices and values",
                    );
                }
                let d_rank = is.len();
                let mut dsts = Vec::with_capacity(dest.len());
                for d in dest {
                    let mut a = self.take_array(s, *d)?;
                    self.count_write(&a);
                    materialize(&mut a)?;
                    dsts.push(a);
                }
                for (d, v) in dsts.iter().zip(&vals) {
                    if d.rank() < d_rank || d.shape()[d_rank..] != v.arr.shape()[1..] {
                        return err(format!(
                            "size error: scatter: destination of shape {} and values of shape {} do not fit",
                            array::show_shape(d.shape()),
                            array::show_shape(v.arr.shape())
                        ));
                    }
                }
                for j in 0..w {
                    self.check_cancel()?;
                    for (d, v) in dsts.iter_mut().zip(&vals) {
                        let shape = d.shape();
                        let mut pos = 0usize;
                        let mut inb = true;
                        for (t, ist) in is.iter().enumerate() {
                            let i = ist[j];
                            if i < 0 || i >= shape[t] {
                                inb = false;
                                break;
                            }
                            pos = pos * shape[t] as usize + i as usize;
                        }
                        if !inb {
                            continue;
                        }
                        let row = shape_elems(&shape[d_rank..]).unwrap_or(0);
                        let reg = Region::Contiguous {
                            start: pos * row,
                            len: row,
                        };
                        let x = v.row(j);
                        if !array::write_region(d, &reg, &x) {
                            return err(
                                "internal error: scatter of values of another element type",
                            );
                        }
                    }
                }
                self.bind_all(s, pat, dsts.into_iter().map(Value::Array).collect())
            }
        }
    }

    /// An associative operator over `k` neutral elements and `n_arrs` arrays has
    /// `2k` parameters and `k` results.
    pub(crate) fn check_op_lambda(
        &self,
        lam: &Lambda,
        k: usize,
        n_arrs: usize,
        what: &str,
    ) -> Res<()> {
        if lam.params.len() != 2 * k || n_arrs != k || lam.body.result.len() != k {
            return err(format!(
                "internal error: {what}: operator with {} parameters and {} results for {} neutral elements and {} arrays",
                lam.params.len(),
                lam.body.result.len(),
                k,
                n_arrs
            ));
        }
        Ok(())
    }

    /// `acc = lam(acc, rows j of inputs)`.
    fn apply_op(
        &mut self,
        s: &mut [Value],
        lam: &Lambda,
        acc: &mut Vec<Value>,
        inputs: &[Rows],
        j: usize,
    ) -> Res<()> {
        let k = acc.len();
        for (p, x) in lam.params[..k].iter().zip(acc.drain(..)) {
            self.set(s, p.var, x)?;
        }
        for (p, r) in lam.params[k..].iter().zip(inputs) {
            self.set(s, p.var, r.row(j))?;
        }
        self.exec_body(s, &lam.body)?;
        for a in &lam.body.result {
            acc.push(self.value(s, a)?);
        }
        Ok(())
    }
}

/// The scalar an atom denotes, if it is one.
#[inline(always)]
fn peek_prim(s: &[Value], a: &Atom) -> Option<PrimValue> {
    match a {
        Atom::Const(c) => Some(*c),
        Atom::Var(v) => match s.get(v.0 as usize) {
            Some(Value::Prim(p)) => Some(*p),
            _ => None,
        },
    }
}

/// An operator lambda that is a single binary operation on its two
/// parameters, `\x y -> x op y` (or `y op x`).
#[derive(Clone, Copy)]
struct SimpleBinOp {
    op: nabla_prim::BinOp,
    swapped: bool,
}

impl SimpleBinOp {
    #[inline(always)]
    fn apply(self, acc: PrimValue, x: PrimValue) -> Result<PrimValue, String> {
        if self.swapped {
            scalar::binop(self.op, x, acc)
        } else {
            scalar::binop(self.op, acc, x)
        }
    }
}

fn simple_binop(lam: &Lambda) -> Option<SimpleBinOp> {
    let [p, q] = lam.params.as_slice() else {
        return None;
    };
    let [stm] = lam.body.stms.as_slice() else {
        return None;
    };
    let [r] = stm.pat.as_slice() else { return None };
    if lam.body.result.as_slice() != [Atom::Var(r.var)] || !matches!(p.ty, Type::Prim(_)) {
        return None;
    }
    match &stm.exp {
        Exp::BinOp(op, Atom::Var(a), Atom::Var(b)) if *a == p.var && *b == q.var => {
            Some(SimpleBinOp {
                op: *op,
                swapped: false,
            })
        }
        Exp::BinOp(op, Atom::Var(a), Atom::Var(b)) if *a == q.var && *b == p.var => {
            Some(SimpleBinOp {
                op: *op,
                swapped: true,
            })
        }
        _ => None,
    }
}

/// Row access to an input array: scalars for rank 1, O(1) views otherwise
/// (the row shape is shared, not reallocated per row).
struct Rows {
    arr: ArrayValue,
    inner: Rc<[i64]>,
    row_size: usize,
}

impl Rows {
    fn new(arr: ArrayValue) -> Rows {
        let inner: Rc<[i64]> = arr.shape().get(1..).unwrap_or(&[]).into();
        let row_size = shape_elems(&inner).unwrap_or(0);
        Rows {
            arr,
            inner,
            row_size,
        }
    }

    #[inline(always)]
    fn row(&self, j: usize) -> Value {
        if self.inner.is_empty() {
            Value::Prim(array::get_prim(&self.arr.buffer, self.arr.offset + j))
        } else {
            Value::Array(ArrayValue {
                shape: self.inner.clone(),
                offset: self.arr.offset + j * self.row_size,
                buffer: self.arr.buffer.clone(),
            })
        }
    }
}

/// Collects the per-row results of a SOAC into one typed buffer.
/// Its buffer is reserved (fallibly) for all `w` rows as soon as the row
/// size is known: at once for scalar rows, at the first row otherwise.
struct Collector {
    b: Builder,
    elem: PrimType,
    row_shape: Option<Vec<i64>>,
    /// The number of rows.
    w: usize,
}

/// What a SOAC's result buffer is called in out-of-memory errors.
const SOAC_RESULT: &str = "the result of a map (or other SOAC)";

impl Collector {
    fn try_new(t: &Type, w: usize) -> Res<Collector> {
        let cap = if t.rank() <= 1 { w } else { 0 };
        Ok(Collector {
            b: alloc_res(Builder::try_new(t.elem(), cap, SOAC_RESULT))?,
            elem: t.elem(),
            row_shape: None,
            w,
        })
    }

    #[inline(always)]
    fn push(&mut self, x: &Value) -> Res<()> {
        match x {
            Value::Prim(p) => {
                if self.row_shape.is_none() {
                    self.row_shape = Some(vec![]);
                }
                if !self.b.push(*p) {
                    return err(format!(
                        "internal error: a {} result where {} was declared",
                        p.prim_type(),
                        self.elem
                    ));
                }
                if self.row_shape.as_ref().is_some_and(|r| !r.is_empty()) {
                    return err("size error: irregular array: rows of different shapes");
                }
            }
            Value::Array(a) => {
                match &self.row_shape {
                    None => {
                        let mut shape = vec![self.w as i64];
                        shape.extend_from_slice(a.shape());
                        let bytes = crate::alloc::elem_bytes(self.elem);
                        let total =
                            alloc_res(crate::alloc::checked_elems(&shape, bytes, SOAC_RESULT))?;
                        alloc_res(self.b.try_reserve(total, SOAC_RESULT))?;
                        self.row_shape = Some(a.shape().to_vec());
                    }
                    Some(r) if r.as_slice() != a.shape() => {
                        return err(format!(
                            "size error: irregular array: rows of shapes {} and {}",
                            array::show_shape(r),
                            array::show_shape(a.shape())
                        ))
                    }
                    Some(_) => {}
                }
                if !self.b.extend(a) {
                    return err(format!(
                        "internal error: a {} result where {} was declared",
                        a.elem_type(),
                        self.elem
                    ));
                }
            }
        }
        Ok(())
    }

    /// The array of `w` rows; `declared` is the row shape to use when there are no rows.
    fn finish(self, w: usize, declared: &[i64]) -> ArrayValue {
        let mut shape = vec![w as i64];
        shape.extend_from_slice(self.row_shape.as_deref().unwrap_or(declared));
        ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: self.b.finish(),
        }
    }
}

// ----- frame sizes -----------------------------------------------------------

/// Raises `m` above every variable number used or bound in `b`.
fn max_body(b: &Body, m: &mut usize) {
    let hi = std::cell::Cell::new(*m);
    let raise = |v: Var| hi.set(hi.get().max(v.0 as usize + 1));
    nabla_ir::visit::for_each_var(b, |v, _| raise(v), raise);
    *m = hi.get();
}

fn max_param(p: &Param, m: &mut usize) {
    *m = (*m).max(p.var.0 as usize + 1);
    p.ty.for_each_dim_var(|v| *m = (*m).max(v.0 as usize + 1));
}
