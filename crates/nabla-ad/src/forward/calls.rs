//! Calls in forward mode: a call goes to the callee's derived function
//! (`f_jvp`, with the tangents of the arguments whose tangents may be non-zero;
//! `f_jvp_batch` in vector mode), made once per function and set of tangent
//! flags.

use super::tangents::{batched_type, Batch, Forward, Tangents};
use crate::{error, unsupported, Ad, AdError};
use nabla_ir::builder::{base_name, FunctionBuilder, VarTable};
use nabla_ir::{Atom, Dim, Exp, FunId, Function, Param, Span, Stm, Type};

/// The forward-mode derivative of function `fid` for the parameters that
/// `active` marks (one flag per parameter): a function taking the
/// parameters and then one tangent per active parameter (the others have
/// zero tangents), returning the results and then one tangent per result.
/// Made once per function and set of active parameters; the derivative
/// for all parameters is named `NAME_jvp`, others `NAME_jvp_FLAGS` with
/// one `1`/`0` per parameter. With `batched` (vector mode, see
/// [`super::expand_batched_jvp`]), the parameters are followed by the number of
/// seeds `k` (an `i64`) and every tangent has an innermost dimension of
/// `k` seeds; the name gets `_batch` after `jvp`. A recursive function's
/// derivative calls itself: its id is taken before its body is made.
/// Recursion through the `jvp` being eliminated in the function itself
/// is left to the dynamic AD.
pub(crate) fn derived_function(
    ad: &mut Ad,
    fid: FunId,
    active: &[bool],
    batched: bool,
    span: Span,
) -> Result<FunId, AdError> {
    if let Some(d) = ad.derived.get(&(fid, active.to_vec(), batched)) {
        return Ok(*d);
    }
    let i = fid.0 as usize;
    if i >= ad.functions.len() {
        return error(
            span,
            format!("internal error: call of missing function #{i}"),
        );
    }
    ad.eliminate_in_function(i)?;
    if ad.transforming.contains(&i) {
        return unsupported(
            span,
            "a recursive call from a jvp in the called function's own body",
        );
    }
    let f = ad.functions[i].clone();
    if active.len() != f.params.len() {
        return error(
            span,
            format!(
                "internal error: call of `{}` with {} arguments for {} parameters",
                f.name,
                active.len(),
                f.params.len()
            ),
        );
    }
    let mut b = FunctionBuilder::with_vars(VarTable::of_function(&f));
    b.set_span(f.span);
    let mut tans = Tangents::default();
    let mut params = f.params.clone();
    let batch = if batched {
        let k = b.param("seeds", Type::Prim(nabla_ir::PrimType::I64));
        params.push(k.clone());
        Some(Batch {
            width: Atom::Var(k.var),
            dim: Dim::Var(k.var),
        })
    } else {
        None
    };
    let tangent_type = |t: &Type| match batch {
        Some(batch) => batched_type(t, batch.dim),
        None => t.clone(),
    };
    for (p, _) in f.params.iter().zip(active).filter(|(_, &a)| a) {
        let name = format!("{}_tan", base_name(b.vars.name(p.var)));
        let t = b.param(&name, tangent_type(&p.ty));
        tans.set(p.var, Some(Atom::Var(t.var)));
        params.push(t);
    }
    let id = FunId(ad.functions.len() as u32);
    ad.functions.push(crate::placeholder());
    ad.derived.insert((fid, active.to_vec(), batched), id);
    let mut fwd = Forward {
        ad,
        span: f.span,
        batch,
    };
    let made = fwd.stms(&mut b, f.body.stms, &mut tans).and_then(|()| {
        let mut results = f.body.result.clone();
        for a in &f.body.result {
            results.push(fwd.materialize(&mut b, &tans, a)?);
        }
        Ok(results)
    });
    let results = match made {
        Ok(r) => r,
        Err(e) => {
            // Forgotten (the placeholder stays, uncalled): the calls of it
            // made meanwhile are in code that this error discards too.
            ad.derived.remove(&(fid, active.to_vec(), batched));
            return Err(e);
        }
    };
    let body = b.end(results);
    let mut ret = f.ret.clone();
    ret.extend(f.ret.iter().map(tangent_type));
    let mut unique_ret = f.unique_ret.clone();
    unique_ret.extend(f.ret.iter().map(|_| false));
    let mode = if batched { "jvp_batch" } else { "jvp" };
    let name = if active.iter().all(|&a| a) {
        format!("{}_{mode}", f.name)
    } else {
        let flags: String = active.iter().map(|&a| if a { '1' } else { '0' }).collect();
        format!("{}_{mode}_{flags}", f.name)
    };
    let derived = Function {
        name,
        params,
        ret,
        unique_ret,
        body,
        var_names: b.vars.into_names(),
        span: f.span,
    };
    ad.functions[id.0 as usize] = derived;
    Ok(id)
}

impl Forward<'_> {
    /// A call: the callee's derived function on the arguments and their
    /// tangents.
    pub(super) fn apply(
        &mut self,
        b: &mut FunctionBuilder,
        tans: &mut Tangents,
        pat: Vec<Param>,
        f: FunId,
        args: Vec<Atom>,
    ) -> Result<(), AdError> {
        if args.iter().all(|a| tans.get(a).is_none()) {
            b.push(Stm {
                pat: pat.clone(),
                exp: Exp::Apply(f, args),
                span: self.span,
            });
            for p in &pat {
                tans.set(p.var, None);
            }
            return Ok(());
        }
        // Only the arguments with tangents get tangent parameters: the
        // callee's derivative is specialised to them (zero tangents of the
        // others are never built nor propagated).
        let active: Vec<bool> = args.iter().map(|a| tans.get(a).is_some()).collect();
        let derived = derived_function(self.ad, f, &active, self.batch.is_some(), self.span)?;
        let mut all = args.clone();
        if let Some(batch) = self.batch {
            all.push(batch.width);
        }
        for a in &args {
            if let Some(t) = tans.get(a) {
                all.push(t);
            }
        }
        let mut full = pat.clone();
        let tps: Vec<Param> = pat.iter().map(|p| self.tangent_param(b, p)).collect();
        full.extend(tps.iter().cloned());
        b.push(Stm {
            pat: full,
            exp: Exp::Apply(derived, all),
            span: self.span,
        });
        for (p, t) in pat.iter().zip(tps) {
            tans.set(p.var, Some(Atom::Var(t.var)));
        }
        Ok(())
    }
}
