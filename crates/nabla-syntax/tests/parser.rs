//! Parser tests: every construct, precedence, indexing vs application,
//! sections, `let` without `in`, and error messages with spans.

use nabla_syntax::ast::*;
use nabla_syntax::parser::dump;
use nabla_syntax::{
    parse_expr_text, parse_pat_text, parse_program_text, parse_type_text, FileId, SourceMap,
};

fn e(src: &str) -> String {
    match parse_expr_text(src, FileId(0)) {
        Ok(x) => dump::expr(&x),
        Err(d) => panic!("parse error in {src:?}: {:?}", d),
    }
}

fn t(src: &str) -> String {
    dump::ty(&parse_type_text(src, FileId(0)).unwrap_or_else(|d| panic!("{src:?}: {d:?}")))
}

fn p(src: &str) -> String {
    dump::pat(&parse_pat_text(src, FileId(0)).unwrap_or_else(|d| panic!("{src:?}: {d:?}")))
}

fn prog(src: &str) -> Program {
    let mut id = 0;
    parse_program_text(src, FileId(0), &mut id).unwrap_or_else(|d| panic!("{src:?}: {d:?}"))
}

/// The first error for `src` parsed as a program: (message, start, end).
fn perr(src: &str) -> (String, u32, u32) {
    let mut id = 0;
    let ds = parse_program_text(src, FileId(0), &mut id).expect_err("expected an error");
    (ds[0].message.clone(), ds[0].span.start, ds[0].span.end)
}

fn eerr(src: &str) -> String {
    parse_expr_text(src, FileId(0)).expect_err("expected an error")[0]
        .message
        .clone()
}

#[test]
fn literals() {
    assert_eq!(e("42"), "42");
    assert_eq!(e("1i8"), "1i8");
    assert_eq!(e("2u64"), "2u64");
    assert_eq!(e("1.0f32"), "1.0f32");
    assert_eq!(e("3f64"), "3f64");
    assert_eq!(e("0x1F"), "31");
    assert_eq!(e("0b101"), "5");
    assert_eq!(e("1_000"), "1000");
    assert_eq!(e("1e-3"), "1e-3");
    assert_eq!(e("2.5e10f32"), "2.5e10f32");
    assert_eq!(e("true"), "true");
    assert_eq!(e("false"), "false");
    assert_eq!(e("-1"), "-1");
    assert_eq!(e("-128i8"), "-128i8");
    assert_eq!(e("-2.5"), "-2.5");
    match parse_expr_text("3f64", FileId(0)).unwrap().kind {
        ExprKind::Lit(Literal::Float { value, suffix, .. }) => {
            assert_eq!(value, 3.0);
            assert_eq!(suffix, Some(nabla_prim::PrimType::F64));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn names_and_projection() {
    assert_eq!(e("x"), "x");
    assert_eq!(e("f64.sqrt"), "f64.sqrt");
    assert_eq!(e("a.b.c"), "a.b.c");
    match parse_expr_text("a.b.c", FileId(0)).unwrap().kind {
        ExprKind::Var { name, .. } => {
            assert_eq!(name.quals, vec!["a".to_string(), "b".to_string()]);
            assert_eq!(name.name, "c");
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(e("x.0"), "(. x 0)");
    assert_eq!(e("x.0.1"), "(. (. x 0) 1)");
    assert_eq!(e("(e).x"), "(. (paren e) x)");
    assert_eq!(e("(e).x.y"), "(. (. (paren e) x) y)");
    assert_eq!(e("f(x).y"), "(app f (. (paren x) y))");
    assert_eq!(e("xs[0].y"), "(. (index xs 0) y)");
    assert_eq!(e("r.a.0"), "(. r.a 0)");
    assert_eq!(e("f64.(x + y)"), "(open f64 (+ x y))");
}

#[test]
fn indexing_vs_application() {
    assert_eq!(e("a[i, j]"), "(index a i j)");
    assert_eq!(e("f [1,2]"), "(app f (array 1 2))");
    assert_eq!(e("f xs[1]"), "(app f (index xs 1))");
    assert_eq!(e("(xs)[1]"), "(index (paren xs) 1)");
    assert_eq!(e("xs[1][2]"), "(index (index xs 1) 2)");
    assert_eq!(e("[1,[2]]"), "(array 1 (array 2))");
    assert_eq!(e("a[i:j]"), "(index a (slice i j _))");
    assert_eq!(e("a[:, 0]"), "(index a (slice _ _ _) 0)");
    assert_eq!(e("a[i:j:s]"), "(index a (slice i j s))");
    assert_eq!(e("a[::-1]"), "(index a (slice _ _ -1))");
    assert_eq!(e("a[1:]"), "(index a (slice 1 _ _))");
    assert_eq!(e("a[:n]"), "(index a (slice _ n _))");
    assert_eq!(e("a[i+1]"), "(index a (+ i 1))");
}

#[test]
fn application_and_prefix() {
    assert_eq!(e("f x y"), "(app f x y)");
    assert_eq!(e("f x + g y"), "(+ (app f x) (app g y))");
    assert_eq!(e("f -x"), "(- f x)");
    assert_eq!(e("f (-x)"), "(app f (paren (neg x)))");
    assert_eq!(e("-f x"), "(neg (app f x))");
    assert_eq!(e("-x + y"), "(+ (neg x) y)");
    assert_eq!(e("-x ** 2"), "(** (neg x) 2)");
    assert_eq!(e("!x && y"), "(&& (not x) y)");
    assert_eq!(e("!f x"), "(not (app f x))");
    assert_eq!(e("- -x"), "(neg (neg x))");
    assert_eq!(e("assert (x > 0) x"), "(app assert (paren (> x 0)) x)");
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(e("a + b * c"), "(+ a (* b c))");
    assert_eq!(e("a * b + c"), "(+ (* a b) c)");
    assert_eq!(e("a - b - c"), "(- (- a b) c)");
    assert_eq!(e("a ** b ** c"), "(** (** a b) c)");
    assert_eq!(e("a * b ** c"), "(* a (** b c))");
    assert_eq!(e("a == b && c < d || e"), "(|| (&& (== a b) (< c d)) e)");
    assert_eq!(e("x & y == z"), "(== (& x y) z)");
    assert_eq!(e("a << b + c"), "(<< a (+ b c))");
    assert_eq!(e("a | b ^ c & d"), "(& (^ (| a b) c) d)");
    assert_eq!(e("a // b %% c"), "(%% (// a b) c)");
    assert_eq!(e("xs |> map f |> sum"), "(|> (|> xs (app map f)) sum)");
    assert_eq!(e("f <| g <| x"), "(<| f (<| g x))");
    assert_eq!(e("a + b |> f"), "(|> (+ a b) f)");
    assert_eq!(e("a || b |> f"), "(|> (|| a b) f)");
    // user-defined operators by leading characters
    assert_eq!(e("a +^ b * c"), "(+^ a (* b c))");
    assert_eq!(e("a *^ b + c"), "(+ (*^ a b) c)");
    assert_eq!(e("a >>= b + c"), "(>>= a (+ b c))");
    assert_eq!(e("f >-> g >-> h"), "(>-> (>-> f g) h)");
    assert_eq!(e("a <-< b + c"), "(<-< a (+ b c))");
    assert_eq!(e("a == b >-> c"), "(>-> (== a b) c)");
    // backtick and qualified operators
    assert_eq!(e("x `f` y + 1"), "(f x (+ y 1))");
    assert_eq!(e("x `f64.max` y"), "(f64.max x y)");
    assert_eq!(e("x f64.+ y * z"), "(f64.+ x (* y z))");
    // ranges are looser than arithmetic
    assert_eq!(e("0..<n+1"), "(..< 0 (+ n 1))");
    assert_eq!(e("1...n"), "(... 1 n)");
    assert_eq!(e("a..b...c"), "(.. a b ... c)");
    assert_eq!(e("n..>0"), "(..> n 0)");
    assert_eq!(e("1..3..<n"), "(.. 1 3 ..< n)");
    // ascription is loosest
    assert_eq!(e("x + 1 : i32"), "(: (+ x 1) i32)");
    assert_eq!(e("xs :> [n]f64"), "(:> xs [n]f64)");
}

#[test]
fn sections() {
    assert_eq!(e("(+)"), "(section +)");
    assert_eq!(e("(-)"), "(section -)");
    assert_eq!(e("(*2)"), "(rsection * 2)");
    assert_eq!(e("(2-)"), "(lsection - 2)");
    assert_eq!(e("(f32.*)"), "(section f32.*)");
    assert_eq!(e("(.0)"), "(proj 0)");
    assert_eq!(e("(.a.b)"), "(proj a b)");
    assert_eq!(e("(-1)"), "(paren -1)");
    assert_eq!(e("(-x)"), "(paren (neg x))");
    assert_eq!(e("(`f` 1)"), "(rsection f 1)");
    assert_eq!(e("(x `f`)"), "(lsection f x)");
    assert_eq!(e("(x + y *)"), "(lsection * (+ x y))");
    assert_eq!(e("reduce (+) 0 xs"), "(app reduce (section +) 0 xs)");
    assert_eq!(e("(|> f)"), "(rsection |> f)");
}

#[test]
fn tuples_records_arrays() {
    assert_eq!(e("()"), "()");
    assert_eq!(e("(a, b)"), "(tuple a b)");
    assert_eq!(e("(a, b,)"), "(tuple a b)");
    assert_eq!(e("{a = 1, b}"), "(record (a 1) b)");
    assert_eq!(e("{}"), "(record )");
    assert_eq!(e("{0 = x, 1 = y}"), "(record (0 x) (1 y))");
    assert_eq!(e("[1, 2, 3]"), "(array 1 2 3)");
    assert_eq!(e("[]"), "(array )");
    assert_eq!(e("r with a.b = v"), "(recupdate r a.b v)");
    assert_eq!(e("a with [i] = v + 1"), "(update a (i) (+ v 1))");
    assert_eq!(
        e("a with [i, j] = 0 with [k] = 1"),
        "(update (update a (i j) 0) (k) 1)"
    );
    assert_eq!(e("#c a b"), "(#c a b)");
    assert_eq!(e("#foo #bar"), "(#foo #bar)");
    assert_eq!(e("#none"), "#none");
    assert_eq!(e("f #none x"), "(app f #none x)");
}

#[test]
fn control_flow() {
    assert_eq!(e("if a then b else c + 1"), "(if a b (+ c 1))");
    assert_eq!(
        e("if a then b else if c then d else e"),
        "(if a b (if c d e))"
    );
    assert_eq!(
        e("match x case #a y -> y + 1 case #b -> 0 case _ -> -1"),
        "(match x (case (#a y) (+ y 1)) (case #b 0) (case _ -1))"
    );
    assert_eq!(
        e("match n case 0 -> 1 case -1 -> 2 case k -> k"),
        "(match n (case 0 1) (case -1 2) (case k k))"
    );
    assert_eq!(
        e("loop acc = 0 for i < n do acc + i"),
        "(loop acc 0 (for i n) (+ acc i))"
    );
    assert_eq!(
        e("loop (a, b) = (0, 1) for x in xs do (b, a + x)"),
        "(loop (tuple a b) (tuple 0 1) (for-in x xs) (tuple b (+ a x)))"
    );
    assert_eq!(
        e("loop x = 1 while x < 100 do x * 2"),
        "(loop x 1 (while (< x 100)) (* x 2))"
    );
    assert_eq!(
        e("loop x for i < 3 do x + 1"),
        "(loop x _ (for i 3) (+ x 1))"
    );
    assert_eq!(
        e("loop (x: i32) = 0 for i < n do x"),
        "(loop (: x i32) 0 (for i n) x)"
    );
    assert_eq!(
        e("#[unroll] loop x = 0 for i < 4 do x"),
        "(loop #[unroll] x 0 (for i 4) x)"
    );
    assert_eq!(e("#[trace] f x"), "(attr trace (app f x))");
    assert_eq!(
        e("#[sequential_outer(2)] f x"),
        "(attr sequential_outer(2) (app f x))"
    );
}

#[test]
fn lambdas() {
    assert_eq!(e(r"\x y -> x + y"), "(lambda (x y) _ (+ x y))");
    assert_eq!(e(r"\(x: i32): i32 -> x"), "(lambda ((: x i32)) i32 x)");
    assert_eq!(
        e(r"map (\x -> x * 2) xs"),
        "(app map (paren (lambda (x) _ (* x 2))) xs)"
    );
    assert_eq!(
        e(r"\(a, b) {c} _ -> a"),
        "(lambda ((tuple a b) {c=c} _) _ a)"
    );
}

#[test]
fn let_forms() {
    assert_eq!(e("let x = 1 in x + 1"), "(let x 1 (+ x 1))");
    assert_eq!(
        e("let x = 1 let y = 2 in x + y"),
        "(let x 1 (let y 2 (+ x y)))"
    );
    assert_eq!(e("let x = 1 in let y = 2 in x"), "(let x 1 (let y 2 x))");
    assert_eq!(e("let (a, b) = p in a"), "(let (tuple a b) p a)");
    assert_eq!(e("let x: i32 = 1 in x"), "(let (: x i32) 1 x)");
    assert_eq!(
        e("let f x y = x + y in f 1 2"),
        "(letfun f () (x y) _ (+ x y) (app f 1 2))"
    );
    assert_eq!(
        e("let f 't [n] (xs: [n]t): t = xs[0] in f"),
        "(letfun f ('t [n]) ((: xs [n]t)) t (index xs 0) f)"
    );
    assert_eq!(e("let a[i] = v in a"), "(letwith a (i) v a)");
    assert_eq!(
        e("let a[i, 1:] = v in a"),
        "(letwith a (i (slice 1 _ _)) v a)"
    );
    assert_eq!(
        e("let [n] (xs: [n]i32) = ys in n"),
        "(let [n] (: xs [n]i32) ys n)"
    );
    assert_eq!(e("let {a, b = c} = r in a"), "(let {a=a, b=c} r a)");
    assert_eq!(
        e("let (+^) a b = a + b in 1 +^ 2"),
        "(letfun +^ () (a b) _ (+ a b) (+^ 1 2))"
    );
    // long chains of lets parse without deep recursion
    let mut src = String::new();
    for i in 0..1000 {
        src.push_str(&format!("let x{i} = {i}\n"));
    }
    src.push_str("in x0");
    assert!(parse_expr_text(&src, FileId(0)).is_ok());
}

#[test]
fn types() {
    assert_eq!(t("i32"), "i32");
    assert_eq!(t("pair f64"), "(pair f64)");
    assert_eq!(t("vec [n]"), "(vec [n])");
    assert_eq!(t("m.t"), "m.t");
    assert_eq!(t("(i32, f64)"), "(tuple i32 f64)");
    assert_eq!(t("()"), "()");
    assert_eq!(t("(i32)"), "i32");
    assert_eq!(t("{a: f64, b: bool}"), "{a: f64, b: bool}");
    assert_eq!(t("[n]f64"), "[n]f64");
    assert_eq!(t("[n][m]f64"), "[n][m]f64");
    assert_eq!(t("[n*m]t"), "[(* n m)]t");
    assert_eq!(t("[]i32"), "[]i32");
    assert_eq!(t("*[]i32"), "*[]i32");
    assert_eq!(t("i32 -> i32 -> bool"), "(-> i32 (-> i32 bool))");
    assert_eq!(t("(i32 -> i32) -> bool"), "(-> (-> i32 i32) bool)");
    assert_eq!(t("(n: i64) -> [n]f64"), "(-> (n: i64) [n]f64)");
    assert_eq!(t("#a i32 | #b"), "(sum (#a i32) #b)");
    assert_eq!(t("?[n].[n]t"), "(?[n] [n]t)");
    assert_eq!(t("?[n][m].[n][m]t"), "(?[n][m] [n][m]t)");
    assert_eq!(t("two_vecs [n] i32"), "(two_vecs [n] i32)");
    assert_eq!(t("pt [n]t"), "(pt [n] t)");
    assert_eq!(t("[n](pair f64)"), "[n](pair f64)");
}

#[test]
fn patterns() {
    assert_eq!(p("x"), "x");
    assert_eq!(p("_"), "_");
    assert_eq!(p("(a, (b, c))"), "(tuple a (tuple b c))");
    assert_eq!(p("()"), "()");
    assert_eq!(p("{x, y = (a, b)}"), "{x=x, y=(tuple a b)}");
    assert_eq!(p("{x: i32}"), "{x=(: x i32)}");
    assert_eq!(p("(x: f64)"), "(: x f64)");
    assert_eq!(p("x: f64"), "(: x f64)");
    assert_eq!(p("-3"), "-3");
    assert_eq!(p("true"), "true");
    assert_eq!(p("#some (a, b) c"), "(#some (tuple a b) c)");
    assert_eq!(p("#[noinline] x"), "x");
    assert_eq!(p("(+)"), "+");
}

#[test]
fn module_declarations() {
    let pr = prog(
        "module type S = { type t 'a  val f [n]: [n]i32 -> t i32  val +: i32 -> i32 -> i32  module N: { val x: i32 }  include T }\n\
         module M : S with t = f64 = { def x = 1 }\n\
         module F (P: S) (Q: S -> S) : S = P\n\
         module L = F f64 (\\(X: S) -> X)\n\
         open F M\n\
         include M\n\
         module I = import \"lib/util\"\n\
         def g = M.(x + 1) + (M.+) 1 2\n",
    );
    assert_eq!(pr.decs.len(), 8);
    assert!(
        matches!(&pr.decs[0], Dec::ModType(mt) if mt.name.name == "S"
        && matches!(&mt.def, ModTypeExp::Specs(specs, _) if specs.len() == 5))
    );
    assert!(matches!(&pr.decs[1], Dec::Module(mb) if mb.sig.is_some()
        && matches!(&mb.body, ModExp::Struct(ds, _) if ds.len() == 1)));
    assert!(matches!(&pr.decs[2], Dec::Module(mb) if mb.params.len() == 2));
    assert!(matches!(&pr.decs[3], Dec::Module(mb) if matches!(&mb.body, ModExp::Apply(..))));
    assert!(matches!(&pr.decs[4], Dec::OpenModule(ModExp::Apply(..), _)));
    assert!(matches!(&pr.decs[5], Dec::Include(ModExp::Var(_), _)));
    assert!(matches!(&pr.decs[6], Dec::Module(mb) if matches!(&mb.body, ModExp::Import(..))));
}

#[test]
fn declarations() {
    let pr = prog(
        "-- | A doc comment\n\
         def f (x: f64) : f64 = x\n\
         entry main [n] (xs: [n]i32) = xs\n\
         let g 'a '^b '~c (a, b) {x, y} _ = 0\n\
         def (+^) (x: i32) (y: i32) = x + y\n\
         def (a: i32) *^ (b: i32): i32 = a * b\n\
         type t = i32\n\
         type pair 'a = (a, a)\n\
         type vec [n] = [n]f64\n\
         type^ fn = i32 -> i32\n\
         type~ dyn = ?[n].[n]i32\n\
         local def h = 1\n\
         open f64\n\
         import \"lib/util\"\n\
         #[inline] def k = 2\n",
    );
    assert_eq!(pr.decs.len(), 14);
    let vb = |i: usize| match &pr.decs[i] {
        Dec::Val(v) => v.clone(),
        d => panic!("{d:?}"),
    };
    assert_eq!(vb(0).name.name, "f");
    assert!(!vb(0).entry);
    assert!(vb(0).ret.is_some());
    assert!(vb(1).entry);
    assert_eq!(
        vb(1).type_params,
        vec![TypeParam::Size(vb(1).type_params[0].clone().ident())]
    );
    assert_eq!(vb(2).type_params.len(), 3);
    assert_eq!(vb(2).params.len(), 3);
    assert!(matches!(
        vb(2).type_params[1],
        TypeParam::Type(_, Liftedness::Lifted)
    ));
    assert!(matches!(
        vb(2).type_params[2],
        TypeParam::Type(_, Liftedness::SizeLifted)
    ));
    assert_eq!(vb(3).name.name, "+^");
    assert_eq!(vb(3).params.len(), 2);
    assert_eq!(vb(4).name.name, "*^");
    assert_eq!(vb(4).params.len(), 2);
    assert!(vb(4).ret.is_some());
    match &pr.decs[5] {
        Dec::Type(tb) => assert_eq!(
            (tb.name.name.as_str(), tb.liftedness),
            ("t", Liftedness::Unlifted)
        ),
        d => panic!("{d:?}"),
    }
    match &pr.decs[6] {
        Dec::Type(tb) => assert_eq!(tb.params.len(), 1),
        d => panic!("{d:?}"),
    }
    match &pr.decs[8] {
        Dec::Type(tb) => assert_eq!(tb.liftedness, Liftedness::Lifted),
        d => panic!("{d:?}"),
    }
    match &pr.decs[9] {
        Dec::Type(tb) => assert_eq!(tb.liftedness, Liftedness::SizeLifted),
        d => panic!("{d:?}"),
    }
    assert!(matches!(&pr.decs[10], Dec::Local(d, _) if matches!(**d, Dec::Val(_))));
    assert!(matches!(&pr.decs[11], Dec::Open(q, _) if q.name == "f64"));
    assert!(matches!(&pr.decs[12], Dec::Import(s, _) if s == "lib/util"));
    assert_eq!(vb(13).attrs.len(), 1);
    assert_eq!(vb(13).attrs[0].text, "inline");
    // ids are unique
    let mut ids: Vec<u32> = pr
        .decs
        .iter()
        .filter_map(|d| match d {
            Dec::Val(v) => Some(v.id.0),
            _ => None,
        })
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

trait TpIdent {
    fn ident(self) -> Ident;
}
impl TpIdent for TypeParam {
    fn ident(self) -> Ident {
        match self {
            TypeParam::Size(i) | TypeParam::Type(i, _) => i,
        }
    }
}

#[test]
fn node_ids_continue_across_files() {
    let mut id = 10;
    let a = parse_program_text("def a = 1\ndef b = 2", FileId(0), &mut id).unwrap();
    let b = parse_program_text("def c = 3", FileId(1), &mut id).unwrap();
    let ids: Vec<u32> = a
        .decs
        .iter()
        .chain(b.decs.iter())
        .map(|d| match d {
            Dec::Val(v) => v.id.0,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(ids, vec![10, 11, 12]);
    assert_eq!(id, 13);
}

#[test]
fn spans_are_precise() {
    let x = parse_expr_text("foo + bar", FileId(0)).unwrap();
    assert_eq!((x.span.start, x.span.end), (0, 9));
    match x.kind {
        ExprKind::BinOp { op, lhs, rhs, .. } => {
            assert_eq!((op.span.start, op.span.end), (4, 5));
            assert_eq!((lhs.span.start, lhs.span.end), (0, 3));
            assert_eq!((rhs.span.start, rhs.span.end), (6, 9));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn errors_with_spans() {
    let (m, s, _) = perr("def f x = (x + 1");
    assert!(m.contains("expected") && m.contains("`)`"), "{m}");
    assert_eq!(s, 16);
    let (m, s, _) = perr("def f = if x then y");
    assert!(m.contains("`else`"), "{m}");
    assert_eq!(s, 19);
    let (m, s, e) = perr("def f = let x = 1\ndef g = 2");
    assert!(m.contains("missing `in`"), "{m}");
    assert_eq!((s, e), (18, 21));
    let (m, s, _) = perr("def = 1");
    assert!(
        m.contains("a name after `def`") && m.contains("Unexpected \"=\""),
        "{m}"
    );
    assert_eq!(s, 4);
    let (m, _, _) = perr("42");
    assert!(m.contains("expected a declaration"), "{m}");
    let (m, _, _) = perr("module M = {\n def x = 1\n");
    assert!(m.contains("`}` closing the module"), "{m}");
    let (m, _, _) = perr("module type S = { val x }");
    assert!(m.contains("`:` and the type"), "{m}");
    let (m, s, _) = perr("def f = 1 +");
    assert!(
        m.contains("expected an expression") && m.contains("end of file"),
        "{m}"
    );
    assert_eq!(s, 11);
    let (m, _, _) = perr("def f (x: ) = x");
    assert!(m.contains("expected a type"), "{m}");
    assert!(eerr("x with").contains("field name"));
    assert!(eerr("match x").contains("`case`"));
    assert!(eerr("\\ -> 1").contains("parameter"));
    assert!(eerr("a..b").contains("finish the range"));
    assert!(eerr("\"unterminated").contains("string"));
    assert!(eerr("(.[1)").contains("`]`"));
    assert_eq!(
        crate::e("(.[1].a)"),
        crate::e("\\index_section_arg' -> index_section_arg'[1].a")
    );
    // lexical errors
    let mut id = 0;
    let ds = parse_program_text("def f = 1 $ 2", FileId(0), &mut id).unwrap_err();
    assert_eq!(ds[0].kind, nabla_syntax::DiagnosticKind::Lexical);
    assert_eq!((ds[0].span.start, ds[0].span.end), (10, 11));
}

#[test]
fn several_errors_are_reported_with_recovery() {
    let mut id = 0;
    let ds =
        parse_program_text("def f = (\ndef g = 1\ndef h = )\n", FileId(0), &mut id).unwrap_err();
    assert_eq!(ds.len(), 2, "{ds:?}");
}

#[test]
fn render_points_at_the_line() {
    let mut sm = SourceMap::new();
    let f = sm.add("t.fut".into(), "def f =\n  if x then y\n".into());
    let mut id = 0;
    let ds = nabla_syntax::parse_file(&sm, f, &mut id).unwrap_err();
    let r = ds[0].render(&sm);
    assert!(r.contains("t.fut:3:1") || r.contains("t.fut:2:"), "{r}");
    assert!(r.contains("syntax error"), "{r}");
}

#[test]
fn nesting_limit_is_an_error_not_a_crash() {
    let deep = format!("def x = {}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let (m, _, _) = perr(&deep);
    assert!(m.contains("nesting too deep"), "{m}");
    let deep = format!("def x = {}1", "-".repeat(20_000).replace("--", "- -"));
    let _ = perr(&deep);
    let deep_ty = format!("def x : {}i32 = 1", "[]".repeat(50_000));
    assert!(perr(&deep_ty).0.contains("nesting too deep"));
    let deep_pat = format!("def f {}x{} = 1", "(".repeat(50_000), ")".repeat(50_000));
    assert!(perr(&deep_pat).0.contains("nesting too deep"));
    // a long operator chain is fine up to the chain limit, an error beyond
    let chain = format!("def x = 1{}", " + 1".repeat(1000));
    prog(&chain);
    let chain = format!("def x = 1{}", " + 1".repeat(100_000));
    assert!(perr(&chain).0.contains("too long"));
    // every kind of nesting right around the limit fails cleanly or parses
    for n in [120, 250, 255, 256, 257, 300] {
        let srcs = [
            format!("def x = {}1{}", "[".repeat(n), "]".repeat(n)),
            format!("def x = {}1{}", "{a = ".repeat(n), "}".repeat(n)),
            format!("def x = {}1", "if c then 1 else ".repeat(n)),
            format!("def x = {}1", "\\x -> ".repeat(n)),
            format!("def x = {}1", "- ".repeat(n)),
            format!("def x = {}1{}", "f (".repeat(n), ")".repeat(n)),
            format!("def x = {}1{}", "a[".repeat(n), "]".repeat(n)),
            format!("def x = {}1", "loop x = 0 for i < n do ".repeat(n)),
            format!("def x = {}1", "match x case _ -> ".repeat(n)),
            format!("def x = {}1", "x |> ".repeat(n)),
            format!("def x = {}1", "2 ** ".repeat(n)),
            format!("def x = {}1", "f <| ".repeat(n)),
            format!("def x = {}1", "#[a] ".repeat(n)),
            format!("def x : {}i32{} = 1", "(".repeat(n), ")".repeat(n)),
            format!("def x : {}i32 = 1", "* ".repeat(n)),
            format!("def x : {}i32 = 1", "i32 -> ".repeat(n)),
            format!("def x : {}i32{} = 1", "{a: ".repeat(n), "}".repeat(n)),
            format!("def f {}x{} = 1", "{a = ".repeat(n), "}".repeat(n)),
            format!("def f = {}x{}", "f64.(".repeat(n), ")".repeat(n)),
        ];
        for src in srcs {
            let mut id = 0;
            if let Err(ds) = parse_program_text(&src, FileId(0), &mut id) {
                assert!(
                    ds[0].message.contains("nesting too deep"),
                    "{n}: {}",
                    ds[0].message
                );
            }
        }
    }
    // long postfix chains build deep trees iteratively: capped too
    assert!(perr(&format!("def x = (a){}", ".b".repeat(100_000)))
        .0
        .contains("too long"));
    assert!(perr(&format!("def x = a{}", "[0]".repeat(100_000)))
        .0
        .contains("too long"));
    prog(&format!("def x = (a){}", ".b".repeat(500)));
    // moderately deep nesting is fine
    let ok = format!("def x = {}1{}", "(".repeat(200), ")".repeat(200));
    prog(&ok);
}

#[test]
fn realistic_programs() {
    let src = r#"
-- Matrix multiplication.
def dotprod [n] (xs: [n]f64) (ys: [n]f64): f64 =
  reduce (+) 0 (map2 (*) xs ys)

def matmul [n][m][p] (a: [n][m]f64) (b: [m][p]f64): [n][p]f64 =
  map (\a_row -> map (\b_col -> dotprod a_row b_col) (transpose b)) a

-- A loop with an in-place update.
def prefix_sums [n] (xs: [n]i32): *[n]i32 =
  let out = replicate n 0
  let (out, _) =
    loop (out, acc) = (out, 0) for i < n do
      let acc = acc + xs[i]
      let out[i] = acc
      in (out, acc)
  in out

type point = {x: f64, y: f64}

def move (p: point) (dx: f64): point =
  p with x = p.x + dx

def norm (p: point) = f64.sqrt (p.x * p.x + p.y * p.y)

def classify (x: i32) =
  match x
  case 0 -> #zero
  case n -> if n < 0 then #neg else #pos

entry main (a: [][]f64) (b: [][]f64) =
  let c = matmul a b
  in (c, map (\r -> r[::-1]) c |> map (reduce (f64.+) 0f64))

def sum_evens (xs: []i64) =
  xs |> filter (\x -> x % 2 == 0) |> reduce (+) 0

def iterate_until (f: f64 -> f64) (x0: f64) =
  loop x = x0 while f x > 1e-6 do x / 2.0
"#;
    let pr = prog(src);
    assert_eq!(pr.decs.len(), 10);
    match &pr.decs[2] {
        Dec::Val(v) => {
            assert_eq!(v.name.name, "prefix_sums");
            let s = dump::expr(&v.body);
            assert!(
                s.starts_with("(let out (app replicate n 0) (let (tuple out _) (loop"),
                "{s}"
            );
            assert!(s.contains("(letwith out (i) acc (tuple out acc))"), "{s}");
        }
        d => panic!("{d:?}"),
    }
    match &pr.decs[4] {
        Dec::Val(v) => assert_eq!(dump::expr(&v.body), "(recupdate p x (+ p.x dx))"),
        d => panic!("{d:?}"),
    }
}

#[test]
fn long_else_if_chains_parse_iteratively() {
    // `else if` is a chain step, not nesting: 300 and 4000 arms parse.
    for n in [300usize, 4000] {
        let mut src = String::from("def f (x: i32) : i32 =\n  if x == 0 then 0\n");
        for i in 1..n {
            src.push_str(&format!("  else if x == {i} then {i}\n"));
        }
        src.push_str("  else -1\n");
        let p = prog(&src);
        let Dec::Val(vb) = &p.decs[0] else {
            panic!("not a value binding")
        };
        // Right-nested: each `if`'s else branch is the next `if`, and each
        // node's span runs from its own `if` to the end of the chain.
        let mut e = &vb.body;
        let mut arms = 0;
        while let ExprKind::If { then_, else_, .. } = &e.kind {
            assert_eq!(&src[e.span.start as usize..e.span.start as usize + 2], "if");
            assert_eq!(e.span.end as usize, src.trim_end().len());
            assert!(matches!(then_.kind, ExprKind::Lit(_)));
            arms += 1;
            e = else_;
        }
        assert_eq!(arms, n);
        assert!(
            matches!(e.kind, ExprKind::Lit(_)),
            "final else: {:?}",
            e.kind
        );
    }
    // Beyond the chain limit: a clean error, not a crash.
    let src = format!("def x = {}1", "if c then 1 else ".repeat(100_000));
    assert!(perr(&src).0.contains("too long"));
    // Nesting inside a condition or a `then` branch still counts as nesting.
    let src = format!(
        "def x = {}1{}",
        "if c then (".repeat(300),
        ") else 0".repeat(300)
    );
    assert!(perr(&src).0.contains("nesting too deep"));
    // A chain whose last `if` lacks its `else`: the error names that `if`.
    let mut id = 0;
    let ds = parse_program_text("def x = if a then 1 else if b then 2", FileId(0), &mut id)
        .expect_err("missing else");
    assert!(ds[0].message.contains("every `if` needs an `else`"));
    assert_eq!(ds[0].labels[0].0.start, 25);
}

#[test]
fn string_literals_are_u8_arrays() {
    let e = parse_expr_text("\"a\\n\"", FileId(0)).unwrap();
    let ExprKind::Ascribe(array, TypeExp::Array(_, elem, _)) = &e.kind else {
        panic!("{e:?}")
    };
    assert!(matches!(**elem, TypeExp::Prim(nabla_prim::PrimType::U8, _)));
    let ExprKind::ArrayLit(bytes) = &array.kind else {
        panic!("{array:?}")
    };
    let values: Vec<i128> = bytes
        .iter()
        .map(|b| match &b.kind {
            ExprKind::Lit(Literal::Int { value, .. }) => *value,
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(values, [97, 10]);
}
