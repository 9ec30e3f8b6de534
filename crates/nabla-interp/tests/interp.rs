//! Hand-built IR programs exercising every expression and SOAC form, and the
//! run-time errors with their spans.

mod common;

use common::*;
use nabla_interp::{run_entry, run_entry_with_stats, RuntimeError, Stats};
use nabla_ir::*;
use nabla_syntax::SourceMap;
use nabla_values::{ArrayValue, Value};
use PrimType::{Bool, F64, I32, I64};

/// Runs a one-function program: params, statements, results.
/// The same value with its elements in a fresh exact buffer (views compare
/// structurally otherwise).
fn norm(v: Value) -> Value {
    match v {
        Value::Array(a) => {
            let b = a.elems_buffer();
            Value::Array(ArrayValue::new(a.shape(), b).unwrap())
        }
        p => p,
    }
}

fn run1(
    vs: Vars,
    params: Vec<Param>,
    stms: Vec<Stm>,
    res: Vec<Atom>,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    let ret = vec![t(I64); res.len()];
    let p = prog(vec![fun("main", params, ret, body(stms, res), vs)]);
    run_entry(&p, "main", args).map(|r| r.into_iter().map(norm).collect())
}

/// [`run1`] with the interpreter's path counters.
fn run1_stats(
    vs: Vars,
    params: Vec<Param>,
    stms: Vec<Stm>,
    res: Vec<Atom>,
    args: Vec<Value>,
) -> (Vec<Value>, Stats) {
    let ret = vec![t(I64); res.len()];
    let p = prog(vec![fun("main", params, ret, body(stms, res), vs)]);
    let (r, stats) = run_entry_with_stats(&p, "main", args);
    let r = r.unwrap_or_else(|e| panic!("program fails: {}", e.message));
    (r.into_iter().map(norm).collect(), stats)
}

fn ok1(vs: Vars, params: Vec<Param>, stms: Vec<Stm>, res: Atom, args: Vec<Value>) -> Value {
    let mut r = run1(vs, params, stms, vec![res], args).expect("program runs");
    assert_eq!(r.len(), 1);
    r.pop().unwrap()
}

fn err1(
    vs: Vars,
    params: Vec<Param>,
    stms: Vec<Stm>,
    res: Vec<Atom>,
    args: Vec<Value>,
) -> RuntimeError {
    run1(vs, params, stms, res, args).expect_err("program fails")
}

#[test]
fn scalar_ops() {
    let mut vs = Vars::new();
    let (x, y, a, b, c, d, e, f) = (
        vs.v("x"),
        vs.v("y"),
        vs.v("a"),
        vs.v("b"),
        vs.v("c"),
        vs.v("d"),
        vs.v("e"),
        vs.v("f"),
    );
    let stms = vec![
        st(&[(a, t(I32))], Exp::BinOp(BinOp::Div, av(x), av(y)), 1), // -7 / 2 = -4 (floor)
        st(&[(b, t(Bool))], Exp::CmpOp(CmpOp::Lt, av(a), i32c(0)), 2),
        st(&[(c, t(I32))], Exp::UnOp(UnOp::Neg, av(a)), 3),
        st(
            &[(d, t(F64))],
            Exp::Conv(ConvOp::Convert(I32, F64), av(c)),
            4,
        ),
        st(
            &[(e, t(F64))],
            Exp::TernOp(TernOp::Fma, av(d), f64c(2.0), f64c(0.5)),
            5,
        ),
        st(&[(f, t(F64))], Exp::Atoms(vec![av(e)]), 6),
    ];
    let r = run1(
        vs,
        vec![param(x, t(I32)), param(y, t(I32))],
        stms,
        vec![av(a), av(b), av(f)],
        vec![pi32(-7), pi32(2)],
    )
    .unwrap();
    assert_eq!(
        r,
        vec![pi32(-4), Value::Prim(PrimValue::Bool(true)), pf64(8.5)]
    );
}

#[test]
fn division_by_zero_has_span() {
    let mut vs = Vars::new();
    let (x, a) = (vs.v("x"), vs.v("a"));
    let stms = vec![st(
        &[(a, t(I32))],
        Exp::BinOp(BinOp::Div, i32c(1), av(x)),
        17,
    )];
    let e = err1(vs, vec![param(x, t(I32))], stms, vec![av(a)], vec![pi32(0)]);
    assert!(e.message.contains("division by zero"), "{}", e.message);
    assert_eq!(e.span, Some(sp(17)));
    let mut sm = SourceMap::new();
    sm.add("prog.fut".into(), "let x =\n  1 / 0 and more text".into());
    assert_eq!(e.render(&sm), format!("prog.fut:2:10: {}", e.message));
}

#[test]
fn if_and_loops() {
    // main n = (loop acc = 0 for i < n do acc + i,  loop k = 1 while k < 100 do k * 3,  if n > 3 then 1 else 2)
    let mut vs = Vars::new();
    let (n, acc, i, acc2, s1, k, c, k2, kout, big, r, sum) = (
        vs.v("n"),
        vs.v("acc"),
        vs.v("i"),
        vs.v("acc2"),
        vs.v("s1"),
        vs.v("k"),
        vs.v("c"),
        vs.v("k2"),
        vs.v("kout"),
        vs.v("big"),
        vs.v("r"),
        vs.v("sum"),
    );
    let _ = s1;
    let stms = vec![
        st(
            &[(sum, t(I64))],
            Exp::Loop {
                params: vec![param(acc, t(I64))],
                init: vec![i64c(0)],
                form: LoopForm::For { i, bound: av(n) },
                body: body(
                    vec![st(
                        &[(acc2, t(I64))],
                        Exp::BinOp(BinOp::Add, av(acc), av(i)),
                        2,
                    )],
                    vec![av(acc2)],
                ),
            },
            1,
        ),
        st(
            &[(kout, t(I64))],
            Exp::Loop {
                params: vec![param(k, t(I64))],
                init: vec![i64c(1)],
                form: LoopForm::While {
                    cond: Box::new(body(
                        vec![st(
                            &[(c, t(Bool))],
                            Exp::CmpOp(CmpOp::Lt, av(k), i64c(100)),
                            4,
                        )],
                        vec![av(c)],
                    )),
                },
                body: body(
                    vec![st(
                        &[(k2, t(I64))],
                        Exp::BinOp(BinOp::Mul, av(k), i64c(3)),
                        5,
                    )],
                    vec![av(k2)],
                ),
            },
            3,
        ),
        st(&[(big, t(Bool))], Exp::CmpOp(CmpOp::Gt, av(n), i64c(3)), 6),
        st(
            &[(r, t(I64))],
            Exp::If {
                cond: av(big),
                then_: body(vec![], vec![i64c(1)]),
                else_: body(vec![], vec![i64c(2)]),
            },
            7,
        ),
    ];
    let res = run1(
        vs,
        vec![param(n, t(I64))],
        stms,
        vec![av(sum), av(kout), av(r)],
        vec![pi64(10)],
    )
    .unwrap();
    assert_eq!(res, vec![pi64(45), pi64(243), pi64(1)]);
}

#[test]
fn loop_with_swapped_params() {
    // loop (a, b) = (1, 2) for i < 3 do (b, a)  → (2, 1)
    let mut vs = Vars::new();
    let (a, b, i, ra, rb) = (vs.v("a"), vs.v("b"), vs.v("i"), vs.v("ra"), vs.v("rb"));
    let stms = vec![st(
        &[(ra, t(I64)), (rb, t(I64))],
        Exp::Loop {
            params: vec![param(a, t(I64)), param(b, t(I64))],
            init: vec![i64c(1), i64c(2)],
            form: LoopForm::For { i, bound: i32c(3) },
            body: body(vec![], vec![av(b), av(a)]),
        },
        1,
    )];
    let res = run1(vs, vec![], stms, vec![av(ra), av(rb)], vec![]).unwrap();
    assert_eq!(res, vec![pi64(2), pi64(1)]);
}

fn fib_prog() -> Program {
    // fib n = if n < 2 then n else fib (n-1) + fib (n-2)
    let mut vs = Vars::new();
    let (n, c, r, a, b, fa, fb, s) = (
        vs.v("n"),
        vs.v("c"),
        vs.v("r"),
        vs.v("a"),
        vs.v("b"),
        vs.v("fa"),
        vs.v("fb"),
        vs.v("s"),
    );
    let else_ = body(
        vec![
            st(&[(a, t(I64))], Exp::BinOp(BinOp::Sub, av(n), i64c(1)), 3),
            st(&[(fa, t(I64))], Exp::Apply(FunId(0), vec![av(a)]), 4),
            st(&[(b, t(I64))], Exp::BinOp(BinOp::Sub, av(n), i64c(2)), 5),
            st(&[(fb, t(I64))], Exp::Apply(FunId(0), vec![av(b)]), 6),
            st(&[(s, t(I64))], Exp::BinOp(BinOp::Add, av(fa), av(fb)), 7),
        ],
        vec![av(s)],
    );
    let stms = vec![
        st(&[(c, t(Bool))], Exp::CmpOp(CmpOp::Lt, av(n), i64c(2)), 1),
        st(
            &[(r, t(I64))],
            Exp::If {
                cond: av(c),
                then_: body(vec![], vec![av(n)]),
                else_,
            },
            2,
        ),
    ];
    prog(vec![fun(
        "fib",
        vec![param(n, t(I64))],
        vec![t(I64)],
        body(stms, vec![av(r)]),
        vs,
    )])
}

#[test]
fn apply_recursion() {
    let p = fib_prog();
    assert_eq!(
        run_entry(&p, "main", vec![pi64(20)]).unwrap(),
        vec![pi64(6765)]
    );
}

#[test]
fn unbounded_recursion_is_an_error() {
    // f n = f (n + 1): must hit the call depth limit, not overflow the stack.
    let mut vs = Vars::new();
    let (n, m, r) = (vs.v("n"), vs.v("m"), vs.v("r"));
    let stms = vec![
        st(&[(m, t(I64))], Exp::BinOp(BinOp::Add, av(n), i64c(1)), 1),
        st(&[(r, t(I64))], Exp::Apply(FunId(0), vec![av(m)]), 2),
    ];
    let p = prog(vec![fun(
        "f",
        vec![param(n, t(I64))],
        vec![t(I64)],
        body(stms, vec![av(r)]),
        vs,
    )]);
    let e = run_entry(&p, "main", vec![pi64(0)]).unwrap_err();
    assert!(e.message.contains("call depth"), "{}", e.message);
}

#[test]
fn deep_if_nesting_does_not_overflow() {
    // 20000 nested ifs, built iteratively.
    let mut vs = Vars::new();
    let x = vs.v("x");
    let mut b = body(vec![], vec![i64c(42)]);
    for k in 0..20000 {
        let y = vs.v("y");
        b = body(
            vec![st(
                &[(y, t(I64))],
                Exp::If {
                    cond: av(x),
                    then_: b,
                    else_: body(vec![], vec![i64c(0)]),
                },
                k,
            )],
            vec![av(y)],
        );
    }
    let p = prog(vec![fun(
        "main",
        vec![param(x, t(Bool))],
        vec![t(I64)],
        b,
        vs,
    )]);
    let r = run_entry(&p, "main", vec![Value::Prim(PrimValue::Bool(true))]).unwrap();
    assert_eq!(r, vec![pi64(42)]);
    // Dropping the deeply nested IR is the caller's concern; leak it to keep the test about the interpreter.
    std::mem::forget(p);
}

#[test]
fn index_and_out_of_bounds() {
    let mut vs = Vars::new();
    let (xs, a) = (vs.v("xs"), vs.v("a"));
    let mk = |i: i64| {
        vec![st(
            &[(a, t(I64))],
            Exp::Index(xs, vec![DimIndex::Fix(i64c(i))]),
            9,
        )]
    };
    let names = vs.names.clone();
    let r = ok1(
        vs,
        vec![param(xs, arr1(I64))],
        mk(2),
        av(a),
        vec![i64s(&[10, 20, 30])],
    );
    assert_eq!(r, pi64(30));
    let vs = Vars { names };
    let e = err1(
        vs,
        vec![param(xs, arr1(I64))],
        mk(5),
        vec![av(a)],
        vec![i64s(&[10, 20, 30])],
    );
    assert_eq!(e.message, "Index [5] out of bounds for array of shape [3].");
    assert_eq!(e.span, Some(sp(9)));
}

#[test]
fn index_2d_rows_and_slices() {
    let mut vs = Vars::new();
    let (m, row, el, sl, col, bad) = (
        vs.v("m"),
        vs.v("row"),
        vs.v("el"),
        vs.v("sl"),
        vs.v("col"),
        vs.v("bad"),
    );
    let slice = |s: i64, n: i64, k: i64| DimIndex::Slice {
        start: i64c(s),
        len: i64c(n),
        stride: i64c(k),
    };
    let stms = vec![
        st(
            &[(row, arr1(I64))],
            Exp::Index(m, vec![DimIndex::Fix(i64c(1))]),
            1,
        ),
        st(
            &[(el, t(I64))],
            Exp::Index(m, vec![DimIndex::Fix(i64c(2)), DimIndex::Fix(i64c(1))]),
            2,
        ),
        // m[0:3:2, 1:3] → rows 0 and 2, columns 1..2
        st(
            &[(sl, arr2(I64))],
            Exp::Index(m, vec![slice(0, 2, 2), slice(1, 2, 1)]),
            3,
        ),
        // m[:, 0] (column), via a reversed slice of rows: m[2:-1:-1, 0]
        st(
            &[(col, arr1(I64))],
            Exp::Index(m, vec![slice(2, 3, -1), DimIndex::Fix(i64c(0))]),
            4,
        ),
    ];
    let input = i64m(3, 3, &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let names = vs.names.clone();
    let r = run1(
        vs,
        vec![param(m, arr2(I64))],
        stms,
        vec![av(row), av(el), av(sl), av(col)],
        vec![input.clone()],
    )
    .unwrap();
    assert_eq!(r[0], i64s(&[3, 4, 5]));
    assert_eq!(r[1], pi64(7));
    assert_eq!(r[2], i64m(2, 2, &[1, 2, 7, 8]));
    assert_eq!(r[3], i64s(&[6, 3, 0]));
    // A slice running past the end.
    let vs = Vars { names };
    let stms = vec![st(
        &[(bad, arr2(I64))],
        Exp::Index(m, vec![slice(1, 3, 1)]),
        5,
    )];
    let e = err1(
        vs,
        vec![param(m, arr2(I64))],
        stms,
        vec![av(bad)],
        vec![input],
    );
    assert_eq!(
        e.message,
        "Index [1:4] out of bounds for array of shape [3][3]."
    );
    assert_eq!(e.span, Some(sp(5)));
}

#[test]
fn update_scalar_row_and_slice() {
    let mut vs = Vars::new();
    let (m, a, b, c, r, q) = (
        vs.v("m"),
        vs.v("a"),
        vs.v("b"),
        vs.v("c"),
        vs.v("r"),
        vs.v("q"),
    );
    let stms = vec![
        st(
            &[(a, arr2(I64))],
            Exp::Update(
                m,
                vec![DimIndex::Fix(i64c(0)), DimIndex::Fix(i64c(1))],
                i64c(100),
            ),
            1,
        ),
        st(
            &[(r, arr1(I64))],
            Exp::ArrayLit(vec![i64c(7), i64c(8), i64c(9)], t(I64)),
            2,
        ),
        st(
            &[(b, arr2(I64))],
            Exp::Update(a, vec![DimIndex::Fix(i64c(1))], av(r)),
            3,
        ),
        st(
            &[(q, arr1(I64))],
            Exp::ArrayLit(vec![i64c(-1), i64c(-2)], t(I64)),
            4,
        ),
        st(
            &[(c, arr2(I64))],
            Exp::Update(
                b,
                vec![
                    DimIndex::Slice {
                        start: i64c(0),
                        len: i64c(2),
                        stride: i64c(2),
                    },
                    DimIndex::Fix(i64c(2)),
                ],
                av(q),
            ),
            5,
        ),
    ];
    let res = ok1(
        vs,
        vec![param(m, arr2(I64))],
        stms,
        av(c),
        vec![i64m(3, 3, &[0; 9])],
    );
    assert_eq!(res, i64m(3, 3, &[0, 100, -1, 7, 8, 9, 0, 0, -2]));
}

#[test]
fn update_errors() {
    let mut vs = Vars::new();
    let (xs, a) = (vs.v("xs"), vs.v("a"));
    let stms = vec![st(
        &[(a, arr1(I64))],
        Exp::Update(xs, vec![DimIndex::Fix(i64c(3))], i64c(1)),
        12,
    )];
    let e = err1(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        vec![av(a)],
        vec![i64s(&[1, 2, 3])],
    );
    assert_eq!(e.message, "Index [3] out of bounds for array of shape [3].");
    assert_eq!(e.span, Some(sp(12)));
    // Writing a row of the wrong length.
    let mut vs = Vars::new();
    let (m, r, a) = (vs.v("m"), vs.v("r"), vs.v("a"));
    let stms = vec![
        st(&[(r, arr1(I64))], Exp::ArrayLit(vec![i64c(1)], t(I64)), 1),
        st(
            &[(a, arr2(I64))],
            Exp::Update(m, vec![DimIndex::Fix(i64c(0))], av(r)),
            2,
        ),
    ];
    let e = err1(
        vs,
        vec![param(m, arr2(I64))],
        stms,
        vec![av(a)],
        vec![i64m(2, 2, &[0; 4])],
    );
    assert!(e.message.contains("size error"), "{}", e.message);
    assert_eq!(e.span, Some(sp(2)));
}

#[test]
fn update_of_shared_array_copies() {
    // let b = xs; let c = b with [0] = 9 in (xs, c): xs must be unchanged.
    let mut vs = Vars::new();
    let (xs, b, c) = (vs.v("xs"), vs.v("b"), vs.v("c"));
    let stms = vec![
        st(&[(b, arr1(I64))], Exp::Atoms(vec![av(xs)]), 1),
        st(
            &[(c, arr1(I64))],
            Exp::Update(b, vec![DimIndex::Fix(i64c(0))], i64c(9)),
            2,
        ),
    ];
    let (r, stats) = run1_stats(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        vec![av(xs), av(c)],
        vec![i64s(&[1, 2])],
    );
    assert_eq!(r, vec![i64s(&[1, 2]), i64s(&[9, 2])]);
    // The one write copied (xs is still live).
    assert_eq!((stats.array_writes, stats.cow_copies), (1, 1), "{stats:?}");
}

#[test]
fn in_place_update_loop_of_a_million() {
    // let a = replicate n 0 in loop a for i < n do (if i % 2 == 0 then a with [i] = i else a with [i] = -i)
    let n = 1_000_000i64;
    let mut vs = Vars::new();
    let (nn, a0, a, i, c, m, a1, a2, neg, out) = (
        vs.v("n"),
        vs.v("a0"),
        vs.v("a"),
        vs.v("i"),
        vs.v("c"),
        vs.v("m"),
        vs.v("a1"),
        vs.v("a2"),
        vs.v("neg"),
        vs.v("out"),
    );
    let stms = vec![
        st(&[(a0, arr1(I64))], Exp::Replicate(av(nn), i64c(0)), 1),
        st(
            &[(out, arr1(I64))],
            Exp::Loop {
                params: vec![param(a, arr1(I64))],
                init: vec![av(a0)],
                form: LoopForm::For { i, bound: av(nn) },
                body: body(
                    vec![
                        st(&[(m, t(I64))], Exp::BinOp(BinOp::Mod, av(i), i64c(2)), 3),
                        st(&[(c, t(Bool))], Exp::CmpOp(CmpOp::Eq, av(m), i64c(0)), 4),
                        st(
                            &[(a2, arr1(I64))],
                            Exp::If {
                                cond: av(c),
                                then_: body(
                                    vec![st(
                                        &[(a1, arr1(I64))],
                                        Exp::Update(a, vec![DimIndex::Fix(av(i))], av(i)),
                                        5,
                                    )],
                                    vec![av(a1)],
                                ),
                                else_: body(
                                    vec![
                                        st(&[(neg, t(I64))], Exp::UnOp(UnOp::Neg, av(i)), 6),
                                        st(
                                            &[(a1, arr1(I64))],
                                            Exp::Update(a, vec![DimIndex::Fix(av(i))], av(neg)),
                                            7,
                                        ),
                                    ],
                                    vec![av(a1)],
                                ),
                            },
                            8,
                        ),
                    ],
                    vec![av(a2)],
                ),
            },
            2,
        ),
    ];
    let (mut r, stats) = run1_stats(
        vs,
        vec![param(nn, t(I64))],
        stms,
        vec![av(out)],
        vec![pi64(n)],
    );
    // One copy in a million writes: the first write copies, because the
    // slot of `a0` (the loop's initial value) still shares the replicated
    // buffer; every later write is in place.
    assert_eq!(stats.array_writes, n as u64, "{stats:?}");
    assert_eq!(stats.cow_copies, 1, "{stats:?}");
    let r = r.pop().unwrap();
    let a = r.as_array().unwrap().as_i64_slice().unwrap().to_vec();
    assert_eq!(a.len(), n as usize);
    assert!(a
        .iter()
        .enumerate()
        .all(|(i, &x)| x == if i % 2 == 0 { i as i64 } else { -(i as i64) }));
}

#[test]
fn array_constructors() {
    let mut vs = Vars::new();
    let (n, io, rep, rep2, row, lit, empty, cp, sz) = (
        vs.v("n"),
        vs.v("io"),
        vs.v("rep"),
        vs.v("rep2"),
        vs.v("row"),
        vs.v("lit"),
        vs.v("empty"),
        vs.v("cp"),
        vs.v("sz"),
    );
    let stms = vec![
        st(
            &[(io, arr1(I32))],
            Exp::Iota {
                n: av(n),
                start: i32c(5),
                step: i32c(-2),
                ty: I32,
            },
            1,
        ),
        st(&[(rep, arr1(F64))], Exp::Replicate(i64c(2), f64c(1.5)), 2),
        st(
            &[(row, arr1(I64))],
            Exp::ArrayLit(vec![i64c(1), i64c(2)], t(I64)),
            3,
        ),
        st(&[(rep2, arr2(I64))], Exp::Replicate(i64c(3), av(row)), 4),
        st(
            &[(lit, arr2(I64))],
            Exp::ArrayLit(vec![av(row), av(row)], arr1(I64)),
            5,
        ),
        st(
            &[(empty, arr2(I64))],
            Exp::ArrayLit(vec![], arr(I64, &[Dim::Const(4)])),
            6,
        ),
        st(&[(cp, arr2(I64))], Exp::Copy(rep2), 7),
        st(&[(sz, t(I64))], Exp::Size(rep2, 1), 8),
    ];
    let r = run1(
        vs,
        vec![param(n, t(I64))],
        stms,
        vec![
            av(io),
            av(rep),
            av(rep2),
            av(lit),
            av(empty),
            av(cp),
            av(sz),
        ],
        vec![pi64(4)],
    )
    .unwrap();
    assert_eq!(r[0], i32s(&[5, 3, 1, -1]));
    assert_eq!(r[1], f64s(&[1.5, 1.5]));
    assert_eq!(r[2], i64m(3, 2, &[1, 2, 1, 2, 1, 2]));
    assert_eq!(r[3], i64m(2, 2, &[1, 2, 1, 2]));
    assert_eq!(
        r[4],
        Value::Array(ArrayValue::from_vec::<i64>(&[0, 4], vec![]))
    );
    assert_eq!(r[5], r[2]);
    assert_eq!(r[6], pi64(2));
}

#[test]
fn negative_iota_and_replicate_are_errors() {
    let mut vs = Vars::new();
    let (n, io) = (vs.v("n"), vs.v("io"));
    let stms = vec![st(
        &[(io, arr1(I64))],
        Exp::Iota {
            n: av(n),
            start: i64c(0),
            step: i64c(1),
            ty: I64,
        },
        3,
    )];
    let e = err1(
        vs,
        vec![param(n, t(I64))],
        stms,
        vec![av(io)],
        vec![pi64(-1)],
    );
    // `iota n` is Futhark's range 0..1..<n.
    assert!(
        e.message.contains("Range 0..1..<-1 is invalid"),
        "{}",
        e.message
    );
    assert_eq!(e.span, Some(sp(3)));
    let mut vs = Vars::new();
    let (n, r) = (vs.v("n"), vs.v("r"));
    let stms = vec![st(&[(r, arr1(I64))], Exp::Replicate(av(n), i64c(0)), 4)];
    let e = err1(
        vs,
        vec![param(n, t(I64))],
        stms,
        vec![av(r)],
        vec![pi64(-3)],
    );
    assert_eq!(e.span, Some(sp(4)));
}

#[test]
fn reshape_rearrange_concat_rotate_reverse() {
    let mut vs = Vars::new();
    let (xs, m, tr, cat, rot, rotn, rev, flat) = (
        vs.v("xs"),
        vs.v("m"),
        vs.v("tr"),
        vs.v("cat"),
        vs.v("rot"),
        vs.v("rotn"),
        vs.v("rev"),
        vs.v("flat"),
    );
    let stms = vec![
        st(
            &[(m, arr2(I64))],
            Exp::Reshape(vec![i64c(2), i64c(3)], xs),
            1,
        ),
        st(&[(tr, arr2(I64))], Exp::Rearrange(vec![1, 0], m), 2),
        st(&[(cat, arr2(I64))], Exp::Concat(vec![m, m]), 3),
        st(&[(rot, arr1(I64))], Exp::Rotate(i64c(2), xs), 4),
        st(&[(rotn, arr1(I64))], Exp::Rotate(i64c(-1), xs), 5),
        st(&[(rev, arr2(I64))], Exp::Reverse(tr), 6),
        st(&[(flat, arr1(I64))], Exp::Reshape(vec![i64c(6)], tr), 7),
    ];
    let r = run1(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        vec![av(m), av(tr), av(cat), av(rot), av(rotn), av(rev), av(flat)],
        vec![i64s(&[0, 1, 2, 3, 4, 5])],
    )
    .unwrap();
    assert_eq!(r[0], i64m(2, 3, &[0, 1, 2, 3, 4, 5]));
    assert_eq!(r[1], i64m(3, 2, &[0, 3, 1, 4, 2, 5]));
    assert_eq!(r[2], i64m(4, 3, &[0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]));
    assert_eq!(r[3], i64s(&[2, 3, 4, 5, 0, 1]));
    assert_eq!(r[4], i64s(&[5, 0, 1, 2, 3, 4]));
    assert_eq!(r[5], i64m(3, 2, &[2, 5, 1, 4, 0, 3]));
    assert_eq!(r[6], i64s(&[0, 3, 1, 4, 2, 5]));
}

#[test]
fn size_errors() {
    // Reshape with a wrong product.
    let mut vs = Vars::new();
    let (xs, m) = (vs.v("xs"), vs.v("m"));
    let stms = vec![st(
        &[(m, arr2(I64))],
        Exp::Reshape(vec![i64c(4), i64c(2)], xs),
        21,
    )];
    let e = err1(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        vec![av(m)],
        vec![i64s(&[1, 2, 3])],
    );
    assert!(e.message.contains("reshape"), "{}", e.message);
    assert_eq!(e.span, Some(sp(21)));
    // AssertEqSizes.
    let mut vs = Vars::new();
    let (a, b) = (vs.v("a"), vs.v("b"));
    let stms = vec![st(
        &[],
        Exp::AssertEqSizes(
            vec![av(a), av(b)],
            "zip: arrays of different lengths".into(),
        ),
        22,
    )];
    let e = err1(
        vs,
        vec![param(a, t(I64)), param(b, t(I64))],
        stms,
        vec![av(a)],
        vec![pi64(3), pi64(4)],
    );
    assert!(
        e.message.contains("zip: arrays of different lengths"),
        "{}",
        e.message
    );
    assert_eq!(e.span, Some(sp(22)));
    // …and passes when equal.
    let mut vs = Vars::new();
    let (a, b) = (vs.v("a"), vs.v("b"));
    let stms = vec![st(
        &[],
        Exp::AssertEqSizes(vec![av(a), av(b)], "x".into()),
        22,
    )];
    assert_eq!(
        run1(
            vs,
            vec![param(a, t(I64)), param(b, t(I64))],
            stms,
            vec![av(a)],
            vec![pi64(3), pi64(3)]
        )
        .unwrap(),
        vec![pi64(3)]
    );
    // Concat of mismatched rows.
    let mut vs = Vars::new();
    let (p, q, c) = (vs.v("p"), vs.v("q"), vs.v("c"));
    let stms = vec![st(&[(c, arr2(I64))], Exp::Concat(vec![p, q]), 23)];
    let e = err1(
        vs,
        vec![param(p, arr2(I64)), param(q, arr2(I64))],
        stms,
        vec![av(c)],
        vec![i64m(1, 2, &[1, 2]), i64m(1, 3, &[1, 2, 3])],
    );
    assert!(e.message.contains("size error"), "{}", e.message);
    assert_eq!(e.span, Some(sp(23)));
}

#[test]
fn assert_fails_with_message_and_span() {
    let mut vs = Vars::new();
    let (x, c) = (vs.v("x"), vs.v("c"));
    let stms = vec![
        st(&[(c, t(Bool))], Exp::CmpOp(CmpOp::Gt, av(x), i64c(0)), 1),
        st(
            &[],
            Exp::Assert(av(c), "x must be positive".into(), vec![]),
            31,
        ),
    ];
    let e = err1(
        vs,
        vec![param(x, t(I64))],
        stms,
        vec![av(x)],
        vec![pi64(-5)],
    );
    assert!(e.message.contains("x must be positive"), "{}", e.message);
    assert_eq!(e.span, Some(sp(31)));
}

#[test]
fn map_rank1_rank2_and_multiple_results() {
    let mut vs = Vars::new();
    let (xs, m, n, x, y, z, row, s, ys, zs, sums, k) = (
        vs.v("xs"),
        vs.v("m"),
        vs.v("n"),
        vs.v("x"),
        vs.v("y"),
        vs.v("z"),
        vs.v("row"),
        vs.v("s"),
        vs.v("ys"),
        vs.v("zs"),
        vs.v("sums"),
        vs.v("k"),
    );
    let plus = binop_lam(&mut vs, BinOp::Add, I64);
    let dbl = vs.v("dbl");
    let doubled = vs.v("doubled");
    let stms = vec![
        st(&[(n, t(I64))], Exp::Size(xs, 0), 1),
        // map (\x -> (x * 2, x + k)) xs  with k free
        st(
            &[(ys, arr1(I64)), (zs, arr1(I64))],
            Exp::Soac(Soac::Map {
                w: av(n),
                lam: lam(
                    vec![param(x, t(I64))],
                    body(
                        vec![
                            st(&[(y, t(I64))], Exp::BinOp(BinOp::Mul, av(x), i64c(2)), 3),
                            st(&[(z, t(I64))], Exp::BinOp(BinOp::Add, av(x), av(k)), 4),
                        ],
                        vec![av(y), av(z)],
                    ),
                    vec![t(I64), t(I64)],
                ),
                arrs: vec![xs],
            }),
            2,
        ),
        // map (\row -> (reduce (+) 0 row, map (*2) row)) m
        st(
            &[(sums, arr1(I64)), (doubled, arr2(I64))],
            Exp::Soac(Soac::Map {
                w: i64c(2),
                lam: lam(
                    vec![param(row, arr1(I64))],
                    body(
                        vec![
                            st(
                                &[(s, t(I64))],
                                Exp::Soac(Soac::Reduce {
                                    w: i64c(3),
                                    lam: plus,
                                    neutral: vec![i64c(0)],
                                    arrs: vec![row],
                                    commutative: true,
                                }),
                                6,
                            ),
                            st(
                                &[(dbl, arr1(I64))],
                                Exp::Soac(Soac::Map {
                                    w: i64c(3),
                                    lam: {
                                        let (e, f) = (vs.v("e"), vs.v("f"));
                                        lam(
                                            vec![param(e, t(I64))],
                                            body(
                                                vec![st(
                                                    &[(f, t(I64))],
                                                    Exp::BinOp(BinOp::Mul, av(e), i64c(2)),
                                                    8,
                                                )],
                                                vec![av(f)],
                                            ),
                                            vec![t(I64)],
                                        )
                                    },
                                    arrs: vec![row],
                                }),
                                7,
                            ),
                        ],
                        vec![av(s), av(dbl)],
                    ),
                    vec![t(I64), arr(I64, &[Dim::Const(3)])],
                ),
                arrs: vec![m],
            }),
            5,
        ),
    ];
    let r = run1(
        vs,
        vec![param(xs, arr1(I64)), param(m, arr2(I64)), param(k, t(I64))],
        stms,
        vec![av(ys), av(zs), av(sums), av(doubled)],
        vec![i64s(&[1, 2, 3]), i64m(2, 3, &[1, 2, 3, 4, 5, 6]), pi64(100)],
    )
    .unwrap();
    assert_eq!(r[0], i64s(&[2, 4, 6]));
    assert_eq!(r[1], i64s(&[101, 102, 103]));
    assert_eq!(r[2], i64s(&[6, 15]));
    assert_eq!(r[3], i64m(2, 3, &[2, 4, 6, 8, 10, 12]));
}

#[test]
fn map_over_empty_array_keeps_declared_row_shape() {
    let mut vs = Vars::new();
    let (xs, x, r, out) = (vs.v("xs"), vs.v("x"), vs.v("r"), vs.v("out"));
    let stms = vec![st(
        &[(out, arr2(I64))],
        Exp::Soac(Soac::Map {
            w: i64c(0),
            lam: lam(
                vec![param(x, t(I64))],
                body(
                    vec![st(&[(r, arr1(I64))], Exp::Replicate(i64c(2), av(x)), 2)],
                    vec![av(r)],
                ),
                vec![arr(I64, &[Dim::Const(2)])],
            ),
            arrs: vec![xs],
        }),
        1,
    )];
    let res = ok1(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        av(out),
        vec![i64s(&[])],
    );
    assert_eq!(res.shape(), &[0, 2]);
}

#[test]
fn map_width_mismatch_is_a_size_error() {
    let mut vs = Vars::new();
    let (xs, x, out) = (vs.v("xs"), vs.v("x"), vs.v("out"));
    let stms = vec![st(
        &[(out, arr1(I64))],
        Exp::Soac(Soac::Map {
            w: i64c(4),
            lam: lam(
                vec![param(x, t(I64))],
                body(vec![], vec![av(x)]),
                vec![t(I64)],
            ),
            arrs: vec![xs],
        }),
        41,
    )];
    let e = err1(
        vs,
        vec![param(xs, arr1(I64))],
        stms,
        vec![av(out)],
        vec![i64s(&[1, 2, 3])],
    );
    assert!(e.message.contains("size error"), "{}", e.message);
    assert_eq!(e.span, Some(sp(41)));
}

#[test]
fn reduce_and_scan_with_tuples() {
    // argmax as reduce over (value, index) pairs, and an inclusive scan (+).
    let mut vs = Vars::new();
    let (xs, is, n, best, besti, sc) = (
        vs.v("xs"),
        vs.v("is"),
        vs.v("n"),
        vs.v("best"),
        vs.v("besti"),
        vs.v("sc"),
    );
    let (av_, ai, bv, bi, c, rv, ri) = (
        vs.v("av"),
        vs.v("ai"),
        vs.v("bv"),
        vs.v("bi"),
        vs.v("c"),
        vs.v("rv"),
        vs.v("ri"),
    );
    let argmax = lam(
        vec![
            param(av_, t(F64)),
            param(ai, t(I64)),
            param(bv, t(F64)),
            param(bi, t(I64)),
        ],
        body(
            vec![
                st(&[(c, t(Bool))], Exp::CmpOp(CmpOp::Ge, av(av_), av(bv)), 10),
                st(
                    &[(rv, t(F64)), (ri, t(I64))],
                    Exp::If {
                        cond: av(c),
                        then_: body(vec![], vec![av(av_), av(ai)]),
                        else_: body(vec![], vec![av(bv), av(bi)]),
                    },
                    11,
                ),
            ],
            vec![av(rv), av(ri)],
        ),
        vec![t(F64), t(I64)],
    );
    let plus = binop_lam(&mut vs, BinOp::Add, F64);
    let stms = vec![
        st(&[(n, t(I64))], Exp::Size(xs, 0), 1),
        st(
            &[(is, arr1(I64))],
            Exp::Iota {
                n: av(n),
                start: i64c(0),
                step: i64c(1),
                ty: I64,
            },
            2,
        ),
        st(
            &[(best, t(F64)), (besti, t(I64))],
            Exp::Soac(Soac::Reduce {
                w: av(n),
                lam: argmax,
                neutral: vec![f64c(f64::NEG_INFINITY), i64c(-1)],
                arrs: vec![xs, is],
                commutative: false,
            }),
            3,
        ),
        st(
            &[(sc, arr1(F64))],
            Exp::Soac(Soac::Scan {
                w: av(n),
                lam: plus,
                neutral: vec![f64c(0.0)],
                arrs: vec![xs],
            }),
            4,
        ),
    ];
    let r = run1(
        vs,
        vec![param(xs, arr1(F64))],
        stms,
        vec![av(best), av(besti), av(sc)],
        vec![f64s(&[1.0, 5.0, 2.0, 5.0])],
    )
    .unwrap();
    assert_eq!(r, vec![pf64(5.0), pi64(1), f64s(&[1.0, 6.0, 8.0, 13.0])]);
}

#[test]
fn reduce_over_rows() {
    // reduce (map2 (+)) [0,0] m: a vector-valued reduction (general path).
    let mut vs = Vars::new();
    let (m, zero, out) = (vs.v("m"), vs.v("zero"), vs.v("out"));
    let vadd = rowwise_binop_lam(&mut vs, BinOp::Add, I64, 2);
    let stms = vec![
        st(&[(zero, arr1(I64))], Exp::Replicate(i64c(2), i64c(0)), 1),
        st(
            &[(out, arr1(I64))],
            Exp::Soac(Soac::Reduce {
                w: i64c(3),
                lam: vadd,
                neutral: vec![av(zero)],
                arrs: vec![m],
                commutative: false,
            }),
            2,
        ),
    ];
    let r = ok1(
        vs,
        vec![param(m, arr2(I64))],
        stms,
        av(out),
        vec![i64m(3, 2, &[1, 2, 3, 4, 5, 6])],
    );
    assert_eq!(r, i64s(&[9, 12]));
}

#[test]
fn hist_ignores_out_of_bounds() {
    let mut vs = Vars::new();
    let (is, vals, dest, out) = (vs.v("is"), vs.v("vals"), vs.v("dest"), vs.v("out"));
    let plus = binop_lam(&mut vs, BinOp::Add, I64);
    let stms = vec![
        st(&[(dest, arr1(I64))], Exp::Replicate(i64c(3), i64c(0)), 1),
        st(
            &[(out, arr1(I64))],
            Exp::Soac(Soac::Hist {
                w: i64c(6),
                dest: vec![dest],
                lam: plus,
                neutral: vec![i64c(0)],
                indices: is,
                values: vec![vals],
            }),
            2,
        ),
    ];
    let r = ok1(
        vs,
        vec![param(is, arr1(I64)), param(vals, arr1(I64))],
        stms,
        av(out),
        vec![i64s(&[0, 2, 5, -1, 2, 0]), i64s(&[1, 10, 100, 1000, 20, 2])],
    );
    assert_eq!(r, i64s(&[3, 0, 30]));
}

#[test]
fn hist_with_general_operator_and_rows() {
    // reduce_by_index over rows of length 2 with an elementwise max operator written as a map.
    let mut vs = Vars::new();
    let (is, vals, dest, out) = (vs.v("is"), vs.v("vals"), vs.v("dest"), vs.v("out"));
    let vmax = rowwise_binop_lam(&mut vs, BinOp::Max, I64, 2);
    let row0 = vs.v("row0");
    let stms = vec![
        st(&[(row0, arr1(I64))], Exp::Replicate(i64c(2), i64c(0)), 1),
        st(&[(dest, arr2(I64))], Exp::Replicate(i64c(2), av(row0)), 1),
        st(
            &[(out, arr2(I64))],
            Exp::Soac(Soac::Hist {
                w: i64c(3),
                dest: vec![dest],
                lam: vmax,
                neutral: vec![av(row0)],
                indices: is,
                values: vec![vals],
            }),
            2,
        ),
    ];
    let r = ok1(
        vs,
        vec![param(is, arr1(I64)), param(vals, arr2(I64))],
        stms,
        av(out),
        vec![i64s(&[1, 1, 7]), i64m(3, 2, &[5, 1, 2, 9, 100, 100])],
    );
    assert_eq!(r, i64m(2, 2, &[0, 0, 5, 9]));
}

#[test]
fn scatter_1d_and_2d() {
    let mut vs = Vars::new();
    let (dest, is, vals, out, d2, js, ks, out2) = (
        vs.v("dest"),
        vs.v("is"),
        vs.v("vals"),
        vs.v("out"),
        vs.v("d2"),
        vs.v("js"),
        vs.v("ks"),
        vs.v("out2"),
    );
    let stms = vec![
        st(
            &[(out, arr1(I64))],
            Exp::Soac(Soac::Scatter {
                w: i64c(4),
                dest: vec![dest],
                indices: vec![is],
                values: vec![vals],
            }),
            1,
        ),
        st(
            &[(d2, arr2(I64))],
            Exp::Reshape(vec![i64c(2), i64c(2)], out),
            2,
        ),
        st(
            &[(out2, arr2(I64))],
            Exp::Soac(Soac::Scatter {
                w: i64c(4),
                dest: vec![d2],
                indices: vec![js, ks],
                values: vec![vals],
            }),
            3,
        ),
    ];
    let r = run1(
        vs,
        vec![
            param(dest, arr1(I64)),
            param(is, arr1(I64)),
            param(vals, arr1(I64)),
            param(js, arr1(I64)),
            param(ks, arr1(I64)),
        ],
        stms,
        vec![av(out2)],
        vec![
            i64s(&[0, 0, 0, 0]),
            i64s(&[3, -1, 1, 4]),
            i64s(&[10, 20, 30, 40]),
            i64s(&[0, 1, 2, 1]),
            i64s(&[1, 0, 0, -5]),
        ],
    )
    .unwrap();
    // After the first scatter: [0, 30, 0, 10] → [[0, 30], [0, 10]]; then (0,1)=10, (1,0)=20.
    assert_eq!(r[0], i64m(2, 2, &[0, 10, 20, 10]));
}

#[test]
fn jvp_and_vjp_of_hand_built_ir() {
    // jvp2 (\x -> x * x) 3 1 = (9, 6) and vjp (\x -> x * x) 3 1 = 6; an
    // error inside the differentiated lambda keeps its span.
    let mut vs = Vars::new();
    let (x, y, r, d, x2, y2, a, b) = (
        vs.v("x"),
        vs.v("y"),
        vs.v("r"),
        vs.v("d"),
        vs.v("x2"),
        vs.v("y2"),
        vs.v("a"),
        vs.v("b"),
    );
    let sq = |x: Var, y: Var| {
        lam(
            vec![param(x, t(F64))],
            body(
                vec![st(&[(y, t(F64))], Exp::BinOp(BinOp::Mul, av(x), av(x)), 60)],
                vec![av(y)],
            ),
            vec![t(F64)],
        )
    };
    let stms = vec![
        st(
            &[(r, t(F64)), (d, t(F64))],
            Exp::Jvp {
                lam: sq(x, y),
                primals: vec![f64c(3.0)],
                tangents: vec![f64c(1.0)],
            },
            61,
        ),
        st(
            &[(a, t(F64)), (b, t(F64))],
            Exp::Vjp {
                lam: sq(x2, y2),
                primals: vec![f64c(3.0)],
                adjoints: vec![f64c(1.0)],
            },
            62,
        ),
    ];
    let p = prog(vec![fun(
        "main",
        vec![],
        vec![t(F64), t(F64), t(F64), t(F64)],
        body(stms, vec![av(r), av(d), av(a), av(b)]),
        vs,
    )]);
    assert_eq!(
        run_entry(&p, "main", vec![]).unwrap(),
        vec![pf64(9.0), pf64(6.0), pf64(9.0), pf64(6.0)]
    );
    let mut vs = Vars::new();
    let (x, y, r, d) = (vs.v("x"), vs.v("y"), vs.v("r"), vs.v("d"));
    let stms = vec![st(
        &[(r, t(I64)), (d, t(I64))],
        Exp::Jvp {
            lam: lam(
                vec![param(x, t(I64))],
                body(
                    vec![st(
                        &[(y, t(I64))],
                        Exp::BinOp(BinOp::Div, av(x), i64c(0)),
                        63,
                    )],
                    vec![av(y)],
                ),
                vec![t(I64)],
            ),
            primals: vec![i64c(1)],
            tangents: vec![i64c(1)],
        },
        64,
    )];
    let e = err1(vs, vec![], stms, vec![av(r)], vec![]);
    assert!(e.message.contains("division by zero"), "{}", e.message);
    assert_eq!(e.span, Some(sp(63)));
}

#[test]
fn entry_argument_checks_and_size_binding() {
    // main [n] (xs: [n]i64) (ys: [n]i64) = n
    let mut vs = Vars::new();
    let (n, xs, ys) = (vs.v("n"), vs.v("xs"), vs.v("ys"));
    let p = prog(vec![fun(
        "main",
        vec![
            param(xs, arr(I64, &[Dim::Var(n)])),
            param(ys, arr(I64, &[Dim::Var(n)])),
        ],
        vec![t(I64)],
        body(vec![], vec![av(n)]),
        vs,
    )]);
    assert_eq!(
        run_entry(&p, "main", vec![i64s(&[1, 2, 3]), i64s(&[4, 5, 6])]).unwrap(),
        vec![pi64(3)]
    );
    let e = run_entry(&p, "main", vec![i64s(&[1, 2, 3]), i64s(&[4, 5])]).unwrap_err();
    assert!(e.message.contains("size"), "{}", e.message);
    let e = run_entry(&p, "main", vec![i64s(&[1])]).unwrap_err();
    assert!(e.message.contains("takes 2 argument"), "{}", e.message);
    let e = run_entry(&p, "main", vec![i64s(&[1]), f64s(&[1.0])]).unwrap_err();
    assert_eq!(
        e.message,
        "entry point main: argument 2 has type []f64, but type []i64 was expected"
    );
    let e = run_entry(&p, "main", vec![i64s(&[1]), pi64(1)]).unwrap_err();
    assert!(
        e.message.contains("argument 2 has type i64"),
        "{}",
        e.message
    );
    let e = run_entry(&p, "nope", vec![]).unwrap_err();
    assert!(e.message.contains("no entry point named nope"));
}

#[test]
fn benchmark_programs_compute_the_right_values() {
    let p = benchprogs::map_reduce();
    let xs: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    let expect: f64 = xs.iter().map(|x| x * x + 1.0).sum();
    let r = run_entry(&p, "main", vec![f64s(&xs)]).unwrap();
    assert_eq!(r, vec![pf64(expect)]);

    for x0 in [0.5f32, 1.7, 150.0] {
        let p = benchprogs::seed_loop(30);
        let r = run_entry(&p, "main", vec![pf32(x0)]).unwrap();
        let Value::Prim(PrimValue::F32(got)) = r[0] else {
            panic!("not an f32: {r:?}")
        };
        let want = benchprogs::seed_loop_native(x0, 30);
        assert!(
            (got - want).abs() <= 1e-4 * want.abs().max(1.0),
            "x0 = {x0}: {got} vs {want}"
        );
    }
}
