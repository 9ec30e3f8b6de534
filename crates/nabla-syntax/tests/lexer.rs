//! Lexer tests: every token kind and all literal forms.

use nabla_prim::PrimType;
use nabla_syntax::ast::Liftedness;
use nabla_syntax::lexer::{lex, Tok};
use nabla_syntax::FileId;

fn toks(src: &str) -> Vec<Tok> {
    let mut v: Vec<Tok> = lex(src, FileId(0))
        .unwrap_or_else(|e| panic!("{src:?}: {e:?}"))
        .into_iter()
        .map(|t| t.tok)
        .collect();
    assert_eq!(v.pop(), Some(Tok::Eof));
    v
}

fn one(src: &str) -> Tok {
    let v = toks(src);
    assert_eq!(v.len(), 1, "{src:?} gave {v:?}");
    v.into_iter().next().unwrap()
}

fn sym(s: &str) -> Tok {
    Tok::Symbol {
        quals: vec![],
        name: s.into(),
    }
}

fn int(v: i128, s: Option<PrimType>) -> Tok {
    Tok::Int {
        value: v,
        suffix: s,
    }
}

fn lex_err(src: &str) -> String {
    let e = lex(src, FileId(0)).expect_err("expected a lexical error");
    e[0].message.clone()
}

#[test]
fn keywords_and_names() {
    assert_eq!(
        toks("if then else def let loop in for do with local open import type entry module while match case true false"),
        vec![
            Tok::If, Tok::Then, Tok::Else, Tok::Def, Tok::Let, Tok::Loop, Tok::In, Tok::For, Tok::Do, Tok::With,
            Tok::Local, Tok::Open, Tok::Import, Tok::Type, Tok::Entry, Tok::Module, Tok::While, Tok::Match,
            Tok::Case, Tok::True, Tok::False
        ]
    );
    assert_eq!(one("x'"), Tok::Ident("x'".into()));
    assert_eq!(one("_foo1"), Tok::Ident("_foo1".into()));
    assert_eq!(one("_"), Tok::Underscore);
    assert_eq!(one("assert"), Tok::Ident("assert".into()));
    assert_eq!(one("iffy"), Tok::Ident("iffy".into()));
}

#[test]
fn punctuation() {
    assert_eq!(
        toks("( ) [ ] { } , : :> . .. ... ..< ..> \\ ` ? ~ = -> _"),
        vec![
            Tok::LParen,
            Tok::RParen,
            Tok::LBracket { index: false },
            Tok::RBracket,
            Tok::LBrace,
            Tok::RBrace,
            Tok::Comma,
            Tok::Colon,
            Tok::ColonGt,
            Tok::Dot,
            Tok::DotDot,
            Tok::DotDotDot,
            Tok::DotDotLt,
            Tok::DotDotGt,
            Tok::Backslash,
            Tok::Backtick,
            Tok::Question,
            Tok::Tilde,
            Tok::Equals,
            Tok::Arrow,
            Tok::Underscore
        ]
    );
}

#[test]
fn operators() {
    for op in [
        "+", "-", "*", "/", "%", "//", "%%", "**", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
        "&", "|", "^", "<<", ">>", "|>", "<|", "+^", ">->", "<-<", "!", ">>=",
    ] {
        assert_eq!(one(op), sym(op), "{op}");
    }
    assert_eq!(
        one("f64.+"),
        Tok::Symbol {
            quals: vec!["f64".into()],
            name: "+".into()
        }
    );
    assert_eq!(
        one("a.b.**"),
        Tok::Symbol {
            quals: vec!["a".into(), "b".into()],
            name: "**".into()
        }
    );
    // `x.y` stays a name, a dot and a name
    assert_eq!(
        toks("x.y"),
        vec![Tok::Ident("x".into()), Tok::Dot, Tok::Ident("y".into())]
    );
    // comment inside an operator run ends the operator
    assert_eq!(
        toks("a +-- c\nb"),
        vec![Tok::Ident("a".into()), sym("+"), Tok::Ident("b".into())]
    );
}

#[test]
fn integer_literals() {
    assert_eq!(one("0"), int(0, None));
    assert_eq!(one("42"), int(42, None));
    assert_eq!(one("1_000_000"), int(1_000_000, None));
    assert_eq!(one("0x1F"), int(31, None));
    assert_eq!(one("0XfF"), int(255, None));
    assert_eq!(one("0b101"), int(5, None));
    assert_eq!(one("0B1_1"), int(3, None));
    assert_eq!(one("1i8"), int(1, Some(PrimType::I8)));
    assert_eq!(one("1i16"), int(1, Some(PrimType::I16)));
    assert_eq!(one("1i32"), int(1, Some(PrimType::I32)));
    assert_eq!(one("1i64"), int(1, Some(PrimType::I64)));
    assert_eq!(one("1u8"), int(1, Some(PrimType::U8)));
    assert_eq!(one("1u16"), int(1, Some(PrimType::U16)));
    assert_eq!(one("1u32"), int(1, Some(PrimType::U32)));
    assert_eq!(one("2u64"), int(2, Some(PrimType::U64)));
    assert_eq!(one("0xffu8"), int(255, Some(PrimType::U8)));
    assert_eq!(
        one("18446744073709551615u64"),
        int(18446744073709551615, Some(PrimType::U64))
    );
}

#[test]
fn float_literals() {
    let f = |src: &str| match one(src) {
        Tok::Float {
            value,
            text,
            suffix,
        } => (value, text, suffix),
        t => panic!("{src}: {t:?}"),
    };
    assert_eq!(f("1.5"), (1.5, "1.5".into(), None));
    assert_eq!(f("1.0f32"), (1.0, "1.0".into(), Some(PrimType::F32)));
    assert_eq!(f("3f64"), (3.0, "3".into(), Some(PrimType::F64)));
    assert_eq!(f("2f16"), (2.0, "2".into(), Some(PrimType::F16)));
    assert_eq!(f("1e-3"), (1e-3, "1e-3".into(), None));
    assert_eq!(f("1E+3"), (1e3, "1e+3".into(), None));
    assert_eq!(
        f("2.5e10f32"),
        (2.5e10, "2.5e10".into(), Some(PrimType::F32))
    );
    assert_eq!(f("1_0.2_5"), (10.25, "10.25".into(), None));
    assert_eq!(f("1337e2f64").0, 133700.0);
    assert_eq!(f("0x1.fp3").0, 15.5);
    assert_eq!(f("0x1p-2").0, 0.25);
}

#[test]
fn numbers_next_to_dots() {
    // ranges: `1..` is not a float
    assert_eq!(
        toks("1..<n"),
        vec![int(1, None), Tok::DotDotLt, Tok::Ident("n".into())]
    );
    // tuple projections: `x.0.1` is two projections, not the float 0.1
    assert_eq!(
        toks("x.0.1"),
        vec![
            Tok::Ident("x".into()),
            Tok::Dot,
            int(0, None),
            Tok::Dot,
            int(1, None)
        ]
    );
    assert_eq!(
        toks("(.0)"),
        vec![Tok::LParen, Tok::Dot, int(0, None), Tok::RParen]
    );
}

#[test]
fn index_brackets() {
    let br = |src: &str| -> Vec<bool> {
        toks(src)
            .into_iter()
            .filter_map(|t| match t {
                Tok::LBracket { index } => Some(index),
                _ => None,
            })
            .collect()
    };
    assert_eq!(br("a[0]"), vec![true]);
    assert_eq!(br("a [0]"), vec![false]);
    assert_eq!(br("f(x)[0]"), vec![true]);
    assert_eq!(br("xs[0][1]"), vec![true, true]);
    assert_eq!(br("[1,[2]]"), vec![false, false]);
    assert_eq!(br("([1])"), vec![false]);
    assert_eq!(br("f -- c\n[1]"), vec![false]);
}

#[test]
fn other_tokens() {
    assert_eq!(one("#foo"), Tok::Constr("foo".into()));
    assert_eq!(one("#[inline]"), Tok::Attr("inline".into()));
    assert_eq!(
        one("#[ sequential_outer(2, [x]) ]"),
        Tok::Attr("sequential_outer(2, [x])".into())
    );
    assert_eq!(one("'a"), Tok::TyParam(Liftedness::Unlifted, "a".into()));
    assert_eq!(one("'^f"), Tok::TyParam(Liftedness::Lifted, "f".into()));
    assert_eq!(one("'~n"), Tok::TyParam(Liftedness::SizeLifted, "n".into()));
    assert_eq!(one("\"lib/a\\\"b\""), Tok::Str("lib/a\"b".into()));
}

#[test]
fn comments_and_spans() {
    let ts = lex("-- | doc\nx -- trailing\n  y", FileId(3)).unwrap();
    assert_eq!(ts.len(), 3);
    assert_eq!((ts[0].span.start, ts[0].span.end), (9, 10));
    assert_eq!(ts[0].span.file, FileId(3));
    assert_eq!((ts[1].span.start, ts[1].span.end), (25, 26));
    assert!(ts[0].line_start && ts[1].line_start);
    assert_eq!(ts[2].tok, Tok::Eof);
}

#[test]
fn lexical_errors() {
    assert!(lex_err("1abc").contains("invalid suffix"));
    assert!(lex_err("1.5i32").contains("invalid suffix"));
    assert!(lex_err("0x").contains("hexadecimal"));
    assert!(lex_err("\"abc").contains("unterminated string"));
    assert!(lex_err("#[inline").contains("unterminated attribute"));
    assert!(lex_err("# x").contains("constructor"));
    assert!(lex_err("' a").contains("type parameter"));
    assert!(lex_err("99999999999999999999999999999999999999999").contains("too large"));
    assert!(lex_err("x $ y").contains("unexpected character"));
    assert!(lex_err("λ").contains("unexpected character"));
    let e = lex("ok\n  @", FileId(0)).unwrap_err();
    assert_eq!((e[0].span.start, e[0].span.end), (5, 6));
}

/// A long chain of projections lexes to one token per name and dot (its
/// time is measured by the `lexer/dotted_chain_2e5` benchmark of
/// crates/nabla/benches/pipeline.rs).
#[test]
fn long_dotted_chains_lex() {
    let src = format!("a{}", ".b".repeat(200_000));
    let toks = lex(&src, FileId(0)).unwrap();
    assert_eq!(toks.len(), 400_002);
}
