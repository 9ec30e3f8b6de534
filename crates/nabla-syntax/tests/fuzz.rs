//! Robustness: random bytes and random token soups never panic or hang.

use nabla_syntax::{parse_program_text, FileId};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "def", "entry", "let", "in", "if", "then", "else", "loop", "for", "while", "do", "match",
    "case", "type", "type^", "local", "open", "import", "with", "true", "false", "x", "f", "xs",
    "i32", "f64", "0", "1.5", "2i8", "-", "+", "*", "**", "|>", "<|", "==", "<", "!", "&&", "(",
    ")", "[", "]", "a[", "{", "}", ",", ":", ":>", ".", "..", "...", "..<", "..>", "\\", "->", "=",
    "_", "#c", "#[attr]", "'a", "'^b", "`f`", "?", "\"s\"", "f64.+", "x.0", "(.a)", "(+)", "\n",
    "-- c\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut id = 0;
        let _ = parse_program_text(&text, FileId(0), &mut id);
    }

    #[test]
    fn random_token_soup_does_not_panic(idx in proptest::collection::vec(0..WORDS.len(), 0..80)) {
        let text: Vec<&str> = idx.iter().map(|&i| WORDS[i]).collect();
        let mut id = 0;
        let _ = parse_program_text(&text.join(" "), FileId(0), &mut id);
        let _ = nabla_syntax::parse_expr_text(&text.join(" "), FileId(0));
        let _ = nabla_syntax::parse_type_text(&text.join(" "), FileId(0));
        let _ = nabla_syntax::parse_pat_text(&text.join(" "), FileId(0));
    }

    #[test]
    fn token_soup_after_def_does_not_panic(idx in proptest::collection::vec(0..WORDS.len(), 0..60)) {
        let text: Vec<&str> = idx.iter().map(|&i| WORDS[i]).collect();
        let src = format!("def f (x: i32) = {}", text.join(" "));
        let mut id = 0;
        let _ = parse_program_text(&src, FileId(0), &mut id);
    }
}

/// Errors always carry a span inside the file.
#[test]
fn error_spans_are_in_bounds() {
    for src in [
        "def",
        "def f =",
        "def f = (",
        "let",
        "type t =",
        "def f = a[",
        "def f = \\",
        "def f = {a = }",
        "#[",
    ] {
        let mut id = 0;
        let ds = parse_program_text(src, FileId(0), &mut id).unwrap_err();
        for d in ds {
            assert!(
                d.span.start <= d.span.end && d.span.end as usize <= src.len(),
                "{src:?}: {d:?}"
            );
        }
    }
}
