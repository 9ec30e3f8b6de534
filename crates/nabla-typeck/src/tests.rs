//! Tests: Futhark snippets parsed with `nabla_syntax::parser` and checked
//! together with the prelude.

use crate::{check_program, PRELUDE_SOURCE};
use nabla_prim::PrimType;
use nabla_syntax::ast::*;
use nabla_syntax::diag::render_all;
use nabla_syntax::parser::parse_file;
use nabla_syntax::{Diagnostic, SourceMap};
use std::path::PathBuf;

struct Checked {
    _sources: SourceMap,
    files: Vec<Program>,
}

fn run(src: &str) -> (SourceMap, Vec<Program>, Result<(), Vec<Diagnostic>>) {
    let mut sources = SourceMap::new();
    let p = sources.add(PathBuf::from("prelude.fut"), PRELUDE_SOURCE.to_string());
    let m = sources.add(PathBuf::from("main.fut"), src.to_string());
    let mut id = 0;
    let pre = parse_file(&sources, p, &mut id)
        .unwrap_or_else(|e| panic!("prelude: {}", render_all(&e, &sources)));
    let main = parse_file(&sources, m, &mut id)
        .unwrap_or_else(|e| panic!("parse: {}", render_all(&e, &sources)));
    let mut files = vec![pre, main];
    let r = check_program(&sources, &mut files);
    (sources, files, r)
}

fn ok(src: &str) -> Checked {
    let (sources, files, r) = run(src);
    if let Err(e) = r {
        panic!("unexpected type error:\n{}", render_all(&e, &sources));
    }
    Checked {
        _sources: sources,
        files,
    }
}

/// Checks that `src` fails; returns the diagnostics (with the text each span covers).
fn fails(src: &str) -> Vec<(String, String)> {
    let (sources, _, r) = run(src);
    match r {
        Ok(()) => panic!("expected a type error in:\n{src}"),
        Err(ds) => ds
            .iter()
            .map(|d| {
                let text = &sources.file(d.span.file).text;
                let covered = text
                    .get(d.span.start as usize..d.span.end as usize)
                    .unwrap_or("")
                    .to_string();
                (format!("{}{}", d.message, d.notes.join(" ")), covered)
            })
            .collect(),
    }
}

impl Checked {
    fn main(&self) -> &Program {
        self.files.last().unwrap()
    }
    fn def(&self, name: &str) -> &ValBind {
        self.main()
            .decs
            .iter()
            .rev()
            .find_map(|d| match d {
                Dec::Val(v) if v.name.name == name => Some(v),
                Dec::Local(d, _) => match &**d {
                    Dec::Val(v) if v.name.name == name => Some(v),
                    _ => None,
                },
                _ => None,
            })
            .unwrap_or_else(|| panic!("no def {name}"))
    }
    fn ty(&self, name: &str) -> String {
        self.def(name).ty.as_ref().expect("ValBind.ty").to_string()
    }
    fn prelude_id(&self, name: &str) -> NodeId {
        self.files[0]
            .decs
            .iter()
            .find_map(|d| match d {
                Dec::Val(v) if v.name.name == name => Some(v.id),
                _ => None,
            })
            .unwrap()
    }
    /// All expressions of a definition's body, in pre-order.
    fn exprs(&self, name: &str) -> Vec<&Expr> {
        let mut out = Vec::new();
        collect(&self.def(name).body, &mut out);
        out
    }
}

fn collect<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    out.push(e);
    let mut sub = |x: &'a Expr| collect(x, out);
    match &e.kind {
        ExprKind::Lit(_)
        | ExprKind::Var { .. }
        | ExprKind::OpSection { .. }
        | ExprKind::ProjSection(_) => {}
        ExprKind::Parens(x)
        | ExprKind::Negate(x)
        | ExprKind::Not(x)
        | ExprKind::Attr(_, x)
        | ExprKind::LocalOpen(_, x)
        | ExprKind::Ascribe(x, _)
        | ExprKind::Coerce(x, _)
        | ExprKind::Project(x, _)
        | ExprKind::OpSectionLeft { lhs: x, .. }
        | ExprKind::OpSectionRight { rhs: x, .. } => sub(x),
        ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
            xs.iter().for_each(sub)
        }
        ExprKind::Record(fs) => fs.iter().for_each(|f| {
            if let RecordField::Named(_, x) = f {
                collect(x, out)
            }
        }),
        ExprKind::Range {
            start, second, end, ..
        } => {
            sub(start);
            if let Some(s) = second {
                collect(s, out);
            }
            collect(end, out);
        }
        ExprKind::Index(x, idx)
        | ExprKind::Update {
            src: x,
            indices: idx,
            ..
        } => {
            sub(x);
            for d in idx {
                match d {
                    DimIndex::Fix(e) => collect(e, out),
                    DimIndex::Slice { start, end, stride } => [start, end, stride]
                        .into_iter()
                        .flatten()
                        .for_each(|e| collect(e, out)),
                }
            }
            if let ExprKind::Update { value, .. } = &e.kind {
                collect(value, out);
            }
        }
        ExprKind::Apply(f, args) => {
            sub(f);
            args.iter().for_each(|a| collect(a, out));
        }
        ExprKind::BinOp { lhs, rhs, .. } => {
            sub(lhs);
            collect(rhs, out);
        }
        ExprKind::Lambda { body, .. } => sub(body),
        ExprKind::LetPat { value, body, .. }
        | ExprKind::LetFun { value, body, .. }
        | ExprKind::LetWith { value, body, .. } => {
            sub(value);
            collect(body, out);
        }
        ExprKind::If { cond, then_, else_ } => {
            sub(cond);
            collect(then_, out);
            collect(else_, out);
        }
        ExprKind::Match { scrutinee, cases } => {
            sub(scrutinee);
            cases.iter().for_each(|c| collect(&c.body, out));
        }
        ExprKind::Loop {
            init, form, body, ..
        } => {
            if let Some(i) = init {
                collect(i, out);
            }
            match form {
                LoopForm::For(_, b) | LoopForm::While(b) | LoopForm::ForIn(_, b) => collect(b, out),
            }
            collect(body, out);
        }
        ExprKind::RecordUpdate { src, value, .. } => {
            sub(src);
            collect(value, out);
        }
    }
}

fn no_vars(t: &Type) -> bool {
    match t {
        Type::Var(_) => false,
        Type::Array { elem, .. } => no_vars(elem),
        Type::Record(fs) => fs.iter().all(|(_, t)| no_vars(t)),
        Type::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).all(no_vars),
        Type::Arrow { param, ret, .. } => no_vars(param) && no_vars(ret),
        _ => true,
    }
}

/// Every expression has a fully resolved type.
fn all_typed(c: &Checked) {
    for f in &c.files {
        for d in &f.decs {
            if let Dec::Val(v) = d {
                let mut es = Vec::new();
                collect(&v.body, &mut es);
                for e in es {
                    let t = e.ty.as_ref().unwrap_or_else(|| {
                        panic!("untyped expression in {}: {:?}", v.name.name, e.kind)
                    });
                    assert!(no_vars(t), "type variable left in {}: {t}", v.name.name);
                    if let ExprKind::Var { res, .. } = &e.kind {
                        assert!(res.is_some(), "unresolved name in {}", v.name.name);
                    }
                }
            }
        }
    }
}

fn var_named<'a>(es: &[&'a Expr], n: &str) -> Vec<&'a Expr> {
    es.iter()
        .filter(|e| matches!(&e.kind, ExprKind::Var { name, .. } if name.name == n))
        .copied()
        .collect()
}

// ------------------------------------------------------------------ positive

#[test]
fn prelude_checks() {
    let c = ok("def main = 0");
    all_typed(&c);
    let ty = |n: &str| {
        c.files[0]
            .decs
            .iter()
            .find_map(|d| match d {
                Dec::Val(v) if v.name.name == n => v.ty.clone(),
                _ => None,
            })
            .unwrap()
            .to_string()
    };
    assert_eq!(ty("|>"), "(a) -> ((a) -> b) -> b");
    assert_eq!(ty("tabulate"), "(n: i64) -> ((i64) -> a) -> *[n]a");
    assert_eq!(ty("filter"), "((a) -> bool) -> ([n]a) -> *[]a");
    assert_eq!(ty("head"), "([n]t) -> t");
}

#[test]
fn literal_defaulting() {
    let c = ok("def a = 1\ndef b = 1.5\ndef c = 2 + 3.0\ndef d : f32 = 1 + 2\ndef e = 1u8 + 2");
    assert_eq!(c.ty("a"), "i32");
    assert_eq!(c.ty("b"), "f64");
    assert_eq!(c.ty("c"), "f64");
    assert_eq!(c.ty("d"), "f32");
    assert_eq!(c.ty("e"), "u8");
    let es = c.exprs("d");
    for e in es {
        assert_eq!(e.ty.as_ref().unwrap(), &Type::Prim(PrimType::F32));
    }
    all_typed(&c);
}

#[test]
fn functions_and_generalisation() {
    let c = ok("def twice f x = f (f x)\ndef main (x: i32) = twice (\\y -> y * 2) x\ndef idf 'a (x: a) : a = x");
    assert_eq!(c.ty("twice"), "(('t0) -> 't0) -> ('t0) -> 't0");
    assert_eq!(c.ty("main"), "(i32) -> i32");
    assert_eq!(c.ty("idf"), "(a) -> a");
    let es = c.exprs("main");
    let tw = var_named(&es, "twice");
    match &tw[0].kind {
        ExprKind::Var {
            res: Some(Res::Global(_)),
            inst,
            ..
        } => {
            assert_eq!(inst, &vec![("'t0".to_string(), Type::Prim(PrimType::I32))]);
        }
        k => panic!("{k:?}"),
    }
    all_typed(&c);
}

#[test]
fn res_of_names() {
    let c = ok("def k = 3i64\ndef f [n] (xs: [n]f64) (y: f64) : i64 = let z = y in n + k + i64.f64 z + length xs");
    let es = c.exprs("f");
    let res = |n: &str| match &var_named(&es, n)[0].kind {
        ExprKind::Var { res, .. } => res.clone().unwrap(),
        _ => unreachable!(),
    };
    assert_eq!(res("n"), Res::Size);
    assert!(matches!(res("k"), Res::Global(_)));
    assert_eq!(res("z"), Res::Local);
    assert_eq!(res("length"), Res::Intrinsic("length".into()));
    assert_eq!(res("f64"), Res::Intrinsic("i64.f64".into()));
    assert_eq!(c.ty("f"), "([n]f64) -> (f64) -> i64");
}

#[test]
fn soacs() {
    let c = ok(
        "def main (xs: []f32) (ys: []f32) : f32 =\n  reduce (+) 0 (map2 (*) xs ys)\n\
                def sc (xs: [5]i32) = scan (+) 0 xs\n\
                def h (is: []i64) = hist (+) 0 10 is (map (const 1) is)\n\
                def z [n] (xs: [n]i32) = unzip (zip xs (iota n))\n\
                def io = iota 5",
    );
    assert_eq!(c.ty("main"), "([n₀]f32) -> ([n₀]f32) -> f32");
    assert_eq!(c.ty("sc"), "([5]i32) -> *[5]i32");
    assert_eq!(c.ty("h"), "([n₀]i64) -> *[10]i32");
    assert_eq!(c.ty("z"), "([n]i32) -> ([n]i32, [n]i64)");
    assert_eq!(c.ty("io"), "*[5]i64");
    let es = c.exprs("h");
    match &var_named(&es, "const")[0].kind {
        ExprKind::Var {
            res: Some(Res::Global(_)),
            inst,
            ..
        } => {
            assert_eq!(inst.len(), 2);
            assert_eq!(inst[0], ("a".to_string(), Type::Prim(PrimType::I32)));
            assert_eq!(inst[1], ("b".to_string(), Type::Prim(PrimType::I64)));
        }
        k => panic!("{k:?}"),
    }
    all_typed(&c);
}

#[test]
fn records_and_tuples() {
    let c = ok(
        "def p = (1, 2.0, true)\ndef q = p.1\ndef r = {x = 1f32, y = 2f32}\n\
                def s = r with x = 3\n\
                def t = let {x, y} = r in x + y\ndef u = (.y) r\n\
                def w (a: (i32, i32)) = let (b, c) = a in b - c\n\
                def v = let pt = {x = 1i64} in pt.x",
    );
    assert_eq!(c.ty("p"), "(i32, f64, bool)");
    assert_eq!(c.ty("q"), "f64");
    assert_eq!(c.ty("r"), "{x: f32, y: f32}");
    assert_eq!(c.ty("s"), "{x: f32, y: f32}");
    assert_eq!(c.ty("t"), "f32");
    assert_eq!(c.ty("u"), "f32");
    assert_eq!(c.ty("v"), "i64");
    // `pt.x` is rewritten into a projection.
    let es = c.exprs("v");
    assert!(es.iter().any(
        |e| matches!(&e.kind, ExprKind::Project(b, f) if f.name == "x"
        && matches!(&b.kind, ExprKind::Var { res: Some(Res::Local), .. }))
    ));
    all_typed(&c);
}

#[test]
fn field_constraint_resolved_later() {
    let c = ok(
        "def f (ps: [](i32, f32)) = map (\\p -> p.1) ps\ndef g = (\\r -> r.a) {a = 1u16, b = 2}",
    );
    assert_eq!(c.ty("f"), "([n₀](i32, f32)) -> *[n₀]f32");
    assert_eq!(c.ty("g"), "u16");
    all_typed(&c);
}

#[test]
fn loops() {
    let c = ok(
        "def fact (n: i32) = loop acc = 1 for i < n do acc * (i + 1)\n\
                def sum (xs: []f64) = loop s = 0 for x in xs do s + x\n\
                def w = loop (i, j) = (0, 1) while i < 10 do (i + 1, j * 2)\n\
                def rows (m: [][]i32) = loop s = 0 for r in m do s + reduce (+) 0 r\n\
                def upd (n: i64) = loop xs = replicate n 0 for i < n do xs with [i] = i32.i64 i",
    );
    assert_eq!(c.ty("fact"), "(i32) -> i32");
    assert_eq!(c.ty("sum"), "([n₀]f64) -> f64");
    assert_eq!(c.ty("w"), "(i32, i32)");
    assert_eq!(c.ty("rows"), "([n₀][n₁]i32) -> i32");
    assert_eq!(c.ty("upd"), "(n: i64) -> *[n]i32");
    all_typed(&c);
}

#[test]
fn sum_types_and_match() {
    let c = ok("type shape = #circle f64 | #rect f64 f64\n\
                def area (s: shape) = match s case #circle r -> 3.14 * r * r case #rect w h -> w * h\n\
                def mk = #circle 2.0 : shape\n\
                def n (x: i32) = match x case 0 -> 1 case _ -> 2\n\
                def o = match (1, true) case (_, true) -> 1 case (a, false) -> a\n\
                def annotated b : #no | #yes = if b then #yes else #no");
    assert_eq!(c.ty("area"), "(#circle f64 | #rect f64 f64) -> f64");
    assert_eq!(c.ty("mk"), "#circle f64 | #rect f64 f64");
    assert_eq!(c.ty("n"), "(i32) -> i32");
    assert_eq!(c.ty("o"), "i32");
    assert_eq!(c.ty("annotated"), "(bool) -> #no | #yes");
    all_typed(&c);
    // Without the annotation the sum type is ambiguous, as in Futhark.
    let (m, at) = first_error("def inferred b = if b then #yes else #no");
    assert!(m.contains("ambiguous"), "{m}");
    assert!(at.contains("#yes") || at.contains("#no"), "{at}");
}

#[test]
fn type_abbreviations() {
    let c = ok("type pair 'a = (a, a)\ntype vec [n] = [n]f64\n\
                def sw (p: pair i32) : pair i32 = (p.1, p.0)\n\
                def dot [n] (a: vec [n]) (b: vec [n]) : f64 = f64.sum (map2 (*) a b)");
    assert_eq!(c.ty("sw"), "((i32, i32)) -> (i32, i32)");
    assert_eq!(c.ty("dot"), "([n]f64) -> ([n]f64) -> f64");
    all_typed(&c);
}

#[test]
fn modules_and_open() {
    let c = ok("def a = f64.sqrt 2\ndef b = f32.(sqrt 2 + pi)\nopen i64\ndef c = max 1 2\ndef d = (i32.+) 1 2");
    assert_eq!(c.ty("a"), "f64");
    assert_eq!(c.ty("b"), "f32");
    assert_eq!(c.ty("c"), "i64");
    assert_eq!(c.ty("d"), "i32");
    let es = c.exprs("b");
    match &var_named(&es, "sqrt")[0].kind {
        ExprKind::Var { res, .. } => assert_eq!(res, &Some(Res::Intrinsic("f32.sqrt".into()))),
        _ => unreachable!(),
    }
    assert!(es.iter().any(
        |e| matches!(&e.kind, ExprKind::BinOp { op_res: Some(Res::Intrinsic(o)), .. } if o == "+")
    ));
    all_typed(&c);
}

#[test]
fn pipes_and_sections() {
    let c = ok("def a (xs: []i32) = xs |> map (+1) |> reduce (+) 0\n\
                def b = map (2-) [1, 2]\ndef c = (*) 3i8 4\n\
                def d = (id >-> (\\x -> x + 1u32)) 5");
    assert_eq!(c.ty("a"), "([n₀]i32) -> i32");
    assert_eq!(c.ty("b"), "*[2]i32");
    assert_eq!(c.ty("c"), "i8");
    assert_eq!(c.ty("d"), "u32");
    let c2 = &c;
    let es = c2.exprs("a");
    let pipe = c2.prelude_id("|>");
    assert!(es.iter().any(
        |e| matches!(&e.kind, ExprKind::BinOp { op_res: Some(Res::Global(id)), op_inst, .. }
        if *id == pipe && op_inst.len() == 2)
    ));
    all_typed(&c);
}

#[test]
fn arrays_indexing_ranges() {
    let c = ok(
        "def a (m: [3][4]f32) = m[1]\ndef b (m: [][]f32) = m[1, 2]\ndef c (xs: []u8) = xs[1:3]\n\
                def d = 1..<10\ndef e (n: i64) = 0..<n\ndef f (xs: *[]i32) = let xs[0] = 5 in xs\n\
                def g = [[1, 2], [3, 4]]\ndef h = [] : []f32\ndef i (xs: []i32) = xs ++ [1]\n\
                def j (m: [][]f64) = transpose m\ndef k = assert true 1",
    );
    assert_eq!(c.ty("a"), "([3][4]f32) -> [4]f32");
    assert_eq!(c.ty("b"), "([n₀][n₁]f32) -> f32");
    assert_eq!(c.ty("c"), "([n₀]u8) -> [3 - 1]u8");
    assert_eq!(c.ty("d"), "[]i32");
    assert_eq!(c.ty("e"), "(n: i64) -> [n]i64");
    assert_eq!(c.ty("f"), "(*[n₀]i32) -> *[n₀]i32");
    assert_eq!(c.ty("g"), "[2][2]i32");
    assert_eq!(c.ty("h"), "[0]f32");
    assert_eq!(c.ty("i"), "([n₀]i32) -> *[n₀ + 1]i32");
    assert_eq!(c.ty("j"), "([n₀][n₁]f64) -> *[n₁][n₀]f64");
    assert_eq!(c.ty("k"), "i32");
    all_typed(&c);
}

#[test]
fn local_functions_and_sizes() {
    let c = ok("def a (x: f64) = let sq y = y * y in sq x\n\
                def b = let pick 'a (p: bool) (u: a) (v: a) : a = if p then u else v in (pick true 1 2, pick false 1.0 2.0)\n\
                def c [n] (xs: [n]i32) : [n]i32 = map (+1) xs\n\
                def d (n: i64) : [n]f32 = replicate n 0\n\
                def e (xs: []f64) = let [m] (ys: [m]f64) = filter (> 0) xs in m\n\
                def f (xs: []i32) = (xs :> [3]i32)");
    assert_eq!(c.ty("a"), "(f64) -> f64");
    assert_eq!(c.ty("b"), "(i32, f64)");
    assert_eq!(c.ty("c"), "([n]i32) -> [n]i32");
    assert_eq!(c.ty("d"), "(n: i64) -> [n]f32");
    assert_eq!(c.ty("e"), "([n₀]f64) -> i64");
    assert_eq!(c.ty("f"), "([n₀]i32) -> [3]i32");
    let es = c.exprs("b");
    let picks = var_named(&es, "pick");
    match (&picks[0].kind, &picks[1].kind) {
        (
            ExprKind::Var {
                res: Some(Res::Local),
                inst: i1,
                ..
            },
            ExprKind::Var { inst: i2, .. },
        ) => {
            assert_eq!(i1, &vec![("a".to_string(), Type::Prim(PrimType::I32))]);
            assert_eq!(i2, &vec![("a".to_string(), Type::Prim(PrimType::F64))]);
        }
        k => panic!("{k:?}"),
    }
    all_typed(&c);
}

#[test]
fn ad_and_misc() {
    let c = ok(
        "def f (x: f64) = x * x\ndef g = jvp f 3.0 1.0\ndef h = vjp2 f 3.0 1.0\n\
                def k (x: i32) = !x\ndef l = -(1.5f32)\ndef m = 3 % 2 == 1 && !false\n\
                def n (x: u32) = x >> 2 & 1",
    );
    assert_eq!(c.ty("g"), "f64");
    assert_eq!(c.ty("h"), "(f64, f64)");
    assert_eq!(c.ty("k"), "(i32) -> i32");
    assert_eq!(c.ty("l"), "f32");
    assert_eq!(c.ty("m"), "bool");
    assert_eq!(c.ty("n"), "(u32) -> u32");
    all_typed(&c);
}

#[test]
fn shadowing_and_local() {
    let c = ok(
        "def x = 1\ndef y = x + 1\ndef x = 2.0\ndef z = x\nlocal def hidden = true\ndef w = hidden",
    );
    assert_eq!(c.ty("y"), "i32");
    assert_eq!(c.ty("z"), "f64");
    assert_eq!(c.ty("w"), "bool");
}

// ------------------------------------------------------------------ negative

fn first(src: &str) -> (String, String) {
    fails(src).into_iter().next().unwrap()
}

#[test]
fn err_unknown_name() {
    let (m, s) = first("def main = foo + 1");
    assert!(m.contains("Unknown name \"foo\""), "{m}");
    assert_eq!(s, "foo");
}

#[test]
fn err_unknown_name_suggests_a_close_one() {
    let (m, _) = first("def square (x: i32) = x * x\ndef main = sqaure 3");
    assert!(m.starts_with("Unknown name \"sqaure\""), "{m}");
    assert!(m.ends_with("(did you mean `square`?)"), "{m}");
    // A local, and a prelude function.
    let (m, _) = first("def main (count: i32) = cuont + 1");
    assert!(m.ends_with("(did you mean `count`?)"), "{m}");
    let (m, _) = first("def main (xs: []i32) = reduse (+) 0 xs");
    assert!(m.ends_with("(did you mean `reduce`?)"), "{m}");
    // A member of a built-in module.
    let (m, _) = first("def main (x: f64) = f64.sqtr x");
    assert!(m.starts_with("module `f64` has no member `sqtr`"), "{m}");
    assert!(m.ends_with("(did you mean `f64.sqrt`?)"), "{m}");
    // Nothing close: no suggestion.
    let (m, _) = first("def main = zzzzzz");
    assert_eq!(m, "Unknown name \"zzzzzz\"");
}

#[test]
fn err_mismatch_does_not_show_uniqueness() {
    let (m, _) = first("def f (x: *[3]f64) = f64.sqrt x");
    assert!(m.contains("found `[3]f64`"), "{m}");
    assert!(!m.contains('*'), "{m}");
}

#[test]
fn err_mismatch() {
    let (m, s) = first("def main (x: i32) : f64 = x");
    assert!(m.contains("expected `f64`, found `i32`"), "{m}");
    assert_eq!(s, "x");
    let (m, s) = first("def main = 1 + true");
    assert!(
        m.contains("Cannot apply \"+\" to argument #2") && m.contains("bool"),
        "{m}"
    );
    assert_eq!(s, "true");
    let (m, _) = first("def main = if 1 then 2 else 3");
    assert!(m.contains("condition"), "{m}");
    let (m, s) = first("def main = if true then 1 else 2.0f32 == 1");
    assert!(m.contains("branches"), "{m}");
    assert_eq!(s, "2.0f32 == 1");
}

#[test]
fn err_arguments() {
    let (m, s) = first("def f (x: i32) = x\ndef main = f 1 2");
    assert!(m.contains("too many arguments"), "{m}");
    assert_eq!(s, "2");
    // A lambda argument is checked after the others: the array fixes the
    // element type, and the lambda is the argument that does not fit.
    let (m, _) = first("def main = map (\\(x: i32) -> x) [true]");
    assert!(m.contains("Cannot apply \"map\" to argument #1"), "{m}");
}

#[test]
fn err_fields() {
    let (m, s) = first("def main = {a = 1}.b");
    assert!(m.contains("no field `b`"), "{m}");
    assert_eq!(s, "b");
    let (m, _) = first("def main = (1, 2).2");
    assert!(m.contains("no field `2`"), "{m}");
    let (m, _) = first("def f r = r.a");
    assert!(m.contains("is ambiguous; add a type annotation"), "{m}");
}

#[test]
fn err_several_defs_reported() {
    let ds = fails("def a = x\ndef b = 1\ndef c = true + 1\ndef d = a");
    // Two errors, and the warning for `b`'s defaulted type after them.
    assert_eq!(ds.len(), 3, "{ds:?}");
    assert_eq!(ds[2].0, "Defaulting ambiguous type to i32.", "{ds:?}");
}

#[test]
fn err_misc() {
    let (m, _) = first("def main (x: f64) = x & 1");
    assert!(m.contains("integral"), "{m}");
    let (m, _) = first("def main = [1, true]");
    assert!(m.contains("array elements"), "{m}");
    let (m, _) = first("def f 'a (x: a) = x + x");
    assert!(m.contains("numeric"), "{m}");
    let (m, _) = first("def main = (\\f -> f f) 1");
    assert!(m.contains("Occurs check"), "{m}");
    let (m, _) = first("def main (xs: [3]i32) = xs[1, 2]");
    assert!(m.contains("cannot index"), "{m}");
    // Any integer type indexes (Futhark converts it); other types do not.
    let (m, _) = first("def main (xs: []i32) = xs[1.5f32]");
    assert!(m.contains("index must be an integer"), "{m}");
    let (m, _) = first("def main = 300u8");
    assert!(
        m.contains("Literal 300 out of bounds for inferred type u8"),
        "{m}"
    );
    let (m, _) = first("def main = (\\x -> x) == (\\x -> x)");
    assert!(m.contains("function"), "{m}");
    let (m, _) = first("def main = match 1 case #a -> 1 case _ -> 2");
    assert!(m.contains("sum type") || m.contains("not"), "{m}");
    let (m, _) = first("def main (x: nosuch) = x");
    assert!(m.contains("Unknown type \"nosuch\""), "{m}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // The parser recurses too; give it room.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(deep_nesting)
        .unwrap()
        .join()
        .unwrap();
}

fn deep_nesting() {
    // Parentheses nest in the parser, which has its own limit.
    let src = format!("def main = {}1{}", "(".repeat(3000), ")".repeat(3000));
    let mut sources = SourceMap::new();
    let m = sources.add(PathBuf::from("main.fut"), src);
    let mut id = 0;
    let e = parse_file(&sources, m, &mut id).expect_err("too deep for the parser");
    let msg = render_all(&e, &sources);
    assert!(msg.contains("nesting too deep"), "{msg}");
    // The parser also limits chains of operators (4096), so an expression
    // nested deeper than the checker allows (10000) is built by grafting
    // parsed chains of 4000 additions onto each other's leftmost operand.
    let src = format!("def main = 1{}", " + 1".repeat(4000));
    let mut sources = SourceMap::new();
    let m = sources.add(PathBuf::from("main.fut"), src);
    let mut files = vec![parse_file(&sources, m, &mut id)
        .unwrap_or_else(|e| panic!("the chain parses: {}", render_all(&e, &sources)))];
    let Dec::Val(vb) = &mut files[0].decs[0] else {
        panic!("a value binding")
    };
    let chain = vb.body.clone();
    for _ in 0..2 {
        let mut leaf = &mut vb.body;
        while matches!(leaf.kind, ExprKind::BinOp { .. }) {
            let ExprKind::BinOp { lhs, .. } = &mut leaf.kind else {
                unreachable!()
            };
            leaf = lhs;
        }
        *leaf = chain.clone();
    }
    let e = check_program(&sources, &mut files).expect_err("too deep for the checker");
    let msg = render_all(&e, &sources);
    assert!(msg.contains("nested too deeply"), "{msg}");
}

#[test]
fn more_positive() {
    let c = ok("def a (x: i32) = loop x for i < 3 do x + i\n\
                def b {x, y} : f32 = x + y\n\
                def c = tabulate 5 (\\i -> f64.i64 i)\n\
                def d (f: i32 -> i32) = f >-> f\n\
                entry e (xs: []f64) : f64 = f64.sum xs\n\
                def g = let f = \\(x: i32) -> x in f 1\n\
                def h (xs: [][3]f32) = map (\\r -> r[0]) xs\n\
                def k = unflatten (iota 6 :> [2 * 3]i64) : [2][3]i64\n\
                def l (r: {a: i32, b: (f64, bool)}) = r.b.1\n\
                def m (r: {a: i32, b: (f64, bool)}) = r with b.0 = 1\n\
                def n = #[unroll] (1 + 1)\n\
                def o (xs: []i32) = let xs' = copy xs in xs' with [0] = 1");
    assert_eq!(c.ty("a"), "(i32) -> i32");
    assert_eq!(c.ty("b"), "({x: f32, y: f32}) -> f32");
    assert_eq!(c.ty("c"), "*[5]f64");
    assert_eq!(c.ty("d"), "((i32) -> i32) -> (i32) -> i32");
    assert_eq!(c.ty("e"), "([n₀]f64) -> f64");
    assert_eq!(c.ty("g"), "i32");
    assert_eq!(c.ty("h"), "([n₀][3]f32) -> *[n₀]f32");
    assert_eq!(c.ty("k"), "*[2][3]i64");
    assert_eq!(c.ty("l"), "({a: i32, b: (f64, bool)}) -> bool");
    assert_eq!(
        c.ty("m"),
        "({a: i32, b: (f64, bool)}) -> {a: i32, b: (f64, bool)}"
    );
    assert_eq!(c.ty("n"), "i32");
    assert_eq!(c.ty("o"), "([n₀]i32) -> [n₀]i32");
    // `r.b.1` arrives as a qualified name and becomes two projections.
    let es = c.exprs("l");
    assert!(
        matches!(&es[0].kind, ExprKind::Project(inner, f) if f.name == "1"
        && matches!(&inner.kind, ExprKind::Project(_, g) if g.name == "b"))
    );
    all_typed(&c);
}

#[test]
fn monomorphic_lambda_let() {
    let (m, _) = first("def main = let f = \\x -> x in (f 1i32, f true)");
    assert!(m.contains("Cannot apply \"f\" to argument #1"), "{m}");
}

#[test]
fn several_files() {
    let mut sources = SourceMap::new();
    let p = sources.add(PathBuf::from("prelude.fut"), PRELUDE_SOURCE.to_string());
    let a = sources.add(
        PathBuf::from("lib.fut"),
        "def helper (x: f64) = x * 2\nlocal def secret = 1".into(),
    );
    let m = sources.add(
        PathBuf::from("main.fut"),
        "import \"lib\"\ndef main = helper 1.5".into(),
    );
    let mut id = 0;
    let mut files: Vec<Program> = [p, a, m]
        .iter()
        .map(|f| parse_file(&sources, *f, &mut id).unwrap())
        .collect();
    check_program(&sources, &mut files).unwrap();
    let hid = match &files[1].decs[0] {
        Dec::Val(v) => v.id,
        _ => unreachable!(),
    };
    match &files[2].decs[1] {
        Dec::Val(v) => {
            assert_eq!(v.ty.as_ref().unwrap(), &Type::Prim(PrimType::F64));
            assert!(matches!(&v.body.kind, ExprKind::Apply(f, _)
                if matches!(&f.kind, ExprKind::Var { res: Some(Res::Global(i)), .. } if *i == hid)));
        }
        _ => unreachable!(),
    }
    let m2 = sources.add(PathBuf::from("main2.fut"), "def main = secret".into());
    let mut files2: Vec<Program> = [p, a, m2]
        .iter()
        .map(|f| parse_file(&sources, *f, &mut id).unwrap())
        .collect();
    assert!(check_program(&sources, &mut files2).is_err());
}

/// Checks every `.fut` file under the directory `$NABLA_FUT_DIR` (an
/// external corpus, such as Futhark's own tests): each must parse and
/// type-check. Fails if the variable is not set, the directory has no `.fut`
/// file, or any file is rejected (all rejections are printed). Run it by hand:
/// `NABLA_FUT_DIR=… cargo test -p nabla-typeck fut_dir -- --ignored --nocapture`.
#[test]
#[ignore = "needs an external corpus: set NABLA_FUT_DIR"]
fn fut_dir() {
    let dir = std::env::var("NABLA_FUT_DIR")
        .expect("NABLA_FUT_DIR must name a directory of .fut files for this test");
    let mut paths = Vec::new();
    fn walk(d: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "fut") {
                out.push(p);
            }
        }
    }
    walk(std::path::Path::new(&dir), &mut paths);
    paths.sort();
    assert!(!paths.is_empty(), "no .fut file under {dir}");
    let mut bad = 0;
    for path in paths {
        let mut sources = SourceMap::new();
        let p = sources.add(PathBuf::from("prelude.fut"), PRELUDE_SOURCE.to_string());
        let mut id = 0;
        let pre = parse_file(&sources, p, &mut id).unwrap();
        let files = match nabla_syntax::load_program(&mut sources, &path, &mut id) {
            Ok(f) => f,
            Err(e) => {
                bad += 1;
                println!("PARSE {}: {}", path.display(), render_all(&e, &sources));
                continue;
            }
        };
        let mut all = vec![pre];
        all.extend(files);
        if let Err(e) = check_program(&sources, &mut all) {
            bad += 1;
            println!("TYPE {}:\n{}", path.display(), render_all(&e, &sources));
        }
    }
    assert_eq!(
        bad, 0,
        "{bad} of the files under {dir} were rejected (printed above)"
    );
}

// ------------------------------------------------------------ consumption

/// Asserts that `src` fails with one consumption error whose message contains
/// `msg` and whose span covers exactly `at`; returns the labels' texts.
fn consume_fails(src: &str, msg: &str, at: &str) -> Vec<String> {
    let (sources, _, r) = run(src);
    let ds = match r {
        Ok(()) => panic!("expected a consumption error in:\n{src}"),
        Err(ds) => ds,
    };
    assert_eq!(ds.len(), 1, "{}", render_all(&ds, &sources));
    let d = &ds[0];
    let text = &sources.file(d.span.file).text;
    let cover = |s: nabla_syntax::Span| {
        text.get(s.start as usize..s.end as usize)
            .unwrap_or("")
            .to_string()
    };
    assert!(
        d.message.contains(msg),
        "message {:?} lacks {msg:?}",
        d.message
    );
    assert_eq!(cover(d.span), at, "{}", render_all(&ds, &sources));
    d.labels.iter().map(|(s, _)| cover(*s)).collect()
}

#[test]
fn consume_use_after_update() {
    let labels = consume_fails(
        "def main (a: *[]i32) =\n  let b = a with [0] = 10\n  in a[0] + b[0]",
        "Using variable \"a\", but this was consumed",
        "a",
    );
    assert_eq!(labels, vec!["a with [0] = 10".to_string()]);
}

#[test]
fn consume_unique_type_parameter_result() {
    // `*t` is fresh whatever `t` stands for (the prelude's `manifest`): the
    // rows of a tuple it returns may be updated in place.
    ok("def dup 't (a: t) : *t = copy a\n\
        def f (xs: []i32) : []i32 = let (n, r) = dup (1i32, xs) in r with [0] = n");
    // A parameter of type `t` (without `*`) is not unique: it may not be
    // returned as a `*t` result.
    consume_fails(
        "def bad 't (a: t) : *t = a",
        "Unique-typed return value is aliased to \"a\", which is not consumable",
        "a",
    );
}

#[test]
fn consume_through_alias_and_let_with() {
    // `b` aliases `a`; `let a[0] = …` consumes both.
    let labels = consume_fails(
        "def main (n: i64) =\n  let a = iota n\n  let b = a\n  let a[0] = 5\n  in b[0] + a[0]",
        "Using \"b\", which aliases variable \"a\", but this was consumed",
        "b",
    );
    assert_eq!(labels, vec!["a".to_string()]);
}

#[test]
fn consume_slice_row_and_projection_aliases() {
    consume_fails(
        "def f (xs: *[]i64) : *[]i64 = xs with [0] = 1\n\
         def main (n: i64) = let a = iota n let s = a[1:] let b = f a in s[0] + b[0]",
        "but this was consumed",
        "s",
    );
    consume_fails(
        "def main (n: i64) = let m = replicate n (iota n) let r = m[0] \
         let m[0, 0] = 1 in r[0]",
        "but this was consumed",
        "r",
    );
    consume_fails(
        "def main (n: i64) = let p = (iota n, 1i64) let q = p.0 \
         let p2 = p.0 with [0] = 2 in q[0] + p2[0]",
        "but this was consumed",
        "q",
    );
}

#[test]
fn consume_if_results_alias_both_branches() {
    consume_fails(
        "def main (c: bool) (n: i64) = let a = iota n let b = iota n \
         let x = if c then a else b let b2 = b with [0] = 1 in x[0] + b2[0]",
        "but this was consumed",
        "x",
    );
}

#[test]
fn consume_function_result_aliases_argument() {
    // `first_half`'s result is a slice of its argument.
    consume_fails(
        "def first_half (xs: []i64) : []i64 = xs[0:length xs / 2]\n\
         def main (n: i64) = let a = iota n let h = first_half a \
         let a2 = a with [0] = 7 in h[0] + a2[0]",
        "but this was consumed",
        "h",
    );
    // A unique result is fresh: using it after consuming the argument is fine.
    ok("def fresh (xs: []i64) : *[]i64 = map (+1) xs\n\
        def main (n: i64) = let a = iota n let h = fresh a \
        let a2 = a with [0] = 7 in h[0] + a2[0]");
    // `copy` breaks aliasing.
    ok("def main (n: i64) = let a = iota n let c = copy a \
        let a2 = a with [0] = 7 in c[0] + a2[0]");
}

#[test]
fn consume_nonunique_parameter() {
    let labels = consume_fails(
        "def main (xs: []i32) = xs with [0] = 1",
        "Consuming variable \"xs\", which is not consumable: it is a parameter whose type is not declared unique",
        "xs with [0] = 1",
    );
    assert_eq!(labels, vec!["xs".to_string()]);
    // Through an alias, and by passing it for a unique parameter.
    consume_fails(
        "def main (xs: []i32) = let ys = xs in scatter ys [0] [1]",
        "Consuming variable \"xs\", which is not consumable",
        "ys",
    );
    // Unique parameters may be consumed.
    ok("def main (xs: *[]i32) = let ys = xs in scatter ys [0] [1]");
    ok("def main (xs: *[]i32) (ys: []i32) = let xs[0] = ys[0] in xs");
}

#[test]
fn consume_free_variable_in_lambda_or_local_function() {
    consume_fails(
        "def main (n: i64) = let a = iota n in map (\\i -> (a with [i] = 0)[0]) (iota n)",
        "it is bound outside the lambda",
        "a with [i] = 0",
    );
    consume_fails(
        "def main (n: i64) = let a = iota n let f (i: i64) = a with [i] = 0 in f 0",
        "it is bound outside the local function",
        "a with [i] = 0",
    );
    // A lambda may consume its own unique parameter and its own locals.
    ok("def main (n: i64) = map (\\i -> let w = replicate 3 i let w[0] = 1 in w[1]) (iota n)");
    ok("def main (n: i64) = let f = \\(w: *[]i64) -> w with [0] = 1 in f (iota n)");
}

#[test]
fn consume_free_variable_in_loop_body() {
    consume_fails(
        "def main (n: i64) = let a = iota n in \
         loop s = 0 for i < n do s + (a with [i] = 0)[i]",
        "it is bound outside the loop",
        "a with [i] = 0",
    );
    // Loop parameters may be consumed; so may the body's own locals.
    ok("def main (n: i64) = loop acc = iota n for i < n do acc with [i] = 0");
    ok("def main (n: i64) = loop s = 0 for i < n do let t = iota n let t[0] = s in t[0] + s");
    ok("def main (xs: *[]i32) = loop xs for i < 2 do xs with [i] = 0");
}

#[test]
fn consume_loop_initial_value() {
    // The body consumes `acc`, so the initial value `xs` is consumed.
    consume_fails(
        "def main (n: i64) = let xs = iota n \
         let ys = loop acc = xs for i < n do acc with [i] = 0 in xs[0] + ys[0]",
        "but this was consumed",
        "xs",
    );
    consume_fails(
        "def main (xs: []i64) = loop acc = xs for i < 2 do acc with [i] = 0",
        "Consuming variable \"xs\", which is not consumable",
        "xs",
    );
    // Not consumed by the body: the initial value stays usable.
    ok("def main (n: i64) = let xs = iota n \
        let ys = loop acc = xs for i < n do map (+1) acc in xs[0] + ys[0]");
    // Only the consumed component of a tuple parameter.
    ok("def main (n: i64) = let xs = iota n let zs = iota n \
        let (a, b) = loop (a, b) = (xs, zs) for i < n do (a with [i] = 0, b) in a[0] + b[0] + zs[0]");
}

#[test]
fn consume_twice_and_argument_aliasing() {
    consume_fails(
        "def main (n: i64) = let a = iota n in (a with [0] = 1, a with [1] = 2)",
        "but this was consumed",
        "a",
    );
    // Arguments are checked right to left: `a` is observed, then consumed.
    consume_fails(
        "def g (x: *[]i64) (y: []i64) : *[]i64 = x with [0] = y[0]\n\
         def main (n: i64) = let a = iota n in g a a",
        "Argument is consumed, but aliases variable \"a\"",
        "a",
    );
}

#[test]
fn consume_unique_return_must_not_alias_parameter() {
    let labels = consume_fails(
        "def f (xs: []i32) : *[]i32 = let ys = xs in ys",
        "Unique-typed return value is aliased to \"xs\", which is not consumable",
        "ys",
    );
    assert_eq!(labels, vec!["xs".to_string()]);
    ok("def f (xs: []i32) : *[]i32 = copy xs");
    ok("def f (xs: *[]i32) : *[]i32 = xs");
    ok("def f (xs: []i32) : []i32 = xs");
}

#[test]
fn consume_branches_and_records() {
    // Consumption in one branch does not affect the other branch.
    ok("def main (c: bool) (n: i64) = let a = iota n in \
        if c then a with [0] = 1 else a");
    consume_fails(
        "def main (c: bool) (n: i64) = let a = iota n \
         let b = if c then a with [0] = 1 else copy a in a[0] + b[0]",
        "but this was consumed",
        "a",
    );
    // Consuming one field of a `let`-bound record consumes the record (as in
    // Futhark), so its other fields may not be used afterwards. Record
    // updates do not consume.
    consume_fails(
        "def main (n: i64) = let r = {x = iota n, y = iota n} \
         let x2 = r.x with [0] = 1 in x2[0] + r.y[0]",
        "Using variable \"r\", but this was consumed",
        "r.y",
    );
    ok("def main (n: i64) = let r = {x = iota n, y = iota n} \
        let r2 = r with y = iota 2 let y2 = r2.y with [0] = 1 in y2[0] + r.y[0] + r.x[0]");
    // …but the whole record may not be used once a field is consumed.
    consume_fails(
        "def main (n: i64) = let r = {x = iota n, y = iota n} \
         let x2 = r.x with [0] = 1 let r2 = r with y = iota 2 in x2[0] + r2.y[0]",
        "but this was consumed",
        "r",
    );
    // Match cases alias the scrutinee.
    consume_fails(
        "def main (n: i64) = let p = (iota n, 0i64) \
         let v = match p case (xs, _) -> xs let p0 = p.0 with [0] = 1 in v[0] + p0[0]",
        "but this was consumed",
        "v",
    );
}

#[test]
fn consume_global_constant() {
    consume_fails(
        "def table = iota 10\ndef main = table with [0] = 1",
        "Consuming variable \"table\", which is not consumable: it is a top-level constant",
        "table with [0] = 1",
    );
    ok("def table = iota 10\ndef main = copy table with [0] = 1");
}

#[test]
fn consume_only_first_error_per_definition_and_later_defs_checked() {
    let (sources, _, r) = run("def a (xs: []i32) = xs with [0] = 1\n\
         def b (n: i64) = let x = iota n let y = x with [0] = 1 in x\n\
         def c (n: i64) = a (map i32.i64 (iota n))");
    let ds = r.expect_err("errors expected");
    assert_eq!(ds.len(), 2, "{}", render_all(&ds, &sources));
    assert!(ds.iter().all(|d| d.message.contains("consum")));
}

#[test]
fn consume_update_value_must_not_alias_array() {
    // A row of the updated array, directly or through a `let`.
    let labels = consume_fails(
        "def main (n: i64) = let m = replicate n (iota n) in m with [0] = m[1]",
        "Source array for in-place update might alias the update value (both may alias variable \"m\")",
        "m[1]",
    );
    assert_eq!(labels, vec!["m".to_string()]);
    let labels = consume_fails(
        "def main (n: i64) = let m = replicate n (iota n) let r = m[1] let m[0] = r in m",
        "Source array for in-place update might alias the update value",
        "r",
    );
    assert_eq!(labels, vec!["m".to_string()]);
    // Through a function whose result is a slice of its argument.
    consume_fails(
        "def row [m] (xss: [][m]i64) (i: i64) : [m]i64 = xss[i]\n\
         def main (n: i64) = let m = replicate n (iota n) in m with [0] = row m 1",
        "Source array for in-place update might alias the update value",
        "row m 1",
    );
    // Scalars alias nothing; copies and fresh results are fine.
    ok("def main (n: i64) = let a = iota n in a with [0] = a[1]");
    ok("def main (n: i64) = let m = replicate n (iota n) in m with [0] = copy m[1]");
    ok("def main (n: i64) = let m = replicate n (iota n) let r = map (+1) m[1] let m[0] = r in m");
    ok("def f [k] (xs: [k]i64) : *[k]i64 = map (*2) xs\n\
        def main (n: i64) = let m = replicate n (iota n) in m with [0] = f m[1]");
    // Another field of the same tuple is a different array.
    ok("def main (n: i64) = let p = (replicate n (iota n), iota n) in p.0 with [0] = p.1");
    ok("def main (n: i64) = let (m, r) = (replicate n (iota n), iota n) in m with [0] = r");
}

#[test]
fn consume_loop_body_uses_consumed_initial_value() {
    let labels = consume_fails(
        "def main (n: i64) = let xs = iota n \
         in loop acc = xs for i < n do acc with [i] = xs[i] + 1",
        "Loop body uses variable \"xs\" (or an alias), but this is consumed by the initial loop argument",
        "xs",
    );
    assert_eq!(labels, vec!["xs".to_string()]);
    // Through an alias of the initial value, inside a lambda.
    let labels = consume_fails(
        "def main (n: i64) = let m = replicate n (iota n) let r = m[0] \
         in loop acc = m for i < n do let s = i64.sum (map (\\j -> r[j]) (iota n)) \
         in acc with [i, 0] = s",
        "Loop body uses variable \"r\"",
        "r",
    );
    assert_eq!(labels, vec!["m".to_string()]);
    // Nested loop: the inner loop's initial value is consumed.
    consume_fails(
        "def main (n: i64) = loop s = 0 for k < n do \
         let ys = iota n \
         let zs = loop a = ys for i < n do a with [i] = ys[0] + k \
         in s + zs[0]",
        "Loop body uses variable \"ys\"",
        "ys",
    );
    // A copy as the initial value, or a loop that does not consume its
    // parameter, may read the original.
    ok("def main (n: i64) = let xs = iota n \
        in loop acc = copy xs for i < n do acc with [i] = xs[i] + 1");
    ok("def main (n: i64) = let xs = iota n \
        in loop acc = xs for i < n do map2 (+) acc xs");
    // Only the consumed component of a tuple parameter counts.
    ok("def main (n: i64) = let xs = iota n let zs = iota n \
        in loop (a, b) = (xs, zs) for i < n do (a with [i] = zs[i], b)");
}

/// The first diagnostic of `src`: its message and the source text it covers.
fn first_error(src: &str) -> (String, String) {
    fails(src).into_iter().next().unwrap_or_default()
}

#[test]
fn rules_duplicate_size_and_type_parameters_are_located() {
    let (m, at) = first_error("def f [n] [n] (xs: [n]i32) : i32 = 0");
    assert!(
        m.contains("size parameter `n` is also bound earlier"),
        "{m}"
    );
    assert_eq!(at, "n");
    let (m, _) = first_error("def f 'a [n] 'a (xs: [n]a) : i64 = n");
    assert!(
        m.contains("type parameter `a` is also bound earlier"),
        "{m}"
    );
    let (m, _) = first_error("type t 'a 'a = (a, a)");
    assert!(m.contains("type parameter `a`"), "{m}");
    let (m, _) = first_error("def f (x: i32) : i32 = let g 'b 'b (y: b) : b = y in g x");
    assert!(m.contains("also bound earlier"), "{m}");
    // A size and a type parameter live in different name spaces.
    ok("def f [t] 't (xs: [t]t) : i64 = t");
}

#[test]
fn rules_underscore_names_may_be_bound_but_not_used() {
    let (m, at) = first_error("def f (_x: i32) : i32 = _x + 1");
    assert!(m.contains("`_x` cannot be used"), "{m}");
    assert_eq!(at, "_x");
    let (m, _) = first_error("def f (x: i32) = let _y = x in {_y}");
    assert!(m.contains("`_y` cannot be used"), "{m}");
    ok("def f (_x: i32) (y: i32) : i32 = let _z = y in loop a = y for _i < 3 do a + 1");
}

#[test]
fn rules_size_parameters_must_be_sizes_of_parameters() {
    let (m, at) = first_error("def f [n] (x: i32) : i32 = x + i32.i64 n");
    assert!(m.contains("`[n]` is not the size of any parameter"), "{m}");
    assert_eq!(at, "n");
    // Named in the declared result type: each call takes it from the type
    // its context gives the result (the prelude's `rep`), as Futhark does;
    // not for an entry point, which has no such context.
    ok("def f [n] (x: i32) : [n]i32 = replicate n x");
    ok("def iiota [n] : [n]i64 = iota n");
    let (m, _) = first_error("entry f [n] (x: i32) : [n]i32 = replicate n x");
    assert!(m.contains("is not the size of any parameter"), "{m}");
    let (m, _) = first_error("def f (x: i32) : i32 = let [k] (y: i32) = x in y");
    assert!(m.contains("`[k]`"), "{m}");
    let (m, _) = first_error("def f (x: i32) : i32 = let g [k] (y: i32) : i32 = y in g x");
    assert!(m.contains("`[k]`"), "{m}");
    // Used only in a function-typed parameter: accepted at the definition,
    // as Futhark does (it is ambiguous only at some uses).
    ok("def f [n] (g: [n]i32 -> i32) (xs: [n]i32) : i32 = g xs");
    ok("def f [n] [m] (xss: [n][m]f64) : i64 = n * m");
    ok("def f [n] (xs: [n+1]i32) : i32 = xs[n]");
    let (m, _) = first_error("entry e [n] (xs: [n+1]i32) : i32 = xs[n]");
    assert!(m.contains("only inside a size expression"), "{m}");
}

#[test]
fn rules_higher_order_restrictions() {
    let (m, at) =
        first_error("def f (b: bool) : i32 -> i32 = if b then (\\x -> x + 1) else (\\x -> x)");
    assert!(m.contains("if-results may not be of function type"), "{m}");
    assert!(at.starts_with("if b"), "{at}");
    let (m, _) = first_error("def f '^a (b: bool) (x: a) (y: a) : a = if b then x else y");
    assert!(m.contains("may not be of function type"), "{m}");
    let (m, at) = first_error(
        "def f (n: i32) : i32 = let (g, _) = loop (g, k) = ((\\(x: i32) -> x), 0) for i < n do (g, k + 1) in g 1",
    );
    assert!(m.contains("loop parameter may not"), "{m}");
    assert_eq!(at, "(g, k)");
    let (m, at) = first_error("entry f (p: (i32, i32 -> i32)) : i32 = p.1 p.0");
    assert!(m.contains("takes a function"), "{m}");
    assert_eq!(at, "(p: (i32, i32 -> i32))");
    // Functions in records, passed and returned by functions, are fine.
    ok("def mk (k: i32) = {f = \\(x: i32) -> x + k, k}\n\
        def f (b: bool) : i32 = let r = mk 2 in if b then r.f 1 else r.k");
    ok("def f 'a (b: bool) (x: a) (y: a) : a = if b then x else y");
}

#[test]
fn rules_entry_points_defined_as_function_values() {
    // The parameters of the type an entry point returns count as its own:
    // first-order ones are fine (the elaborator eta-expands the entry).
    ok("entry sum_all = i32.sum\n\
        def plus (x: i32) (y: i32) = x + y\n\
        entry add (x: i32) = plus x\n\
        entry scale : f64 -> []f64 -> []f64 = \\k -> map (* k)");
    let (m, at) = first_error("entry twice = \\(f: i32 -> i32) (x: i32) -> f (f x)");
    assert!(
        m.contains("Entry point functions may not be higher-order"),
        "{m}"
    );
    assert_eq!(at, "twice");
    let (m, _) = first_error("entry mk (x: i32) : (i32, i32 -> i32) = (x, \\y -> x + y)");
    assert!(m.contains("returns `(i32, (i32) -> i32)`"), "{m}");
    // The main file's `def main` is an entry point (when no entry point is
    // named `main`), other `def`s are not.
    let (m, _) = first_error("def main (f: i32 -> i32) (x: i32) = f x");
    assert!(m.contains("may not be higher-order"), "{m}");
    ok("def apply (f: i32 -> i32) (x: i32) = f x\nentry main (x: i32) = apply (+ 1) x");
    ok("def main (f: i32 -> i32) (x: i32) = f x\nentry main (x: i32) = x");
    // Inferred polymorphism, and result sizes no parameter gives.
    let (m, _) = first_error("entry first xs = xs[0]");
    assert!(
        m.contains("Entry point functions may not be polymorphic"),
        "{m}"
    );
    let (m, at) = first_error("entry main [n] (x: i32) : [n]i32 = replicate n x");
    assert!(
        m.contains("must not be size-polymorphic in their return type"),
        "{m}"
    );
    assert_eq!(at, "n");
}

#[test]
fn unlifted_type_parameters_are_never_functions() {
    // `'a` (declared or of an intrinsic such as `map`) may not become a
    // function type, `'^a` may; array elements may not be functions.
    let (m, _) = first_error(
        "def pick 'a (b: bool) (x: a) (y: a) : a = if b then x else y\n\
         def main (b: bool) : i32 = (pick b (\\(x: i32) -> x) (\\x -> x + 1)) 2",
    );
    assert!(m.contains("found to be functional"), "{m}");
    let (m, _) = first_error("def main (xs: []i32) = length (map (\\x -> \\(y: i32) -> x + y) xs)");
    assert!(m.contains("found to be functional"), "{m}");
    let (m, at) = first_error("def main (x: i32) : i32 = let fs = [\\(y: i32) -> y, (+ 1)] in x");
    assert!(m.contains("found to be functional"), "{m}");
    assert_eq!(at, "\\(y: i32) -> y");
    let (m, _) = first_error("def f (fs: [](i32 -> i32)) : i64 = length fs");
    assert!(
        m.contains("Cannot create array with elements of lifted type"),
        "{m}"
    );
    // A generalised parameter that was an array element stays unlifted.
    let (m, _) = first_error("def one x = [x]\ndef main (k: i32) = length (one (+ k))");
    assert!(m.contains("found to be functional"), "{m}");
    ok("def swap '^a (x: a) (y: a) : (a, a) = (y, x)\n\
        def main : i32 = (swap (\\(x: i32) -> x) (\\x -> x + 1)).0 2");
    ok("def main (x: i32) : i32 = (id (+ 1)) x + (assert (x > 0) (* 2)) x");
}

#[test]
fn type_abbreviations_are_no_more_lifted_than_declared() {
    let (m, at) = first_error("type f = i32 -> i32");
    assert!(
        m.contains("Non-lifted type abbreviations may not contain functions"),
        "{m}"
    );
    assert_eq!(at, "i32 -> i32");
    let (m, _) = first_error("type t '^a = (a, i32)");
    assert!(m.contains("may not contain functions"), "{m}");
    let (m, _) = first_error("type~ g = {f: i32 -> i32}");
    assert!(
        m.contains("Size-lifted type abbreviations may not contain functions"),
        "{m}"
    );
    let (m, _) = first_error("type^ f = i32 -> i32\ntype fs = [2]f");
    assert!(m.contains("elements of lifted type \"f\""), "{m}");
    let (m, _) = first_error("def f '^a (x: a) : [1]a = [x]");
    assert!(m.contains("elements of lifted type \"a\""), "{m}");
    ok("type^ f = i32 -> i32\n\
        type~ row = []i32\n\
        type^ pair '^a = (a, row)\n\
        def g '~a (x: a) : (a, row) = (x, [1, 2])\n\
        def main (k: i32) : i32 = let h : f = (+ k) in h (length (g 1).1 |> i32.i64)");
}

#[test]
fn rules_match_must_be_exhaustive() {
    let (m, at) = first_error(
        "type t = #a | #b i32 | #c\n\
         def f (x: t) : i32 = match x case #a -> 1 case #b 0 -> 2 case #c -> 3",
    );
    assert!(m.contains("no case matches `#b 1`"), "{m}");
    assert!(at.starts_with("match x"), "{at}");
    let (m, _) = first_error(
        "type o = #none | #some (bool, i32)\n\
         def f (x: o) : i32 = match x case #none -> 0 case #some (true, _) -> 1",
    );
    assert!(m.contains("`#some (false, _)`"), "{m}");
    let (m, _) =
        first_error("def f (r: {a: i32, b: bool}) : i32 = match r case {a = _, b = true} -> 1");
    assert!(m.contains("`{a = _, b = false}`"), "{m}");
    let (m, _) = first_error(
        "def f (t: (bool, bool, bool, bool, bool, bool, bool, bool, bool, bool, bool)) : i32 =\n\
         match t case (_, _, _, _, _, _, _, _, _, _, true) -> 1",
    );
    assert!(m.contains("`(_, _, _, _, _, _, _, _, _, _, false)`"), "{m}");
    ok("type t = #a | #b i32 | #c\n\
        def f (x: t) : i32 = match x case #a -> 1 case #b 0 -> 2 case #b _ -> 5 case #c -> 3");
    ok("def f (p: (bool, bool)) : i32 =\n\
        match p case (true, _) -> 1 case (false, true) -> 2 case (false, false) -> 3");
    ok("def f (x: f64) : i32 = match x case 1.0 -> 1 case _ -> 2");
    // Many boolean columns: the search stays bounded and accepts.
    let cols = 24;
    let ty = vec!["bool"; cols].join(", ");
    let mut cases = String::new();
    for k in 0..cols {
        let mut ps = vec!["_"; cols];
        ps[k] = "true";
        cases.push_str(&format!(" case ({}) -> {k}", ps.join(", ")));
    }
    cases.push_str(&format!(" case ({}) -> 99", vec!["false"; cols].join(", ")));
    ok(&format!("def f (t: ({ty})) : i32 = match t{cases}"));
}

#[test]
fn rules_bindings_must_be_irrefutable() {
    let (m, at) = first_error(
        "type s = #c f64 | #q f64\n\
         def f (r: f64) : f64 = let (#c x) : s = #c r in x",
    );
    assert!(m.contains("Refutable") && m.contains("#q _"), "{m}");
    assert_eq!(at, "(#c x) : s");
    ok("type w = #w f64\n\
        def f (r: f64) : f64 = let (#w x) : w = #w r in x");
}

#[test]
fn consume_higher_order_rules_are_located() {
    let (m, at) = first_error(
        "def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0\n\
         def f (xss: *[][]i32) : [][]i32 = map reset xss",
    );
    assert!(m.contains("it is a consuming function"), "{m}");
    assert_eq!(at, "reset");
    let (m, _) = first_error("def f (g: *[]i32 -> *[]i32) (xs: []i32) : []i32 = g xs");
    assert!(m.contains("Consuming variable \"xs\""), "{m}");
    let (m, at) = first_error(
        "def f (xs: []i32) : []i32 = loop acc = copy xs for i < 2 do let acc[i] = 0 in xs",
    );
    assert!(
        m.contains("Return value for consuming loop parameter \"acc\" aliases \"xs\""),
        "{m}"
    );
    assert_eq!(at, "xs");
    let (m, _) = first_error(
        "type b = #e | #f ([]i32)\n\
         def f (o: b) : i32 = match o case #f xs -> (let xs[0] = 1 in xs[0]) case #e -> 0",
    );
    assert!(m.contains("Consuming variable \"o\""), "{m}");
    ok(
        "def apply (g: *[]i32 -> *[]i32) (xs: *[]i32) : *[]i32 = g xs\n\
        def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0\n\
        def f (xs: *[]i32) : []i32 = apply reset xs",
    );
}

#[test]
fn sum_constructor_errors_point_at_the_constructor() {
    let (m, at) = first_error(
        "type t = #a | #b i32\n\
         def f (x: i32) : []t = [#a, #b x, #c]",
    );
    assert!(m.contains("has no constructor #c"), "{m}");
    assert_eq!(at, "#c");
    let (m, at) = first_error(
        "type t = #a | #b i32\n\
         def g (x: t) : i32 = 0\n\
         def f (x: i32) : i32 = g (#b x x)",
    );
    assert!(m.contains("differ in arity"), "{m}");
    assert_eq!(at, "#b x x");
    let (m, at) = first_error(
        "type t = #a | #b i32\n\
         def f (x: t) : i32 = match x case #a -> 1 case #z -> 2",
    );
    assert!(m.contains("has no constructor #z"), "{m}");
    assert_eq!(at, "#z");
}

#[test]
fn consume_inferred_uniqueness_of_function_types_is_not_trusted() {
    // `pick`'s type parameter is instantiated with the type of a fresh
    // (unique) array literal; that must not make the call consume `w`.
    ok(
        "def pick 't (b: bool) (x: t) (y: t) : t = if b then x else y\n\
        def f (n: i64) : i64 =\n\
          let w = iota 2\n\
          let v = (pick true) w [9i64, 5i64]\n\
          in w[0] + v[0]",
    );
    ok(
        "def pick 't (b: bool) (x: t) (y: t) : t = if b then x else y\n\
        def f (xs: []i64) : []i64 = xs |> pick true (map (+1) xs)",
    );
    // A parameter declared with a consuming function type consumes.
    let (m, at) =
        first_error("def f (g: *[]i32 -> i32) (xs: *[]i32) : i32 = let r = g xs in r + xs[0]");
    assert!(
        m.contains("Using variable \"xs\", but this was consumed"),
        "{m}"
    );
    assert_eq!(at, "xs");
    // `let g = f` calls like `f`.
    let (m, _) = first_error(
        "def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0\n\
         def f (xs: []i32) : []i32 = let g = reset in g xs",
    );
    assert!(m.contains("Consuming variable \"xs\""), "{m}");
}

// ------------------------------------------------------------ custom derivatives

#[test]
fn with_vjp_types_and_rule_errors() {
    ok(
        "def ste (x: f64) : f64 = with_vjp (\\x -> f64.round x) (\\_ g -> g) x\n\
        def tape (x: f64) : f64 = with_vjp_tape (\\x -> (x + 1, x * x)) (\\(t, g) -> t * g) x",
    );
    // A rule returning the wrong type: located at the rule.
    let ds =
        fails("def main (x: f64) : f64 = with_vjp (\\(x: f64) -> x) (\\_ (g: f64) -> i64.f64 g) x");
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert!(
        ds[0].0.contains("Cannot apply \"with_vjp\" to argument #2"),
        "{ds:?}"
    );
    assert!(ds[0].0.contains("i64 is not f64"), "{ds:?}");
    assert_eq!(ds[0].1, "(\\_ (g: f64) -> i64.f64 g)");
    // with_vjp_tape's rule takes one pair.
    let ds = fails(
        "def main (x: f64) : f64 = with_vjp_tape (\\(x: f64) -> (x, x)) (\\(t: f64) (g: f64) -> t * g) x",
    );
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert!(
        ds[0]
            .0
            .contains("Cannot apply \"with_vjp_tape\" to argument #2"),
        "{ds:?}"
    );
    assert_eq!(ds[0].1, "(\\(t: f64) (g: f64) -> t * g)");
}

// ------------------------------------------------------------------- sizes

#[test]
fn sizes_compound_expressions_compare_syntactically() {
    let c = ok("def f (n: i64) (m: i64) : [n * m]i64 = iota (n * m)\n\
                def g [a] [b] (xs: [a * b]i64) : i64 = a + b\n\
                def h (p: i64) (q: i64) : i64 = g (f p q)");
    // The named parameters stay in the result type, as an expression.
    assert_eq!(c.ty("f"), "(n: i64) -> (m: i64) -> [n * m]i64");
    // `n + 1` is not `n`: Futhark's message, names in double quotes.
    let (m, _) = first("def f (n: i64) : [n + 1]i64 = iota n");
    assert!(m.contains("Sizes \"n + 1\" and \"n\" do not match"), "{m}");
    // Part by part: `a * b` against `p + q` differ in their operator.
    let (m, _) = first(
        "def g [a] [b] (xs: [a * b]i64) : i64 = a + b\n\
         def h (p: i64) (q: i64) (ys: [p + q]i64) : i64 = g ys",
    );
    assert!(m.contains("do not match"), "{m}");
}

#[test]
fn sizes_let_bound_i64_replaced_in_body_type() {
    // `let m = n + 1 in iota m` has type `[n + 1]i64` (Futhark's rule for a
    // `let` binding one `i64` name).
    ok("def f (n: i64) : [n + 1]i64 = let m = n + 1 in iota m");
    let (m, _) = first("def f (n: i64) : [n]i64 = let m = n + 1 in iota m");
    assert!(m.contains("Sizes \"n\" and \"n + 1\" do not match"), "{m}");
}

#[test]
fn sizes_scope_violations() {
    // An earlier parameter's size cannot be inferred to be a later one.
    let (m, _) = first("def f xs (n: i64) = zip xs (iota n)");
    assert!(m.contains("\"n\"") && m.contains("scope-violation"), "{m}");
    ok("def f (n: i64) xs = zip xs (iota n)");
    // Nor a parameter's size a name bound in the body.
    let (m, _) = first("def f xs = let k = length xs + 1 in zip (iota k) xs");
    assert!(m.contains("\"k\"") && m.contains("scope-violation"), "{m}");
    // A local type parameter does not escape into an outer type.
    let (m, _) = first("def f x = let g 'b (y: b) = if true then y else x in g");
    assert!(m.contains("\"b\"") && m.contains("scope-violation"), "{m}");
    // A lambda's parameter is in scope in the next one's type.
    let (m, _) = first("def f ys = (\\(n: i64) (xs: [n]i32) -> zip xs ys, map (+ 1i32) ys)");
    assert!(m.contains("\"n\"") && m.contains("scope-violation"), "{m}");
}

#[test]
fn sizes_let_size_binders_and_unscoping() {
    // `let [k] p = e`: `k` is inferred from `e` while matching.
    ok("def f = let [k] (xss: [k][k]i64) = [] in k");
    let (m, _) =
        first("def f (n: i64) (m: i64) = let [k] (xss: [k][k]i64) = replicate n (iota m) in k");
    assert!(m.contains("Sizes \"n\" and \"m\" do not match"), "{m}");
    // A size naming a case's variable becomes unknown outside the case.
    let c = ok("def f (n: i64) = let arr = match n case m -> iota m in length arr");
    assert!(c.ty("f").starts_with("(n: i64) -> i64") || c.ty("f") == "(i64) -> i64");
}

/// A parameter's inferred size is made outside the parameter's scope, so it
/// cannot become a size computed from the parameter itself (Futhark's
/// `shapes/size-inference3`); a named size parameter can be used instead.
#[test]
fn inferred_parameter_size_cannot_be_computed_from_the_parameter() {
    let e = fails("def z (xs: []i32) = zip xs (iota (length xs))");
    assert!(
        e.iter().any(|(m, _)| m.contains("scope-violation")),
        "{e:?}"
    );
    ok("def z [n] (xs: [n]i32) = zip xs (iota n)");
}
