//! Validator: re-checks the IR's scoping, types and (statically known) sizes.
//! Tests and the driver run it after elaboration to catch compiler bugs early.
//!
//! Checked, per function:
//! * every variable used is bound before the use and still in scope
//!   (function parameters, earlier statements of an enclosing body, lambda
//!   parameters, loop parameters, the `for` counter), its number is a valid
//!   index into `var_names`, and no variable is bound twice in a function;
//! * operand types fit each [`Exp`] (see [`validate_program`]);
//! * sizes where statically known: two dimensions must be equal when both are
//!   `Dim::Const` or both `Dim::Var`; `Dim::Ext` matches anything, and a
//!   `Const` against a `Var` is accepted (only known at run time).
//!   Size variables in types must be in scope (or bound by the same pattern);
//! * then, on functions that pass the checks above, consumption (no use of
//!   an array, or of an alias of it, after it is consumed; only unique
//!   parameters may be consumed) and the linearity of accumulators: see the
//!   `analysis` module, which also computes the [`Analysis`] that
//!   [`validate_program`] returns.
//!
//! Size checks can be turned off with [`ValidateOptions`].

use crate::analysis::{Analysis, FunctionAnalysis};
use crate::{
    AccOp, Atom, Body, Dim, DimIndex, Exp, Function, Lambda, LoopForm, Param, PrimType, Program,
    Soac, Span, Type, Var,
};
use nabla_prim::{BinOp, ConvOp, UnOp};

pub use crate::error::{ValidationError, ValidationProblem};

/// Which checks [`validate_program_with`] runs.
#[derive(Clone, Copy, Debug)]
pub struct ValidateOptions {
    /// Check dimensions (equal `Const`/`Const` and `Var`/`Var` pairs, size
    /// variables in scope). Element types and ranks are always checked.
    pub sizes: bool,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { sizes: true }
    }
}

/// Checks the whole program with all checks on (see the module docs):
/// scoping, single binding, operand and result types of every expression,
/// function references, entry points (their function exists and the
/// parameter/result arities add up), and statically known sizes.
///
/// Then, on each function that passed those checks, consumption, aliasing
/// and accumulator linearity (see the `analysis` module: Futhark's
/// uniqueness rules, and Schenck et al., SC22, §5.4 for accumulators).
///
/// Returns every problem found (several per function at most once per
/// statement), or, for a valid program, the [`Analysis`] of every function:
/// the type of each variable, its number of uses, the variables consumed,
/// and what each array variable may alias.
pub fn validate_program(prog: &Program) -> Result<Analysis, Vec<ValidationError>> {
    validate_program_with(prog, ValidateOptions::default())
}

/// [`validate_program`] with a choice of checks.
pub fn validate_program_with(
    prog: &Program,
    opts: ValidateOptions,
) -> Result<Analysis, Vec<ValidationError>> {
    let mut errors = Vec::new();
    let mut analysis = Analysis::default();
    for (fi, f) in prog.functions.iter().enumerate() {
        let before = errors.len();
        let mut cx = Cx {
            prog,
            fun: f,
            opts,
            scope: vec![None; f.var_names.len()],
            ever_bound: vec![false; f.var_names.len()],
            errors: &mut errors,
            span: None,
        };
        cx.function();
        let fa = if errors.len() == before {
            crate::analysis::check_function(prog, fi, &mut errors)
        } else {
            FunctionAnalysis::default()
        };
        analysis.functions.push(fa);
    }
    for (f, message) in crate::seg::check_segments(prog) {
        errors.push(ValidationError {
            function: prog
                .functions
                .get(f.0 as usize)
                .map_or_else(|| format!("#{}", f.0), |f| f.name.clone()),
            span: None,
            problem: ValidationProblem::Malformed(message),
        });
    }
    for e in &prog.entries {
        let err = |m: String| ValidationError {
            function: e.name.clone(),
            span: None,
            problem: ValidationProblem::Entry(m),
        };
        match prog.functions.get(e.fun.0 as usize) {
            None => errors.push(err(format!(
                "entry point {} refers to missing function #{}",
                e.name, e.fun.0
            ))),
            Some(f) => {
                let np: usize = e.param_arity.iter().sum();
                let nr: usize = e.result_arity.iter().sum();
                if np != f.params.len() {
                    errors.push(err(format!(
                        "entry point {}: parameter arities sum to {np}, but {} has {} parameters",
                        e.name,
                        f.name,
                        f.params.len()
                    )));
                }
                if nr != f.ret.len() {
                    errors.push(err(format!(
                        "entry point {}: result arities sum to {nr}, but {} returns {} values",
                        e.name,
                        f.name,
                        f.ret.len()
                    )));
                }
                if let Some(sig) = &e.signature {
                    if let Err(m) = check_signature(sig, &e.param_arity, &e.result_arity) {
                        errors.push(err(format!("entry point {}: signature: {m}", e.name)));
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(analysis)
    } else {
        Err(errors)
    }
}

/// Spelling of a type for messages (sizes as `#n` variable numbers).
fn show(t: &Type) -> String {
    match t {
        Type::Prim(p) => p.name().to_string(),
        Type::Acc(p, dims) => format!("acc({})", show(&Type::Array(*p, dims.clone()))),
        Type::Array(p, dims) => {
            let mut s = String::new();
            for d in dims {
                match d {
                    Dim::Const(n) => s.push_str(&format!("[{n}]")),
                    Dim::Var(v) => s.push_str(&format!("[#{}]", v.0)),
                    Dim::Ext => s.push_str("[?]"),
                }
            }
            s + p.name()
        }
    }
}

fn show_all(ts: &[Type]) -> String {
    format!("({})", ts.iter().map(show).collect::<Vec<_>>().join(", "))
}

struct Cx<'a> {
    prog: &'a Program,
    fun: &'a Function,
    opts: ValidateOptions,
    /// Type of each variable currently in scope.
    scope: Vec<Option<Type>>,
    ever_bound: Vec<bool>,
    errors: &'a mut Vec<ValidationError>,
    span: Option<Span>,
}

/// Result of checking one thing; the error is already recorded.
type Check<T> = Result<T, ()>;

impl Cx<'_> {
    fn err<T>(&mut self, msg: impl Into<String>) -> Check<T> {
        self.report(msg.into(), false)
    }

    fn size_err<T>(&mut self, msg: impl Into<String>) -> Check<T> {
        self.report(msg.into(), true)
    }

    fn report<T>(&mut self, message: String, size_error: bool) -> Check<T> {
        let function = self.fun.name.clone();
        let problem = if size_error {
            ValidationProblem::Size(message)
        } else {
            ValidationProblem::Malformed(message)
        };
        self.errors.push(ValidationError {
            function,
            span: self.span,
            problem,
        });
        Err(())
    }

    fn name(&self, v: Var) -> String {
        match self.fun.var_names.get(v.0 as usize) {
            Some(n) => format!("{n}_{}", v.0),
            None => format!("#{}", v.0),
        }
    }

    // ------------------------------------------------------------ scoping

    /// Binds the params (in order), checking their types' size variables.
    /// Returns the variables bound (to unbind later).
    fn bind(&mut self, ps: &[Param]) -> Check<Vec<Var>> {
        let mut bound = Vec::new();
        let mut res = Ok(());
        for p in ps {
            let i = p.var.0 as usize;
            if i >= self.scope.len() {
                res = self.err(format!(
                    "variable #{} has no entry in var_names (only {})",
                    i,
                    self.scope.len()
                ));
                continue;
            }
            if self.ever_bound[i] {
                res = self.err(format!("variable {} is bound twice", self.name(p.var)));
                continue;
            }
            self.ever_bound[i] = true;
            self.scope[i] = Some(p.ty.clone());
            bound.push(p.var);
        }
        // Size variables may refer to earlier or later members of the same pattern.
        for p in ps {
            if self.check_type_dims(&p.ty).is_err() {
                res = Err(());
            }
        }
        res.map(|_| bound)
    }

    fn unbind(&mut self, vs: &[Var]) {
        for v in vs {
            self.scope[v.0 as usize] = None;
        }
    }

    fn check_type_dims(&mut self, t: &Type) -> Check<()> {
        if !self.opts.sizes {
            return Ok(());
        }
        if let Type::Array(_, dims) = t {
            for d in dims {
                match d {
                    Dim::Var(v) => match self.scope.get(v.0 as usize) {
                        Some(Some(Type::Prim(PrimType::I64))) => {}
                        Some(Some(other)) => {
                            let o = show(other);
                            return self.size_err(format!(
                                "size variable {} has type {o}, not i64",
                                self.name(*v)
                            ));
                        }
                        _ => {
                            return self.size_err(format!(
                                "size variable {} is not in scope",
                                self.name(*v)
                            ))
                        }
                    },
                    Dim::Const(n) if *n < 0 => {
                        return self.err(format!("negative constant size {n}"))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn var_type(&mut self, v: Var) -> Check<Type> {
        match self.scope.get(v.0 as usize) {
            Some(Some(t)) => Ok(t.clone()),
            Some(None) => {
                let n = self.name(v);
                self.err(format!("variable {n} is used but not in scope"))
            }
            None => self.err(format!("variable #{} has no entry in var_names", v.0)),
        }
    }

    fn atom_type(&mut self, a: &Atom) -> Check<Type> {
        match a {
            Atom::Const(c) => Ok(Type::Prim(c.prim_type())),
            Atom::Var(v) => self.var_type(*v),
        }
    }

    fn atom_types(&mut self, xs: &[Atom]) -> Check<Vec<Type>> {
        xs.iter().map(|a| self.atom_type(a)).collect()
    }

    fn prim_atom(&mut self, a: &Atom, what: &str) -> Check<PrimType> {
        match self.atom_type(a)? {
            Type::Prim(p) => Ok(p),
            t => self.err(format!(
                "{what} must be a scalar, but has type {}",
                show(&t)
            )),
        }
    }

    fn atom_of(&mut self, a: &Atom, want: PrimType, what: &str) -> Check<()> {
        let t = self.prim_atom(a, what)?;
        if t != want {
            return self.err(format!("{what} must have type {want}, but has type {t}"));
        }
        Ok(())
    }

    fn array_var(&mut self, v: Var, what: &str) -> Check<(PrimType, Vec<Dim>)> {
        match self.var_type(v)? {
            Type::Array(p, d) => Ok((p, d)),
            t => {
                let n = self.name(v);
                self.err(format!(
                    "{what} {n} must be an array, but has type {}",
                    show(&t)
                ))
            }
        }
    }

    // ------------------------------------------------------------ types

    fn dims_fit(&self, a: &Dim, b: &Dim) -> bool {
        if !self.opts.sizes {
            return true;
        }
        match (a, b) {
            (Dim::Const(x), Dim::Const(y)) => x == y,
            (Dim::Var(x), Dim::Var(y)) => x == y,
            _ => true,
        }
    }

    /// Element type, rank and statically known dims agree.
    fn fits(&self, expected: &Type, actual: &Type) -> bool {
        match (expected, actual) {
            (Type::Prim(a), Type::Prim(b)) => a == b,
            (Type::Array(a, da), Type::Array(b, db)) | (Type::Acc(a, da), Type::Acc(b, db)) => {
                a == b
                    && da.len() == db.len()
                    && da.iter().zip(db).all(|(x, y)| self.dims_fit(x, y))
            }
            _ => false,
        }
    }

    /// Element type and rank agree, and both or neither are accumulators
    /// (of the same number of dimensions): for types from different scopes.
    fn same_shape_kind(expected: &Type, actual: &Type) -> bool {
        match (expected, actual) {
            (Type::Acc(a, da), Type::Acc(b, db)) => a == b && da.len() == db.len(),
            (Type::Acc(..), _) | (_, Type::Acc(..)) => false,
            _ => expected.elem() == actual.elem() && expected.rank() == actual.rank(),
        }
    }

    fn expect_types(&mut self, what: &str, expected: &[Type], actual: &[Type]) -> Check<()> {
        if expected.len() != actual.len() {
            return self.err(format!(
                "{what}: expected {} values {}, got {} values {}",
                expected.len(),
                show_all(expected),
                actual.len(),
                show_all(actual)
            ));
        }
        if !expected.iter().zip(actual).all(|(e, a)| self.fits(e, a)) {
            let msg = format!(
                "{what}: expected types {}, got {}",
                show_all(expected),
                show_all(actual)
            );
            if expected
                .iter()
                .zip(actual)
                .all(|(e, a)| Self::same_shape_kind(e, a))
            {
                return self.size_err(msg);
            }
            return self.err(msg);
        }
        Ok(())
    }

    /// Like `expect_types`, comparing only element types and ranks.
    fn expect_kinds(&mut self, what: &str, expected: &[Type], actual: &[Type]) -> Check<()> {
        if expected.len() != actual.len()
            || !expected
                .iter()
                .zip(actual)
                .all(|(e, a)| Self::same_shape_kind(e, a))
        {
            return self.err(format!(
                "{what}: expected types {}, got {}",
                show_all(expected),
                show_all(actual)
            ));
        }
        Ok(())
    }

    // ------------------------------------------------------------ structure

    fn function(&mut self) {
        let f = self.fun;
        if f.unique_ret.len() != f.ret.len() {
            let _: Check<()> = self.err(format!(
                "function {} has {} results but {} uniqueness flags",
                f.name,
                f.ret.len(),
                f.unique_ret.len()
            ));
        }
        let Ok(_) = self.bind(&f.params) else { return };
        for t in &f.ret {
            let _ = self.check_type_dims(t);
        }
        let Ok(res) = self.body(&f.body) else { return };
        self.span = Some(f.span);
        let _ = self.expect_types("function result", &f.ret, &res);
    }

    /// Checks a body in a new scope and returns its result types (with dims
    /// as seen inside the body).
    fn body(&mut self, b: &Body) -> Check<Vec<Type>> {
        // Nesting follows the user's program: grow the stack instead of
        // overflowing it on deep (but valid) nesting.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.body_inner(b))
    }

    fn body_inner(&mut self, b: &Body) -> Check<Vec<Type>> {
        let mut bound = Vec::new();
        let mut ok = true;
        let saved_span = self.span;
        for stm in &b.stms {
            self.span = Some(stm.span);
            if self.stm_exp(&stm.exp, &stm.pat).is_err() {
                ok = false;
            }
            match self.bind(&stm.pat) {
                Ok(vs) => bound.extend(vs),
                Err(()) => {
                    ok = false;
                    // Still bind what we can so later uses do not cascade.
                    for p in &stm.pat {
                        if let Some(slot) = self.scope.get_mut(p.var.0 as usize) {
                            if slot.is_none() {
                                *slot = Some(p.ty.clone());
                                bound.push(p.var);
                            }
                        }
                    }
                }
            }
        }
        let res = self.atom_types(&b.result);
        self.unbind(&bound);
        self.span = saved_span;
        if ok {
            res
        } else {
            res.and(Err(()))
        }
    }

    /// Checks a lambda (its params in a new scope) and returns its declared
    /// return types after checking the body against them.
    fn lambda(&mut self, lam: &Lambda, what: &str) -> Check<()> {
        let bound = self.bind(&lam.params);
        let r = match &bound {
            Ok(_) => {
                for t in &lam.ret {
                    let _ = self.check_type_dims(t);
                }
                match self.body(&lam.body) {
                    Ok(res) => self.expect_types(&format!("{what} lambda body"), &lam.ret, &res),
                    Err(()) => Err(()),
                }
            }
            Err(()) => Err(()),
        };
        for p in &lam.params {
            if let Some(slot) = self.scope.get_mut(p.var.0 as usize) {
                *slot = None;
            }
        }
        r
    }

    fn pat_types(pat: &[Param]) -> Vec<Type> {
        pat.iter().map(|p| p.ty.clone()).collect()
    }

    fn expect_pat(&mut self, pat: &[Param], actual: &[Type]) -> Check<()> {
        self.expect_types("statement pattern", &Self::pat_types(pat), actual)
    }

    fn stm_exp(&mut self, e: &Exp, pat: &[Param]) -> Check<()> {
        match e {
            Exp::Atoms(xs) => {
                let ts = self.atom_types(xs)?;
                self.expect_pat(pat, &ts)
            }
            Exp::BinOp(op, a, b) => {
                let ta = self.prim_atom(a, "binary operand")?;
                let tb = self.prim_atom(b, "binary operand")?;
                if ta != tb {
                    return self.err(format!(
                        "operands of {op:?} have different types {ta} and {tb}"
                    ));
                }
                let ok = match op {
                    BinOp::LogAnd | BinOp::LogOr => ta == PrimType::Bool,
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        ta.is_int() || ta == PrimType::Bool
                    }
                    BinOp::Shl | BinOp::Shr | BinOp::LShr | BinOp::Quot | BinOp::Rem => ta.is_int(),
                    BinOp::Atan2 | BinOp::Hypot => ta.is_float(),
                    _ => ta.is_numeric(),
                };
                if !ok {
                    return self.err(format!("{op:?} is not defined on {ta}"));
                }
                self.expect_pat(pat, &[Type::Prim(ta)])
            }
            Exp::CmpOp(op, a, b) => {
                let ta = self.prim_atom(a, "comparison operand")?;
                let tb = self.prim_atom(b, "comparison operand")?;
                if ta != tb {
                    return self.err(format!(
                        "operands of {op:?} have different types {ta} and {tb}"
                    ));
                }
                self.expect_pat(pat, &[Type::Prim(PrimType::Bool)])
            }
            Exp::UnOp(op, a) => {
                let t = self.prim_atom(a, "unary operand")?;
                let (ok, res) = match op {
                    UnOp::Neg | UnOp::Abs | UnOp::Sgn => (t.is_numeric(), t),
                    UnOp::Not => (t.is_int() || t == PrimType::Bool, t),
                    UnOp::IsNan | UnOp::IsInf => (t.is_float(), PrimType::Bool),
                    UnOp::Clz | UnOp::Ctz | UnOp::Popc => (t.is_int(), PrimType::I32),
                    _ => (t.is_float(), t),
                };
                if !ok {
                    return self.err(format!("{op:?} is not defined on {t}"));
                }
                self.expect_pat(pat, &[Type::Prim(res)])
            }
            Exp::TernOp(op, a, b, c) => {
                let ta = self.prim_atom(a, "operand")?;
                let tb = self.prim_atom(b, "operand")?;
                let tc = self.prim_atom(c, "operand")?;
                if ta != tb || tb != tc || !ta.is_numeric() {
                    return self.err(format!(
                        "operands of {op:?} must have one numeric type, got {ta}, {tb}, {tc}"
                    ));
                }
                self.expect_pat(pat, &[Type::Prim(ta)])
            }
            Exp::Conv(conv, a) => {
                let t = self.prim_atom(a, "conversion operand")?;
                let (from, to) = match conv {
                    ConvOp::Convert(f, t) => (*f, *t),
                    ConvOp::BitCast(f, t) => {
                        if f.bits() != t.bits() || *f == PrimType::Bool || *t == PrimType::Bool {
                            return self.err(format!("cannot bit-cast {f} to {t}"));
                        }
                        (*f, *t)
                    }
                };
                if t != from {
                    return self.err(format!(
                        "conversion from {from} applied to a value of type {t}"
                    ));
                }
                self.expect_pat(pat, &[Type::Prim(to)])
            }
            Exp::Apply(fid, args) => {
                let Some(callee) = self.prog.functions.get(fid.0 as usize) else {
                    return self.err(format!("call of missing function #{}", fid.0));
                };
                let arg_ts = self.atom_types(args)?;
                let param_ts: Vec<Type> = callee.params.iter().map(|p| p.ty.clone()).collect();
                self.expect_kinds(
                    &format!("arguments of call to {}", callee.name),
                    &param_ts,
                    &arg_ts,
                )?;
                let ret = callee.ret.clone();
                self.expect_kinds(
                    &format!("result of call to {}", callee.name),
                    &Self::pat_types(pat),
                    &ret,
                )
            }
            Exp::If { cond, then_, else_ } => {
                self.atom_of(cond, PrimType::Bool, "if condition")?;
                let t = self.body(then_);
                let f = self.body(else_);
                let (t, f) = (t?, f?);
                let pt = Self::pat_types(pat);
                self.expect_types("then branch", &pt, &t)?;
                self.expect_types("else branch", &pt, &f)
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => {
                let init_ts = self.atom_types(init)?;
                let param_ts = Self::pat_types(params);
                self.expect_kinds("loop initial values", &param_ts, &init_ts)?;
                let mut bound = Vec::new();
                let mut res = Ok(());
                if let LoopForm::For { i, bound: b } = form {
                    let bt = self.prim_atom(b, "for-loop bound")?;
                    if !bt.is_int() {
                        return self
                            .err(format!("for-loop bound must be an integer, has type {bt}"));
                    }
                    match self.bind(&[Param::new(*i, Type::Prim(bt))]) {
                        Ok(vs) => bound.extend(vs),
                        Err(()) => res = Err(()),
                    }
                }
                match self.bind(params) {
                    Ok(vs) => bound.extend(vs),
                    Err(()) => res = Err(()),
                }
                if let LoopForm::While { cond } = form {
                    match self.body(cond) {
                        Ok(ts) => {
                            if self
                                .expect_types("while condition", &[Type::Prim(PrimType::Bool)], &ts)
                                .is_err()
                            {
                                res = Err(());
                            }
                        }
                        Err(()) => res = Err(()),
                    }
                }
                match self.body(body) {
                    Ok(ts) => {
                        if self
                            .expect_types("loop body result", &param_ts, &ts)
                            .is_err()
                        {
                            res = Err(());
                        }
                    }
                    Err(()) => res = Err(()),
                }
                self.unbind(&bound);
                res?;
                self.expect_kinds("loop result", &Self::pat_types(pat), &param_ts)
            }
            Exp::Index(..)
            | Exp::Update(..)
            | Exp::ArrayLit(..)
            | Exp::Iota { .. }
            | Exp::Replicate(..)
            | Exp::Copy(_)
            | Exp::Size(..)
            | Exp::Reshape(..)
            | Exp::Rearrange(..)
            | Exp::Concat(_)
            | Exp::Rotate(..)
            | Exp::Reverse(_)
            | Exp::AssertEqSizes(..)
            | Exp::Assert(..) => self.array_exp(e, pat),
            Exp::Soac(s) => self.soac(s, pat),
            Exp::WithAcc { .. }
            | Exp::UpdateAcc { .. }
            | Exp::Jvp { .. }
            | Exp::Vjp { .. }
            | Exp::WithVjp { .. } => self.acc_ad_exp(e, pat),
        }
    }

    /// [`Self::stm_exp`] of an array construct (indexing, updates, literals,
    /// `iota`, `replicate`, shape changes) or an assertion.
    fn array_exp(&mut self, e: &Exp, pat: &[Param]) -> Check<()> {
        match e {
            Exp::Index(arr, idx) => {
                let (p, dims) = self.array_var(*arr, "indexed value")?;
                let rest = self.index_result(p, &dims, idx)?;
                self.expect_pat(pat, &[rest])
            }
            Exp::Update(arr, idx, v) => {
                let (p, dims) = self.array_var(*arr, "updated value")?;
                let slice = self.index_result(p, &dims, idx)?;
                let vt = self.atom_type(v)?;
                if !self.fits(&slice, &vt) {
                    let size_only = Self::same_shape_kind(&slice, &vt);
                    return self.report(
                        format!(
                            "update value has type {}, but the indexed slice has type {}",
                            show(&vt),
                            show(&slice)
                        ),
                        size_only,
                    );
                }
                self.expect_pat(pat, &[Type::Array(p, dims)])
            }
            Exp::ArrayLit(xs, row) => {
                let ts = self.atom_types(xs)?;
                for t in &ts {
                    if !self.fits(row, t) {
                        let size_only = Self::same_shape_kind(row, t);
                        return self.report(
                            format!(
                                "array literal element has type {}, not the row type {}",
                                show(t),
                                show(row)
                            ),
                            size_only,
                        );
                    }
                }
                self.expect_pat(pat, &[row.array_of(Dim::Const(xs.len() as i64))])
            }
            Exp::Iota { n, start, step, ty } => {
                self.atom_of(n, PrimType::I64, "iota length")?;
                if !ty.is_int() {
                    return self.err(format!("iota of non-integer type {ty}"));
                }
                self.atom_of(start, *ty, "iota start")?;
                self.atom_of(step, *ty, "iota step")?;
                let d = self.size_dim(n);
                self.expect_pat(pat, &[Type::Array(*ty, vec![d])])
            }
            Exp::Replicate(n, v) => {
                self.atom_of(n, PrimType::I64, "replicate count")?;
                let vt = self.atom_type(v)?;
                let d = self.size_dim(n);
                self.expect_pat(pat, &[vt.array_of(d)])
            }
            Exp::Copy(v) => {
                let (p, dims) = self.array_var(*v, "copied value")?;
                self.expect_pat(pat, &[Type::Array(p, dims)])
            }
            Exp::Size(v, d) => {
                let (_, dims) = self.array_var(*v, "size of")?;
                if *d >= dims.len() {
                    return self.err(format!(
                        "size of dimension {d} of an array of rank {}",
                        dims.len()
                    ));
                }
                self.expect_pat(pat, &[Type::Prim(PrimType::I64)])
            }
            Exp::Reshape(shape, v) => {
                let (p, _) = self.array_var(*v, "reshaped value")?;
                if shape.is_empty() {
                    return self.err("reshape to rank 0");
                }
                let mut dims = Vec::new();
                for a in shape {
                    self.atom_of(a, PrimType::I64, "reshape dimension")?;
                    dims.push(self.size_dim(a));
                }
                self.expect_pat(pat, &[Type::Array(p, dims)])
            }
            Exp::Rearrange(perm, v) => {
                let (p, dims) = self.array_var(*v, "rearranged value")?;
                let mut seen = vec![false; dims.len()];
                if perm.len() != dims.len()
                    || perm
                        .iter()
                        .any(|&k| k >= dims.len() || std::mem::replace(&mut seen[k], true))
                {
                    return self.err(format!(
                        "{perm:?} is not a permutation of {} dimensions",
                        dims.len()
                    ));
                }
                let nd = perm.iter().map(|&k| dims[k]).collect();
                self.expect_pat(pat, &[Type::Array(p, nd)])
            }
            Exp::Concat(vs) => {
                if vs.is_empty() {
                    return self.err("concatenation of no arrays");
                }
                let (p, dims) = self.array_var(vs[0], "concatenated value")?;
                for v in &vs[1..] {
                    let (q, d2) = self.array_var(*v, "concatenated value")?;
                    let inner_ok = d2.len() == dims.len()
                        && dims[1..]
                            .iter()
                            .zip(&d2[1..])
                            .all(|(a, b)| self.dims_fit(a, b));
                    if q != p || !inner_ok {
                        let (a, b) = (
                            show(&Type::Array(p, dims.clone())),
                            show(&Type::Array(q, d2)),
                        );
                        return self.err(format!("concatenation of arrays of types {a} and {b}"));
                    }
                }
                let [pt] = pat else {
                    return self.err(format!(
                        "concat binds one value, the pattern has {}",
                        pat.len()
                    ));
                };
                let mut want = dims.clone();
                want[0] = Dim::Ext;
                let want = Type::Array(p, want);
                if !self.fits(&want, &pt.ty) {
                    let size_only = Self::same_shape_kind(&want, &pt.ty);
                    let msg = format!(
                        "concat result has type {}, the pattern {}",
                        show(&want),
                        show(&pt.ty)
                    );
                    return self.report(msg, size_only);
                }
                Ok(())
            }
            Exp::Rotate(r, v) => {
                let rt = self.prim_atom(r, "rotation amount")?;
                if !rt.is_int() {
                    return self.err(format!("rotation amount has type {rt}"));
                }
                let (p, dims) = self.array_var(*v, "rotated value")?;
                self.expect_pat(pat, &[Type::Array(p, dims)])
            }
            Exp::Reverse(v) => {
                let (p, dims) = self.array_var(*v, "reversed value")?;
                self.expect_pat(pat, &[Type::Array(p, dims)])
            }
            Exp::AssertEqSizes(xs, _) => {
                for a in xs {
                    self.atom_of(a, PrimType::I64, "compared size")?;
                }
                self.expect_pat(pat, &[])
            }
            Exp::Assert(c, msg, xs) => {
                self.atom_of(c, PrimType::Bool, "assertion")?;
                for x in xs {
                    self.prim_atom(x, "value shown by an assertion")?;
                }
                if msg.matches("{}").count() != xs.len() {
                    return self.err(format!(
                        "assertion message {msg:?} has {} holes for {} values",
                        msg.matches("{}").count(),
                        xs.len()
                    ));
                }
                self.expect_pat(pat, &[])
            }
            _ => unreachable!("stm_exp passes only array constructs to array_exp"),
        }
    }

    /// [`Self::stm_exp`] of an accumulator construct (`with_acc`, `update_acc`)
    /// or an AD construct (`jvp`, `vjp`, `with_vjp`).
    fn acc_ad_exp(&mut self, e: &Exp, pat: &[Param]) -> Check<()> {
        match e {
            Exp::WithAcc { inputs, lam } => {
                let mut accs = Vec::new();
                let mut arrays = Vec::new();
                for input in inputs {
                    let (p, d) = self.array_var(input.array, "with_acc input")?;
                    match &input.op {
                        AccOp::Add if !p.is_numeric() => {
                            return self.err(format!("with_acc: `add` on elements of type {p}"));
                        }
                        AccOp::Lambda(op, neutral) => {
                            let scalar = [Type::Prim(p)];
                            self.operator(op, &scalar, std::slice::from_ref(neutral), "with_acc")?;
                        }
                        _ => {}
                    }
                    accs.push(Type::Acc(p, d.clone()));
                    arrays.push(Type::Array(p, d));
                }
                self.expect_kinds(
                    "with_acc lambda parameters",
                    &accs,
                    &Self::pat_types(&lam.params),
                )?;
                if lam.ret.len() < accs.len() {
                    return self.err(format!(
                        "with_acc lambda returns {} values, fewer than its {} accumulators",
                        lam.ret.len(),
                        accs.len()
                    ));
                }
                self.expect_kinds("with_acc lambda results", &accs, &lam.ret[..accs.len()])?;
                self.lambda(lam, "with_acc")?;
                let mut want = arrays;
                want.extend(lam.ret[accs.len()..].iter().cloned());
                self.expect_kinds("with_acc results", &want, &Self::pat_types(pat))
            }
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => {
                let t = self.var_type(*acc)?;
                let Type::Acc(p, dims) = &t else {
                    return self.err(format!(
                        "update_acc of {}, which is not an accumulator but has type {}",
                        self.name(*acc),
                        show(&t)
                    ));
                };
                if indices.len() > dims.len() {
                    return self.err(format!(
                        "update_acc with {} indices into an accumulator of rank {}",
                        indices.len(),
                        dims.len()
                    ));
                }
                for i in indices {
                    self.atom_of(i, PrimType::I64, "update_acc index")?;
                }
                let cell = if indices.len() == dims.len() {
                    Type::Prim(*p)
                } else {
                    Type::Array(*p, dims[indices.len()..].to_vec())
                };
                let vt = self.atom_type(value)?;
                self.expect_kinds("update_acc value", &[cell], &[vt])?;
                let t = t.clone();
                self.expect_pat(pat, &[t])
            }
            Exp::Jvp {
                lam,
                primals,
                tangents,
            } => {
                let pts = Self::pat_types(&lam.params);
                let prim_ts = self.atom_types(primals)?;
                let tan_ts = self.atom_types(tangents)?;
                self.expect_kinds("jvp primals", &pts, &prim_ts)?;
                self.expect_kinds("jvp tangents", &pts, &tan_ts)?;
                self.lambda(lam, "jvp")?;
                let mut want = lam.ret.clone();
                want.extend(lam.ret.iter().cloned());
                self.expect_kinds("jvp results", &Self::pat_types(pat), &want)
            }
            Exp::Vjp {
                lam,
                primals,
                adjoints,
            } => {
                let pts = Self::pat_types(&lam.params);
                let prim_ts = self.atom_types(primals)?;
                let adj_ts = self.atom_types(adjoints)?;
                self.expect_kinds("vjp primals", &pts, &prim_ts)?;
                self.expect_kinds("vjp adjoints", &lam.ret, &adj_ts)?;
                self.lambda(lam, "vjp")?;
                let mut want = lam.ret.clone();
                want.extend(pts);
                self.expect_kinds("vjp results", &Self::pat_types(pat), &want)
            }
            Exp::WithVjp {
                lam,
                rule,
                args,
                tape,
            } => {
                let pts = Self::pat_types(&lam.params);
                let arg_ts = self.atom_types(args)?;
                self.expect_kinds("with_vjp arguments", &pts, &arg_ts)?;
                if *tape > lam.ret.len() {
                    return self.err(format!(
                        "with_vjp saves {tape} values but its function returns {}",
                        lam.ret.len()
                    ));
                }
                self.lambda(lam, "with_vjp")?;
                self.lambda(rule, "with_vjp rule")?;
                // The rule takes the saved values and one adjoint per result,
                // and returns one adjoint per argument.
                let rule_pts = Self::pat_types(&rule.params);
                self.expect_kinds("with_vjp rule parameters", &lam.ret, &rule_pts)?;
                self.expect_kinds("with_vjp rule results", &pts, &rule.ret)?;
                self.expect_kinds("with_vjp results", &Self::pat_types(pat), &lam.ret)
            }
            _ => unreachable!("stm_exp passes only accumulator and AD constructs to acc_ad_exp"),
        }
    }

    /// The dimension an `i64` atom denotes.
    fn size_dim(&self, a: &Atom) -> Dim {
        match a {
            Atom::Const(c) => match c {
                nabla_prim::PrimValue::I64(n) => Dim::Const(*n),
                _ => Dim::Ext,
            },
            Atom::Var(v) => Dim::Var(*v),
        }
    }

    /// The type of `arr[idx]` for an array of element `p` and `dims`.
    fn index_result(&mut self, p: PrimType, dims: &[Dim], idx: &[DimIndex]) -> Check<Type> {
        if idx.len() > dims.len() {
            return self.err(format!(
                "{} indices into an array of rank {}",
                idx.len(),
                dims.len()
            ));
        }
        let mut out = Vec::new();
        for (i, d) in idx.iter().enumerate() {
            match d {
                DimIndex::Fix(a) => self.atom_of(a, PrimType::I64, "index")?,
                DimIndex::Slice { start, len, stride } => {
                    self.atom_of(start, PrimType::I64, "slice start")?;
                    self.atom_of(len, PrimType::I64, "slice length")?;
                    self.atom_of(stride, PrimType::I64, "slice stride")?;
                    let _ = i;
                    out.push(self.size_dim(len));
                }
            }
        }
        out.extend(dims[idx.len()..].iter().cloned());
        Ok(if out.is_empty() {
            Type::Prim(p)
        } else {
            Type::Array(p, out)
        })
    }

    /// Row types of the arrays, checking each is an array.
    fn rows(&mut self, arrs: &[Var], what: &str) -> Check<Vec<Type>> {
        let mut rows = Vec::new();
        for v in arrs {
            // An accumulator given to a `map` is threaded through every
            // iteration whole (it is its own "row").
            if let Ok(t @ Type::Acc(..)) = self.var_type(*v) {
                rows.push(t);
                continue;
            }
            let (p, d) = self.array_var(*v, what)?;
            rows.push(Type::Array(p, d).row().expect("array has a row type"));
        }
        Ok(rows)
    }

    /// Checks a reduce/scan/hist operator: 2k params (accumulators then
    /// elements) of the row types, k results of the row types.
    fn operator(&mut self, lam: &Lambda, rows: &[Type], neutral: &[Atom], what: &str) -> Check<()> {
        let nts = self.atom_types(neutral)?;
        self.expect_kinds(&format!("{what} neutral elements"), rows, &nts)?;
        let mut want = rows.to_vec();
        want.extend(rows.iter().cloned());
        self.expect_kinds(
            &format!("{what} operator parameters"),
            &want,
            &Self::pat_types(&lam.params),
        )?;
        self.expect_kinds(&format!("{what} operator results"), rows, &lam.ret)?;
        self.lambda(lam, what)
    }

    fn soac(&mut self, s: &Soac, pat: &[Param]) -> Check<()> {
        match s {
            Soac::Map { w, lam, arrs } => {
                self.atom_of(w, PrimType::I64, "map width")?;
                let rows = self.rows(arrs, "map input")?;
                self.expect_kinds(
                    "map lambda parameters",
                    &Self::pat_types(&lam.params),
                    &rows,
                )?;
                self.lambda(lam, "map")?;
                let d = self.size_dim(w);
                let want: Vec<Type> = lam.ret.iter().map(|t| t.array_of(d)).collect();
                self.expect_kinds("map results", &Self::pat_types(pat), &want)?;
                self.outer_dims(pat, d)
            }
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                ..
            } => {
                self.atom_of(w, PrimType::I64, "reduce width")?;
                let rows = self.rows(arrs, "reduce input")?;
                self.operator(lam, &rows, neutral, "reduce")?;
                self.expect_kinds("reduce results", &Self::pat_types(pat), &rows)
            }
            Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => {
                self.atom_of(w, PrimType::I64, "scan width")?;
                let rows = self.rows(arrs, "scan input")?;
                self.operator(lam, &rows, neutral, "scan")?;
                let d = self.size_dim(w);
                let want: Vec<Type> = rows.iter().map(|t| t.array_of(d)).collect();
                self.expect_kinds("scan results", &Self::pat_types(pat), &want)?;
                self.outer_dims(pat, d)
            }
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => {
                self.atom_of(w, PrimType::I64, "hist width")?;
                let drows = self.rows(dest, "hist destination")?;
                let (ip, idims) = self.array_var(*indices, "hist indices")?;
                if ip != PrimType::I64 || idims.len() != 1 {
                    return self.err(format!(
                        "hist indices have type {}",
                        show(&Type::Array(ip, idims))
                    ));
                }
                let vrows = self.rows(values, "hist values")?;
                self.expect_kinds("hist values", &drows, &vrows)?;
                self.operator(lam, &drows, neutral, "hist")?;
                let dts = dest
                    .iter()
                    .map(|v| self.var_type(*v))
                    .collect::<Check<Vec<_>>>()?;
                self.expect_kinds("hist results", &Self::pat_types(pat), &dts)
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                self.atom_of(w, PrimType::I64, "scatter width")?;
                if dest.len() != values.len() || dest.is_empty() || indices.is_empty() {
                    return self.err(format!(
                        "scatter with {} destinations, {} index arrays and {} value arrays",
                        dest.len(),
                        indices.len(),
                        values.len()
                    ));
                }
                for iv in indices {
                    let (ip, idims) = self.array_var(*iv, "scatter indices")?;
                    if ip != PrimType::I64 || idims.len() != 1 {
                        return self.err(format!(
                            "scatter indices have type {}",
                            show(&Type::Array(ip, idims))
                        ));
                    }
                }
                let mut dts = Vec::new();
                for (dv, vv) in dest.iter().zip(values) {
                    let (dp, ddims) = self.array_var(*dv, "scatter destination")?;
                    let (vp, vdims) = self.array_var(*vv, "scatter values")?;
                    if indices.len() > ddims.len()
                        || dp != vp
                        || vdims.len() != ddims.len() - indices.len() + 1
                    {
                        return self.err(format!(
                            "scatter of values {} into {} with {} index arrays",
                            show(&Type::Array(vp, vdims)),
                            show(&Type::Array(dp, ddims)),
                            indices.len()
                        ));
                    }
                    dts.push(Type::Array(dp, ddims));
                }
                self.expect_kinds("scatter results", &Self::pat_types(pat), &dts)
            }
        }
    }

    /// The outer dimension of each pattern type fits the SOAC width.
    fn outer_dims(&mut self, pat: &[Param], d: Dim) -> Check<()> {
        for p in pat {
            if let Type::Array(_, dims) = &p.ty {
                if !dims.is_empty() && !self.dims_fit(&dims[0], &d) {
                    let n = self.name(p.var);
                    return self.size_err(format!(
                        "outer size of {n}: {} does not fit the SOAC width",
                        show(&p.ty)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The first inconsistency between an entry point's signature and its
/// arities: counts, a transparent type spanning other than one value, an
/// opaque's flat count, fields and constructor payloads outside their
/// opaque, an array element whose flat count is not the array's.
fn check_signature(
    sig: &crate::EntrySignature,
    param_arity: &[usize],
    result_arity: &[usize],
) -> Result<(), String> {
    fn check_type(t: &crate::EntryType, arity: usize) -> Result<(), String> {
        match &t.opaque {
            None if arity != 1 => Err(format!(
                "type {} is not opaque but spans {arity} values",
                t.name
            )),
            None => Ok(()),
            Some(o) => {
                if o.flat != arity {
                    return Err(format!(
                        "opaque type {} has {} values, but its arity is {arity}",
                        t.name, o.flat
                    ));
                }
                let payloads = o.variants.iter().flatten().flat_map(|v| &v.payload);
                for f in o.fields.iter().flatten().chain(payloads) {
                    if f.start + f.len > arity {
                        return Err(format!(
                            "field {} of {} covers values beyond its {arity}",
                            f.name, t.name
                        ));
                    }
                    check_type(&f.ty, f.len)?;
                }
                if o.variants.as_ref().is_some_and(|v| v.len() > 128) {
                    return Err(format!(
                        "sum type {} has more than 128 constructors",
                        t.name
                    ));
                }
                if let Some((_, elem)) = &o.element {
                    check_type(elem, arity)?;
                }
                Ok(())
            }
        }
    }
    if sig.params.len() != param_arity.len() {
        return Err(format!(
            "{} parameters for {} arities",
            sig.params.len(),
            param_arity.len()
        ));
    }
    if sig.results.len() != result_arity.len() {
        return Err(format!(
            "{} results for {} arities",
            sig.results.len(),
            result_arity.len()
        ));
    }
    for (p, &n) in sig.params.iter().zip(param_arity) {
        check_type(&p.ty, n)?;
    }
    for (t, &n) in sig.results.iter().zip(result_arity) {
        check_type(t, n)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{p, stm, v};
    use crate::{EntryPoint, FunId};
    use nabla_prim::{CmpOp, PrimValue};

    fn c64(x: f64) -> Atom {
        Atom::Const(PrimValue::F64(x))
    }
    const F64: Type = Type::Prim(PrimType::F64);
    const I64: Type = Type::Prim(PrimType::I64);
    const BOOL: Type = Type::Prim(PrimType::Bool);
    fn arr(d: Dim) -> Type {
        Type::Array(PrimType::F64, vec![d])
    }

    fn fun(name: &str, params: Vec<Param>, ret: Vec<Type>, body: Body, nvars: usize) -> Function {
        Function {
            name: name.into(),
            params,
            unique_ret: vec![false; ret.len()],
            ret,
            body,
            var_names: (0..nvars).map(|i| format!("x{i}")).collect(),
            span: Span::default(),
        }
    }

    fn prog(fs: Vec<Function>) -> Program {
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

    /// sum of squares with map, reduce, a loop and an if: a valid program.
    fn good() -> Program {
        let n = Dim::Var(Var(0));
        let sq = Lambda {
            params: vec![p(3, F64)],
            body: Body {
                stms: vec![stm(vec![p(4, F64)], Exp::BinOp(BinOp::Mul, v(3), v(3)))],
                result: vec![v(4)],
            },
            ret: vec![F64],
        };
        let add = Lambda {
            params: vec![p(5, F64), p(6, F64)],
            body: Body {
                stms: vec![stm(vec![p(7, F64)], Exp::BinOp(BinOp::Add, v(5), v(6)))],
                result: vec![v(7)],
            },
            ret: vec![F64],
        };
        let body = Body {
            stms: vec![
                stm(
                    vec![p(2, arr(n))],
                    Exp::Soac(Soac::Map {
                        w: v(0),
                        lam: sq,
                        arrs: vec![Var(1)],
                    }),
                ),
                stm(
                    vec![p(8, F64)],
                    Exp::Soac(Soac::Reduce {
                        w: v(0),
                        lam: add,
                        neutral: vec![c64(0.0)],
                        arrs: vec![Var(2)],
                        commutative: true,
                    }),
                ),
                stm(
                    vec![p(9, F64)],
                    Exp::Loop {
                        params: vec![p(10, F64)],
                        init: vec![v(8)],
                        form: LoopForm::For {
                            i: Var(11),
                            bound: v(0),
                        },
                        body: Body {
                            stms: vec![
                                stm(
                                    vec![p(12, F64)],
                                    Exp::Index(Var(1), vec![DimIndex::Fix(v(11))]),
                                ),
                                stm(vec![p(13, F64)], Exp::BinOp(BinOp::Sub, v(10), v(12))),
                            ],
                            result: vec![v(13)],
                        },
                    },
                ),
                stm(vec![p(14, BOOL)], Exp::CmpOp(CmpOp::Lt, v(9), c64(0.0))),
                stm(
                    vec![p(15, F64)],
                    Exp::If {
                        cond: v(14),
                        then_: Body {
                            stms: vec![stm(vec![p(16, F64)], Exp::UnOp(UnOp::Neg, v(9)))],
                            result: vec![v(16)],
                        },
                        else_: Body {
                            stms: vec![],
                            result: vec![v(9)],
                        },
                    },
                ),
                stm(vec![p(17, I64)], Exp::Size(Var(2), 0)),
                stm(
                    vec![],
                    Exp::AssertEqSizes(vec![v(17), v(0)], "sizes".into()),
                ),
            ],
            result: vec![v(15), v(2)],
        };
        prog(vec![fun(
            "main",
            vec![p(0, I64), p(1, arr(n))],
            vec![F64, arr(n)],
            body,
            18,
        )])
    }

    fn errors(p: &Program) -> String {
        match validate_program(p) {
            Ok(_) => String::new(),
            Err(es) => es
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The problems found, in order (empty for a valid program).
    fn problems(p: &Program) -> Vec<ValidationProblem> {
        match validate_program(p) {
            Ok(_) => Vec::new(),
            Err(es) => es.into_iter().map(|e| e.problem).collect(),
        }
    }

    #[test]
    fn good_program_validates() {
        assert_eq!(errors(&good()), "");
    }

    #[test]
    fn unbound_variable() {
        let mut pr = good();
        pr.functions[0].body.result[0] = v(16); // bound only inside the then-branch
        assert!(
            errors(&pr).contains("x16_16 is used but not in scope"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn use_before_binding() {
        let mut pr = good();
        pr.functions[0].body.stms.swap(0, 1);
        assert!(
            errors(&pr).contains("x2_2 is used but not in scope"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn loop_counter_not_visible_after_loop() {
        let mut pr = good();
        pr.functions[0]
            .body
            .stms
            .push(stm(vec![p(20, I64)], Exp::Atoms(vec![v(11)])));
        pr.functions[0].var_names.resize(21, "y".into());
        assert!(
            errors(&pr).contains("x11_11 is used but not in scope"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn double_binding() {
        let mut pr = good();
        // Rebind the lambda's parameter variable 3 at top level.
        pr.functions[0]
            .body
            .stms
            .push(stm(vec![p(3, F64)], Exp::Atoms(vec![c64(1.0)])));
        assert!(
            errors(&pr).contains("x3_3 is bound twice"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn binop_type_mismatch() {
        let mut pr = good();
        pr.functions[0].body.stms.push(stm(
            vec![p(17 + 1, F64)],
            Exp::BinOp(BinOp::Add, v(8), v(0)),
        ));
        assert!(
            errors(&pr).contains("different types f64 and i64"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn cmp_must_bind_bool() {
        let mut pr = good();
        pr.functions[0].body.stms[3].pat[0].ty = F64;
        assert!(errors(&pr).contains("statement pattern"), "{}", errors(&pr));
    }

    #[test]
    fn conv_source_type() {
        let mut pr = good();
        pr.functions[0].body.stms.push(stm(
            vec![p(18, I64)],
            Exp::Conv(ConvOp::Convert(PrimType::I32, PrimType::I64), v(8)),
        ));
        assert!(
            errors(&pr).contains("conversion from i32 applied to a value of type f64"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn if_condition_must_be_bool() {
        let mut pr = good();
        if let Exp::If { cond, .. } = &mut pr.functions[0].body.stms[4].exp {
            *cond = v(8);
        }
        assert!(
            errors(&pr).contains("if condition must have type bool"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn if_branch_count_mismatch() {
        let mut pr = good();
        if let Exp::If { else_, .. } = &mut pr.functions[0].body.stms[4].exp {
            else_.result.push(v(8));
        }
        assert!(
            errors(&pr).contains("else branch: expected 1 values"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn loop_body_result_type() {
        let mut pr = good();
        if let Exp::Loop { body, .. } = &mut pr.functions[0].body.stms[2].exp {
            body.result[0] = v(11); // the i64 counter
        }
        assert!(errors(&pr).contains("loop body result"), "{}", errors(&pr));
    }

    #[test]
    fn index_type_and_rank() {
        let mut pr = good();
        if let Exp::Loop { body, .. } = &mut pr.functions[0].body.stms[2].exp {
            body.stms[0].exp = Exp::Index(Var(1), vec![DimIndex::Fix(v(10))]);
        }
        assert!(
            errors(&pr).contains("index must have type i64"),
            "{}",
            errors(&pr)
        );
        let mut pr = good();
        if let Exp::Loop { body, .. } = &mut pr.functions[0].body.stms[2].exp {
            body.stms[0].exp = Exp::Index(Var(1), vec![DimIndex::Fix(v(11)), DimIndex::Fix(v(11))]);
        }
        assert!(
            errors(&pr).contains("2 indices into an array of rank 1"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn map_lambda_arity() {
        let mut pr = good();
        if let Exp::Soac(Soac::Map { arrs, .. }) = &mut pr.functions[0].body.stms[0].exp {
            arrs.push(Var(1));
        }
        assert!(
            errors(&pr).contains("map lambda parameters"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn reduce_operator_type() {
        let mut pr = good();
        if let Exp::Soac(Soac::Reduce { neutral, .. }) = &mut pr.functions[0].body.stms[1].exp {
            neutral[0] = Atom::Const(PrimValue::I32(0));
        }
        assert!(
            errors(&pr).contains("reduce neutral elements"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn static_size_mismatch() {
        let mut pr = good();
        // Claim the map result has 5 rows: n vs 5 is not statically decidable (ok),
        // but the function result says [n] and the pattern binds [x17] (a Var/Var clash).
        pr.functions[0].body.stms[0].pat[0].ty = arr(Dim::Var(Var(17)));
        let e = errors(&pr);
        assert!(
            problems(&pr).iter().any(|q| matches!(q,
                ValidationProblem::Size(m) if m.contains("size variable x17_17 is not in scope"))),
            "{e}"
        );
        assert!(validate_program(&pr).unwrap_err()[0].is_size_error());
        // With sizes off, only element types and ranks count.
        assert!(validate_program_with(&pr, ValidateOptions { sizes: false }).is_ok());
        let mut pr = good();
        if let Exp::Soac(Soac::Map { .. }) = pr.functions[0].body.stms[0].exp {
            pr.functions[0].body.stms[0].pat[0].ty = arr(Dim::Var(Var(1)));
        }
        assert!(
            errors(&pr).contains("has type [x0]f64, not i64") || errors(&pr).contains("not i64"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn const_dims_must_agree() {
        let body = Body {
            stms: vec![stm(
                vec![p(1, arr(Dim::Const(3)))],
                Exp::ArrayLit(vec![c64(1.0), c64(2.0)], F64),
            )],
            result: vec![v(1)],
        };
        let pr = prog(vec![fun(
            "main",
            vec![p(0, F64)],
            vec![arr(Dim::Ext)],
            body,
            2,
        )]);
        assert!(
            errors(&pr).contains("expected types ([3]f64), got ([2]f64)"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn apply_arity_and_bad_function() {
        let body = Body {
            stms: vec![stm(vec![p(1, F64)], Exp::Apply(FunId(0), vec![]))],
            result: vec![v(1)],
        };
        let pr = prog(vec![fun("main", vec![p(0, F64)], vec![F64], body, 2)]);
        assert!(
            errors(&pr).contains("arguments of call to main"),
            "{}",
            errors(&pr)
        );
        let body = Body {
            stms: vec![stm(vec![p(1, F64)], Exp::Apply(FunId(7), vec![v(0)]))],
            result: vec![v(1)],
        };
        let pr = prog(vec![fun("main", vec![p(0, F64)], vec![F64], body, 2)]);
        assert!(
            problems(&pr).iter().any(|q| matches!(q,
                ValidationProblem::Malformed(m) if m.contains("call of missing function #7"))),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn entry_signature_checks() {
        let mut pr = good();
        let n = pr.entries[0].param_arity.len();
        let params = (0..n)
            .map(|i| crate::EntryParam {
                name: format!("p{i}"),
                ty: crate::EntryType::transparent("f64", false),
            })
            .collect();
        let results = pr.entries[0]
            .result_arity
            .iter()
            .map(|_| crate::EntryType::transparent("f64", false))
            .collect();
        pr.entries[0].signature = Some(crate::EntrySignature { params, results });
        assert!(validate_program(&pr).is_ok());
        if let Some(sig) = &mut pr.entries[0].signature {
            sig.results
                .push(crate::EntryType::transparent("f64", false));
        }
        assert!(errors(&pr).contains("signature: "), "{}", errors(&pr));
    }

    #[test]
    fn entry_point_checks() {
        let mut pr = good();
        pr.entries[0].param_arity = vec![1];
        assert!(
            problems(&pr).iter().any(|q| matches!(q,
                ValidationProblem::Entry(m) if m.contains("parameter arities sum to 1"))),
            "{}",
            errors(&pr)
        );
        pr.entries[0].fun = FunId(3);
        assert!(
            errors(&pr).contains("missing function #3"),
            "{}",
            errors(&pr)
        );
    }

    #[test]
    fn var_out_of_range() {
        let mut pr = good();
        pr.functions[0].var_names.truncate(10);
        assert!(
            errors(&pr).contains("has no entry in var_names"),
            "{}",
            errors(&pr)
        );
    }
}
