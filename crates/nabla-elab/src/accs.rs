//! The members of Futhark's built-in module `intrinsics` that no other name
//! reaches (canonical names `intrinsics.NAME`, typed in nabla-typeck's
//! `sig.rs`):
//!
//! - accumulators: `scatter_stream dest f bs` and `hist_stream dest op ne f
//!   bs` turn `dest` into an accumulator (`intrinsics.acc`), thread it
//!   through `f` for every element of `bs` (a `map` that passes the
//!   accumulator to each element, as the IR's accumulators allow), and
//!   return the array; `acc_write acc i v` writes `v` at `i` (scatter: the
//!   value replaces the cell; hist: `op cell v`), and ignores an `i` out of
//!   bounds. They become the IR's `with_acc` and `update_acc`, one IR
//!   accumulator per component of the element type (an accumulator of
//!   tuples is several accumulators, as an array of tuples is several
//!   arrays). An IR accumulator combines one scalar at a time, so a
//!   `hist_stream` whose operator mixes the components of its elements
//!   (the maximum and its position) runs as a sequential loop over the
//!   elements instead, the accumulator being the array itself and a write
//!   `acc with [i] = op acc[i] v` (one order of the writes, which an
//!   associative and commutative operator allows); so do the streams
//!   inside its function, whose accumulators are arrays there too.
//! - flat views: `flat_index_Nd as offset n1 s1 … nN sN` is the array
//!   `[n1]…[nN]` whose element `[i1, …, iN]` is `as[offset + i1*s1 + … +
//!   iN*sN]`; `flat_update_Nd as offset s1 … sN vs` writes each element of
//!   `vs` (of shape `[k1]…[kN]`) at that position of `as`, in place. Every
//!   position is bounds-checked.

use nabla_ir::{
    self as ir, AccInput, AccOp, Atom, BinOp, Body, CmpOp, DimIndex, Exp, Lambda, LoopForm, Param,
    PrimType, Soac, Var,
};
use nabla_syntax::types::{Size, Type as STy};
use nabla_syntax::Span;

use crate::elab::{array_of_shape, atoms_of, err, Elab, R, SV};
use crate::fb::{atom_dim, i64c, sanitize, zero, FunBuilder};
use crate::intrin::{arr_vars, scalar, sty_of};

/// Applies the `intrinsics` member `name` (without the module prefix) to
/// all its arguments.
pub(crate) fn call<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    name: &str,
    args: Vec<SV<'a>>,
    span: Span,
) -> R<SV<'a>> {
    let mut args = args;
    let sequential = !el.seq_streams.is_empty();
    match name {
        "acc_write" if args.len() == 3 && sequential => {
            seq_write(el, fb, &args[0], &args[1], &args[2], span)
        }
        "acc_write" if args.len() == 3 => acc_write(fb, &args[0], &args[1], &args[2], span),
        "scatter_stream" if args.len() == 3 => {
            let bs = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            let f = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            if sequential {
                return seq_stream(el, fb, &args[0], None, f, &bs, span);
            }
            let n = arr_vars(&args[0], span)?.len();
            stream(el, fb, &args[0], vec![AccOp::Write; n], f, &bs, span)
        }
        "hist_stream" if args.len() == 5 => {
            let bs = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            let f = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            let ne = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            let op = args.pop().unwrap_or_else(|| SV::Rec(vec![]));
            if sequential {
                return seq_stream(el, fb, &args[0], Some(op), f, &bs, span);
            }
            match hist_operators(el, fb, &args[0], op.clone(), &ne, span)? {
                Some(ops) => stream(el, fb, &args[0], ops, f, &bs, span),
                None => seq_stream(el, fb, &args[0], Some(op), f, &bs, span),
            }
        }
        _ => {
            if let Some(rank) = flat_rank(name, "flat_index_") {
                if args.len() == 2 + 2 * rank {
                    return flat_index(el, fb, &args, rank, span);
                }
            }
            if let Some(rank) = flat_rank(name, "flat_update_") {
                if args.len() == 3 + rank {
                    return flat_update(fb, &args, rank, span);
                }
            }
            Err(err(
                span,
                format!(
                    "intrinsics.{name} is not supported with {} arguments",
                    args.len()
                ),
            ))
        }
    }
}

/// The rank `N` of `flat_index_Nd` / `flat_update_Nd`.
fn flat_rank(name: &str, prefix: &str) -> Option<usize> {
    let n: usize = name.strip_prefix(prefix)?.strip_suffix('d')?.parse().ok()?;
    (n >= 1).then_some(n)
}

/// The IR accumulator types of an array value's components.
fn acc_types(fb: &FunBuilder, arrays: &[Var], span: Span) -> R<Vec<ir::Type>> {
    arrays
        .iter()
        .map(|v| match fb.var_ty(*v) {
            ir::Type::Array(p, dims) => Ok(ir::Type::Acc(p, dims)),
            t => Err(err(
                span,
                format!("an accumulator needs an array, not a value of type {t:?}"),
            )),
        })
        .collect()
}

/// The operands of `acc_write acc i v`: the accumulator's variables (one
/// per component), the index and the value's components; an error if the
/// value does not have the accumulator's element type.
fn write_operands<'a>(
    acc: &SV<'a>,
    i: &SV<'a>,
    v: &SV<'a>,
    span: Span,
) -> R<(Vec<Var>, Atom, Vec<Atom>)> {
    let accs = arr_vars(acc, span)?;
    let i = scalar(i, span)?;
    let vs = atoms_of(v, span)?;
    if accs.len() != vs.len() {
        return Err(err(
            span,
            "acc_write: the value does not match the accumulator's element type",
        ));
    }
    Ok((accs, i, vs))
}

/// `acc_write acc i v`: one `update_acc` per component.
fn acc_write<'a>(
    fb: &mut FunBuilder,
    acc: &SV<'a>,
    i: &SV<'a>,
    v: &SV<'a>,
    span: Span,
) -> R<SV<'a>> {
    let (accs, i, vs) = write_operands(acc, i, v, span)?;
    let mut out = Vec::with_capacity(accs.len());
    for (a, x) in accs.into_iter().zip(vs) {
        let t = fb.var_ty(a);
        if !t.is_acc() {
            return Err(err(
                span,
                "acc_write: the first argument is not an accumulator",
            ));
        }
        out.push(fb.bind1(
            "acc",
            t,
            Exp::UpdateAcc {
                acc: a,
                indices: vec![i],
                value: x,
            },
            span,
        ));
    }
    Ok(SV::Dyn(out, sty_of(acc)))
}

/// `scatter_stream` / `hist_stream`: `with_acc` over the components of
/// `dest` (with the operators `ops`), whose lambda maps `f` over `bs`
/// passing the accumulators to every element.
fn stream<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    dest: &SV<'a>,
    ops: Vec<AccOp>,
    f: SV<'a>,
    bs: &SV<'a>,
    span: Span,
) -> R<SV<'a>> {
    let dest_vars = arr_vars(dest, span)?;
    let dest_sty = sty_of(dest);
    let acc_sty = STy::Acc {
        arr: Box::new(dest_sty.clone()),
        unique: true,
    };
    let acc_tys = acc_types(fb, &dest_vars, span)?;
    let w = el.common_width(fb, &[bs], "the stream of an accumulator", span)?;
    let bs_vars = arr_vars(bs, span)?;
    let mark = fb.mark();
    let params: Vec<Param> = acc_tys
        .iter()
        .map(|t| Param::new(fb.var("acc", t.clone()), t.clone()))
        .collect();
    fb.begin();
    let row = el.row_arg(fb, bs, span)?;
    let (lam, _) = el.make_lambda(fb, f, vec![(acc_sty, acc_tys.clone()), row], span)?;
    if lam.ret.len() != acc_tys.len() || !lam.ret.iter().all(ir::Type::is_acc) {
        return Err(err(
            span,
            "the function given to a stream must return the accumulator it is given",
        ));
    }
    let mut arrs: Vec<Var> = params.iter().map(|p| p.var).collect();
    arrs.extend(bs_vars);
    let ret: Vec<ir::Type> = acc_tys.iter().map(|t| sanitize(t.clone(), mark)).collect();
    let accs = fb.bind(
        "acc",
        ret.clone(),
        Exp::Soac(Soac::Map { w, lam, arrs }),
        span,
    );
    let body = fb.end(accs.into_iter().map(Atom::Var).collect());
    let inputs = dest_vars
        .iter()
        .zip(ops)
        .map(|(v, op)| AccInput { array: *v, op })
        .collect();
    let tys = dest_vars.iter().map(|v| fb.var_ty(*v)).collect();
    let vs = fb.bind(
        "stream",
        tys,
        Exp::WithAcc {
            inputs,
            lam: Lambda { params, body, ret },
        },
        span,
    );
    Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), dest_sty))
}

/// The accumulator operator of each component of `dest` for `hist_stream
/// dest op ne`, if `op` combines the components separately (each result
/// component depends on the same component of its two arguments only),
/// and a component that is an array elementwise (a `map` of an operator
/// on its elements, such as `map2 (+)`), since an accumulator combines
/// one element at a time; `None` otherwise. `+` becomes the IR's `add`
/// accumulator.
fn hist_operators<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    dest: &SV<'a>,
    op: SV<'a>,
    ne: &SV<'a>,
    span: Span,
) -> R<Option<Vec<AccOp>>> {
    let ne = atoms_of(ne, span)?;
    let (row_sty, row_tys) = el.row_arg(fb, dest, span)?;
    let c = row_tys.len();
    if ne.len() != c {
        return Err(err(
            span,
            "hist_stream: the neutral element does not match the destination's element type",
        ));
    }
    let mut ops = Vec::with_capacity(c);
    for (j, ne) in ne.into_iter().enumerate() {
        // A fresh copy of the operator for each component (its variables
        // are bound once per function).
        let arg = (row_sty.clone(), row_tys.clone());
        let (lam, _) = el.make_lambda(fb, op.clone(), vec![arg.clone(), arg], span)?;
        let Some(scalar_op) = component(&lam, c, j).and_then(elementwise) else {
            return Ok(None);
        };
        ops.push(if is_add(&scalar_op) {
            AccOp::Add
        } else {
            let ne = element_of(fb, ne, span);
            AccOp::Lambda(Box::new(scalar_op), ne)
        });
    }
    Ok(Some(ops))
}

/// A stream as a sequential loop over the elements of `bs`, carrying the
/// destination's arrays as the accumulator (`op`: the histogram's
/// operator; `None`: a scatter); the writes in `f` are elaborated by
/// [`seq_write`] meanwhile.
fn seq_stream<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    dest: &SV<'a>,
    op: Option<SV<'a>>,
    f: SV<'a>,
    bs: &SV<'a>,
    span: Span,
) -> R<SV<'a>> {
    let dest_vars = arr_vars(dest, span)?;
    let dest_sty = sty_of(dest);
    let acc_sty = STy::Acc {
        arr: Box::new(dest_sty.clone()),
        unique: true,
    };
    let w = el.common_width(fb, &[bs], "the stream of an accumulator", span)?;
    let bs_vars = arr_vars(bs, span)?;
    let (row_sty, row_tys) = el.row_arg(fb, bs, span)?;
    let tys: Vec<ir::Type> = dest_vars.iter().map(|v| fb.var_ty(*v)).collect();
    let j = fb.var("j", ir::Type::Prim(PrimType::I64));
    let params: Vec<Param> = tys
        .iter()
        .map(|t| Param {
            var: fb.var("acc", t.clone()),
            ty: t.clone(),
            unique: true,
        })
        .collect();
    fb.begin();
    let mut row = Vec::with_capacity(bs_vars.len());
    for (v, t) in bs_vars.iter().zip(&row_tys) {
        row.push(fb.bind1(
            "row",
            t.clone(),
            Exp::Index(*v, vec![DimIndex::Fix(Atom::Var(j))]),
            span,
        ));
    }
    let acc = SV::Dyn(params.iter().map(|p| Atom::Var(p.var)).collect(), acc_sty);
    el.seq_streams.push(op);
    let r = el.apply(fb, f, vec![acc, SV::Dyn(row, row_sty)], span);
    el.seq_streams.pop();
    let next = atoms_of(&r?, span)?;
    if next.len() != params.len() {
        return Err(err(
            span,
            "the function given to a stream must return the accumulator it is given",
        ));
    }
    let body = fb.end(next);
    let pat: Vec<Param> = tys
        .iter()
        .map(|t| Param::new(fb.var("stream", t.clone()), t.clone()))
        .collect();
    let out = pat.iter().map(|p| Atom::Var(p.var)).collect();
    fb.push(
        pat,
        Exp::Loop {
            params,
            init: dest_vars.into_iter().map(Atom::Var).collect(),
            form: LoopForm::For { i: j, bound: w },
            body,
        },
        span,
    );
    Ok(SV::Dyn(out, dest_sty))
}

/// `acc_write acc i v` in a stream elaborated as a loop ([`seq_stream`]):
/// `acc` holds the arrays; where `i` is in bounds, their cells at `i`
/// become `v` (a scatter) or `op acc[i] v` (a histogram), in place.
fn seq_write<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    acc: &SV<'a>,
    i: &SV<'a>,
    v: &SV<'a>,
    span: Span,
) -> R<SV<'a>> {
    let (arrs, i, vs) = write_operands(acc, i, v, span)?;
    let acc_sty = sty_of(acc);
    let elem_sty = match &acc_sty {
        STy::Acc { arr, .. } => crate::elab::sty_row(arr),
        t => crate::elab::sty_row(t),
    };
    let Some(first) = arrs.first() else {
        return Ok(acc.clone());
    };
    let n = fb.size_of(*first, 0, span);
    let lo = fb.cmp(CmpOp::Le, i64c(0), i, span);
    let hi = fb.cmp(CmpOp::Lt, i, n, span);
    let inside = fb.binop(BinOp::LogAnd, lo, hi, span);
    let tys: Vec<ir::Type> = arrs.iter().map(|a| fb.var_ty(*a)).collect();
    let op = el.seq_streams.last().cloned().flatten();
    fb.begin();
    let new = match op {
        None => vs,
        Some(op) => {
            let mut old = Vec::with_capacity(arrs.len());
            for (a, t) in arrs.iter().zip(&tys) {
                let row = t.row().unwrap_or(ir::Type::Prim(t.elem()));
                old.push(fb.bind1("cell", row, Exp::Index(*a, vec![DimIndex::Fix(i)]), span));
            }
            let r = el.apply(
                fb,
                op,
                vec![SV::Dyn(old, elem_sty.clone()), SV::Dyn(vs, elem_sty)],
                span,
            )?;
            atoms_of(&r, span)?
        }
    };
    if new.len() != arrs.len() {
        return Err(err(
            span,
            "hist_stream: the operator's result does not match the element type",
        ));
    }
    let mut written = Vec::with_capacity(arrs.len());
    for ((a, t), x) in arrs.iter().zip(&tys).zip(new) {
        written.push(fb.bind1(
            "acc",
            t.clone(),
            Exp::Update(*a, vec![DimIndex::Fix(i)], x),
            span,
        ));
    }
    let then_ = fb.end(written);
    let else_ = Body {
        stms: vec![],
        result: arrs.iter().map(|a| Atom::Var(*a)).collect(),
    };
    let vs = fb.bind(
        "acc",
        tys,
        Exp::If {
            cond: inside,
            then_,
            else_,
        },
        span,
    );
    Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), acc_sty))
}

/// The part of `lam` (an operator on elements of `c` components:
/// parameters `x0 … x(c-1), y0 … y(c-1)`, `c` results) that computes
/// result `j`, as an operator on `xj` and `yj`; `None` if that result
/// reads another component.
fn component(lam: &Lambda, c: usize, j: usize) -> Option<Lambda> {
    if lam.params.len() != 2 * c || lam.body.result.len() != c {
        return None;
    }
    let mut needed: std::collections::HashSet<Var> = std::collections::HashSet::new();
    if let Atom::Var(v) = lam.body.result[j] {
        needed.insert(v);
    }
    let mut kept = Vec::new();
    for stm in lam.body.stms.iter().rev() {
        if stm.pat.iter().any(|p| needed.contains(&p.var)) {
            needed.extend(nabla_ir::visit::free_vars_stm(stm));
            kept.push(stm.clone());
        }
    }
    kept.reverse();
    let (x, y) = (&lam.params[j], &lam.params[c + j]);
    let others = lam
        .params
        .iter()
        .filter(|p| p.var != x.var && p.var != y.var);
    if others.into_iter().any(|p| needed.contains(&p.var)) {
        return None;
    }
    Some(Lambda {
        params: vec![x.clone(), y.clone()],
        body: Body {
            stms: kept,
            result: vec![lam.body.result[j]],
        },
        ret: vec![lam.ret[j].clone()],
    })
}

/// An operator on two arrays that combines them element by element (its
/// result is a `map` over the two, in either order, of an operator on
/// rows or elements: `map2 (+)`, `map2 (map2 f)`), as the operator on
/// scalars; an operator on scalars as it is. `None` otherwise.
fn elementwise(lam: Lambda) -> Option<Lambda> {
    let [x, y] = lam.params.as_slice() else {
        return None;
    };
    if let ir::Type::Prim(_) = x.ty {
        return Some(lam);
    }
    let Atom::Var(r) = lam.body.result.as_slice().first()? else {
        return None;
    };
    let mut inner = None;
    let mut bound = vec![x.var, y.var];
    for stm in &lam.body.stms {
        bound.extend(stm.pat.iter().map(|p| p.var));
        match &stm.exp {
            Exp::Size(..) | Exp::AssertEqSizes(..) | Exp::Atoms(_) => {}
            Exp::Soac(Soac::Map { lam: m, arrs, .. })
                if stm.pat.len() == 1 && stm.pat[0].var == *r && inner.is_none() =>
            {
                inner = Some((m, arrs));
            }
            _ => return None,
        }
    }
    let (m, arrs) = inner?;
    let mut m = m.clone();
    if m.params.len() != 2 || m.body.result.len() != 1 {
        return None;
    }
    if *arrs == [y.var, x.var] {
        m.params.swap(0, 1);
    } else if *arrs != [x.var, y.var] {
        return None;
    }
    // The element operator may not read the rows' sizes or other locals.
    if nabla_ir::visit::free_vars_lambda(&m)
        .iter()
        .any(|v| bound.contains(v))
    {
        return None;
    }
    elementwise(m)
}

/// Whether an operator on scalars is `x + y` (or `y + x`).
fn is_add(lam: &Lambda) -> bool {
    let ([x, y], [stm], [Atom::Var(r)]) = (
        lam.params.as_slice(),
        lam.body.stms.as_slice(),
        lam.body.result.as_slice(),
    ) else {
        return false;
    };
    if !x.ty.elem().is_numeric() || stm.pat.len() != 1 || stm.pat[0].var != *r {
        return false;
    }
    let (a, b) = (Atom::Var(x.var), Atom::Var(y.var));
    matches!(&stm.exp, Exp::BinOp(BinOp::Add, p, q) if (*p == a && *q == b) || (*p == b && *q == a))
}

/// One element of a neutral element that is an array (the first, or a
/// zero if it is empty): the neutral element of the operator on elements
/// that an elementwise operator on arrays applies.
fn element_of(fb: &mut FunBuilder, ne: Atom, span: Span) -> Atom {
    let Atom::Var(v) = ne else {
        return ne;
    };
    let t = fb.var_ty(v);
    let rank = t.rank();
    if rank == 0 {
        return ne;
    }
    let p = t.elem();
    let mut nonempty = None;
    for d in 0..rank {
        let n = fb.size_of(v, d, span);
        let c = fb.cmp(CmpOp::Lt, i64c(0), n, span);
        nonempty = Some(match nonempty {
            None => c,
            Some(a) => fb.binop(BinOp::LogAnd, a, c, span),
        });
    }
    let Some(cond) = nonempty else {
        return ne;
    };
    fb.begin();
    let x = fb.bind1(
        "ne",
        ir::Type::Prim(p),
        Exp::Index(v, vec![DimIndex::Fix(i64c(0)); rank]),
        span,
    );
    let then_ = fb.end(vec![x]);
    fb.bind1(
        "ne",
        ir::Type::Prim(p),
        Exp::If {
            cond,
            then_,
            else_: Body {
                stms: vec![],
                result: vec![Atom::Const(zero(p))],
            },
        },
        span,
    )
}

/// The multi-index `[i1, …, iN]` of the flat position `t` in a row-major
/// array of shape `dims`, and the position `offset + i1*s1 + … + iN*sN`.
fn position(
    fb: &mut FunBuilder,
    t: Atom,
    dims: &[Atom],
    offset: Atom,
    strides: &[Atom],
    span: Span,
) -> Atom {
    let mut rest = t;
    let mut pos = offset;
    for (k, (n, s)) in dims.iter().zip(strides).enumerate().rev() {
        let i = if k == 0 {
            rest
        } else {
            let i = fb.binop(BinOp::IntMod, rest, *n, span);
            rest = fb.binop(BinOp::IntDiv, rest, *n, span);
            i
        };
        let d = fb.binop(BinOp::Mul, i, *s, span);
        pos = fb.binop(BinOp::Add, pos, d, span);
    }
    pos
}

/// The product of `i64` atoms.
fn product(fb: &mut FunBuilder, xs: &[Atom], span: Span) -> Atom {
    let mut p = i64c(1);
    for x in xs {
        p = fb.binop(BinOp::Mul, p, *x, span);
    }
    p
}

/// `flat_index_Nd as offset n1 s1 … nN sN`: a `map` over the `n1 * … * nN`
/// positions reading `as` at each, reshaped to `[n1]…[nN]`.
fn flat_index<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    args: &[SV<'a>],
    rank: usize,
    span: Span,
) -> R<SV<'a>> {
    let arrs = arr_vars(&args[0], span)?;
    let offset = scalar(&args[1], span)?;
    let mut dims = Vec::with_capacity(rank);
    let mut strides = Vec::with_capacity(rank);
    for k in 0..rank {
        dims.push(scalar(&args[2 + 2 * k], span)?);
        strides.push(scalar(&args[3 + 2 * k], span)?);
    }
    let (row_sty, row_tys) = el.row_arg(fb, &args[0], span)?;
    let total = product(fb, &dims, span);
    let iota = fb.bind1(
        "iota",
        ir::Type::Array(PrimType::I64, vec![atom_dim(total)]),
        Exp::Iota {
            n: total,
            start: i64c(0),
            step: i64c(1),
            ty: PrimType::I64,
        },
        span,
    );
    let Atom::Var(iota) = iota else {
        return Err(err(span, "internal error: iota bound to a constant"));
    };
    let mark = fb.mark();
    let t = fb.var("t", ir::Type::Prim(PrimType::I64));
    fb.begin();
    let pos = position(fb, Atom::Var(t), &dims, offset, &strides, span);
    let mut elems = Vec::with_capacity(arrs.len());
    for (a, rt) in arrs.iter().zip(&row_tys) {
        elems.push(fb.bind1(
            "flat_index",
            rt.clone(),
            Exp::Index(*a, vec![DimIndex::Fix(pos)]),
            span,
        ));
    }
    let body = fb.end(elems);
    let ret: Vec<ir::Type> = row_tys.iter().map(|t| sanitize(t.clone(), mark)).collect();
    let lam = Lambda {
        params: vec![Param::new(t, ir::Type::Prim(PrimType::I64))],
        body,
        ret: ret.clone(),
    };
    let tys = ret.iter().map(|t| t.array_of(atom_dim(total))).collect();
    let flat = fb.bind(
        "flat_index",
        tys,
        Exp::Soac(Soac::Map {
            w: total,
            lam,
            arrs: vec![iota],
        }),
        span,
    );
    let mut out = Vec::with_capacity(flat.len());
    for (v, rt) in flat.into_iter().zip(&ret) {
        let mut shape = dims.clone();
        for d in 1..=rt.rank() {
            shape.push(fb.size_of(v, d, span));
        }
        let ty = ir::Type::Array(rt.elem(), shape.iter().map(|a| atom_dim(*a)).collect());
        out.push(fb.bind1("flat_index", ty, Exp::Reshape(shape, v), span));
    }
    let sty = array_of_shape(row_sty, vec![Size::Any; rank], true);
    Ok(SV::Dyn(out, sty))
}

/// `flat_update_Nd as offset s1 … sN vs`: a loop over the elements of `vs`
/// (flattened) updating `as` in place at each one's position.
fn flat_update<'a>(fb: &mut FunBuilder, args: &[SV<'a>], rank: usize, span: Span) -> R<SV<'a>> {
    let arrs = arr_vars(&args[0], span)?;
    let offset = scalar(&args[1], span)?;
    let mut strides = Vec::with_capacity(rank);
    for k in 0..rank {
        strides.push(scalar(&args[2 + k], span)?);
    }
    let vals = arr_vars(&args[2 + rank], span)?;
    if vals.len() != arrs.len() {
        return Err(err(
            span,
            "flat_update: the values do not match the array's element type",
        ));
    }
    let Some(first) = vals.first() else {
        return Ok(args[0].clone());
    };
    let dims: Vec<Atom> = (0..rank).map(|d| fb.size_of(*first, d, span)).collect();
    let total = product(fb, &dims, span);
    // The values as one row per position.
    let mut flat = Vec::with_capacity(vals.len());
    for v in &vals {
        let t = fb.var_ty(*v);
        let mut shape = vec![total];
        for d in rank..t.rank() {
            shape.push(fb.size_of(*v, d, span));
        }
        let ty = ir::Type::Array(t.elem(), shape.iter().map(|a| atom_dim(*a)).collect());
        match fb.bind1("flat_values", ty, Exp::Reshape(shape, *v), span) {
            Atom::Var(x) => flat.push(x),
            Atom::Const(_) => return Err(err(span, "internal error: reshape to a constant")),
        }
    }
    let i = fb.var("i", ir::Type::Prim(PrimType::I64));
    let mut params = Vec::with_capacity(arrs.len());
    for a in &arrs {
        let t = fb.var_ty(*a);
        let mut p = Param::new(fb.var("flat_update", t.clone()), t);
        p.unique = true;
        params.push(p);
    }
    fb.begin();
    let pos = position(fb, Atom::Var(i), &dims, offset, &strides, span);
    let mut next = Vec::with_capacity(arrs.len());
    for (p, x) in params.iter().zip(&flat) {
        let row = fb.var_ty(*x).row().unwrap_or(ir::Type::Prim(p.ty.elem()));
        let v = fb.bind1(
            "v",
            row,
            Exp::Index(*x, vec![DimIndex::Fix(Atom::Var(i))]),
            span,
        );
        next.push(fb.bind1(
            "flat_update",
            p.ty.clone(),
            Exp::Update(p.var, vec![DimIndex::Fix(pos)], v),
            span,
        ));
    }
    let body = fb.end(next);
    let tys: Vec<ir::Type> = arrs.iter().map(|a| fb.var_ty(*a)).collect();
    let pat: Vec<Param> = tys
        .into_iter()
        .map(|t| Param::new(fb.var("flat_update", t.clone()), t))
        .collect();
    let out = pat.iter().map(|p| Atom::Var(p.var)).collect();
    fb.push(
        pat,
        Exp::Loop {
            params,
            init: arrs.into_iter().map(Atom::Var).collect(),
            form: LoopForm::For { i, bound: total },
            body,
        },
        span,
    );
    Ok(SV::Dyn(out, sty_of(&args[0])))
}

#[cfg(test)]
mod tests {
    use super::flat_rank;

    #[test]
    fn flat_ranks() {
        assert_eq!(flat_rank("flat_index_2d", "flat_index_"), Some(2));
        assert_eq!(flat_rank("flat_update_4d", "flat_update_"), Some(4));
        assert_eq!(flat_rank("flat_index_0d", "flat_index_"), None);
        assert_eq!(flat_rank("flat_index_x", "flat_index_"), None);
    }
}
