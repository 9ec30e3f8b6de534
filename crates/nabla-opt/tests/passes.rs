//! Unit tests of each transformation on hand-built IR: the result must
//! validate (sizes included), compute what the input computed (run by the
//! reference interpreter), and have the expected shape.

use nabla_ir::{
    validate_program, Atom, BinOp, Body, CmpOp, Dim, DimIndex, EntryPoint, Exp, FunId, Function,
    Lambda, Param, PrimType, PrimValue, Program, Soac, Span, Stm, Type, Var,
};
use nabla_opt::{optimise, InlinePolicy};
use nabla_syntax::span::FileId;
use nabla_values::{ArrayValue, Value};

const F64: Type = Type::Prim(PrimType::F64);
const I64: Type = Type::Prim(PrimType::I64);
const I32: Type = Type::Prim(PrimType::I32);

fn p(v: u32, ty: Type) -> Param {
    Param::new(Var(v), ty)
}
fn v(i: u32) -> Atom {
    Atom::Var(Var(i))
}
fn f64c(x: f64) -> Atom {
    Atom::Const(PrimValue::F64(x))
}
fn i64c(x: i64) -> Atom {
    Atom::Const(PrimValue::I64(x))
}
fn i32c(x: i32) -> Atom {
    Atom::Const(PrimValue::I32(x))
}
fn sp(k: u32) -> Span {
    Span {
        file: FileId(1),
        start: k,
        end: k + 1,
    }
}
fn stm(pat: Vec<Param>, exp: Exp) -> Stm {
    stm_at(pat, exp, 0)
}
fn stm_at(pat: Vec<Param>, exp: Exp, k: u32) -> Stm {
    Stm {
        pat,
        exp,
        span: sp(k),
    }
}
fn arr(d: Dim) -> Type {
    Type::Array(PrimType::F64, vec![d])
}
fn fun(
    name: &str,
    params: Vec<Param>,
    ret: Vec<Type>,
    stms: Vec<Stm>,
    result: Vec<Atom>,
) -> Function {
    let mut n = 0;
    let mut see = |x: u32| n = n.max(x as usize + 1);
    for q in &params {
        see(q.var.0);
    }
    fn scan(b: &Body, see: &mut dyn FnMut(u32)) {
        for s in &b.stms {
            for q in &s.pat {
                see(q.var.0);
            }
            match &s.exp {
                Exp::Soac(Soac::Map { lam, .. }) | Exp::Soac(Soac::Reduce { lam, .. }) => {
                    lam.params.iter().for_each(|q| see(q.var.0));
                    scan(&lam.body, see);
                }
                Exp::If { then_, else_, .. } => {
                    scan(then_, see);
                    scan(else_, see);
                }
                _ => {}
            }
        }
    }
    let body = Body { stms, result };
    scan(&body, &mut see);
    Function {
        name: name.into(),
        params,
        unique_ret: vec![false; ret.len()],
        ret,
        body,
        var_names: (0..n).map(|i| format!("x{i}")).collect(),
        span: sp(900 + name.len() as u32),
    }
}
fn program(fs: Vec<Function>) -> Program {
    let entries = vec![EntryPoint {
        name: "main".into(),
        fun: FunId(0),
        param_arity: vec![1; fs[0].params.len()],
        result_arity: vec![1; fs[0].ret.len()],
        signature: None,
    }];
    Program {
        functions: fs,
        entries,
        ..Default::default()
    }
}

fn vec_f64(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}

/// Runs `main`, as a comparable string (values, or the error's span: the
/// wording of a size error on entry to an inlined function differs).
fn run(prog: &Program, args: &[Value]) -> String {
    match nabla_interp::run_entry(prog, "main", args.to_vec()) {
        Ok(vs) => format!("{vs:?}"),
        Err(e) => format!("error {:?}", e.span),
    }
}

/// The error message of a failing run.
fn message(prog: &Program, args: &[Value]) -> String {
    match nabla_interp::run_entry(prog, "main", args.to_vec()) {
        Ok(vs) => format!("no error: {vs:?}"),
        Err(e) => e.message,
    }
}

/// Validation errors, size-only ones left out when `sizes` is false.
fn invalid(prog: &Program, sizes: bool) -> Vec<String> {
    match validate_program(prog) {
        Ok(_) => vec![],
        Err(es) => es
            .into_iter()
            .filter(|e| sizes || !e.is_size_error())
            .map(|e| e.to_string())
            .collect(),
    }
}

/// Optimises a copy of `prog` and checks validity and equal results on
/// every argument list; returns the optimised program.
fn optimised_same(prog: &Program, inputs: &[Vec<Value>]) -> Program {
    optimised_same_with(prog, inputs, true)
}

/// [`optimised_same`]; `sizes`: whether the input is valid with size checks
/// on (the validator does not know sizes bound implicitly on entry to a
/// function, which the interpreter supports), and so must the output be.
fn optimised_same_with(prog: &Program, inputs: &[Vec<Value>], sizes: bool) -> Program {
    assert_eq!(
        invalid(prog, sizes),
        Vec::<String>::new(),
        "input IR is valid"
    );
    let mut opt = prog.clone();
    optimise(&mut opt);
    let es = invalid(&opt, sizes);
    assert!(
        es.is_empty(),
        "optimised IR is invalid: {es:?}\n{}",
        nabla_ir::print_program(&opt)
    );
    for args in inputs {
        assert_eq!(
            run(prog, args),
            run(&opt, args),
            "{}",
            nabla_ir::print_program(&opt)
        );
    }
    opt
}

fn all_exps(b: &Body, out: &mut Vec<Exp>) {
    for s in &b.stms {
        out.push(s.exp.clone());
        match &s.exp {
            Exp::Soac(Soac::Map { lam, .. }) | Exp::Soac(Soac::Reduce { lam, .. }) => {
                all_exps(&lam.body, out)
            }
            Exp::If { then_, else_, .. } => {
                all_exps(then_, out);
                all_exps(else_, out);
            }
            _ => {}
        }
    }
}
fn exps(f: &Function) -> Vec<Exp> {
    let mut out = Vec::new();
    all_exps(&f.body, &mut out);
    out
}
fn count(f: &Function, pred: impl Fn(&Exp) -> bool) -> usize {
    exps(f).iter().filter(|e| pred(e)).count()
}

/// `f x = x * x + 1`; `main xs = reduce (+) 0 (map f xs)`.
fn map_reduce() -> Program {
    let f = fun(
        "f",
        vec![p(0, F64)],
        vec![F64],
        vec![
            stm(vec![p(1, F64)], Exp::BinOp(BinOp::Mul, v(0), v(0))),
            stm(vec![p(2, F64)], Exp::BinOp(BinOp::Add, v(1), f64c(1.0))),
        ],
        vec![v(2)],
    );
    let n = Dim::Var(Var(1));
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext))],
        vec![F64],
        vec![
            stm(vec![p(1, I64)], Exp::Size(Var(0), 0)),
            stm(
                vec![p(4, arr(n))],
                Exp::Soac(Soac::Map {
                    w: v(1),
                    lam: Lambda {
                        params: vec![p(2, F64)],
                        body: Body {
                            stms: vec![stm(vec![p(3, F64)], Exp::Apply(FunId(1), vec![v(2)]))],
                            result: vec![v(3)],
                        },
                        ret: vec![F64],
                    },
                    arrs: vec![Var(0)],
                }),
            ),
            stm(
                vec![p(8, F64)],
                Exp::Soac(Soac::Reduce {
                    w: v(1),
                    lam: Lambda {
                        params: vec![p(5, F64), p(6, F64)],
                        body: Body {
                            stms: vec![stm(vec![p(7, F64)], Exp::BinOp(BinOp::Add, v(5), v(6)))],
                            result: vec![v(7)],
                        },
                        ret: vec![F64],
                    },
                    neutral: vec![f64c(0.0)],
                    arrs: vec![Var(4)],
                    commutative: true,
                }),
            ),
        ],
        vec![v(8)],
    );
    program(vec![main, f])
}

#[test]
fn inlines_small_function_in_map_lambda() {
    let prog = map_reduce();
    let opt = optimised_same(
        &prog,
        &[vec![vec_f64(&[1.0, 2.0, 3.5])], vec![vec_f64(&[])]],
    );
    assert_eq!(opt.functions.len(), 1, "f is removed once inlined");
    assert_eq!(count(&opt.functions[0], |e| matches!(e, Exp::Apply(..))), 0);
    // The inlined statements keep the callee's spans and fresh variables
    // were appended to main's var_names.
    let mul = exps(&opt.functions[0])
        .into_iter()
        .any(|e| matches!(e, Exp::BinOp(BinOp::Mul, ..)));
    assert!(mul);
    assert!(opt.functions[0].var_names.len() > prog.functions[0].var_names.len());
}

#[test]
fn inlining_disabled_by_policy_keeps_calls() {
    let mut prog = map_reduce();
    // f has 2 statements and is called once: with every threshold at zero and
    // a caller cap of zero, nothing may be inlined.
    let policy = InlinePolicy {
        small: 0,
        small_in_loop: 0,
        large_in_loop: 0,
        few_calls: 0,
        max_caller: 0,
        max_program: 1_000_000,
    };
    assert!(!nabla_opt::inline_calls(&mut prog, &policy));
    assert_eq!(
        count(&prog.functions[0], |e| matches!(e, Exp::Apply(..))),
        1
    );
    // Generous thresholds but no room in the program-size budget: nothing
    // is inlined either.
    let budgetless = InlinePolicy {
        max_program: 0,
        ..InlinePolicy::default()
    };
    assert!(!nabla_opt::inline_calls(&mut prog, &budgetless));
}

/// `g (n: i64) (xs: [n]f64): [n]f64 = map (*2) xs`, called with an explicit
/// size `k`: the size check on entry must survive inlining (same error, at
/// g's span), and be dropped when it is statically true.
fn sized_call(k_from_size: bool) -> Program {
    let n = Dim::Var(Var(0));
    let g = fun(
        "g",
        vec![p(0, I64), p(1, arr(n))],
        vec![arr(n)],
        vec![stm_at(
            vec![p(4, arr(n))],
            Exp::Soac(Soac::Map {
                w: v(0),
                lam: Lambda {
                    params: vec![p(2, F64)],
                    body: Body {
                        stms: vec![stm(
                            vec![p(3, F64)],
                            Exp::BinOp(BinOp::Mul, v(2), f64c(2.0)),
                        )],
                        result: vec![v(3)],
                    },
                    ret: vec![F64],
                },
                arrs: vec![Var(1)],
            }),
            7,
        )],
        vec![v(4)],
    );
    let k = if k_from_size {
        Exp::Size(Var(0), 0)
    } else {
        Exp::Atoms(vec![v(1)])
    };
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext)), p(1, I64)],
        vec![arr(Dim::Ext)],
        vec![
            stm(vec![p(2, I64)], k),
            stm(
                vec![p(3, arr(Dim::Var(Var(2))))],
                Exp::Apply(FunId(1), vec![v(2), v(0)]),
            ),
        ],
        vec![v(3)],
    );
    program(vec![main, g])
}

#[test]
fn explicit_size_check_survives_inlining() {
    let prog = sized_call(false);
    let xs = vec_f64(&[1.0, 2.0]);
    let ok = vec![xs.clone(), Value::Prim(PrimValue::I64(2))];
    let bad = vec![xs, Value::Prim(PrimValue::I64(3))];
    let opt = optimised_same(&prog, &[ok, bad.clone()]);
    assert_eq!(count(&opt.functions[0], |e| matches!(e, Exp::Apply(..))), 0);
    assert_eq!(
        count(&opt.functions[0], |e| matches!(e, Exp::AssertEqSizes(..))),
        1
    );
    // The error points at g's definition, as the interpreter's entry check does.
    let g_span = prog.functions[1].span;
    assert_eq!(run(&opt, &bad), format!("error Some({g_span:?})"));
    assert!(
        message(&opt, &bad).contains("size"),
        "{}",
        message(&opt, &bad)
    );
}

#[test]
fn size_check_known_statically_is_dropped() {
    let prog = sized_call(true);
    let opt = optimised_same(
        &prog,
        &[vec![
            vec_f64(&[1.0, 2.0, 3.0]),
            Value::Prim(PrimValue::I64(0)),
        ]],
    );
    assert_eq!(
        count(&opt.functions[0], |e| matches!(e, Exp::AssertEqSizes(..))),
        0,
        "{}",
        nabla_ir::print_program(&opt)
    );
    // The repeated size(xs, 0) was shared.
    assert_eq!(count(&opt.functions[0], |e| matches!(e, Exp::Size(..))), 1);
    // The map inside g keeps g's span.
    assert!(opt.functions[0].body.stms.iter().any(|s| s.span == sp(7)));
}

/// `h (xs: [m]f64): i64 = m` — the implicit size becomes a `size` in the caller.
#[test]
fn implicit_size_is_bound_from_the_argument() {
    let h = fun(
        "h",
        vec![p(1, arr(Dim::Var(Var(0))))],
        vec![I64],
        vec![stm(vec![p(2, I64)], Exp::BinOp(BinOp::Add, v(0), i64c(10)))],
        vec![v(2)],
    );
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext))],
        vec![I64],
        vec![stm(vec![p(1, I64)], Exp::Apply(FunId(1), vec![v(0)]))],
        vec![v(1)],
    );
    let prog = program(vec![main, h]);
    let opt = optimised_same_with(
        &prog,
        &[vec![vec_f64(&[1.0, 2.0, 3.0])], vec![vec_f64(&[])]],
        false,
    );
    assert_eq!(run(&opt, &[vec_f64(&[5.0; 4])]), "[Prim(I64(14))]");
    assert_eq!(count(&opt.functions[0], |e| matches!(e, Exp::Size(..))), 1);
}

#[test]
fn copies_are_propagated_and_constants_folded() {
    // let a = x; let b = 2 + 3; let c = b * 4; let d = a + c; let e = c > 10
    let main = fun(
        "main",
        vec![p(0, I32)],
        vec![I32, Type::Prim(PrimType::Bool)],
        vec![
            stm(vec![p(1, I32)], Exp::Atoms(vec![v(0)])),
            stm(vec![p(2, I32)], Exp::BinOp(BinOp::Add, i32c(2), i32c(3))),
            stm(vec![p(3, I32)], Exp::BinOp(BinOp::Mul, v(2), i32c(4))),
            stm(vec![p(4, I32)], Exp::BinOp(BinOp::Add, v(1), v(3))),
            stm(
                vec![p(5, Type::Prim(PrimType::Bool))],
                Exp::CmpOp(CmpOp::Gt, v(3), i32c(10)),
            ),
        ],
        vec![v(4), v(5)],
    );
    let prog = program(vec![main]);
    let opt = optimised_same(&prog, &[vec![Value::Prim(PrimValue::I32(1))]]);
    let f = &opt.functions[0];
    assert_eq!(f.body.stms.len(), 1, "{}", nabla_ir::print_program(&opt));
    assert_eq!(f.body.stms[0].exp, Exp::BinOp(BinOp::Add, v(0), i32c(20)));
    assert_eq!(f.body.result[1], Atom::Const(PrimValue::Bool(true)));
}

#[test]
fn division_by_zero_is_not_folded_nor_removed() {
    // let q = 7 / 0 (unused) — must still fail at run time with its span.
    let main = fun(
        "main",
        vec![p(0, I32)],
        vec![I32],
        vec![stm_at(
            vec![p(1, I32)],
            Exp::BinOp(BinOp::Div, i32c(7), i32c(0)),
            42,
        )],
        vec![v(0)],
    );
    let prog = program(vec![main]);
    let opt = optimised_same(&prog, &[vec![Value::Prim(PrimValue::I32(1))]]);
    assert_eq!(opt.functions[0].body.stms.len(), 1);
    let r = run(&opt, &[Value::Prim(PrimValue::I32(1))]);
    assert!(r.starts_with(&format!("error Some({:?})", sp(42))), "{r}");
}

#[test]
fn dead_code_removes_only_pure_total_statements() {
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext)), p(1, I64)],
        vec![F64],
        vec![
            // dead and pure: removed
            stm(vec![p(2, I64)], Exp::BinOp(BinOp::Mul, v(1), i64c(2))),
            stm(vec![p(3, F64)], Exp::UnOp(nabla_ir::UnOp::Sqrt, f64c(2.0))),
            // dead but may fail: kept
            stm_at(
                vec![p(4, F64)],
                Exp::Index(Var(0), vec![DimIndex::Fix(v(1))]),
                5,
            ),
            stm_at(vec![p(5, I64)], Exp::BinOp(BinOp::Div, i64c(1), v(1)), 6),
            // float division cannot fail: removed
            stm(
                vec![p(6, F64)],
                Exp::BinOp(BinOp::Div, f64c(1.0), f64c(0.0)),
            ),
            stm(vec![p(7, F64)], Exp::BinOp(BinOp::Div, v(3), v(3))),
        ],
        vec![f64c(1.0)],
    );
    let prog = program(vec![main]);
    let xs = vec_f64(&[1.0, 2.0]);
    let opt = optimised_same(
        &prog,
        &[
            vec![xs.clone(), Value::Prim(PrimValue::I64(1))],
            vec![xs.clone(), Value::Prim(PrimValue::I64(5))],
            vec![xs, Value::Prim(PrimValue::I64(0))],
        ],
    );
    let spans: Vec<Span> = opt.functions[0].body.stms.iter().map(|s| s.span).collect();
    assert_eq!(
        spans,
        vec![sp(5), sp(6)],
        "{}",
        nabla_ir::print_program(&opt)
    );
}

#[test]
fn constant_if_is_spliced_and_true_assert_dropped() {
    let main = fun(
        "main",
        vec![p(0, F64)],
        vec![F64],
        vec![
            stm(
                vec![],
                Exp::Assert(Atom::Const(PrimValue::Bool(true)), "never".into(), vec![]),
            ),
            stm(
                vec![p(1, F64)],
                Exp::If {
                    cond: Atom::Const(PrimValue::Bool(false)),
                    then_: Body {
                        stms: vec![],
                        result: vec![f64c(0.0)],
                    },
                    else_: Body {
                        stms: vec![stm(vec![p(2, F64)], Exp::BinOp(BinOp::Mul, v(0), v(0)))],
                        result: vec![v(2)],
                    },
                },
            ),
            stm(
                vec![],
                Exp::Assert(Atom::Const(PrimValue::Bool(false)), "always".into(), vec![]),
            ),
        ],
        vec![v(1)],
    );
    let prog = program(vec![main]);
    let opt = optimised_same(&prog, &[vec![Value::Prim(PrimValue::F64(3.0))]]);
    let f = &opt.functions[0];
    assert_eq!(count(f, |e| matches!(e, Exp::If { .. })), 0);
    // The failing assert stays.
    assert_eq!(count(f, |e| matches!(e, Exp::Assert(..))), 1);
    assert_eq!(f.body.result, vec![v(2)]);
}

#[test]
fn consumed_arrays_are_not_merged() {
    // let c = copy xs; let y = c; let z = y with [0] = 9; in (z, xs) — xs
    // must survive. (Updating an alias of xs itself and then returning xs
    // is invalid IR: the validator's consumption rule.)
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext))],
        vec![arr(Dim::Ext), arr(Dim::Ext)],
        vec![
            stm(vec![p(3, arr(Dim::Ext))], Exp::Copy(Var(0))),
            stm(vec![p(1, arr(Dim::Ext))], Exp::Atoms(vec![v(3)])),
            stm(
                vec![p(2, arr(Dim::Ext))],
                Exp::Update(Var(1), vec![DimIndex::Fix(i64c(0))], f64c(9.0)),
            ),
        ],
        vec![v(2), v(0)],
    );
    let prog = program(vec![main]);
    let opt = optimised_same(&prog, &[vec![vec_f64(&[1.0, 2.0])]]);
    assert_eq!(
        run(&opt, &[vec_f64(&[1.0, 2.0])]),
        run(&prog, &[vec_f64(&[1.0, 2.0])])
    );
    assert!(run(&opt, &[vec_f64(&[1.0, 2.0])]).contains("9.0"));
}

#[test]
fn callee_consuming_its_parameter_gets_a_copy_binding() {
    // upd (a: *[n]f64) = a with [0] = 0;  main xs = let c = copy xs in (upd c, xs)
    let n = Dim::Var(Var(0));
    let upd = fun(
        "upd",
        vec![Param {
            unique: true,
            ..p(1, arr(n))
        }],
        vec![arr(n)],
        vec![stm(
            vec![p(2, arr(n))],
            Exp::Update(Var(1), vec![DimIndex::Fix(i64c(0))], f64c(0.0)),
        )],
        vec![v(2)],
    );
    let main = fun(
        "main",
        vec![p(0, arr(Dim::Ext))],
        vec![arr(Dim::Ext), arr(Dim::Ext)],
        vec![
            stm(vec![p(2, arr(Dim::Ext))], Exp::Copy(Var(0))),
            stm(vec![p(1, arr(Dim::Ext))], Exp::Apply(FunId(1), vec![v(2)])),
        ],
        vec![v(1), v(0)],
    );
    let prog = program(vec![main, upd]);
    let opt = optimised_same_with(&prog, &[vec![vec_f64(&[5.0, 6.0])]], false);
    assert_eq!(count(&opt.functions[0], |e| matches!(e, Exp::Apply(..))), 0);
    assert!(run(&opt, &[vec_f64(&[5.0, 6.0])]).contains("[0.0, 6.0]"));
    assert!(run(&opt, &[vec_f64(&[5.0, 6.0])]).contains("[5.0, 6.0]"));
    // The empty input fails inside upd (index 0 out of bounds), both ways.
    let before = run(&prog, &[vec_f64(&[])]);
    assert!(before.starts_with("error"));
    assert_eq!(run(&opt, &[vec_f64(&[])]), before);
}

#[test]
fn dead_functions_are_removed_and_calls_renumbered() {
    // main calls c (index 2, big enough not to be inlined twice… but called
    // once, so inlined); b (index 1) is never called.
    let b = fun("b", vec![p(0, F64)], vec![F64], vec![], vec![v(0)]);
    let c = fun(
        "c",
        vec![p(0, F64)],
        vec![F64],
        vec![stm(
            vec![p(1, F64)],
            Exp::BinOp(BinOp::Sub, v(0), f64c(1.0)),
        )],
        vec![v(1)],
    );
    let main = fun(
        "main",
        vec![p(0, F64)],
        vec![F64],
        vec![stm(vec![p(1, F64)], Exp::Apply(FunId(2), vec![v(0)]))],
        vec![v(1)],
    );
    let mut prog = program(vec![main, b, c]);
    assert!(nabla_opt::remove_dead_functions(&mut prog));
    assert_eq!(prog.functions.len(), 2);
    assert_eq!(prog.functions[1].name, "c");
    assert_eq!(
        prog.functions[0].body.stms[0].exp,
        Exp::Apply(FunId(1), vec![v(0)])
    );
    validate_program(&prog).expect("valid");
    let opt = optimised_same(&prog, &[vec![Value::Prim(PrimValue::F64(4.0))]]);
    assert_eq!(opt.functions.len(), 1);
}

#[test]
fn recursive_functions_are_not_inlined() {
    // r x = if x > 0 then r (x - 1) else x
    let r = fun(
        "r",
        vec![p(0, I64)],
        vec![I64],
        vec![
            stm(
                vec![p(1, Type::Prim(PrimType::Bool))],
                Exp::CmpOp(CmpOp::Gt, v(0), i64c(0)),
            ),
            stm(
                vec![p(2, I64)],
                Exp::If {
                    cond: v(1),
                    then_: Body {
                        stms: vec![
                            stm(vec![p(3, I64)], Exp::BinOp(BinOp::Sub, v(0), i64c(1))),
                            stm(vec![p(4, I64)], Exp::Apply(FunId(1), vec![v(3)])),
                        ],
                        result: vec![v(4)],
                    },
                    else_: Body {
                        stms: vec![],
                        result: vec![v(0)],
                    },
                },
            ),
        ],
        vec![v(2)],
    );
    let main = fun(
        "main",
        vec![p(0, I64)],
        vec![I64],
        vec![stm(vec![p(1, I64)], Exp::Apply(FunId(1), vec![v(0)]))],
        vec![v(1)],
    );
    let prog = program(vec![main, r]);
    let opt = optimised_same(&prog, &[vec![Value::Prim(PrimValue::I64(5))]]);
    assert_eq!(opt.functions.len(), 2);
}

#[test]
fn fold_uses_prim_semantics() {
    use nabla_opt::fold;
    assert_eq!(
        fold(&Exp::BinOp(BinOp::Add, i32c(i32::MAX), i32c(1))),
        Some(i32c(i32::MIN))
    );
    assert_eq!(fold(&Exp::BinOp(BinOp::IntDiv, i32c(1), i32c(0))), None);
    assert_eq!(
        fold(&Exp::BinOp(BinOp::Div, i32c(-7), i32c(2))),
        Some(i32c(-4))
    );
    assert_eq!(fold(&Exp::BinOp(BinOp::Add, v(0), i32c(2))), None);
}
