//! Intrinsics: operators, numeric module functions, SOACs and array
//! operations (see the intrinsics contract), and ranges.

use nabla_ir::{
    self as ir, Atom, BinOp, CmpOp, ConvOp, Dim, Exp, Lambda, Param, PrimType, PrimValue, TernOp,
    UnOp, Var,
};
use nabla_syntax::ast::RangeKind;
use nabla_syntax::types::{Size, Type as STy};
use nabla_syntax::Span;

use crate::elab::{
    atoms_of, dyn_of, err, mk_tuple, peel, prim_of, sty_array_of, sty_row, Elab, Env, R, SV,
};
use crate::fb::{atom_dim, boolc, i64c, int_value, sanitize, FunBuilder};

/// Value constants of the numeric modules (`f64.pi`, `i32.highest`, …).
pub(crate) fn constant(name: &str) -> Option<(PrimValue, PrimType)> {
    let (m, f) = name.split_once('.')?;
    let t = PrimType::from_name(m)?;
    let fl = |x: f64| Some((crate::fb::float_value(t, x), t));
    match f {
        "num_bits" => Some((PrimValue::I32(t.bits() as i32), PrimType::I32)),
        "pi" if t.is_float() => fl(std::f64::consts::PI),
        "e" if t.is_float() => fl(std::f64::consts::E),
        "inf" if t.is_float() => fl(f64::INFINITY),
        "nan" if t.is_float() => fl(f64::NAN),
        "epsilon" => match t {
            PrimType::F16 => Some((PrimValue::F16(nabla_prim::f16::EPSILON), t)),
            PrimType::F32 => Some((PrimValue::F32(f32::EPSILON), t)),
            PrimType::F64 => Some((PrimValue::F64(f64::EPSILON), t)),
            _ => None,
        },
        "highest" | "largest" => Some((extreme(t, true), t)),
        "lowest" | "smallest" => Some((extreme(t, false), t)),
        _ => None,
    }
}

fn extreme(t: PrimType, high: bool) -> PrimValue {
    use PrimValue as V;
    match (t, high) {
        (PrimType::I8, true) => V::I8(i8::MAX),
        (PrimType::I8, false) => V::I8(i8::MIN),
        (PrimType::I16, true) => V::I16(i16::MAX),
        (PrimType::I16, false) => V::I16(i16::MIN),
        (PrimType::I32, true) => V::I32(i32::MAX),
        (PrimType::I32, false) => V::I32(i32::MIN),
        (PrimType::I64, true) => V::I64(i64::MAX),
        (PrimType::I64, false) => V::I64(i64::MIN),
        (PrimType::U8, true) => V::U8(u8::MAX),
        (PrimType::U8, false) => V::U8(0),
        (PrimType::U16, true) => V::U16(u16::MAX),
        (PrimType::U16, false) => V::U16(0),
        (PrimType::U32, true) => V::U32(u32::MAX),
        (PrimType::U32, false) => V::U32(0),
        (PrimType::U64, true) => V::U64(u64::MAX),
        (PrimType::U64, false) => V::U64(0),
        (PrimType::Bool, h) => V::Bool(h),
        (t, h) => crate::fb::float_value(t, if h { f64::INFINITY } else { f64::NEG_INFINITY }),
    }
}

/// Number of arguments an intrinsic takes before it computes.
pub(crate) fn arity(name: &str, ty: &STy) -> usize {
    let bare = name
        .rsplit_once('.')
        .filter(|(m, _)| PrimType::from_name(m).is_some())
        .map(|(_, f)| f)
        .unwrap_or(name);
    let module = name.contains('.') && bare != name;
    if !module {
        match bare {
            "map" | "map1" | "replicate" | "zip" | "zip2" | "concat" | "++" | "rotate"
            | "assert" | "sized" => return 2,
            "map2" | "reduce" | "reduce_comm" | "scan" | "scatter" | "scatter_2d"
            | "scatter_3d" | "zip3" | "jvp" | "vjp" | "jvp2" | "vjp2" | "with_vjp"
            | "with_vjp_tape" => return 3,
            "map3" | "zip4" => return 4,
            "map4" | "zip5" | "reduce_by_index" | "hist" => return 5,
            "map5" => return 6,
            "iota" | "unzip" | "unzip2" | "unzip3" | "unzip4" | "unzip5" | "transpose"
            | "flatten" | "flatten_3d" | "reverse" | "length" | "copy" | "neg" | "!" => return 1,
            _ => {}
        }
    }
    if is_binop_name(bare) {
        return 2;
    }
    let mut n = 0;
    let mut cur = ty;
    while let STy::Arrow { ret, .. } = cur {
        n += 1;
        cur = ret;
    }
    n.max(1)
}

fn is_binop_name(s: &str) -> bool {
    matches!(
        s,
        "+" | "-"
            | "*"
            | "/"
            | "%"
            | "//"
            | "%%"
            | "**"
            | "&"
            | "|"
            | "^"
            | "<<"
            | ">>"
            | ">>>"
            | "=="
            | "!="
            | "<"
            | "<="
            | ">"
            | ">="
            | "&&"
            | "||"
    )
}

/// A signed integer power's exponent may not be negative: a run-time error,
/// as Futhark's safety checks have it (no check for a constant exponent
/// that is not negative).
fn check_exponent(fb: &mut FunBuilder, p: PrimType, y: Atom, span: Span) {
    if let Atom::Const(c) = y {
        if int_of_const(c).is_some_and(|v| v >= 0) {
            return;
        }
    }
    let ok = fb.cmp(CmpOp::Le, Atom::Const(int_value(p, 0)), y, span);
    fb.effect(
        Exp::Assert(
            ok,
            "Negative exponent {} in an integer power.".into(),
            vec![y],
        ),
        span,
    );
}

/// `unflatten`'s run-time check (Futhark's prelude): every result size is
/// non-negative and their product is the argument's outer size, else
/// "Cannot unflatten array of shape [6] to array of shape [2][2]". No check
/// is made when the sizes are constants that satisfy it.
fn check_unflatten(fb: &mut FunBuilder, array: nabla_ir::Var, dims: &[Atom], span: Span) {
    let outer = fb.size_of(array, 0, span);
    let constants: Option<Vec<i128>> = dims
        .iter()
        .chain([&outer])
        .map(|d| match d {
            Atom::Const(c) => int_of_const(*c),
            Atom::Var(_) => None,
        })
        .collect();
    if let Some(cs) = constants {
        let (total, sizes) = cs.split_last().expect("outer size is last");
        if sizes.iter().all(|d| *d >= 0) && sizes.iter().product::<i128>() == *total {
            return;
        }
    }
    let zero = Atom::Const(PrimValue::I64(0));
    let mut ok = fb.cmp(CmpOp::Le, zero, dims[0], span);
    let mut product = dims[0];
    for d in &dims[1..] {
        let non_negative = fb.cmp(CmpOp::Le, zero, *d, span);
        ok = fb.binop(BinOp::BitAnd, ok, non_negative, span);
        product = fb.binop(BinOp::Mul, product, *d, span);
    }
    let same = fb.cmp(CmpOp::Eq, product, outer, span);
    ok = fb.binop(BinOp::BitAnd, ok, same, span);
    let shape: String = dims.iter().map(|_| "[{}]").collect();
    let mut values = vec![outer];
    values.extend_from_slice(dims);
    fb.effect(
        Exp::Assert(
            ok,
            format!("Cannot unflatten array of shape [{{}}] to array of shape {shape}."),
            values,
        ),
        span,
    );
}

/// The value of an integer constant.
fn int_of_const(c: PrimValue) -> Option<i128> {
    Some(match c {
        PrimValue::I8(x) => x.into(),
        PrimValue::I16(x) => x.into(),
        PrimValue::I32(x) => x.into(),
        PrimValue::I64(x) => x.into(),
        _ => return None,
    })
}

fn arith_op(s: &str, p: PrimType) -> Option<BinOp> {
    Some(match s {
        "+" | "add" => BinOp::Add,
        "-" | "sub" => BinOp::Sub,
        "*" | "mul" => BinOp::Mul,
        "/" | "div" => BinOp::Div,
        "%" | "mod" => BinOp::Mod,
        "//" => BinOp::IntDiv,
        "%%" => BinOp::IntMod,
        "**" | "pow" => BinOp::Pow,
        "quot" => BinOp::Quot,
        "rem" => BinOp::Rem,
        "&" if p == PrimType::Bool => BinOp::LogAnd,
        "|" if p == PrimType::Bool => BinOp::LogOr,
        "&" | "and" => BinOp::BitAnd,
        "|" | "or" => BinOp::BitOr,
        "^" | "xor" => BinOp::BitXor,
        "<<" | "shl" => BinOp::Shl,
        ">>" | "shr" => BinOp::Shr,
        ">>>" | "lshr" => BinOp::LShr,
        "&&" => BinOp::LogAnd,
        "||" => BinOp::LogOr,
        "min" => BinOp::Min,
        "max" => BinOp::Max,
        "atan2" => BinOp::Atan2,
        "hypot" => BinOp::Hypot,
        _ => return None,
    })
}

fn cmp_op(s: &str) -> Option<CmpOp> {
    Some(match s {
        "==" | "eq" => CmpOp::Eq,
        "!=" | "neq" => CmpOp::Neq,
        "<" | "lt" => CmpOp::Lt,
        "<=" | "le" => CmpOp::Le,
        ">" | "gt" => CmpOp::Gt,
        ">=" | "ge" => CmpOp::Ge,
        _ => return None,
    })
}

fn un_op(s: &str) -> Option<UnOp> {
    use UnOp::*;
    Some(match s {
        "neg" => Neg,
        "!" | "not" => Not,
        "abs" => Abs,
        "sgn" | "signum" => Sgn,
        "sqrt" => Sqrt,
        "cbrt" => Cbrt,
        "exp" => Exp,
        "exp2" => Exp2,
        "expm1" => Expm1,
        "log" => Log,
        "log2" => Log2,
        "log10" => Log10,
        "log1p" => Log1p,
        "sin" => Sin,
        "cos" => Cos,
        "tan" => Tan,
        "asin" => Asin,
        "acos" => Acos,
        "atan" => Atan,
        "sinh" => Sinh,
        "cosh" => Cosh,
        "tanh" => Tanh,
        "asinh" => Asinh,
        "acosh" => Acosh,
        "atanh" => Atanh,
        "lgamma" => Lgamma,
        "gamma" => Gamma,
        "erf" => Erf,
        "erfc" => Erfc,
        "floor" => Floor,
        "ceil" => Ceil,
        "round" => Round,
        "trunc" => Trunc,
        "isnan" => IsNan,
        "isinf" => IsInf,
        "clz" => Clz,
        "ctz" => Ctz,
        "popc" => Popc,
        _ => return None,
    })
}

fn unop_result(op: UnOp, p: PrimType) -> PrimType {
    match op {
        UnOp::IsNan | UnOp::IsInf => PrimType::Bool,
        UnOp::Clz | UnOp::Ctz | UnOp::Popc => PrimType::I32,
        _ => p,
    }
}

fn uint_of_bits(bits: u32) -> PrimType {
    match bits {
        8 => PrimType::U8,
        16 => PrimType::U16,
        32 => PrimType::U32,
        _ => PrimType::U64,
    }
}

pub(crate) fn scalar(sv: &SV<'_>, span: Span) -> R<Atom> {
    let a = atoms_of(sv, span)?;
    if a.len() != 1 {
        return Err(err(span, "expected a primitive value"));
    }
    Ok(a[0])
}

pub(crate) fn arr_vars(sv: &SV<'_>, span: Span) -> R<Vec<Var>> {
    atoms_of(sv, span)?
        .into_iter()
        .map(|a| match a {
            Atom::Var(v) => Ok(v),
            _ => Err(err(span, "expected an array")),
        })
        .collect()
}

pub(crate) fn sty_of(sv: &SV<'_>) -> STy {
    sv.ty().cloned().unwrap_or_else(STy::unit)
}

/// A lambda `\x y -> x op y` on scalars of type `p`.
fn binop_lambda(fb: &mut FunBuilder, p: PrimType, op: BinOp, span: Span) -> Lambda {
    let x = fb.var("x", ir::Type::Prim(p));
    let y = fb.var("y", ir::Type::Prim(p));
    fb.begin();
    let r = fb.bind1(
        "r",
        ir::Type::Prim(p),
        Exp::BinOp(op, Atom::Var(x), Atom::Var(y)),
        span,
    );
    let body = fb.end(vec![r]);
    Lambda {
        params: vec![
            Param::new(x, ir::Type::Prim(p)),
            Param::new(y, ir::Type::Prim(p)),
        ],
        body,
        ret: vec![ir::Type::Prim(p)],
    }
}

impl<'a> Elab<'a> {
    /// Turns a static function into an IR lambda over parameters of the given
    /// (semantic, IR) types. Returns the lambda and its result's semantic type.
    pub(crate) fn make_lambda(
        &mut self,
        fb: &mut FunBuilder,
        f: SV<'a>,
        args: Vec<(STy, Vec<ir::Type>)>,
        span: Span,
    ) -> R<(Lambda, STy)> {
        let mark = fb.mark();
        let mut params = vec![];
        let mut svs = vec![];
        for (st, tys) in args {
            let mut atoms = vec![];
            for t in tys {
                let v = fb.var("p", t.clone());
                params.push(Param::new(v, t));
                atoms.push(Atom::Var(v));
            }
            svs.push(SV::Dyn(atoms, st));
        }
        fb.begin();
        let r = self.apply(fb, f, svs, span)?;
        let (ra, rt) = dyn_of(r, span)?;
        let ret = ra.iter().map(|a| sanitize(fb.atom_ty(*a), mark)).collect();
        let body = fb.end(ra);
        Ok((Lambda { params, body, ret }, rt))
    }

    /// Semantic row type and IR row types of an array value.
    ///
    /// Dimensions of the rows that the array's type leaves unknown are
    /// named by `size(arr, d)` statements before the SOAC, so that the
    /// lambda's results (and hence the SOAC's result type) can have known
    /// sizes: a `map` with no rows then still has the right row shape
    /// (`map (map f)` of `empty([0][3]t)` is `empty([0][3]t)`).
    pub(crate) fn row_arg(
        &self,
        fb: &mut FunBuilder,
        sv: &SV<'a>,
        span: Span,
    ) -> R<(STy, Vec<ir::Type>)> {
        let vs = arr_vars(sv, span)?;
        let mut tys = vec![];
        for v in vs {
            let row = match fb.var_ty(v) {
                ir::Type::Array(p, dims) if dims.len() >= 2 => {
                    let mut row_dims = Vec::with_capacity(dims.len() - 1);
                    for (d, dim) in dims.iter().enumerate().skip(1) {
                        row_dims.push(match dim {
                            Dim::Const(_) | Dim::Var(_) => *dim,
                            _ => atom_dim(fb.size_of(v, d, span)),
                        });
                    }
                    ir::Type::Array(p, row_dims)
                }
                t => t.row().ok_or_else(|| err(span, "expected an array"))?,
            };
            tys.push(row);
        }
        Ok((sty_row(&sty_of(sv)), tys))
    }

    /// The common outer size of several array values (checked at run time).
    pub(crate) fn common_width(
        &mut self,
        fb: &mut FunBuilder,
        arrs: &[&SV<'a>],
        what: &str,
        span: Span,
    ) -> R<Atom> {
        let mut ws = vec![];
        for a in arrs {
            if let Some(v) = arr_vars(a, span)?.first() {
                ws.push(fb.size_of(*v, 0, span));
            }
        }
        let Some(w) = ws.first().copied() else {
            return Err(err(
                span,
                format!("{what}: cannot determine the size of arrays without components"),
            ));
        };
        let mut distinct = ws.clone();
        distinct.dedup();
        if distinct.len() > 1 {
            fb.effect(
                Exp::AssertEqSizes(ws, format!("{what}: arrays have different sizes")),
                span,
            );
        }
        Ok(w)
    }

    /// Structural equality of two flattened values (arrays compare all elements;
    /// arrays of different shapes are unequal).
    fn equal(&mut self, fb: &mut FunBuilder, xs: &[Atom], ys: &[Atom], span: Span) -> R<Atom> {
        let mut acc: Option<Atom> = None;
        for (x, y) in xs.iter().zip(ys) {
            let c = match (x, y) {
                (Atom::Var(xv), Atom::Var(yv)) if fb.atom_ty(*x).rank() > 0 => {
                    let xt = fb.var_ty(*xv);
                    let p = xt.elem();
                    let r = xt.rank();
                    let mut same: Option<Atom> = None;
                    let mut xdims = vec![];
                    for d in 0..r {
                        let a = fb.size_of(*xv, d, span);
                        let b = fb.size_of(*yv, d, span);
                        let c = fb.cmp(CmpOp::Eq, a, b, span);
                        same = Some(match same {
                            None => c,
                            Some(s) => fb.binop(BinOp::LogAnd, s, c, span),
                        });
                        xdims.push(a);
                    }
                    let same = same.unwrap_or(boolc(true));
                    fb.begin();
                    let mut total = i64c(1);
                    for d in &xdims {
                        total = fb.binop(BinOp::Mul, total, *d, span);
                    }
                    let fx = fb.bind1(
                        "fx",
                        ir::Type::Array(p, vec![atom_dim(total)]),
                        Exp::Reshape(vec![total], *xv),
                        span,
                    );
                    let fy = fb.bind1(
                        "fy",
                        ir::Type::Array(p, vec![atom_dim(total)]),
                        Exp::Reshape(vec![total], *yv),
                        span,
                    );
                    let (Atom::Var(fxv), Atom::Var(fyv)) = (fx, fy) else {
                        unreachable!()
                    };
                    let a = fb.var("a", ir::Type::Prim(p));
                    let b = fb.var("b", ir::Type::Prim(p));
                    fb.begin();
                    let e = fb.cmp(CmpOp::Eq, Atom::Var(a), Atom::Var(b), span);
                    let lb = fb.end(vec![e]);
                    let lam = Lambda {
                        params: vec![
                            Param::new(a, ir::Type::Prim(p)),
                            Param::new(b, ir::Type::Prim(p)),
                        ],
                        body: lb,
                        ret: vec![ir::Type::Prim(PrimType::Bool)],
                    };
                    let eqs = fb.bind1(
                        "eqs",
                        ir::Type::Array(PrimType::Bool, vec![atom_dim(total)]),
                        Exp::Soac(ir::Soac::Map {
                            w: total,
                            lam,
                            arrs: vec![fxv, fyv],
                        }),
                        span,
                    );
                    let Atom::Var(eqv) = eqs else { unreachable!() };
                    let and = binop_lambda(fb, PrimType::Bool, BinOp::LogAnd, span);
                    let all = fb.bind1(
                        "all",
                        ir::Type::Prim(PrimType::Bool),
                        Exp::Soac(ir::Soac::Reduce {
                            w: total,
                            lam: and,
                            neutral: vec![boolc(true)],
                            arrs: vec![eqv],
                            commutative: true,
                        }),
                        span,
                    );
                    let tb = fb.end(vec![all]);
                    let eb = ir::Body {
                        stms: vec![],
                        result: vec![boolc(false)],
                    };
                    fb.bind1(
                        "eq",
                        ir::Type::Prim(PrimType::Bool),
                        Exp::If {
                            cond: same,
                            then_: tb,
                            else_: eb,
                        },
                        span,
                    )
                }
                _ => fb.cmp(CmpOp::Eq, *x, *y, span),
            };
            acc = Some(match acc {
                None => c,
                Some(a) => fb.binop(BinOp::LogAnd, a, c, span),
            });
        }
        Ok(acc.unwrap_or(boolc(true)))
    }
}

/// Converts a scalar of any primitive type to `t` (value conversion).
fn conv_from(fb: &mut FunBuilder, t: PrimType, x: Atom, span: Span) -> Atom {
    let p = fb.atom_ty(x).elem();
    fb.conv(p, t, x, span)
}

/// Reinterprets a float's bits as the unsigned integer of the same width
/// (identity on integers). Returns the atom and its type.
fn as_bits(fb: &mut FunBuilder, t: PrimType, x: Atom, span: Span) -> (Atom, PrimType) {
    if !t.is_float() {
        return (x, t);
    }
    let u = uint_of_bits(t.bits());
    let r = fb.bind1(
        "bits",
        ir::Type::Prim(u),
        Exp::Conv(ConvOp::BitCast(t, u), x),
        span,
    );
    (r, u)
}

/// The inverse of [`as_bits`].
fn from_bits(fb: &mut FunBuilder, t: PrimType, u: PrimType, x: Atom, span: Span) -> Atom {
    if t == u {
        return x;
    }
    fb.bind1(
        "fbits",
        ir::Type::Prim(t),
        Exp::Conv(ConvOp::BitCast(u, t), x),
        span,
    )
}

/// `T.get_bit bit x`: bit `bit` of `x`'s representation, as an `i32` 0 or 1.
fn get_bit(fb: &mut FunBuilder, t: PrimType, bit: Atom, x: Atom, span: Span) -> Atom {
    let (x, u) = as_bits(fb, t, x, span);
    let b = conv_from(fb, u, bit, span);
    let sh = fb.bind1("sh", ir::Type::Prim(u), Exp::BinOp(BinOp::LShr, x, b), span);
    let one = Atom::Const(int_value(u, 1));
    let r = fb.binop(BinOp::BitAnd, sh, one, span);
    fb.conv(u, PrimType::I32, r, span)
}

/// `T.set_bit bit x b`: `x` with bit `bit` set to the lowest bit of `b`.
fn set_bit(fb: &mut FunBuilder, t: PrimType, bit: Atom, x: Atom, b: Atom, span: Span) -> Atom {
    let (x, u) = as_bits(fb, t, x, span);
    let bit_u = conv_from(fb, u, bit, span);
    let one = Atom::Const(int_value(u, 1));
    let mask = fb.binop(BinOp::Shl, one, bit_u, span);
    let nmask = fb.bind1("nm", ir::Type::Prim(u), Exp::UnOp(UnOp::Not, mask), span);
    let cleared = fb.binop(BinOp::BitAnd, x, nmask, span);
    let b_u = conv_from(fb, u, b, span);
    let b1 = fb.binop(BinOp::BitAnd, b_u, one, span);
    let sh = fb.binop(BinOp::Shl, b1, bit_u, span);
    let r = fb.binop(BinOp::BitOr, cleared, sh, span);
    from_bits(fb, t, u, r, span)
}

/// The sign bit of a float type's bit pattern, and its complement.
fn sign_masks(t: PrimType) -> (PrimType, Atom, Atom) {
    let bits = t.bits();
    let u = uint_of_bits(bits);
    let sign: i128 = 1 << (bits - 1);
    let all: i128 = (1 << bits) - 1;
    (
        u,
        Atom::Const(int_value(u, sign)),
        Atom::Const(int_value(u, all ^ sign)),
    )
}

/// `copysign x y`: the magnitude of `x` with the sign bit of `y` (on the bits,
/// so NaNs and zeros keep their payload / get the sign, as C's `copysign`).
fn copysign(fb: &mut FunBuilder, t: PrimType, x: Atom, y: Atom, span: Span) -> Atom {
    let (u, sign, mag) = sign_masks(t);
    let (bx, _) = as_bits(fb, t, x, span);
    let (by, _) = as_bits(fb, t, y, span);
    let m = fb.binop(BinOp::BitAnd, bx, mag, span);
    let sg = fb.binop(BinOp::BitAnd, by, sign, span);
    let r = fb.binop(BinOp::BitOr, m, sg, span);
    from_bits(fb, t, u, r, span)
}

/// `nextafter x y` as C's: the next representable value after `x` towards
/// `y`; `y` if they are equal; NaN if either is NaN; from zero, the smallest
/// subnormal with the sign of `y`. Computed on the bit pattern (the
/// magnitude grows by one unit in the last place when moving away from zero).
fn nextafter(fb: &mut FunBuilder, t: PrimType, x: Atom, y: Atom, span: Span) -> Atom {
    let (u, sign, _) = sign_masks(t);
    let zero = Atom::Const(crate::fb::float_value(t, 0.0));
    let one_u = Atom::Const(int_value(u, 1));
    let bool_t = ir::Type::Prim(PrimType::Bool);
    let nx = fb.bind1("nan", bool_t.clone(), Exp::UnOp(UnOp::IsNan, x), span);
    let ny = fb.bind1("nan", bool_t, Exp::UnOp(UnOp::IsNan, y), span);
    let anynan = fb.binop(BinOp::LogOr, nx, ny, span);
    let nan = fb.binop(BinOp::Add, x, y, span);
    let eq = fb.cmp(CmpOp::Eq, x, y, span);
    let is0 = fb.cmp(CmpOp::Eq, x, zero, span);
    let (bx, _) = as_bits(fb, t, x, span);
    let (by, _) = as_bits(fb, t, y, span);
    let ys = fb.binop(BinOp::BitAnd, by, sign, span);
    let tiny_b = fb.binop(BinOp::BitOr, ys, one_u, span);
    let tiny = from_bits(fb, t, u, tiny_b, span);
    let pos = fb.cmp(CmpOp::Gt, x, zero, span);
    let lt = fb.cmp(CmpOp::Lt, x, y, span);
    let up = fb.cmp(CmpOp::Eq, lt, pos, span);
    let inc = fb.binop(BinOp::Add, bx, one_u, span);
    let dec = fb.binop(BinOp::Sub, bx, one_u, span);
    let step = fb.select(up, inc, dec, span);
    let r = from_bits(fb, t, u, step, span);
    let r = fb.select(is0, tiny, r, span);
    let r = fb.select(eq, y, r, span);
    fb.select(anynan, nan, r, span)
}

/// `ldexp x e` = x * 2^e, as three multiplications by exact powers of two
/// (each within the type's exponent range, so none overflows on its own;
/// `e` is clamped to three times the largest exponent, beyond which the
/// result is 0 or infinite anyway).
fn ldexp(fb: &mut FunBuilder, t: PrimType, x: Atom, e: Atom, span: Span) -> Atom {
    use BinOp::*;
    let maxe: i128 = match t {
        PrimType::F16 => 15,
        PrimType::F32 => 127,
        _ => 1023,
    };
    let et = fb.atom_ty(e).elem();
    let e = fb.conv(et, PrimType::I32, e, span);
    let c = |v: i128| Atom::Const(int_value(PrimType::I32, v));
    let e = fb.binop(Max, e, c(-3 * maxe), span);
    let e = fb.binop(Min, e, c(3 * maxe), span);
    let a = fb.binop(Quot, e, c(3), span);
    let rest = fb.binop(Sub, e, a, span);
    let b = fb.binop(Quot, rest, c(2), span);
    let d = fb.binop(Sub, rest, b, span);
    let two = Atom::Const(crate::fb::float_value(t, 2.0));
    let mut r = x;
    for k in [a, b, d] {
        let kf = fb.conv(PrimType::I32, t, k, span);
        let p = fb.binop(Pow, two, kf, span);
        r = fb.binop(Mul, r, p, span);
    }
    r
}

/// `frexp x` as C's: `(m, e)` with `x = m * 2^e` and `0.5 <= |m| < 1`;
/// `(x, 0)` for zeros, infinities and NaN. On the bit pattern: the biased
/// exponent field gives `e`, and `m` is `x` with the exponent field of
/// `0.5`; a subnormal `x` is first scaled into the normal range by an
/// exact power of two.
fn frexp(fb: &mut FunBuilder, t: PrimType, x: Atom, span: Span) -> (Atom, Atom) {
    use BinOp::*;
    let (mant_bits, exp_bits): (i128, i128) = match t {
        PrimType::F16 => (10, 5),
        PrimType::F32 => (23, 8),
        _ => (52, 11),
    };
    let bias = (1i128 << (exp_bits - 1)) - 1;
    let u = uint_of_bits(t.bits());
    let cu = |v: i128| Atom::Const(int_value(u, v));
    let ci = |v: i128| Atom::Const(int_value(PrimType::I32, v));
    let fl = |v: f64| Atom::Const(crate::fb::float_value(t, v));
    let bool_t = ir::Type::Prim(PrimType::Bool);
    // Special values come back unchanged with exponent 0.
    let is_nan = fb.bind1("nan", bool_t.clone(), Exp::UnOp(UnOp::IsNan, x), span);
    let is_inf = fb.bind1("inf", bool_t, Exp::UnOp(UnOp::IsInf, x), span);
    let is_zero = fb.cmp(CmpOp::Eq, x, fl(0.0), span);
    let special = fb.binop(LogOr, is_nan, is_inf, span);
    let special = fb.binop(LogOr, special, is_zero, span);
    // Subnormals: multiply by 2^(mant_bits + 1) (exact), undo in `e`.
    let scale = mant_bits + 1;
    let min_normal = 2f64.powi(1 - bias as i32);
    let ax = fb.bind1("abs", ir::Type::Prim(t), Exp::UnOp(UnOp::Abs, x), span);
    let sub = fb.cmp(CmpOp::Lt, ax, fl(min_normal), span);
    let scaled = fb.binop(Mul, x, fl(2f64.powi(scale as i32)), span);
    let xs = fb.select(sub, scaled, x, span);
    let (bits, _) = as_bits(fb, t, xs, span);
    let field = fb.binop(LShr, bits, cu(mant_bits), span);
    let field = fb.binop(BitAnd, field, cu((1 << exp_bits) - 1), span);
    let field = fb.conv(u, PrimType::I32, field, span);
    let e = fb.binop(Sub, field, ci(bias - 1), span);
    let e_sub = fb.binop(Sub, e, ci(scale), span);
    let e = fb.select(sub, e_sub, e, span);
    let exp_mask = ((1i128 << exp_bits) - 1) << mant_bits;
    let all = (1i128 << t.bits()) - 1;
    let kept = fb.binop(BitAnd, bits, cu(all ^ exp_mask), span);
    let mbits = fb.binop(BitOr, kept, cu((bias - 1) << mant_bits), span);
    let m = from_bits(fb, t, u, mbits, span);
    let m = fb.select(special, x, m, span);
    let e = fb.select(special, ci(0), e, span);
    (m, e)
}

/// `mul_hi x y`: the upper half of the double-width product (signed or
/// unsigned as the type). Types narrower than 64 bits multiply in 64 bits;
/// 64-bit types combine 32-bit partial products (and correct for the signs).
fn mul_hi(fb: &mut FunBuilder, t: PrimType, x: Atom, y: Atom, span: Span) -> Atom {
    use BinOp::*;
    let bits = t.bits() as i128;
    if bits < 64 {
        let w = if t.is_signed_int() {
            PrimType::I64
        } else {
            PrimType::U64
        };
        let a = fb.conv(t, w, x, span);
        let b = fb.conv(t, w, y, span);
        let p = fb.binop(Mul, a, b, span);
        let h = fb.binop(Shr, p, Atom::Const(int_value(w, bits)), span);
        return fb.conv(w, t, h, span);
    }
    let u = PrimType::U64;
    let a = fb.conv(t, u, x, span);
    let b = fb.conv(t, u, y, span);
    let c = |v: i128| Atom::Const(int_value(u, v));
    let mask = c(0xffff_ffff);
    let s32 = c(32);
    let alo = fb.binop(BitAnd, a, mask, span);
    let ahi = fb.binop(LShr, a, s32, span);
    let blo = fb.binop(BitAnd, b, mask, span);
    let bhi = fb.binop(LShr, b, s32, span);
    let p0 = fb.binop(Mul, alo, blo, span);
    let p1 = fb.binop(Mul, alo, bhi, span);
    let p2 = fb.binop(Mul, ahi, blo, span);
    let p3 = fb.binop(Mul, ahi, bhi, span);
    let p0h = fb.binop(LShr, p0, s32, span);
    let p1l = fb.binop(BitAnd, p1, mask, span);
    let p2l = fb.binop(BitAnd, p2, mask, span);
    let mid = fb.binop(Add, p0h, p1l, span);
    let mid = fb.binop(Add, mid, p2l, span);
    let p1h = fb.binop(LShr, p1, s32, span);
    let p2h = fb.binop(LShr, p2, s32, span);
    let midh = fb.binop(LShr, mid, s32, span);
    let hi = fb.binop(Add, p3, p1h, span);
    let hi = fb.binop(Add, hi, p2h, span);
    let mut hi = fb.binop(Add, hi, midh, span);
    if t.is_signed_int() {
        // signed hi = unsigned hi - (x < 0 ? y : 0) - (y < 0 ? x : 0) (mod 2^64)
        let zero_t = Atom::Const(int_value(t, 0));
        let xneg = fb.cmp(CmpOp::Lt, x, zero_t, span);
        let yneg = fb.cmp(CmpOp::Lt, y, zero_t, span);
        let cy = fb.select(xneg, b, c(0), span);
        let cx = fb.select(yneg, a, c(0), span);
        hi = fb.binop(Sub, hi, cy, span);
        hi = fb.binop(Sub, hi, cx, span);
    }
    fb.conv(u, t, hi, span)
}

/// Applies an intrinsic to exactly `arity` arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn call<'a>(
    el: &mut Elab<'a>,
    fb: &mut FunBuilder,
    name: &str,
    ty: &STy,
    env: &Env<'a>,
    hints: &[Atom],
    args: Vec<SV<'a>>,
    span: Span,
) -> R<SV<'a>> {
    let n = args.len();
    let ret_ty = peel(ty, n).1.unwrap_or_else(STy::unit);
    let (module, f) = match name.split_once('.') {
        Some((m, f)) if PrimType::from_name(m).is_some() => (PrimType::from_name(m), f),
        _ => (None, name),
    };
    // ---- scalar operators and module functions ----
    if let Some(op) = cmp_op(f) {
        if n == 2 {
            let (xa, xt) = dyn_of(args[0].clone(), span)?;
            let ya = atoms_of(&args[1], span)?;
            let scalar = matches!(xt, STy::Prim(_));
            if scalar && xa.len() == 1 {
                let r = fb.cmp(op, xa[0], ya[0], span);
                return Ok(SV::Dyn(vec![r], STy::Prim(PrimType::Bool)));
            }
            if op == CmpOp::Eq || op == CmpOp::Neq {
                if xa.len() != ya.len() {
                    return Err(err(span, "comparing values of different types"));
                }
                let e = el.equal(fb, &xa, &ya, span)?;
                let r = if op == CmpOp::Neq {
                    fb.bind1(
                        "neq",
                        ir::Type::Prim(PrimType::Bool),
                        Exp::UnOp(UnOp::Not, e),
                        span,
                    )
                } else {
                    e
                };
                return Ok(SV::Dyn(vec![r], STy::Prim(PrimType::Bool)));
            }
            return Err(err(span, format!("operator {f} on non-primitive values")));
        }
    }
    if n == 2 && (module.is_some() || is_binop_name(f)) {
        let x = scalar(&args[0], span)?;
        let y = scalar(&args[1], span)?;
        let p = prim_of(&sty_of(&args[0]), span)?;
        if let Some(op) = arith_op(f, p) {
            if f == "^" && p == PrimType::Bool {
                let r = fb.cmp(CmpOp::Neq, x, y, span);
                return Ok(SV::Dyn(vec![r], STy::Prim(p)));
            }
            if op == BinOp::Pow && p.is_signed_int() {
                check_exponent(fb, p, y, span);
            }
            let r = fb.bind1("b", ir::Type::Prim(p), Exp::BinOp(op, x, y), span);
            return Ok(SV::Dyn(vec![r], STy::Prim(p)));
        }
        if let Some(t) = module {
            let r = match f {
                // get_bit (bit: i32) (x: t): i32
                "get_bit" => Some((get_bit(fb, t, x, y, span), PrimType::I32)),
                "copysign" if t.is_float() => Some((copysign(fb, t, x, y, span), t)),
                "nextafter" if t.is_float() => Some((nextafter(fb, t, x, y, span), t)),
                // ldexp (x: t) (e: i32): t
                "ldexp" if t.is_float() => Some((ldexp(fb, t, x, y, span), t)),
                // from_fraction (a: i64) (b: i64): t = t.i64 a / t.i64 b
                "from_fraction" => {
                    let a = conv_from(fb, t, x, span);
                    let b = conv_from(fb, t, y, span);
                    Some((fb.binop(BinOp::Div, a, b, span), t))
                }
                "mul_hi" if t.is_int() => Some((mul_hi(fb, t, x, y, span), t)),
                // atan2pi y x = atan2 y x / pi (half-turns)
                "atan2pi" if t.is_float() => {
                    let a = fb.binop(BinOp::Atan2, x, y, span);
                    let pi = Atom::Const(crate::fb::float_value(t, std::f64::consts::PI));
                    Some((fb.binop(BinOp::Div, a, pi, span), t))
                }
                _ => None,
            };
            if let Some((r, rt)) = r {
                return Ok(SV::Dyn(vec![r], STy::Prim(rt)));
            }
        }
    }
    if let Some(t) = module {
        if n == 1 {
            let x = scalar(&args[0], span)?;
            let p = fb.atom_ty(x).elem();
            // `f64.i32 x`-style conversions, `to_i64`, and the bit casts: one
            // `Conv` each (always bound, even when the types agree).
            let u = uint_of_bits(t.bits());
            let conv = if PrimType::from_name(f).is_some() {
                Some(("cv", ConvOp::Convert(p, t), t))
            } else {
                match f {
                    "to_i64" => Some(("cv", ConvOp::Convert(p, PrimType::I64), PrimType::I64)),
                    "to_bits" => Some(("bits", ConvOp::BitCast(t, u), u)),
                    "from_bits" => Some(("fbits", ConvOp::BitCast(u, t), t)),
                    _ => None,
                }
            };
            if let Some((hint, op, to)) = conv {
                let r = fb.bind1(hint, ir::Type::Prim(to), Exp::Conv(op, x), span);
                return Ok(SV::Dyn(vec![r], STy::Prim(to)));
            }
            match f {
                "to_f64" => {
                    let r = fb.conv(p, PrimType::F64, x, span);
                    return Ok(SV::Dyn(vec![r], STy::Prim(PrimType::F64)));
                }
                // Trigonometry in half-turns: sinpi x = sin (pi * x), …;
                // asinpi x = asin x / pi, ….
                "sinpi" | "cospi" | "tanpi" | "asinpi" | "acospi" | "atanpi" if t.is_float() => {
                    let pi = Atom::Const(crate::fb::float_value(t, std::f64::consts::PI));
                    let (op, inverse) = match f {
                        "sinpi" => (UnOp::Sin, false),
                        "cospi" => (UnOp::Cos, false),
                        "tanpi" => (UnOp::Tan, false),
                        "asinpi" => (UnOp::Asin, true),
                        "acospi" => (UnOp::Acos, true),
                        _ => (UnOp::Atan, true),
                    };
                    let r = if inverse {
                        let a = fb.bind1("u", ir::Type::Prim(t), Exp::UnOp(op, x), span);
                        fb.binop(BinOp::Div, a, pi, span)
                    } else {
                        let a = fb.binop(BinOp::Mul, pi, x, span);
                        fb.bind1("u", ir::Type::Prim(t), Exp::UnOp(op, a), span)
                    };
                    return Ok(SV::Dyn(vec![r], STy::Prim(t)));
                }
                "frexp" if t.is_float() => {
                    let (m, e) = frexp(fb, t, x, span);
                    return Ok(SV::Dyn(
                        vec![m, e],
                        STy::tuple(vec![STy::Prim(t), STy::Prim(PrimType::I32)]),
                    ));
                }
                // recip x = 1/x; rsqrt x = 1/sqrt x (as Futhark's prelude).
                "recip" | "rsqrt" if t.is_float() => {
                    let v = if f == "rsqrt" {
                        fb.bind1("sqrt", ir::Type::Prim(t), Exp::UnOp(UnOp::Sqrt, x), span)
                    } else {
                        x
                    };
                    let one = Atom::Const(crate::fb::float_value(t, 1.0));
                    let r = fb.binop(BinOp::Div, one, v, span);
                    return Ok(SV::Dyn(vec![r], STy::Prim(t)));
                }
                _ => {}
            }
            if let Some(op) = un_op(f) {
                let rt = unop_result(op, p);
                let r = fb.bind1("u", ir::Type::Prim(rt), Exp::UnOp(op, x), span);
                return Ok(SV::Dyn(vec![r], STy::Prim(rt)));
            }
        }
        if n == 3 {
            if let Some(op) = match f {
                "fma" => Some(TernOp::Fma),
                "mad" => Some(TernOp::Mad),
                "lerp" => Some(TernOp::Lerp),
                _ => None,
            } {
                let a = scalar(&args[0], span)?;
                let b = scalar(&args[1], span)?;
                let c = scalar(&args[2], span)?;
                let r = fb.bind1("t", ir::Type::Prim(t), Exp::TernOp(op, a, b, c), span);
                return Ok(SV::Dyn(vec![r], STy::Prim(t)));
            }
            if f == "set_bit" {
                // set_bit (bit: i32) (x: t) (b: i32): t
                let bit = scalar(&args[0], span)?;
                let x = scalar(&args[1], span)?;
                let b = scalar(&args[2], span)?;
                let r = set_bit(fb, t, bit, x, b, span);
                return Ok(SV::Dyn(vec![r], STy::Prim(t)));
            }
            if f == "mad_hi" && t.is_int() {
                // mad_hi a b c = mul_hi a b + c
                let a = scalar(&args[0], span)?;
                let b = scalar(&args[1], span)?;
                let c = scalar(&args[2], span)?;
                let h = mul_hi(fb, t, a, b, span);
                let r = fb.binop(BinOp::Add, h, c, span);
                return Ok(SV::Dyn(vec![r], STy::Prim(t)));
            }
        }
        if n == 1 && matches!(f, "sum" | "product" | "maximum" | "minimum") {
            let vs = arr_vars(&args[0], span)?;
            let v = *vs.first().ok_or_else(|| err(span, "expected an array"))?;
            let (op, ne) = match f {
                "sum" => (BinOp::Add, int_value(t, 0)),
                "product" => (BinOp::Mul, int_value(t, 1)),
                "maximum" => (BinOp::Max, extreme(t, false)),
                _ => (BinOp::Min, extreme(t, true)),
            };
            let ne = if t.is_float() && f == "sum" {
                crate::fb::float_value(t, 0.0)
            } else {
                ne
            };
            let w = fb.size_of(v, 0, span);
            let lam = binop_lambda(fb, t, op, span);
            let r = fb.bind1(
                f,
                ir::Type::Prim(t),
                Exp::Soac(ir::Soac::Reduce {
                    w,
                    lam,
                    neutral: vec![Atom::Const(ne)],
                    arrs: vec![v],
                    commutative: true,
                }),
                span,
            );
            return Ok(SV::Dyn(vec![r], STy::Prim(t)));
        }
        return Err(err(
            span,
            format!("intrinsic {name} is not supported with {n} arguments"),
        ));
    }
    if n == 1 && (f == "neg" || f == "!") {
        let x = scalar(&args[0], span)?;
        let p = fb.atom_ty(x).elem();
        let op = if f == "neg" { UnOp::Neg } else { UnOp::Not };
        let r = fb.bind1("u", ir::Type::Prim(p), Exp::UnOp(op, x), span);
        return Ok(SV::Dyn(vec![r], STy::Prim(p)));
    }

    // ---- arrays and SOACs ----
    if let Some(member) = f.strip_prefix("intrinsics.") {
        return crate::accs::call(el, fb, member, args, span);
    }
    let mut args = args;
    match f {
        "map" | "map1" | "map2" | "map3" | "map4" | "map5" => {
            let fun = args.remove(0);
            let refs: Vec<&SV<'a>> = args.iter().collect();
            let w = el.common_width(fb, &refs, f, span)?;
            let mut largs = vec![];
            let mut arrs = vec![];
            for a in &args {
                largs.push(el.row_arg(fb, a, span)?);
                arrs.extend(arr_vars(a, span)?);
            }
            let (lam, rt) = el.make_lambda(fb, fun, largs, span)?;
            let tys: Vec<ir::Type> = lam.ret.iter().map(|t| t.array_of(atom_dim(w))).collect();
            let vs = fb.bind("map", tys, Exp::Soac(ir::Soac::Map { w, lam, arrs }), span);
            let st = if crate::elab::first_order(&ret_ty) {
                ret_ty
            } else {
                sty_array_of(&rt, Size::Any)
            };
            Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), st))
        }
        "reduce" | "reduce_comm" | "scan" => {
            let fun = args.remove(0);
            let ne = atoms_of(&args[0], span)?;
            let arr = &args[1];
            let arrs = arr_vars(arr, span)?;
            let w = el.common_width(fb, &[arr], f, span)?;
            let (rst, rtys) = el.row_arg(fb, arr, span)?;
            let (lam, _) = el.make_lambda(
                fb,
                fun,
                vec![(rst.clone(), rtys.clone()), (rst.clone(), rtys.clone())],
                span,
            )?;
            if ne.len() != arrs.len() {
                return Err(err(
                    span,
                    format!("{f}: neutral element does not match the array's element type"),
                ));
            }
            if f == "scan" {
                let tys: Vec<ir::Type> = rtys.iter().map(|t| t.array_of(atom_dim(w))).collect();
                let vs = fb.bind(
                    "scan",
                    tys,
                    Exp::Soac(ir::Soac::Scan {
                        w,
                        lam,
                        neutral: ne,
                        arrs,
                    }),
                    span,
                );
                Ok(SV::Dyn(
                    vs.into_iter().map(Atom::Var).collect(),
                    sty_of(arr),
                ))
            } else {
                let vs = fb.bind(
                    "red",
                    rtys,
                    Exp::Soac(ir::Soac::Reduce {
                        w,
                        lam,
                        neutral: ne,
                        arrs,
                        commutative: f == "reduce_comm",
                    }),
                    span,
                );
                Ok(SV::Dyn(vs.into_iter().map(Atom::Var).collect(), rst))
            }
        }
        "reduce_by_index" | "hist" => {
            // reduce_by_index dest op ne is vs ; hist op ne k is vs
            let (dest_sv, fun, ne_sv, is_sv, vs_sv) = if f == "hist" {
                let fun = args.remove(0);
                let ne = args.remove(0);
                let k = scalar(&args.remove(0), span)?;
                let ne_atoms = atoms_of(&ne, span)?;
                let mut d = vec![];
                for a in &ne_atoms {
                    let t = fb.atom_ty(*a).array_of(atom_dim(k));
                    d.push(fb.bind1("hdest", t, Exp::Replicate(k, *a), span));
                }
                let dt = sty_array_of(&sty_of(&ne), Size::Any);
                (SV::Dyn(d, dt), fun, ne, args.remove(0), args.remove(0))
            } else {
                let dest = args.remove(0);
                let fun = args.remove(0);
                let ne = args.remove(0);
                (dest, fun, ne, args.remove(0), args.remove(0))
            };
            let dest = arr_vars(&dest_sv, span)?;
            let ne = atoms_of(&ne_sv, span)?;
            let is = arr_vars(&is_sv, span)?;
            let values = arr_vars(&vs_sv, span)?;
            let w = el.common_width(fb, &[&is_sv, &vs_sv], f, span)?;
            let (rst, rtys) = el.row_arg(fb, &vs_sv, span)?;
            let (lam, _) = el.make_lambda(
                fb,
                fun,
                vec![(rst.clone(), rtys.clone()), (rst, rtys)],
                span,
            )?;
            let tys: Vec<ir::Type> = dest.iter().map(|v| fb.var_ty(*v)).collect();
            let indices = *is.first().ok_or_else(|| err(span, "missing index array"))?;
            if dest.len() != values.len() || ne.len() != values.len() {
                return Err(err(
                    span,
                    format!("{f}: destination, neutral element and values do not match"),
                ));
            }
            let vs = fb.bind(
                f,
                tys,
                Exp::Soac(ir::Soac::Hist {
                    w,
                    dest,
                    lam,
                    neutral: ne,
                    indices,
                    values,
                }),
                span,
            );
            Ok(SV::Dyn(
                vs.into_iter().map(Atom::Var).collect(),
                sty_of(&dest_sv),
            ))
        }
        "scatter" | "scatter_2d" | "scatter_3d" => {
            let dest = arr_vars(&args[0], span)?;
            let indices = arr_vars(&args[1], span)?;
            let values = arr_vars(&args[2], span)?;
            let w = el.common_width(fb, &[&args[1], &args[2]], f, span)?;
            let tys: Vec<ir::Type> = dest.iter().map(|v| fb.var_ty(*v)).collect();
            if dest.len() != values.len() {
                return Err(err(span, "scatter: destination and values do not match"));
            }
            let vs = fb.bind(
                "scatter",
                tys,
                Exp::Soac(ir::Soac::Scatter {
                    w,
                    dest,
                    indices,
                    values,
                }),
                span,
            );
            Ok(SV::Dyn(
                vs.into_iter().map(Atom::Var).collect(),
                sty_of(&args[0]),
            ))
        }
        "iota" => {
            let k = scalar(&args[0], span)?;
            let p = fb.atom_ty(k).elem();
            let k64 = fb.conv(p, PrimType::I64, k, span);
            let r = fb.bind1(
                "iota",
                ir::Type::Array(p, vec![atom_dim(k64)]),
                Exp::Iota {
                    n: k64,
                    start: Atom::Const(int_value(p, 0)),
                    step: Atom::Const(int_value(p, 1)),
                    ty: p,
                },
                span,
            );
            Ok(SV::Dyn(
                vec![r],
                STy::Array {
                    elem: Box::new(STy::Prim(p)),
                    shape: vec![Size::Any],
                    unique: true,
                },
            ))
        }
        "replicate" => {
            let k = scalar(&args[0], span)?;
            let (xa, xt) = dyn_of(args[1].clone(), span)?;
            let mut out = vec![];
            for a in xa {
                let t = fb.atom_ty(a).array_of(atom_dim(k));
                out.push(fb.bind1("rep", t, Exp::Replicate(k, a), span));
            }
            Ok(SV::Dyn(out, sty_array_of(&xt, Size::Any)))
        }
        "zip" | "zip2" | "zip3" | "zip4" | "zip5" => {
            let refs: Vec<&SV<'a>> = args.iter().collect();
            el.common_width(fb, &refs, f, span)?;
            let mut atoms = vec![];
            let mut rows = vec![];
            // Futhark's `zip` returns a unique array, which the program may
            // consume while the arrays zipped stay in use (or are
            // parameters that may not be consumed): its arrays are copies,
            // which the `copies` pass removes where nothing consumes them.
            for a in &args {
                for atom in atoms_of(a, span)? {
                    atoms.push(match atom {
                        Atom::Var(v) if fb.var_ty(v).rank() > 0 => {
                            fb.bind1("zip_copy", fb.var_ty(v), Exp::Copy(v), span)
                        }
                        atom => atom,
                    });
                }
                rows.push(sty_row(&sty_of(a)));
            }
            let st = if crate::elab::first_order(&ret_ty) {
                ret_ty
            } else {
                sty_array_of(&STy::tuple(rows), Size::Any)
            };
            Ok(SV::Dyn(atoms, st))
        }
        "unzip" | "unzip2" | "unzip3" | "unzip4" | "unzip5" => {
            let (atoms, t) = dyn_of(args[0].clone(), span)?;
            let st = if crate::elab::first_order(&ret_ty) {
                ret_ty
            } else {
                match sty_row(&t) {
                    STy::Record(fs) => STy::Record(
                        fs.into_iter()
                            .map(|(n, ft)| (n, sty_array_of(&ft, Size::Any)))
                            .collect(),
                    ),
                    r => r,
                }
            };
            Ok(SV::Dyn(atoms, st))
        }
        "transpose" => {
            let (atoms, _) = dyn_of(args[0].clone(), span)?;
            let mut out = vec![];
            for a in atoms {
                let Atom::Var(v) = a else {
                    return Err(err(span, "transpose of a scalar"));
                };
                let (p, ds) = match fb.var_ty(v) {
                    ir::Type::Array(p, ds) if ds.len() >= 2 => (p, ds),
                    _ => return Err(err(span, "transpose needs a rank-2 array")),
                };
                let mut perm: Vec<usize> = (0..ds.len()).collect();
                perm.swap(0, 1);
                let nd: Vec<Dim> = perm.iter().map(|k| ds[*k]).collect();
                out.push(fb.bind1("tr", ir::Type::Array(p, nd), Exp::Rearrange(perm, v), span));
            }
            Ok(SV::Dyn(out, ret_ty))
        }
        "flatten" | "flatten_3d" => {
            let k = if f == "flatten" { 2 } else { 3 };
            let (atoms, _) = dyn_of(args[0].clone(), span)?;
            let mut out = vec![];
            for a in atoms {
                let Atom::Var(v) = a else {
                    return Err(err(span, "flatten of a scalar"));
                };
                let t = fb.var_ty(v);
                if t.rank() < k {
                    return Err(err(
                        span,
                        format!("{f} needs an array of rank at least {k}"),
                    ));
                }
                let mut total = fb.size_of(v, 0, span);
                for d in 1..k {
                    let s = fb.size_of(v, d, span);
                    total = fb.binop(BinOp::Mul, total, s, span);
                }
                let mut shape = vec![total];
                for d in k..t.rank() {
                    shape.push(fb.size_of(v, d, span));
                }
                let ty = ir::Type::Array(t.elem(), shape.iter().map(|a| atom_dim(*a)).collect());
                out.push(fb.bind1("flat", ty, Exp::Reshape(shape, v), span));
            }
            Ok(SV::Dyn(out, ret_ty))
        }
        "unflatten" | "unflatten_3d" => {
            let k = if f == "unflatten" { 2 } else { 3 };
            let arr = args.pop().ok_or_else(|| err(span, "missing argument"))?;
            // The result sizes come from the use site: the result type, or
            // size hints from a coerced argument (`xs :> [a * b]t`).
            let mut known = vec![];
            if let STy::Array { shape, .. } = &ret_ty {
                for (i, s) in shape.iter().take(k).enumerate() {
                    let size = el.size_value(fb, s, env, &Default::default());
                    known.push(size.or(hints.get(i).copied()));
                }
            }
            if known.len() != k {
                return Err(err(span, format!("{f}: cannot determine the result sizes")));
            }
            let (atoms, _) = dyn_of(arr, span)?;
            // One result size unknown: the argument's length divided by
            // the product of the others (at least 1; where that product is
            // 0 the length must be 0 too, which `check_unflatten` checks).
            if known.iter().filter(|d| d.is_none()).count() == 1 {
                if let Some(Atom::Var(first)) = atoms.first() {
                    let len = fb.size_of(*first, 0, span);
                    let mut product = i64c(1);
                    for d in known.iter().flatten() {
                        product = fb.binop(ir::BinOp::Mul, product, *d, span);
                    }
                    let divisor = fb.binop(ir::BinOp::Max, product, i64c(1), span);
                    let missing = fb.binop(ir::BinOp::Quot, len, divisor, span);
                    known.iter_mut().for_each(|d| *d = d.or(Some(missing)));
                }
            }
            let dims = known
                .into_iter()
                .collect::<Option<Vec<Atom>>>()
                .ok_or_else(|| {
                    err(
                        span,
                        format!(
                            "{f}: the result sizes are not known here (result type {ret_ty}); coerce the argument or ascribe the result type, e.g. `unflatten (xs :> [n * m]t)`"
                        ),
                    )
                })?;
            if let Some(Atom::Var(first)) = atoms.first() {
                check_unflatten(fb, *first, &dims, span);
            }
            let mut out = vec![];
            for a in atoms {
                let Atom::Var(v) = a else {
                    return Err(err(span, "unflatten of a scalar"));
                };
                let t = fb.var_ty(v);
                let mut shape = dims.clone();
                for d in 1..t.rank() {
                    shape.push(fb.size_of(v, d, span));
                }
                let ty = ir::Type::Array(t.elem(), shape.iter().map(|a| atom_dim(*a)).collect());
                out.push(fb.bind1("unflat", ty, Exp::Reshape(shape, v), span));
            }
            Ok(SV::Dyn(out, ret_ty))
        }
        "concat" | "++" => {
            let xs = arr_vars(&args[0], span)?;
            let ys = arr_vars(&args[1], span)?;
            let mut out = vec![];
            for (x, y) in xs.iter().zip(&ys) {
                let tx = fb.var_ty(*x);
                let ty = fb.var_ty(*y);
                let outer = match (tx.clone(), ty) {
                    (ir::Type::Array(_, a), ir::Type::Array(_, b)) => {
                        match (a.first(), b.first()) {
                            (Some(Dim::Const(m)), Some(Dim::Const(n))) => Dim::Const(m + n),
                            _ => Dim::Ext,
                        }
                    }
                    _ => return Err(err(span, "concatenation of scalars")),
                };
                // Rows whose sizes are statically known and differ: a size
                // error at compile time, as in Futhark (otherwise the
                // interpreter checks the rows at run time).
                if let (ir::Type::Array(_, a), ir::Type::Array(_, b)) = (&tx, &fb.var_ty(*y)) {
                    let clash = a.len() != b.len()
                        || a[1..].iter().zip(&b[1..]).any(
                            |(p, q)| matches!((p, q), (Dim::Const(m), Dim::Const(n)) if m != n),
                        );
                    if clash {
                        return Err(err(
                            span,
                            format!(
                                "cannot concatenate arrays whose rows have different shapes \
                                 (the operands have types {} and {})",
                                show_ir_type(&tx),
                                show_ir_type(&fb.var_ty(*y))
                            ),
                        ));
                    }
                }
                let rt = tx
                    .row()
                    .ok_or_else(|| err(span, "concatenation of scalars"))?;
                out.push(fb.bind1("cat", rt.array_of(outer), Exp::Concat(vec![*x, *y]), span));
            }
            Ok(SV::Dyn(
                out,
                sty_array_of(&sty_row(&sty_of(&args[0])), Size::Any),
            ))
        }
        "rotate" => {
            let r = scalar(&args[0], span)?;
            let rp = fb.atom_ty(r).elem();
            let r = fb.conv(rp, PrimType::I64, r, span);
            let xs = arr_vars(&args[1], span)?;
            let mut out = vec![];
            for x in xs {
                out.push(fb.bind1("rot", fb.var_ty(x), Exp::Rotate(r, x), span));
            }
            Ok(SV::Dyn(out, sty_of(&args[1])))
        }
        "reverse" => {
            let xs = arr_vars(&args[0], span)?;
            let mut out = vec![];
            for x in xs {
                out.push(fb.bind1("rev", fb.var_ty(x), Exp::Reverse(x), span));
            }
            Ok(SV::Dyn(out, sty_of(&args[0])))
        }
        "length" => {
            let w = el.common_width(fb, &[&args[0]], f, span)?;
            Ok(SV::Dyn(vec![w], STy::Prim(PrimType::I64)))
        }
        "copy" => {
            let (atoms, t) = dyn_of(args[0].clone(), span)?;
            let mut out = vec![];
            for a in atoms {
                out.push(match a {
                    Atom::Var(v) if fb.var_ty(v).rank() > 0 => {
                        fb.bind1("copy", fb.var_ty(v), Exp::Copy(v), span)
                    }
                    a => a,
                });
            }
            Ok(SV::Dyn(out, t))
        }
        "???" => {
            // A typed hole: evaluating it fails (the check is a constant
            // `false` guarded by nothing, so the optimiser cannot remove
            // it); the blank values after it only give the statement its
            // type.
            let ty_text = ret_ty.to_string();
            fb.effect(
                Exp::Assert(
                    Atom::Const(PrimValue::Bool(false)),
                    format!("hole of type {ty_text} evaluated"),
                    vec![],
                ),
                span,
            );
            let blanks = el.blanks(fb, &ret_ty, env, span)?;
            Ok(SV::Dyn(blanks, ret_ty))
        }
        "assert" => {
            let c = scalar(&args[0], span)?;
            let message = el.assert_message(span);
            fb.effect(Exp::Assert(c, message, vec![]), span);
            Ok(args.pop().unwrap_or(SV::Dyn(vec![], STy::unit())))
        }
        "sized" => {
            let k = scalar(&args[0], span)?;
            let (atoms, t) = dyn_of(args[1].clone(), span)?;
            let mut out = vec![];
            for a in atoms {
                let Atom::Var(v) = a else {
                    return Err(err(span, "sized of a scalar"));
                };
                let vt = fb.var_ty(v);
                let actual = fb.size_of(v, 0, span);
                fb.effect(
                    Exp::AssertEqSizes(
                        vec![actual, k],
                        "array does not have the size given to `sized`".into(),
                    ),
                    span,
                );
                let mut shape = vec![k];
                for d in 1..vt.rank() {
                    shape.push(fb.size_of(v, d, span));
                }
                let ty = ir::Type::Array(vt.elem(), shape.iter().map(|a| atom_dim(*a)).collect());
                out.push(fb.bind1("sized", ty, Exp::Reshape(shape, v), span));
            }
            let st = match t {
                STy::Array {
                    elem,
                    mut shape,
                    unique,
                } => {
                    if let Some(s) = shape.first_mut() {
                        *s = Size::Any;
                    }
                    STy::Array {
                        elem,
                        shape,
                        unique,
                    }
                }
                t => t,
            };
            Ok(SV::Dyn(out, st))
        }
        "jvp" | "jvp2" | "vjp" | "vjp2" => {
            let fun = args.remove(0);
            let (xa, xt) = dyn_of(args[0].clone(), span)?;
            let da = atoms_of(&args[1], span)?;
            if da.len() != xa.len() && f.starts_with('j') {
                return Err(err(
                    span,
                    format!("{f}: tangent does not match the argument"),
                ));
            }
            // Tangents/adjoints of sum types carry the primal's constructor:
            // an input tangent's tags are those of the primal argument.
            let da: Vec<Atom> = if f.starts_with('j') {
                let mask = tag_mask(&xt);
                da.iter()
                    .enumerate()
                    .map(|(i, a)| {
                        if mask.get(i).copied().unwrap_or(false) {
                            xa[i]
                        } else {
                            *a
                        }
                    })
                    .collect()
            } else {
                da
            };
            let xtys: Vec<ir::Type> = xa.iter().map(|a| fb.atom_ty(*a)).collect();
            let (lam, rt) = el.make_lambda(fb, fun, vec![(xt.clone(), xtys.clone())], span)?;
            let k = lam.ret.len();
            if f.starts_with('j') {
                let mut tys = lam.ret.clone();
                tys.extend(lam.ret.clone());
                let vs: Vec<Atom> = fb
                    .bind(
                        f,
                        tys,
                        Exp::Jvp {
                            lam,
                            primals: xa,
                            tangents: da,
                        },
                        span,
                    )
                    .into_iter()
                    .map(Atom::Var)
                    .collect();
                // A sum type's tag is not differentiated: the result tangent
                // carries the primal result's constructor.
                let mask = tag_mask(&rt);
                let tan_atoms: Vec<Atom> = (0..k)
                    .map(|i| {
                        if mask.get(i).copied().unwrap_or(false) {
                            vs[i]
                        } else {
                            vs[k + i]
                        }
                    })
                    .collect();
                let prim = SV::Dyn(vs[..k].to_vec(), rt.clone());
                let tan = SV::Dyn(tan_atoms, rt);
                Ok(if f == "jvp" {
                    tan
                } else {
                    mk_tuple(vec![prim, tan])
                })
            } else {
                if da.len() != k {
                    return Err(err(
                        span,
                        "vjp: adjoint does not match the function's result",
                    ));
                }
                let mut tys = lam.ret.clone();
                tys.extend(xtys);
                let vs: Vec<Atom> = fb
                    .bind(
                        f,
                        tys,
                        Exp::Vjp {
                            lam,
                            primals: xa.clone(),
                            adjoints: da,
                        },
                        span,
                    )
                    .into_iter()
                    .map(Atom::Var)
                    .collect();
                // The adjoint of a sum-typed parameter carries the primal
                // argument's constructor (tags are not differentiated).
                let mask = tag_mask(&xt);
                let adj_atoms: Vec<Atom> = vs[k..]
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        if mask.get(i).copied().unwrap_or(false) {
                            xa[i]
                        } else {
                            *a
                        }
                    })
                    .collect();
                let prim = SV::Dyn(vs[..k].to_vec(), rt);
                let adj = SV::Dyn(adj_atoms, xt);
                Ok(if f == "vjp" {
                    adj
                } else {
                    mk_tuple(vec![prim, adj])
                })
            }
        }
        "with_vjp" | "with_vjp_tape" => {
            let fun = args.remove(0);
            let rule_fun = args.remove(0);
            let (xa, xt) = dyn_of(args.remove(0), span)?;
            let xtys: Vec<ir::Type> = xa.iter().map(|a| fb.atom_ty(*a)).collect();
            let (mut lam, rt) = el.make_lambda(fb, fun, vec![(xt, xtys)], span)?;
            // `lam` returns the saved values, then the results: for
            // `with_vjp` the results themselves (returned twice), for
            // `with_vjp_tape` the tape `c` of its `(c, b)` result.
            let (tape, res_ty) = if f == "with_vjp" {
                let k = lam.ret.len();
                let again = lam.body.result.clone();
                lam.body.result.extend(again);
                let again = lam.ret.clone();
                lam.ret.extend(again);
                (k, rt.clone())
            } else {
                match &rt {
                    STy::Record(fs) if fs.len() == 2 => (
                        crate::elab::nflat(&fs[0].1).map_err(|m| err(span, m))?,
                        fs[1].1.clone(),
                    ),
                    _ => {
                        return Err(err(
                            span,
                            "with_vjp_tape: the function must return a pair (tape, result)",
                        ))
                    }
                }
            };
            // The rule's parameters: (result, adjoint) for `with_vjp`, the
            // pair (tape, adjoint) for `with_vjp_tape`; adjoints have the
            // results' types.
            let rule_args = if f == "with_vjp" {
                let res_tys = lam.ret[tape..].to_vec();
                vec![(res_ty.clone(), res_tys.clone()), (res_ty.clone(), res_tys)]
            } else {
                vec![(rt, lam.ret.clone())]
            };
            let (rule, _) = el.make_lambda(fb, rule_fun, rule_args, span)?;
            if rule.ret.len() != xa.len() {
                return Err(err(
                    span,
                    format!("{f}: the derivative rule's result does not match the argument"),
                ));
            }
            let vs: Vec<Atom> = fb
                .bind(
                    f,
                    lam.ret.clone(),
                    Exp::WithVjp {
                        lam,
                        rule,
                        args: xa,
                        tape,
                    },
                    span,
                )
                .into_iter()
                .map(Atom::Var)
                .collect();
            Ok(SV::Dyn(vs[tape..].to_vec(), res_ty))
        }
        _ => Err(err(span, format!("intrinsic {name} is not supported"))),
    }
}

/// A range `start..<end`, `start..second...end`, `start..>end`: checks
/// validity at run time (as Futhark: a zero step, a step in the wrong
/// direction, or an end on the wrong side of the start is an error) and
/// produces an `Iota`.
pub(crate) fn range(
    fb: &mut FunBuilder,
    start: Atom,
    second: Option<Atom>,
    end: Atom,
    kind: RangeKind,
    span: Span,
) -> R<Atom> {
    use BinOp::*;
    let t = fb.atom_ty(start).elem();
    if !t.is_int() {
        return Err(err(span, "ranges need integer bounds"));
    }
    let c = |v: i128| Atom::Const(int_value(t, v));
    let signed = t.is_signed_int();
    // Direction: static for ..< and ..>, given by the step for ...
    let step = match second {
        Some(s) => fb.binop(Sub, s, start, span),
        None => match kind {
            RangeKind::DownToExclusive => c(-1),
            _ => c(1),
        },
    };
    let down: Atom = match (kind, second) {
        (RangeKind::DownToExclusive, _) => boolc(true),
        (_, None) => boolc(false),
        (RangeKind::UpToExclusive, Some(_)) => boolc(false),
        (RangeKind::ToInclusive, Some(s)) => {
            if signed {
                fb.cmp(CmpOp::Lt, step, c(0), span)
            } else {
                fb.cmp(CmpOp::Lt, s, start, span)
            }
        }
    };
    // |step| and the distance in the direction of travel.
    let nstep = fb.bind1("nstep", ir::Type::Prim(t), Exp::UnOp(UnOp::Neg, step), span);
    let abs_step = fb.select(down, nstep, step, span);
    let d_down = fb.binop(Sub, start, end, span);
    let d_up = fb.binop(Sub, end, start, span);
    let dist = fb.select(down, d_down, d_up, span);
    // Validity: step != 0, the step goes in the direction of the range, and
    // the end is not behind the start.
    let step_nz = fb.cmp(CmpOp::Neq, step, c(0), span);
    let bounds_ok_down = fb.cmp(CmpOp::Le, end, start, span);
    let bounds_ok_up = fb.cmp(CmpOp::Le, start, end, span);
    let bounds_ok = fb.select(down, bounds_ok_down, bounds_ok_up, span);
    let mut ok = fb.binop(LogAnd, step_nz, bounds_ok, span);
    if signed && second.is_some() {
        let step_neg = fb.cmp(CmpOp::Lt, step, c(0), span);
        let dir_ok = fb.cmp(CmpOp::Eq, step_neg, down, span);
        ok = fb.binop(LogAnd, ok, dir_ok, span);
    }
    let what = match kind {
        RangeKind::UpToExclusive => "..<",
        RangeKind::ToInclusive => "...",
        RangeKind::DownToExclusive => "..>",
    };
    // Futhark's message shows the range with its values.
    let (message, shown) = match second {
        Some(s) => (
            format!("Range {{}}..{{}}{what}{{}} is invalid."),
            vec![start, s, end],
        ),
        None => (
            format!("Range {{}}{what}{{}} is invalid."),
            vec![start, end],
        ),
    };
    fb.effect(Exp::Assert(ok, message, shown), span);
    // Number of elements: ceil(dist / |step|), plus the end itself for inclusive ranges.
    let dist = if kind == RangeKind::ToInclusive {
        fb.binop(Add, dist, c(1), span)
    } else {
        dist
    };
    let d64 = fb.conv(t, PrimType::I64, dist, span);
    let s64 = fb.conv(t, PrimType::I64, abs_step, span);
    let s64 = fb.binop(Max, s64, i64c(1), span);
    let num = fb.binop(Add, d64, s64, span);
    let num = fb.binop(Sub, num, i64c(1), span);
    let n = fb.binop(Quot, num, s64, span);
    let r = fb.bind1(
        "range",
        ir::Type::Array(t, vec![atom_dim(n)]),
        Exp::Iota {
            n,
            start,
            step,
            ty: t,
        },
        span,
    );
    Ok(r)
}

/// For each flat IR component of `t` (in the order of `elab::flat`), whether
/// it is a sum type's constructor tag (an `i8`, or an array of them for an
/// array of sums). Tags are not differentiated: tangents and adjoints take
/// them from the corresponding primal value.
pub(crate) fn tag_mask(t: &STy) -> Vec<bool> {
    fn go(t: &STy, out: &mut Vec<bool>, depth: usize) {
        if depth > 200 {
            return;
        }
        match t {
            STy::Prim(_) => out.push(false),
            STy::Array { elem, .. } => go(elem, out, depth + 1),
            STy::Record(fs) => {
                for (_, f) in fs {
                    go(f, out, depth + 1);
                }
            }
            STy::Sum(cs) => {
                out.push(true);
                for (_, ts) in cs {
                    for t in ts {
                        go(t, out, depth + 1);
                    }
                }
            }
            STy::Acc { arr, .. } => go(arr, out, depth + 1),
            STy::Arrow { .. } | STy::Param(_) | STy::Var(_) => {}
        }
    }
    let mut out = vec![];
    go(t, &mut out, 0);
    out
}

/// An IR type for messages: `[2][3]i32`, `[]f64` (unknown sizes empty).
fn show_ir_type(t: &ir::Type) -> String {
    match t {
        ir::Type::Array(p, dims) => {
            let mut s = String::new();
            for d in dims {
                match d {
                    Dim::Const(n) => s.push_str(&format!("[{n}]")),
                    _ => s.push_str("[]"),
                }
            }
            format!("{s}{p}")
        }
        t => format!("{}", t.elem()),
    }
}
