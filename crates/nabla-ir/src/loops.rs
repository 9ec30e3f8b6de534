//! Loop rewrites asked for by attributes, applied by the elaborator:
//!
//! - [`strip_mine`] (`#[stripmine(k)] loop … for i < n`): the loop becomes
//!   `k` nested loops of about `n^(1/k)` iterations each (Schenck et al., SC22, §4.3).
//!   Same results; reverse mode then checkpoints each level's entry values,
//!   about `k·n^(1/k)` states instead of `n`, for about `k` extra runs of
//!   the loop body.
//! - [`bounded_while`] (`#[bound(n)] loop … while c`): the loop becomes a
//!   `for` loop of `n + 1` iterations whose body runs only while `c` holds,
//!   so reverse mode needs no extra run to count the iterations (Schenck et al., SC22
//!   §6.2). Running past the bound is a run-time error, not a wrong answer.

use crate::builder::{FunctionBuilder, UnknownVariable};
use crate::{Atom, BinOp, Body, CmpOp, ConvOp, Exp, LoopForm, Param, PrimType, PrimValue, Stm};

/// `loop params = init for i < bound do body`, strip-mined `depth` levels
/// deep (`depth ≥ 2`; 1 returns the loop unchanged). Statements computing
/// the block sizes go into the builder's open body; returns the outermost
/// loop, to be bound to one variable per parameter. `i` keeps its type (the
/// bound's); the iterations run in the same order as the original loop's.
pub fn strip_mine(
    b: &mut FunctionBuilder,
    params: Vec<Param>,
    init: Vec<Atom>,
    i: crate::Var,
    bound: Atom,
    body: Body,
    depth: usize,
) -> Result<Exp, UnknownVariable> {
    if depth < 2 {
        return Ok(Exp::Loop {
            params,
            init,
            form: LoopForm::For { i, bound },
            body,
        });
    }
    let i64t = crate::Type::Prim(PrimType::I64);
    let it = b.atom_type(&bound)?.elem();
    let n = if it == PrimType::I64 {
        bound
    } else {
        b.conv(ConvOp::Convert(it, PrimType::I64), bound)
    };
    let zero = Atom::Const(PrimValue::I64(0));
    let one = Atom::Const(PrimValue::I64(1));
    let n = b.binop(BinOp::Max, n, zero)?;
    // s = max(1, ceil(n^(1/depth))): the iterations of one level.
    let nf = b.conv(ConvOp::Convert(PrimType::I64, PrimType::F64), n);
    let root = b.binop(
        BinOp::Pow,
        nf,
        Atom::Const(PrimValue::F64(1.0 / depth as f64)),
    )?;
    let up = b.unop(crate::UnOp::Ceil, root)?;
    let s = b.conv(ConvOp::Convert(PrimType::F64, PrimType::I64), up);
    let s = b.binop(BinOp::Max, s, one)?;
    // blocks[l] = s^l: the iterations under one iteration of level l + 1.
    let mut blocks = vec![one];
    for _ in 1..depth {
        let last = blocks[blocks.len() - 1];
        blocks.push(b.binop(BinOp::Mul, last, s)?);
    }
    level(
        b, &params, init, i, it, &body, depth, zero, n, &blocks, &i64t,
    )
}

/// The loop of nesting level `l` (1 = innermost) over iterations
/// `offset … offset + count - 1` of the original loop.
#[allow(clippy::too_many_arguments)]
fn level(
    b: &mut FunctionBuilder,
    params: &[Param],
    init: Vec<Atom>,
    i: crate::Var,
    it: PrimType,
    body: &Body,
    l: usize,
    offset: Atom,
    count: Atom,
    blocks: &[Atom],
    i64t: &crate::Type,
) -> Result<Exp, UnknownVariable> {
    if l == 1 {
        // The original body, with i = offset + j.
        let j = b.vars.fresh("j", i64t.clone());
        b.begin();
        let at = b.binop(BinOp::Add, offset, Atom::Var(j))?;
        let exp = if it == PrimType::I64 {
            Exp::Atoms(vec![at])
        } else {
            Exp::Conv(ConvOp::Convert(PrimType::I64, it), at)
        };
        let span = b.span();
        b.push(Stm {
            pat: vec![Param::new(i, crate::Type::Prim(it))],
            exp,
            span,
        });
        for s in &body.stms {
            b.push(s.clone());
        }
        let inner = b.end(body.result.clone());
        return Ok(Exp::Loop {
            params: params.to_vec(),
            init,
            form: LoopForm::For { i: j, bound: count },
            body: inner,
        });
    }
    let block = blocks[l - 1];
    // ceil(count / block) iterations of this level.
    let one = Atom::Const(PrimValue::I64(1));
    let plus = b.binop(BinOp::Add, count, block)?;
    let plus = b.binop(BinOp::Sub, plus, one)?;
    let trips = b.binop(BinOp::IntDiv, plus, block)?;
    let o = b.vars.fresh("o", i64t.clone());
    let mut level_params = Vec::with_capacity(params.len());
    for p in params {
        let mut np = Param::new(b.vars.fresh_like(p.var)?, p.ty.clone());
        np.unique = p.unique;
        level_params.push(np);
    }
    b.begin();
    let done = b.binop(BinOp::Mul, Atom::Var(o), block)?;
    let start = b.binop(BinOp::Add, offset, done)?;
    let left = b.binop(BinOp::Sub, count, done)?;
    let size = b.binop(BinOp::Min, block, left)?;
    let cur = level_params.iter().map(|p| Atom::Var(p.var)).collect();
    let inner = level(
        b,
        params,
        cur,
        i,
        it,
        body,
        l - 1,
        start,
        size,
        blocks,
        i64t,
    )?;
    let types = params.iter().map(|p| p.ty.clone()).collect();
    let out = b.bind("strip", types, inner);
    let inner_body = b.end(out.into_iter().map(Atom::Var).collect());
    Ok(Exp::Loop {
        params: level_params,
        init,
        form: LoopForm::For { i: o, bound: trips },
        body: inner_body,
    })
}

/// `loop params = init while cond do body` with at most `bound` iterations
/// as a `for` loop: `n + 1` iterations, each evaluating `cond` (its body's
/// statements, on the parameters) and running `body` if it holds and the
/// bound is not reached; an `assert` with `message` fails if `cond` still
/// holds after `bound` iterations. Returns the loop; `bound` is an `i64`.
pub fn bounded_while(
    b: &mut FunctionBuilder,
    params: Vec<Param>,
    init: Vec<Atom>,
    cond: Body,
    body: Body,
    bound: Atom,
    message: String,
) -> Result<Exp, UnknownVariable> {
    let i64t = crate::Type::Prim(PrimType::I64);
    let zero = Atom::Const(PrimValue::I64(0));
    let one = Atom::Const(PrimValue::I64(1));
    let bound = b.binop(BinOp::Max, bound, zero)?;
    let trips = b.binop(BinOp::Add, bound, one)?;
    let i = b.vars.fresh("i", i64t);
    b.begin();
    for s in cond.stms {
        b.push(s);
    }
    let c = cond.result[0];
    let within = b.cmp(CmpOp::Lt, Atom::Var(i), bound);
    let past = b.unop(crate::UnOp::Not, within)?;
    let overrun = b.binop(BinOp::LogAnd, c, past)?;
    let fine = b.unop(crate::UnOp::Not, overrun)?;
    b.effect(Exp::Assert(fine, message, vec![]));
    let go = b.binop(BinOp::LogAnd, c, within)?;
    let types: Vec<crate::Type> = params.iter().map(|p| p.ty.clone()).collect();
    let stay = Body {
        stms: vec![],
        result: params.iter().map(|p| Atom::Var(p.var)).collect(),
    };
    let out = b.bind(
        "bounded",
        types,
        Exp::If {
            cond: go,
            then_: body,
            else_: stay,
        },
    );
    let loop_body = b.end(out.into_iter().map(Atom::Var).collect());
    Ok(Exp::Loop {
        params,
        init,
        form: LoopForm::For { i, bound: trips },
        body: loop_body,
    })
}
