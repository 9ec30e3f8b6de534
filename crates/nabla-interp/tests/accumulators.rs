//! Accumulators (`with_acc`/`update_acc`, Schenck et al., SC22, §5.4) in the plain
//! evaluator: the three operators, cell and row updates, ignored
//! out-of-bounds indices, threading through `map` and loops, nested
//! `with_acc`, and run-time errors. Every program is also validated. The
//! expected values are computed by plain Rust loops.

mod common;

use common::*;
use nabla_interp::{run_entry, RuntimeError};
use nabla_ir::*;
use nabla_values::{ArrayValue, Value};
use PrimType::{F64, I32, I64};

fn acc1(p: PrimType) -> Type {
    Type::Acc(p, vec![Dim::Ext])
}
fn acc2(p: PrimType) -> Type {
    Type::Acc(p, vec![Dim::Ext, Dim::Ext])
}

/// The same value with its elements in a fresh exact buffer.
fn norm(v: Value) -> Value {
    match v {
        Value::Array(a) => {
            let b = a.elems_buffer();
            Value::Array(ArrayValue::new(a.shape(), b).unwrap())
        }
        p => p,
    }
}

/// Validates, then runs a one-function program.
fn run(
    vs: Vars,
    params: Vec<Param>,
    ret: Vec<Type>,
    stms: Vec<Stm>,
    res: Vec<Atom>,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    let p = prog(vec![fun("main", params, ret, body(stms, res), vs)]);
    if let Err(es) = validate_program(&p) {
        panic!(
            "invalid test program:\n{}\n{}",
            es.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            print_program(&p)
        );
    }
    run_entry(&p, "main", args).map(|r| r.into_iter().map(norm).collect())
}

/// `with_acc [xs op] (\a -> map (\a' i v -> update_acc a' [i] v) a is vs)`
/// over one-dimensional `xs`, `is`, `vs` of element type `p`.
fn scatter_like(
    p: PrimType,
    op: impl FnOnce(&mut Vars) -> AccOp,
) -> (Vars, Vec<Param>, Vec<Stm>, Var) {
    let mut vs = Vars::new();
    let (xs, is, vals, k) = (vs.v("xs"), vs.v("is"), vs.v("vs"), vs.v("k"));
    let (a, a1, a2, i, v, a3, ys) = (
        vs.v("a"),
        vs.v("a1"),
        vs.v("a2"),
        vs.v("i"),
        vs.v("v"),
        vs.v("a3"),
        vs.v("ys"),
    );
    let op = op(&mut vs);
    let upd = lam(
        vec![param(a1, acc1(p)), param(i, t(I64)), param(v, t(p))],
        body(
            vec![st(
                &[(a3, acc1(p))],
                Exp::UpdateAcc {
                    acc: a1,
                    indices: vec![av(i)],
                    value: av(v),
                },
                20,
            )],
            vec![av(a3)],
        ),
        vec![acc1(p)],
    );
    let outer = lam(
        vec![param(a, acc1(p))],
        body(
            vec![st(
                &[(a2, acc1(p))],
                Exp::Soac(Soac::Map {
                    w: av(k),
                    lam: upd,
                    arrs: vec![a, is, vals],
                }),
                11,
            )],
            vec![av(a2)],
        ),
        vec![acc1(p)],
    );
    let stms = vec![
        st(&[(k, t(I64))], Exp::Size(is, 0), 1),
        st(
            &[(ys, arr1(p))],
            Exp::WithAcc {
                inputs: vec![AccInput { array: xs, op }],
                lam: outer,
            },
            2,
        ),
    ];
    let params = vec![
        Param {
            unique: true,
            ..param(xs, arr1(p))
        },
        param(is, arr1(I64)),
        param(vals, arr1(p)),
    ];
    (vs, params, stms, ys)
}

/// The reference semantics of the program above.
fn reference<T: Copy>(xs: &[T], is: &[i64], vs: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = xs.to_vec();
    for (&i, &v) in is.iter().zip(vs) {
        if i >= 0 && (i as usize) < out.len() {
            out[i as usize] = f(out[i as usize], v);
        }
    }
    out
}

#[test]
fn add_accumulates_and_ignores_out_of_bounds() {
    let xs = [1.0, 2.0, 3.0, 4.0];
    let is = [0, 2, 2, -1, 4, 3, 0, 100, i64::MIN];
    let vals = [0.5, 1.0, 2.0, 9.0, 9.0, -4.0, 0.25, 9.0, 9.0];
    let (vs, params, stms, ys) = scatter_like(F64, |_| AccOp::Add);
    let r = run(
        vs,
        params,
        vec![arr1(F64)],
        stms,
        vec![av(ys)],
        vec![f64s(&xs), i64s(&is), f64s(&vals)],
    )
    .unwrap();
    assert_eq!(r, vec![f64s(&reference(&xs, &is, &vals, |a, b| a + b))]);
    assert_eq!(r, vec![f64s(&[1.75, 2.0, 6.0, 0.0])]);
}

#[test]
fn add_wraps_integers_like_nabla_prim() {
    let xs = [i32::MAX, 0];
    let is = [0, 1, 1];
    let vals = [1, -5, 7];
    let (vs, params, stms, ys) = scatter_like(I32, |_| AccOp::Add);
    let r = run(
        vs,
        params,
        vec![arr1(I32)],
        stms,
        vec![av(ys)],
        vec![i32s(&xs), i64s(&is), i32s(&vals)],
    )
    .unwrap();
    assert_eq!(r, vec![i32s(&[i32::MIN, 2])]);
}

#[test]
fn write_overwrites_in_order() {
    let xs = [10, 20, 30];
    let is = [1, 1, 5, -2, 2, 1];
    let vals = [7, 8, 9, 9, 4, 6];
    let (vs, params, stms, ys) = scatter_like(I64, |_| AccOp::Write);
    let r = run(
        vs,
        params,
        vec![arr1(I64)],
        stms,
        vec![av(ys)],
        vec![i64s(&xs), i64s(&is), i64s(&vals)],
    )
    .unwrap();
    assert_eq!(r, vec![i64s(&reference(&xs, &is, &vals, |_, b| b))]);
    assert_eq!(r, vec![i64s(&[10, 6, 4])]);
}

#[test]
fn operator_lambda_combines_cells() {
    let xs = [3, -7, 0];
    let is = [0, 1, 2, 1, 0, 3];
    let vals = [5, -9, -1, 2, 1, 100];
    let (vs, params, stms, ys) = scatter_like(I64, |vs| {
        AccOp::Lambda(Box::new(binop_lam(vs, BinOp::Max, I64)), i64c(i64::MIN))
    });
    let r = run(
        vs,
        params,
        vec![arr1(I64)],
        stms,
        vec![av(ys)],
        vec![i64s(&xs), i64s(&is), i64s(&vals)],
    )
    .unwrap();
    assert_eq!(r, vec![i64s(&reference(&xs, &is, &vals, i64::max))]);
    assert_eq!(r, vec![i64s(&[5, 2, 0])]);
}

/// A `[3][2]i64` accumulator: row updates (one index) and cell updates
/// (two indices), with each operator; out-of-bounds rows and columns are
/// ignored.
fn matrix_updates(op: impl FnOnce(&mut Vars) -> AccOp) -> Value {
    let mut vs = Vars::new();
    let (m, r, a, b1, b2, b3, b4, b5, out) = (
        vs.v("m"),
        vs.v("r"),
        vs.v("a"),
        vs.v("b1"),
        vs.v("b2"),
        vs.v("b3"),
        vs.v("b4"),
        vs.v("b5"),
        vs.v("out"),
    );
    let op = op(&mut vs);
    let upd = |acc: Var, dst: Var, idx: Vec<Atom>, value: Atom, at: u32| {
        st(
            &[(dst, acc2(I64))],
            Exp::UpdateAcc {
                acc,
                indices: idx,
                value,
            },
            at,
        )
    };
    let l = lam(
        vec![param(a, acc2(I64))],
        body(
            vec![
                upd(a, b1, vec![i64c(1)], av(r), 10),
                upd(b1, b2, vec![i64c(2), i64c(0)], i64c(5), 11),
                upd(b2, b3, vec![i64c(3)], av(r), 12),
                upd(b3, b4, vec![i64c(0), i64c(2)], i64c(9), 13),
                upd(b4, b5, vec![i64c(1)], av(r), 14),
            ],
            vec![av(b5)],
        ),
        vec![acc2(I64)],
    );
    let stms = vec![st(
        &[(out, arr2(I64))],
        Exp::WithAcc {
            inputs: vec![AccInput { array: m, op }],
            lam: l,
        },
        1,
    )];
    let params = vec![
        Param {
            unique: true,
            ..param(m, arr2(I64))
        },
        param(r, arr1(I64)),
    ];
    let mut res = run(
        vs,
        params,
        vec![arr2(I64)],
        stms,
        vec![av(out)],
        vec![i64m(3, 2, &[1, 2, 3, 4, 5, 6]), i64s(&[10, -20])],
    )
    .unwrap();
    res.pop().unwrap()
}

#[test]
fn row_and_cell_updates() {
    // Row 1 gets r twice, cell (2,0) gets 5; row 3 and column 2 are out of bounds.
    assert_eq!(
        matrix_updates(|_| AccOp::Add),
        i64m(3, 2, &[1, 2, 23, -36, 10, 6])
    );
    assert_eq!(
        matrix_updates(|_| AccOp::Write),
        i64m(3, 2, &[1, 2, 10, -20, 5, 6])
    );
    assert_eq!(
        matrix_updates(|vs| AccOp::Lambda(Box::new(binop_lam(vs, BinOp::Mul, I64)), i64c(1))),
        i64m(3, 2, &[1, 2, 300, 1600, 25, 6])
    );
}

#[test]
fn loop_carries_an_accumulator_and_extra_results() {
    // with_acc [xs add] (\a -> loop (b, s) = (a, 0) for i < n do
    //   (update_acc b [i % 3] (f64 i), s + i)) returning (b, s)
    let mut vs = Vars::new();
    let (xs, n, a, b, s, i, i3, x, b2, s2, fb, fs, ys, total) = (
        vs.v("xs"),
        vs.v("n"),
        vs.v("a"),
        vs.v("b"),
        vs.v("s"),
        vs.v("i"),
        vs.v("i3"),
        vs.v("x"),
        vs.v("b2"),
        vs.v("s2"),
        vs.v("fb"),
        vs.v("fs"),
        vs.v("ys"),
        vs.v("total"),
    );
    let loop_body = body(
        vec![
            st(&[(i3, t(I64))], Exp::BinOp(BinOp::Mod, av(i), i64c(3)), 20),
            st(
                &[(x, t(F64))],
                Exp::Conv(ConvOp::Convert(I64, F64), av(i)),
                21,
            ),
            st(
                &[(b2, acc1(F64))],
                Exp::UpdateAcc {
                    acc: b,
                    indices: vec![av(i3)],
                    value: av(x),
                },
                22,
            ),
            st(&[(s2, t(I64))], Exp::BinOp(BinOp::Add, av(s), av(i)), 23),
        ],
        vec![av(b2), av(s2)],
    );
    let l = lam(
        vec![param(a, acc1(F64))],
        body(
            vec![st(
                &[(fb, acc1(F64)), (fs, t(I64))],
                Exp::Loop {
                    params: vec![param(b, acc1(F64)), param(s, t(I64))],
                    init: vec![av(a), i64c(0)],
                    form: LoopForm::For { i, bound: av(n) },
                    body: loop_body,
                },
                12,
            )],
            vec![av(fb), av(fs)],
        ),
        vec![acc1(F64), t(I64)],
    );
    let stms = vec![st(
        &[(ys, arr1(F64)), (total, t(I64))],
        Exp::WithAcc {
            inputs: vec![AccInput {
                array: xs,
                op: AccOp::Add,
            }],
            lam: l,
        },
        1,
    )];
    let params = vec![
        Param {
            unique: true,
            ..param(xs, arr1(F64))
        },
        param(n, t(I64)),
    ];
    let r = run(
        vs,
        params,
        vec![arr1(F64), t(I64)],
        stms,
        vec![av(ys), av(total)],
        vec![f64s(&[0.5, 0.0, -1.0]), pi64(7)],
    )
    .unwrap();
    let mut want = [0.5, 0.0, -1.0];
    for i in 0..7 {
        want[i % 3] += i as f64;
    }
    assert_eq!(r, vec![f64s(&want), pi64(21)]);
}

#[test]
fn nested_with_acc_in_a_map_and_two_accumulators() {
    // with_acc [m add, cnt add] (\a c ->
    //   map (\a' c' j -> let z = replicate 3 0
    //                    let z' = with_acc [z write] (\b -> update_acc b [j % 3] j)
    //                    in (update_acc a' [j] z', update_acc c' [0] 1, j * 2))
    //       a c (iota n))
    let mut vs = Vars::new();
    let (m, cnt, n, js) = (vs.v("m"), vs.v("cnt"), vs.v("n"), vs.v("js"));
    let (a, c, a1, c1, j, z, bq, b2, z2, j3, a2, c2, jj) = (
        vs.v("a"),
        vs.v("c"),
        vs.v("a1"),
        vs.v("c1"),
        vs.v("j"),
        vs.v("z"),
        vs.v("b"),
        vs.v("b2"),
        vs.v("z2"),
        vs.v("j3"),
        vs.v("a2"),
        vs.v("c2"),
        vs.v("jj"),
    );
    let (fa, fc, dbl, out_m, out_c, out_d) = (
        vs.v("fa"),
        vs.v("fc"),
        vs.v("dbl"),
        vs.v("out_m"),
        vs.v("out_c"),
        vs.v("out_d"),
    );
    let inner = lam(
        vec![param(bq, acc1(I64))],
        body(
            vec![st(
                &[(b2, acc1(I64))],
                Exp::UpdateAcc {
                    acc: bq,
                    indices: vec![av(j3)],
                    value: av(j),
                },
                32,
            )],
            vec![av(b2)],
        ),
        vec![acc1(I64)],
    );
    let per_row = lam(
        vec![param(a1, acc2(I64)), param(c1, acc1(I64)), param(j, t(I64))],
        body(
            vec![
                st(&[(z, arr1(I64))], Exp::Replicate(i64c(3), i64c(0)), 30),
                st(&[(j3, t(I64))], Exp::BinOp(BinOp::Mod, av(j), i64c(3)), 31),
                st(
                    &[(z2, arr1(I64))],
                    Exp::WithAcc {
                        inputs: vec![AccInput {
                            array: z,
                            op: AccOp::Write,
                        }],
                        lam: inner,
                    },
                    33,
                ),
                st(
                    &[(a2, acc2(I64))],
                    Exp::UpdateAcc {
                        acc: a1,
                        indices: vec![av(j)],
                        value: av(z2),
                    },
                    34,
                ),
                st(
                    &[(c2, acc1(I64))],
                    Exp::UpdateAcc {
                        acc: c1,
                        indices: vec![i64c(0)],
                        value: i64c(1),
                    },
                    35,
                ),
                st(&[(jj, t(I64))], Exp::BinOp(BinOp::Mul, av(j), i64c(2)), 36),
            ],
            vec![av(a2), av(c2), av(jj)],
        ),
        vec![acc2(I64), acc1(I64), t(I64)],
    );
    let outer = lam(
        vec![param(a, acc2(I64)), param(c, acc1(I64))],
        body(
            vec![st(
                &[(fa, acc2(I64)), (fc, acc1(I64)), (dbl, arr1(I64))],
                Exp::Soac(Soac::Map {
                    w: av(n),
                    lam: per_row,
                    arrs: vec![a, c, js],
                }),
                20,
            )],
            vec![av(fa), av(fc), av(dbl)],
        ),
        vec![acc2(I64), acc1(I64), arr1(I64)],
    );
    let stms = vec![
        st(&[(n, t(I64))], Exp::Size(m, 0), 1),
        st(
            &[(js, arr1(I64))],
            Exp::Iota {
                n: av(n),
                start: i64c(0),
                step: i64c(1),
                ty: I64,
            },
            2,
        ),
        st(
            &[(out_m, arr2(I64)), (out_c, arr1(I64)), (out_d, arr1(I64))],
            Exp::WithAcc {
                inputs: vec![
                    AccInput {
                        array: m,
                        op: AccOp::Add,
                    },
                    AccInput {
                        array: cnt,
                        op: AccOp::Add,
                    },
                ],
                lam: outer,
            },
            3,
        ),
    ];
    let params = vec![
        Param {
            unique: true,
            ..param(m, arr2(I64))
        },
        Param {
            unique: true,
            ..param(cnt, arr1(I64))
        },
    ];
    let rows = 5usize;
    let m0: Vec<i64> = (0..rows as i64 * 3).map(|x| 100 * x).collect();
    let r = run(
        vs,
        params,
        vec![arr2(I64), arr1(I64), arr1(I64)],
        stms,
        vec![av(out_m), av(out_c), av(out_d)],
        vec![i64m(rows, 3, &m0), i64s(&[40])],
    )
    .unwrap();
    let mut want = m0.clone();
    for j in 0..rows {
        want[j * 3 + j % 3] += j as i64;
    }
    let dbl_want: Vec<i64> = (0..rows as i64).map(|j| 2 * j).collect();
    assert_eq!(
        r,
        vec![
            i64m(rows, 3, &want),
            i64s(&[40 + rows as i64]),
            i64s(&dbl_want)
        ]
    );
}

#[test]
fn map_over_no_rows_returns_the_accumulator_unchanged() {
    let (vs, params, stms, ys) = scatter_like(F64, |_| AccOp::Add);
    let r = run(
        vs,
        params,
        vec![arr1(F64)],
        stms,
        vec![av(ys)],
        vec![f64s(&[1.0, 2.0]), i64s(&[]), f64s(&[])],
    )
    .unwrap();
    assert_eq!(r, vec![f64s(&[1.0, 2.0])]);
}

#[test]
fn input_shared_with_another_variable_is_not_changed() {
    // The argument's buffer is shared with `keep`: the accumulator must
    // write into a copy (copy-on-write), never into `keep`.
    let (vs, params, stms, ys) = scatter_like(F64, |_| AccOp::Add);
    let xs = f64s(&[1.0, 2.0]);
    let keep = xs.clone();
    let r = run(
        vs,
        params,
        vec![arr1(F64)],
        stms,
        vec![av(ys)],
        vec![xs, i64s(&[1]), f64s(&[5.0])],
    )
    .unwrap();
    assert_eq!(r, vec![f64s(&[1.0, 7.0])]);
    assert_eq!(keep, f64s(&[1.0, 2.0]));
}

#[test]
fn wrong_row_shape_is_a_located_size_error() {
    let mut vs = Vars::new();
    let (m, r, a, b, out) = (vs.v("m"), vs.v("r"), vs.v("a"), vs.v("b"), vs.v("out"));
    let l = lam(
        vec![param(a, acc2(I64))],
        body(
            vec![st(
                &[(b, acc2(I64))],
                Exp::UpdateAcc {
                    acc: a,
                    indices: vec![i64c(0)],
                    value: av(r),
                },
                77,
            )],
            vec![av(b)],
        ),
        vec![acc2(I64)],
    );
    let stms = vec![st(
        &[(out, arr2(I64))],
        Exp::WithAcc {
            inputs: vec![AccInput {
                array: m,
                op: AccOp::Add,
            }],
            lam: l,
        },
        1,
    )];
    let params = vec![
        Param {
            unique: true,
            ..param(m, arr2(I64))
        },
        param(r, arr1(I64)),
    ];
    let e = run(
        vs,
        params,
        vec![arr2(I64)],
        stms,
        vec![av(out)],
        vec![i64m(2, 2, &[1, 2, 3, 4]), i64s(&[1, 2, 3])],
    )
    .unwrap_err();
    assert!(e.message.contains("size error"), "{}", e.message);
    assert_eq!(e.span, Some(sp(77)));
}

#[test]
fn branches_carry_accumulators() {
    // with_acc [xs add] (\a -> if c then update_acc a [1] 2.5 else a)
    let run_with = |c: bool| {
        let mut vs = Vars::new();
        let (xs, cv, a, b, r, ys) = (
            vs.v("xs"),
            vs.v("c"),
            vs.v("a"),
            vs.v("b"),
            vs.v("r"),
            vs.v("ys"),
        );
        let l = lam(
            vec![param(a, acc1(F64))],
            body(
                vec![st(
                    &[(r, acc1(F64))],
                    Exp::If {
                        cond: av(cv),
                        then_: body(
                            vec![st(
                                &[(b, acc1(F64))],
                                Exp::UpdateAcc {
                                    acc: a,
                                    indices: vec![i64c(1)],
                                    value: f64c(2.5),
                                },
                                21,
                            )],
                            vec![av(b)],
                        ),
                        else_: body(vec![], vec![av(a)]),
                    },
                    20,
                )],
                vec![av(r)],
            ),
            vec![acc1(F64)],
        );
        let stms = vec![st(
            &[(ys, arr1(F64))],
            Exp::WithAcc {
                inputs: vec![AccInput {
                    array: xs,
                    op: AccOp::Add,
                }],
                lam: l,
            },
            1,
        )];
        let params = vec![
            Param {
                unique: true,
                ..param(xs, arr1(F64))
            },
            param(cv, t(PrimType::Bool)),
        ];
        run(
            vs,
            params,
            vec![arr1(F64)],
            stms,
            vec![av(ys)],
            vec![f64s(&[1.0, 1.0]), Value::Prim(PrimValue::Bool(c))],
        )
        .unwrap()
    };
    assert_eq!(run_with(true), vec![f64s(&[1.0, 3.5])]);
    assert_eq!(run_with(false), vec![f64s(&[1.0, 1.0])]);
}
