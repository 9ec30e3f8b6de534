//! The operators of `reduce`, `scan` and `reduce_by_index`: recognising the
//! special ones (`+`, `*`, `min`/`max`, vectorised operators, after Schenck,
//! Rønning, Henriksen and Oancea, "AD for an Array Language with Nested
//! Parallelism" (SC22), §5.1–5.2, and Bruun and Larsen, "Reverse Automatic
//! Differentiation in Futhark" (master's thesis, 2022), §6.5 and §7.3),
//! applying an operator, its local vjp (the partial derivatives of the generic
//! rules), exclusive scans, and the loops the sequential rules emit.

use super::adjoints::{Adjoints, Reverse};
use super::expand_vjp;
use crate::util::type_of;
use crate::{error, AdError};
use nabla_ir::builder::FunctionBuilder;
use nabla_ir::{
    Atom, BinOp, Body, Dim, DimIndex, Exp, Lambda, LoopForm, Param, Soac, Span, Stm, Type, Var,
};

/// Pushes `loop (params = init) for i < bound do body` (`counter` is
/// `(i, bound)`), its results bound to fresh variables of the parameters'
/// types, the one of parameter `c` named `name(c)`; returns them.
pub(super) fn push_for_loop(
    b: &mut FunctionBuilder,
    params: Vec<Param>,
    init: Vec<Atom>,
    counter: (Var, Atom),
    body: Body,
    span: Span,
    name: impl Fn(usize) -> &'static str,
) -> Vec<Var> {
    let out: Vec<Param> = params
        .iter()
        .enumerate()
        .map(|(c, p)| b.param(name(c), p.ty.clone()))
        .collect();
    let vars = out.iter().map(|p| p.var).collect();
    let (i, bound) = counter;
    b.push(Stm {
        pat: out,
        exp: Exp::Loop {
            params,
            init,
            form: LoopForm::For { i, bound },
            body,
        },
        span,
    });
    vars
}

/// `if at_edge then neutral else scanned[index]` (an exclusive scan's
/// element, reading `scanned` only in bounds).
pub(super) fn exclusive(
    b: &mut FunctionBuilder,
    at_edge: Atom,
    neutral: Atom,
    scanned: Var,
    index: Atom,
) -> Result<Atom, AdError> {
    b.begin();
    let x = b.let1("scanned", Exp::Index(scanned, vec![DimIndex::Fix(index)]))?;
    let else_ = b.end(vec![Atom::Var(x)]);
    let then_ = Body {
        stms: vec![],
        result: vec![neutral],
    };
    Ok(Atom::Var(b.let1(
        "excl",
        Exp::If {
            cond: at_edge,
            then_,
            else_,
        },
    )?))
}

/// The binary operator `op` when a reduction/scan operator is just
/// `\a b -> a op b` (either argument order) on one value.
pub(super) fn single_binop(lam: &Lambda) -> Option<BinOp> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    let [s] = lam.body.stms.as_slice() else {
        return None;
    };
    let [Atom::Var(r)] = lam.body.result.as_slice() else {
        return None;
    };
    match s.exp {
        Exp::BinOp(op, Atom::Var(x), Atom::Var(y))
            if s.pat.len() == 1
                && s.pat[0].var == *r
                && ((x == a.var && y == b.var) || (x == b.var && y == a.var)) =>
        {
            Some(op)
        }
        _ => None,
    }
}

/// The scalar operator of a vectorised reduction operator
/// `\a b -> map2 op a b` (rows of one array each; size checks allowed
/// before the map), with its parameters in the order of `a` and `b`.
pub(super) fn vectorised_operator(lam: &Lambda) -> Option<Lambda> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    if a.ty.rank() != 1 || b.ty.rank() != 1 {
        return None;
    }
    let [Atom::Var(r)] = lam.body.result.as_slice() else {
        return None;
    };
    let (last, before) = lam.body.stms.split_last()?;
    if !before
        .iter()
        .all(|s| matches!(s.exp, Exp::Size(..) | Exp::AssertEqSizes(..)))
    {
        return None;
    }
    let Exp::Soac(Soac::Map {
        lam: inner, arrs, ..
    }) = &last.exp
    else {
        return None;
    };
    if last.pat.len() != 1 || last.pat[0].var != *r || inner.params.len() != 2 {
        return None;
    }
    let mut op = inner.clone();
    if arrs.as_slice() == [a.var, b.var] {
        Some(op)
    } else if arrs.as_slice() == [b.var, a.var] {
        op.params.swap(0, 1);
        Some(op)
    } else {
        None
    }
}

/// Whether a reduction operator is `+` on one value.
pub(super) fn is_plus(lam: &Lambda) -> bool {
    single_binop(lam) == Some(BinOp::Add)
}

/// Whether a reduction operator is `min` or `max` on one value.
pub(super) fn is_min_or_max(lam: &Lambda) -> bool {
    matches!(single_binop(lam), Some(BinOp::Min | BinOp::Max))
}

/// A reduction or scan `result = soac op neutral arr` over `w` rows whose
/// operator `op` is a scalar operator mapped over the rows (a vectorised
/// operator, recognised by [`vectorised_operator`]), in the return sweep
/// with the adjoint `g` of its result.
#[derive(Clone, Copy)]
pub(super) struct Vectorised<'a> {
    pub(super) w: Atom,
    pub(super) op: &'a Lambda,
    pub(super) neutral: Atom,
    pub(super) arr: Var,
    pub(super) result: Var,
    pub(super) g: Var,
}

impl Reverse<'_> {
    /// Copies the operator's body applied to `args` into the open body;
    /// returns its results.
    pub(super) fn apply_op(
        &self,
        b: &mut FunctionBuilder,
        op: &Lambda,
        args: &[Atom],
    ) -> Result<Vec<Atom>, AdError> {
        let body = self.applied(b, op, args)?;
        for s in body.stms {
            b.push(s);
        }
        Ok(body.result)
    }

    /// The operator's body applied to `args` (one per parameter, in
    /// order), copied with fresh variables but not emitted.
    pub(super) fn applied(
        &self,
        b: &mut FunctionBuilder,
        op: &Lambda,
        args: &[Atom],
    ) -> Result<Body, AdError> {
        let map = op
            .params
            .iter()
            .map(|p| p.var)
            .zip(args.iter().copied())
            .collect();
        self.fresh_copy(b, &op.body, map)
    }

    /// The adjoints of the parameters of a function made on the spot (the
    /// operator's vjp in the generic reduce, scan and reduce_by_index
    /// rules), at `primals` with the adjoints `seeds` of its results: its
    /// parameters have the types `params`, `body` builds its body (results
    /// of the types `ret`) on them, and its `vjp` is expanded statically
    /// into the open body.
    pub(super) fn local_vjp(
        &mut self,
        b: &mut FunctionBuilder,
        params: &[Type],
        ret: &[Type],
        primals: Vec<Atom>,
        seeds: Vec<Atom>,
        body: impl FnOnce(&Self, &mut FunctionBuilder, &[Atom]) -> Result<Body, AdError>,
    ) -> Result<Vec<Atom>, AdError> {
        let ps: Vec<Param> = params.iter().map(|t| b.param("x", t.clone())).collect();
        let args: Vec<Atom> = ps.iter().map(|p| Atom::Var(p.var)).collect();
        let body = body(self, b, &args)?;
        let local = Lambda {
            params: ps,
            body,
            ret: ret.to_vec(),
        };
        let mut out: Vec<Param> = ret.iter().map(|t| b.param("y", t.clone())).collect();
        out.extend(params.iter().map(|t| b.param("adj", t.clone())));
        expand_vjp(self.ad, b, &out, local, primals, seeds, self.span)?;
        Ok(out[ret.len()..].iter().map(|p| Atom::Var(p.var)).collect())
    }

    /// The adjoint of a reduction or scan `v` with a vectorised operator
    /// over `arr: [n][m]` (floats): the columns of `arr` (its transpose),
    /// of `result` and of its adjoint `g` (transposed too where they have
    /// rank 2, as a scan's do) and the `m` neutral elements go through one
    /// map;
    /// per column, `column_rule(col, ne_j, result_j, g_j)` adds the column's
    /// adjoint to the `Adjoints` it is given. The columns' adjoints are
    /// transposed back and added to `arr`'s.
    pub(super) fn by_columns(
        &mut self,
        b: &mut FunctionBuilder,
        adj: &mut Adjoints,
        v: Vectorised,
        mut column_rule: impl FnMut(
            &mut Self,
            &mut FunctionBuilder,
            &mut Adjoints,
            [Var; 4],
        ) -> Result<(), AdError>,
    ) -> Result<(), AdError> {
        let Vectorised {
            arr,
            neutral,
            result,
            g,
            ..
        } = v;
        let span = self.span;
        let at = type_of(b, span, arr)?;
        if at.rank() != 2 {
            return error(
                span,
                "internal error: a vectorised operator on rows of rank > 1",
            );
        }
        let elem = at.elem();
        if !elem.is_float() {
            return Ok(());
        }
        let Atom::Var(ne) = neutral else {
            return error(span, "internal error: a constant neutral array");
        };
        let col_t = Type::Array(elem, vec![Dim::Ext]);
        let cols_t = Type::Array(elem, vec![Dim::Ext, Dim::Ext]);
        let columns = |b: &mut FunctionBuilder, v: Var| -> Result<(Var, Type), AdError> {
            Ok(match type_of(b, span, v)?.rank() {
                2 => (
                    b.bind1("columns", cols_t.clone(), Exp::Rearrange(vec![1, 0], v)),
                    col_t.clone(),
                ),
                _ => (v, Type::Prim(elem)),
            })
        };
        let (arr_columns, _) = columns(b, arr)?;
        let (result_columns, result_t) = columns(b, result)?;
        let (adj_columns, adj_t) = columns(b, g)?;
        let m = Atom::Var(b.let1("m", Exp::Size(ne, 0))?);
        let param_types = vec![col_t.clone(), Type::Prim(elem), result_t, adj_t];
        let lam = b.lambda::<AdError>("col", param_types, |b, ps| {
            let col = ps[0];
            let mut local = Adjoints::default();
            self.active.insert(col);
            column_rule(self, b, &mut local, [col, ps[1], ps[2], ps[3]])?;
            Ok(vec![self.materialize(b, &local, col)?])
        })?;
        let col_adjs = b.bind1(
            "adj_columns",
            cols_t.clone(),
            Exp::Soac(Soac::Map {
                w: m,
                lam,
                arrs: vec![arr_columns, ne, result_columns, adj_columns],
            }),
        );
        let rows = b.bind1("adj_rows", cols_t, Exp::Rearrange(vec![1, 0], col_adjs));
        self.add(b, adj, arr, Atom::Var(rows), false)
    }
}
