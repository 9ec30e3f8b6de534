//! The evaluator's stops under a debugger (see [`crate::debug`]): offering
//! the possible stops to the hook, keeping the call stack, and building the
//! stack frames shown at a stop. These methods extend `Interp`; the
//! evaluator reaches them by method calls.

use crate::debug::{is_identifier, is_nan, CallRecord, StackFrame, StopReason};
use crate::eval::{Interp, Res};
use nabla_ir::{Atom, FunId, Param, Stm, Type};
use nabla_prim::PrimValue;
use nabla_syntax::Span;
use nabla_values::Value;

impl<'p> Interp<'p> {
    /// Called after an `Exp::Atoms` statement while debugging: stops when
    /// the hook wants to, with the statement's variables as the innermost
    /// frame's.
    #[cold]
    #[inline(never)]
    pub(crate) fn possible_breakpoint(&mut self, s: &[Value], stm: &Stm) -> Res<()> {
        let Some(debug) = self.debug.as_mut() else {
            return Ok(());
        };
        if !debug.hook.should_stop(StopReason::Breakpoint, stm.span) {
            return Ok(());
        }
        let variables = self.named_values(self.cur, stm.pat.iter().map(|p| (p, s)));
        self.stop(StopReason::Breakpoint, stm.span, variables);
        Ok(())
    }

    /// Called after a scalar operator while NaNs stop the run: stops when
    /// `result` is a new NaN, with the current function's parameters as the
    /// innermost frame's variables.
    #[cold]
    #[inline(never)]
    pub(crate) fn check_new_nan(
        &mut self,
        s: &[Value],
        stm: &Stm,
        operands: &[PrimValue],
        result: PrimValue,
    ) {
        if !is_nan(result) || operands.iter().any(|x| is_nan(*x)) {
            return;
        }
        let Some(debug) = self.debug.as_mut() else {
            return;
        };
        if !debug.hook.should_stop(StopReason::NewNan, stm.span) {
            return;
        }
        let params = &self.prog.functions[self.cur].params;
        let variables = self.named_values(self.cur, params.iter().map(|p| (p, s)));
        self.stop(StopReason::NewNan, stm.span, variables);
    }

    /// Calls `self.call` for a statement's `Apply`, keeping the call stack
    /// while debugging.
    pub(crate) fn call_debugged(
        &mut self,
        f: FunId,
        args: Vec<Value>,
        site: Span,
    ) -> Res<Vec<Value>> {
        if let Some(debug) = self.debug.as_mut() {
            debug.calls.push(CallRecord {
                callee: f,
                site,
                args: args.clone(),
            });
        }
        let r = self.call(f, args, false);
        if let Some(debug) = self.debug.as_mut() {
            debug.calls.pop();
        }
        r
    }

    /// Builds the stack and hands it to the hook.
    fn stop(&mut self, reason: StopReason, location: Span, variables: Vec<(String, Value)>) {
        let mut stack = vec![StackFrame {
            function: self.prog.functions[self.cur].name.clone(),
            location,
            variables,
        }];
        if let Some(debug) = self.debug.as_ref() {
            // The call `calls[i]` was made in the function `calls[i - 1]`
            // called, whose arguments are its parameters' values.
            for pair in debug.calls.windows(2).rev() {
                let (outer, inner) = (&pair[0], &pair[1]);
                let fi = outer.callee.0 as usize;
                let params = &self.prog.functions[fi].params;
                let values = params.iter().zip(&outer.args);
                stack.push(StackFrame {
                    function: self.prog.functions[fi].name.clone(),
                    location: inner.site,
                    variables: self.named_args(fi, values),
                });
            }
        }
        if let Some(debug) = self.debug.as_mut() {
            debug.hook.stopped(reason, &stack);
            self.nan_checks = debug.hook.nan_breaks();
        }
    }

    /// The values of `params` (read from their frames) with their names in
    /// function `fi`, leaving out unnamed variables and accumulators.
    fn named_values<'v>(
        &self,
        fi: usize,
        params: impl Iterator<Item = (&'v Param, &'v [Value])>,
    ) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for (p, s) in params {
            if let Ok(v) = self.value(s, &Atom::Var(p.var)) {
                out.extend(self.named(fi, p, v));
            }
        }
        out
    }

    /// [`Interp::named_values`] of parameters with given values.
    fn named_args<'v>(
        &self,
        fi: usize,
        params: impl Iterator<Item = (&'v Param, &'v Value)>,
    ) -> Vec<(String, Value)> {
        params
            .filter_map(|(p, v)| self.named(fi, p, v.clone()))
            .collect()
    }

    fn named(&self, fi: usize, p: &Param, v: Value) -> Option<(String, Value)> {
        if matches!(p.ty, Type::Acc(..)) {
            return None;
        }
        let name = self.prog.functions[fi].var_names.get(p.var.0 as usize)?;
        let name = nabla_ir::builder::base_name(name);
        is_identifier(name).then(|| (name.to_string(), v))
    }
}
