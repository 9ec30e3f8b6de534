//! A tiny builder for hand-written IR programs in tests.
#![allow(dead_code)]

use nabla_ir::*;
use nabla_syntax::FileId;
use nabla_values::{ArrayValue, Value};

/// The variable names of one function; fresh variables come from
/// nabla-ir's supply ([`nabla_ir::rewrite::fresh_var`]), as in every pass.
#[derive(Default)]
pub struct Vars {
    pub names: Vec<String>,
}

impl Vars {
    pub fn new() -> Vars {
        Vars::default()
    }
    pub fn v(&mut self, name: &str) -> Var {
        nabla_ir::rewrite::fresh_var(&mut self.names, name)
    }
}

pub fn sp(at: u32) -> Span {
    Span::new(FileId(0), at, at + 1)
}

pub fn t(p: PrimType) -> Type {
    Type::Prim(p)
}
pub fn arr(p: PrimType, dims: &[Dim]) -> Type {
    Type::Array(p, dims.to_vec())
}
pub fn arr1(p: PrimType) -> Type {
    Type::Array(p, vec![Dim::Ext])
}
pub fn arr2(p: PrimType) -> Type {
    Type::Array(p, vec![Dim::Ext, Dim::Ext])
}
pub fn param(var: Var, ty: Type) -> Param {
    Param::new(var, ty)
}
pub fn av(v: Var) -> Atom {
    Atom::Var(v)
}
pub fn i64c(x: i64) -> Atom {
    Atom::Const(PrimValue::I64(x))
}
pub fn i32c(x: i32) -> Atom {
    Atom::Const(PrimValue::I32(x))
}
pub fn f64c(x: f64) -> Atom {
    Atom::Const(PrimValue::F64(x))
}
pub fn f32c(x: f32) -> Atom {
    Atom::Const(PrimValue::F32(x))
}

/// `let pat = exp` at span position `at`.
pub fn st(pat: &[(Var, Type)], exp: Exp, at: u32) -> Stm {
    Stm {
        pat: pat.iter().map(|(v, ty)| param(*v, ty.clone())).collect(),
        exp,
        span: sp(at),
    }
}

pub fn body(stms: Vec<Stm>, result: Vec<Atom>) -> Body {
    Body { stms, result }
}

pub fn lam(params: Vec<Param>, body: Body, ret: Vec<Type>) -> Lambda {
    Lambda { params, body, ret }
}

pub fn fun(name: &str, params: Vec<Param>, ret: Vec<Type>, body: Body, vars: Vars) -> Function {
    Function {
        name: name.to_string(),
        params,
        unique_ret: vec![false; ret.len()],
        ret,
        body,
        var_names: vars.names,
        span: sp(0),
    }
}

/// A program whose entry point `main` is its first function.
pub fn prog(funs: Vec<Function>) -> Program {
    let f0 = &funs[0];
    let ep = EntryPoint {
        name: "main".to_string(),
        fun: FunId(0),
        param_arity: vec![1; f0.params.len()],
        result_arity: vec![1; f0.ret.len()],
        signature: None,
    };
    Program {
        functions: funs,
        entries: vec![ep],
        ..Default::default()
    }
}

pub fn i64s(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}
pub fn i32s(xs: &[i32]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}
pub fn f64s(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}
pub fn i64m(rows: usize, cols: usize, xs: &[i64]) -> Value {
    Value::Array(ArrayValue::from_vec(
        &[rows as i64, cols as i64],
        xs.to_vec(),
    ))
}
pub fn pi64(x: i64) -> Value {
    Value::Prim(PrimValue::I64(x))
}
pub fn pi32(x: i32) -> Value {
    Value::Prim(PrimValue::I32(x))
}
pub fn pf64(x: f64) -> Value {
    Value::Prim(PrimValue::F64(x))
}
pub fn pf32(x: f32) -> Value {
    Value::Prim(PrimValue::F32(x))
}

/// `\x y -> x op y` over scalars of type `p`, with fresh variables.
pub fn binop_lam(vs: &mut Vars, op: BinOp, p: PrimType) -> Lambda {
    let (x, y, r) = (vs.v("x"), vs.v("y"), vs.v("r"));
    lam(
        vec![param(x, t(p)), param(y, t(p))],
        body(
            vec![st(&[(r, t(p))], Exp::BinOp(op, av(x), av(y)), 90)],
            vec![av(r)],
        ),
        vec![t(p)],
    )
}

/// `\a b -> map2 (\x y -> x op y) a b` over rows of `w` scalars of type `p`, with fresh variables.
pub fn rowwise_binop_lam(vs: &mut Vars, op: BinOp, p: PrimType, w: i64) -> Lambda {
    let (a, b, r) = (vs.v("a"), vs.v("b"), vs.v("r"));
    let elementwise = binop_lam(vs, op, p);
    lam(
        vec![param(a, arr1(p)), param(b, arr1(p))],
        body(
            vec![st(
                &[(r, arr1(p))],
                Exp::Soac(Soac::Map {
                    w: i64c(w),
                    lam: elementwise,
                    arrs: vec![a, b],
                }),
                91,
            )],
            vec![av(r)],
        ),
        vec![arr1(p)],
    )
}

/// The programs of the two benchmarks, built by hand.
pub mod benchprogs {
    use super::*;

    /// `entry main (xs: []f64) = reduce (+) 0 (map (\x -> x * x + 1.0) xs)`
    pub fn map_reduce() -> Program {
        let mut vs = Vars::new();
        let xs = vs.v("xs");
        let n = vs.v("n");
        let x = vs.v("x");
        let a = vs.v("a");
        let b = vs.v("b");
        let ys = vs.v("ys");
        let r = vs.v("r");
        let f = lam(
            vec![param(x, t(PrimType::F64))],
            body(
                vec![
                    st(
                        &[(a, t(PrimType::F64))],
                        Exp::BinOp(BinOp::Mul, av(x), av(x)),
                        10,
                    ),
                    st(
                        &[(b, t(PrimType::F64))],
                        Exp::BinOp(BinOp::Add, av(a), f64c(1.0)),
                        11,
                    ),
                ],
                vec![av(b)],
            ),
            vec![t(PrimType::F64)],
        );
        let plus = binop_lam(&mut vs, BinOp::Add, PrimType::F64);
        let stms = vec![
            st(&[(n, t(PrimType::I64))], Exp::Size(xs, 0), 1),
            st(
                &[(ys, arr1(PrimType::F64))],
                Exp::Soac(Soac::Map {
                    w: av(n),
                    lam: f,
                    arrs: vec![xs],
                }),
                2,
            ),
            st(
                &[(r, t(PrimType::F64))],
                Exp::Soac(Soac::Reduce {
                    w: av(n),
                    lam: plus,
                    neutral: vec![f64c(0.0)],
                    arrs: vec![ys],
                    commutative: false,
                }),
                3,
            ),
        ];
        prog(vec![fun(
            "main",
            vec![param(xs, arr(PrimType::F64, &[Dim::Var(n)]))],
            vec![t(PrimType::F64)],
            body(stms, vec![av(r)]),
            vs,
        )])
    }

    /// Jensen 2024's loop benchmark (§4.2), `entry main (x: f32) = f x`, as the
    /// elaborator would produce it (ANF, nested ifs, `reduce (*) x [2, x, 5]`).
    pub fn seed_loop(iters: i32) -> Program {
        use PrimType::{Bool, F32, I32};
        let mut vs = Vars::new();
        let x0 = vs.v("x0");
        let x = vs.v("x");
        let i = vs.v("i");
        let res = vs.v("res");
        let t1 = vs.v("t1");
        let t2 = vs.v("t2");
        let s = vs.v("s");
        let big = vs.v("big");
        let out = vs.v("out");
        let f32t = t(F32);
        let bt = t(Bool);
        // A chain `if s == 0 then e0 else if s == 1 then e1 … else e4`,
        // each ei given as (stms, result).
        let chain = |vs: &mut Vars, cases: Vec<(Vec<Stm>, Atom)>| -> Body {
            let mut cases = cases;
            let (last_stms, last_res) = cases.pop().unwrap();
            let mut acc = body(last_stms, vec![last_res]);
            for (k, (stms, r)) in cases.into_iter().enumerate().rev() {
                let c = vs.v("c");
                let y = vs.v("y");
                acc = body(
                    vec![
                        st(
                            &[(c, bt.clone())],
                            Exp::CmpOp(CmpOp::Eq, av(s), i32c(k as i32)),
                            30,
                        ),
                        st(
                            &[(y, f32t.clone())],
                            Exp::If {
                                cond: av(c),
                                then_: body(stms, vec![r]),
                                else_: acc,
                            },
                            31,
                        ),
                    ],
                    vec![av(y)],
                );
            }
            acc
        };
        let un = |vs: &mut Vars, op: UnOp, a: Atom| {
            let r = vs.v("u");
            (vec![st(&[(r, t(F32))], Exp::UnOp(op, a), 40)], av(r))
        };
        let one_plus = |vs: &mut Vars, op: UnOp| {
            let (mut stms, u) = un(vs, op, av(x));
            let r = vs.v("p");
            stms.push(st(&[(r, t(F32))], Exp::BinOp(BinOp::Add, f32c(1.0), u), 41));
            (stms, av(r))
        };
        let bin = |vs: &mut Vars, op: BinOp, a: Atom, b: Atom| {
            let r = vs.v("b");
            (vec![st(&[(r, t(F32))], Exp::BinOp(op, a, b), 42)], av(r))
        };
        let c_sin = one_plus(&mut vs, UnOp::Sin);
        let c_cos = one_plus(&mut vs, UnOp::Cos);
        let c_log = un(&mut vs, UnOp::Log1p, av(x));
        let c_sqrt = un(&mut vs, UnOp::Sqrt, av(x));
        let c_div = bin(&mut vs, BinOp::Div, av(x), f32c(13.0));
        let then_body = chain(&mut vs, vec![c_sin, c_cos, c_log, c_sqrt, c_div]);
        let e_add = bin(&mut vs, BinOp::Add, av(x), f32c(10.0));
        let e_pow = bin(&mut vs, BinOp::Pow, av(x), f32c(3.0));
        let e_exp = {
            let (mut stms, q) = bin(&mut vs, BinOp::Div, av(x), f32c(10.0));
            let (s2, r) = un(&mut vs, UnOp::Exp, q);
            stms.extend(s2);
            (stms, r)
        };
        let e_red = {
            let lit = vs.v("lit");
            let r = vs.v("red");
            let times = binop_lam(&mut vs, BinOp::Mul, F32);
            (
                vec![
                    st(
                        &[(lit, arr(F32, &[Dim::Const(3)]))],
                        Exp::ArrayLit(vec![f32c(2.0), av(x), f32c(5.0)], t(F32)),
                        50,
                    ),
                    st(
                        &[(r, t(F32))],
                        Exp::Soac(Soac::Reduce {
                            w: i64c(3),
                            lam: times,
                            neutral: vec![av(x)],
                            arrs: vec![lit],
                            commutative: false,
                        }),
                        51,
                    ),
                ],
                av(r),
            )
        };
        let e_mul = bin(&mut vs, BinOp::Mul, av(x), f32c(1.3));
        let else_body = chain(&mut vs, vec![e_add, e_pow, e_exp, e_red, e_mul]);
        let loop_body = body(
            vec![
                st(
                    &[(t1, f32t.clone())],
                    Exp::BinOp(BinOp::Mul, av(x), f32c(10.0)),
                    20,
                ),
                st(
                    &[(t2, t(I32))],
                    Exp::Conv(ConvOp::Convert(F32, I32), av(t1)),
                    21,
                ),
                st(
                    &[(s, t(I32))],
                    Exp::BinOp(BinOp::IntMod, av(t2), i32c(4)),
                    22,
                ),
                st(
                    &[(big, bt.clone())],
                    Exp::CmpOp(CmpOp::Gt, av(x), f32c(100.0)),
                    23,
                ),
                st(
                    &[(out, f32t.clone())],
                    Exp::If {
                        cond: av(big),
                        then_: then_body,
                        else_: else_body,
                    },
                    24,
                ),
            ],
            vec![av(out)],
        );
        let stms = vec![st(
            &[(res, f32t.clone())],
            Exp::Loop {
                params: vec![param(x, f32t.clone())],
                init: vec![av(x0)],
                form: LoopForm::For {
                    i,
                    bound: i32c(iters),
                },
                body: loop_body,
            },
            5,
        )];
        prog(vec![fun(
            "main",
            vec![param(x0, f32t.clone())],
            vec![f32t],
            body(stms, vec![av(res)]),
            vs,
        )])
    }

    /// Reference implementation of `seed_loop` in plain Rust.
    pub fn seed_loop_native(x0: f32, iters: i32) -> f32 {
        let mut x = x0;
        for _ in 0..iters {
            let s = ((x * 10.0) as i32) % 4; // `%%` truncates
            x = if x > 100.0 {
                match s {
                    0 => 1.0 + x.sin(),
                    1 => 1.0 + x.cos(),
                    2 => x.ln_1p(),
                    3 => x.sqrt(),
                    _ => x / 13.0,
                }
            } else {
                match s {
                    0 => x + 10.0,
                    1 => x.powf(3.0),
                    2 => (x / 10.0).exp(),
                    3 => x * 2.0 * x * 5.0,
                    _ => x * 1.3,
                }
            };
        }
        x
    }
}
