//! User-given rules: the return sweep of `with_vjp` (Futhark's custom
//! derivatives, futhark-internals.md §2) applies the rule to the saved values
//! and the results' adjoints.

use super::adjoints::{Adjoints, Results, Reverse};
use crate::util::{type_of, zero_like};
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{Atom, Exp, Lambda, Stm};
use std::collections::HashMap;

impl Reverse<'_> {
    /// The return sweep of `pat = with_vjp(tape, f, rule, args)` (Futhark's
    /// `with_vjp`, futhark-internals.md §2): the rule, copied with fresh
    /// variables, applied to the saved values (`pat[..tape]`, bound by the
    /// forward sweep, which keeps the statement) and the results' adjoints
    /// (zero where absent); its results are added to the arguments'
    /// adjoints. The free variables of `f` and the saved values get none.
    pub(super) fn custom_rule(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        res: Results,
        rule: &Lambda,
        args: &[Atom],
        tape: usize,
    ) -> Result<(), AdError> {
        let Results { pat, ybar } = res;
        if ybar[tape..].iter().all(|y| y.is_none()) {
            return Ok(());
        }
        if rule.params.len() != pat.len() || rule.body.result.len() != args.len() {
            return error(
                self.span,
                "internal error: malformed with_vjp (arities differ)",
            );
        }
        let mut map = HashMap::new();
        for (j, (p, r)) in rule.params.iter().zip(pat).enumerate() {
            let a = if j < tape {
                Atom::Var(r.var)
            } else {
                match ybar[j] {
                    Some(y) => y,
                    None => zero_like(b, self.span, r.var)?,
                }
            };
            map.insert(p.var, a);
        }
        let copy = self.fresh_copy(b, &rule.body, map)?;
        nabla_ir::visit::for_each_stm(&copy, &mut |s| {
            if let (Exp::WithVjp { .. }, Some(p)) = (&s.exp, s.pat.first()) {
                self.in_rules.insert(p.var);
            }
        });
        for s in copy.stms {
            b.push(s);
        }
        for (x, c) in args.iter().zip(copy.result) {
            let (Atom::Var(x), Atom::Var(cv)) = (x, c) else {
                if let Atom::Var(x) = x {
                    self.add_shared(b, adj, *x, c)?;
                }
                continue;
            };
            // The rule's adjoint must have the argument's shape (a run-time
            // check: the rule is user code).
            let rank = type_of(b, self.span, *x)?.rank();
            for d in 0..rank {
                let n_arg = b.let1("n", Exp::Size(*x, d))?;
                let n_adj = b.let1("n", Exp::Size(cv, d))?;
                b.push(Stm {
                    pat: vec![],
                    exp: Exp::AssertEqSizes(
                        vec![Atom::Var(n_arg), Atom::Var(n_adj)],
                        "with_vjp: the derivative rule's adjoint does not have the argument's shape"
                            .into(),
                    ),
                    span: self.span,
                });
            }
            self.add_shared(b, adj, *x, c)?;
        }
        Ok(())
    }
}
