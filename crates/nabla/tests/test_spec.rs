//! The test-block parser (`nabla::testrunner::spec`) on many forms.

use nabla::testrunner::spec::{parse_test_spec, Expected, InputSpec, TestSpec};
use std::path::{Path, PathBuf};

fn parse(src: &str) -> TestSpec {
    parse_test_spec(src, Path::new("/dir")).unwrap_or_else(|e| panic!("{e}"))
}

fn values(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn description_is_ignored_and_values_span_lines() {
    let s = parse(
        "-- A description that mentions input { 1 } in prose.\n-- ==\n-- input {\n--   [1, 2,\n--    3]\n--   4i64\n-- }\n-- output {\n--   10\n-- }\ndef main = 0\n",
    );
    assert_eq!(s.blocks.len(), 1);
    let ds = &s.blocks[0].datasets;
    assert_eq!(ds.len(), 1);
    match &ds[0].input {
        InputSpec::Values(t) => assert_eq!(values(t), "[1, 2, 3] 4i64"),
        other => panic!("{other:?}"),
    }
    match &ds[0].expected {
        Expected::Values(t) => assert_eq!(values(t), "10"),
        other => panic!("{other:?}"),
    }
    assert_eq!(ds[0].line, 3);
}

#[test]
fn entries_apply_to_following_datasets() {
    let s = parse(
        "-- ==\n-- input { 1 } output { 1 }\n-- entry: f g\n-- input { 2 } output { 3 }\n-- entry: h\n-- input { 4 }\n",
    );
    let ds = &s.blocks[0].datasets;
    assert_eq!(ds[0].entries, vec!["main"]);
    assert_eq!(ds[1].entries, vec!["f", "g"]);
    assert_eq!(ds[2].entries, vec!["h"]);
    assert_eq!(ds[2].expected, Expected::Success);
}

#[test]
fn several_blocks_have_their_own_entries() {
    let s = parse(
        "-- ==\n-- entry: a\n-- input { 1 }\n\ndef x = 1\n\n-- ==\n-- input { 2 }\ndef main = 2\n",
    );
    assert_eq!(s.blocks.len(), 2);
    assert_eq!(s.blocks[0].datasets[0].entries, vec!["a"]);
    assert_eq!(s.blocks[1].datasets[0].entries, vec!["main"]);
    assert_eq!(s.blocks[1].line, 7);
}

#[test]
fn files_resolve_relative_to_the_test_directory() {
    let s = parse("-- ==\n-- input @ data/x.in output @ data/x.out\n-- input @data/y.in.gz\n-- output @ y.out\n");
    let ds = &s.blocks[0].datasets;
    assert_eq!(
        ds[0].input,
        InputSpec::File(PathBuf::from("/dir/data/x.in"))
    );
    assert_eq!(
        ds[0].expected,
        Expected::File(PathBuf::from("/dir/data/x.out"))
    );
    assert_eq!(
        ds[1].input,
        InputSpec::File(PathBuf::from("/dir/data/y.in.gz"))
    );
    assert_eq!(ds[1].expected, Expected::File(PathBuf::from("/dir/y.out")));
}

#[test]
fn run_time_and_compile_time_errors() {
    let s = parse("-- ==\n-- input { [1] 2i64 }\n-- error: Index \\[2\\] out of bounds.*\n");
    assert_eq!(
        s.blocks[0].datasets[0].expected,
        Expected::Error("Index \\[2\\] out of bounds.*".into())
    );
    assert!(s.blocks[0].compile_error.is_none());

    let s = parse("-- Type error expected.\n-- ==\n-- error: Cannot unify\ndef main = 1 + true\n");
    assert_eq!(s.blocks[0].compile_error.as_deref(), Some("Cannot unify"));
    assert!(s.blocks[0].datasets.is_empty());
    assert!(!s.blocks[0].compile_only());
}

#[test]
fn random_compiled_script_and_named_datasets() {
    let s = parse(
        "-- ==\n-- random input { [100]i32 [10][10]f64 } output { true }\n-- compiled input { [1,2] } output { 3 }\n\
         -- compiled random input { [1000000]f32 }\n-- nobench input { 1 } output { 1 }\n\
         -- \"my data\" input { 5 } auto output\n-- script input { mk 10 } output { 1 }\n",
    );
    let ds = &s.blocks[0].datasets;
    assert_eq!(ds.len(), 6);
    assert_eq!(
        ds[0].input,
        InputSpec::Random(" [100]i32 [10][10]f64 ".into())
    );
    assert!(!ds[0].skipped());
    assert!(ds[1].skipped() && ds[1].tags == vec!["compiled"]);
    assert!(matches!(ds[2].input, InputSpec::Random(_)) && ds[2].skipped());
    assert_eq!(ds[2].expected, Expected::Success);
    assert!(!ds[3].skipped());
    assert_eq!(ds[4].name.as_deref(), Some("my data"));
    assert_eq!(ds[4].expected, Expected::Auto);
    assert_eq!(ds[4].describe(), "\"my data\"");
    assert!(!ds[5].skipped() && ds[5].is_script());
    assert_eq!(ds[5].input, InputSpec::Values(" mk 10 ".into()));
    // Compiled code runs `compiled` and `auto output` datasets, and scripts.
    assert_eq!(ds[1].skip_reason(true), None);
    assert_eq!(ds[4].skip_reason(true), None);
    assert!(ds[4].skip_reason(false).unwrap().contains("auto output"));
    assert_eq!(ds[5].skip_reason(true), None);
}

#[test]
fn structure_and_warning_directives() {
    let s = parse(
        "-- ==\n-- structure { Screma 2 /Loop/Screma 1 }\n-- structure gpu {\n--   SegRed 1\n-- }\n\
         -- warning: unused variable\n-- input { 1 } output { 1 }\n",
    );
    let b = &s.blocks[0];
    assert_eq!(b.structures.len(), 2);
    assert_eq!(b.structures[0].backend, None);
    assert_eq!(
        b.structures[0].counts,
        vec![("Screma".to_string(), 2), ("/Loop/Screma".to_string(), 1)]
    );
    assert_eq!(b.structures[1].backend.as_deref(), Some("gpu"));
    assert_eq!(b.structures[1].counts, vec![("SegRed".to_string(), 1)]);
    assert_eq!(b.structures[1].line, 3);
    assert_eq!(b.warnings, vec!["unused variable".to_string()]);
    assert_eq!(b.datasets.len(), 1);
    let bad = parse_test_spec("-- ==\n-- structure { Screma }\n", Path::new("/t")).unwrap_err();
    assert!(bad.message.contains("construct/count pairs"), "{bad}");
}

#[test]
fn tags_disable_and_no_backend_variants() {
    let s = parse("-- ==\n-- tags { fast notest }\n-- input { 1 } output { 1 }\n");
    assert_eq!(s.blocks[0].tags, vec!["fast", "notest"]);
    assert!(s.disabled());
    assert!(parse("-- ==\n-- tags { disable }\n").disabled());
    assert!(parse("-- ==\n-- tags { no_nabla }\n").disabled());
    // Other backends' exclusions do not concern us.
    assert!(!parse("-- ==\n-- tags { no_opencl no_python }\n-- input { 1 }\n").disabled());
}

#[test]
fn blocks_without_datasets_are_compile_only() {
    let s = parse("-- Only check that it compiles.\n-- ==\ndef main (x: i32) = x\n");
    assert_eq!(s.blocks.len(), 1);
    assert!(s.blocks[0].compile_only());
    let s = parse("-- ==\n-- tags { slow }\n");
    assert!(s.blocks[0].compile_only());
}

#[test]
fn non_blocks_are_ignored() {
    // No `==` line; `==` not at the start of a comment; indented comments.
    let s = parse(
        "-- input { 1 } output { 2 }\ndef main = 1 -- ==\n  -- ==\n  -- input { 1 }\n-- ===\n",
    );
    assert!(s.blocks.is_empty());
    assert!(parse("").blocks.is_empty());
}

#[test]
fn empty_arrays_and_descriptions() {
    let s = parse("-- ==\n-- input { empty([0]i32) empty([2][0]f64) } output { empty([0]i32) }\n");
    let d = &s.blocks[0].datasets[0];
    assert_eq!(d.describe(), "input { empty([0]i32) empty([2][0]f64) }");
    let long = format!("-- ==\n-- input {{ [{}] }}\n", vec!["1"; 100].join(", "));
    let s = parse(&long);
    assert!(s.blocks[0].datasets[0].describe().contains('…'));
}

#[test]
fn malformed_blocks_are_errors_not_panics() {
    for src in [
        "-- ==\n-- input { 1\n",
        "-- ==\n-- output { 1 }\n",
        "-- ==\n-- input\n",
        "-- ==\n-- random input @ f\n",
        "-- ==\n-- compiled\n",
        "-- ==\n-- entry:\n-- input { 1 }\n",
        "-- ==\n-- input { 1 } auto\n",
        "-- ==\n-- frobnicate: x\n",
        "-- ==\n-- \"unterminated\n",
        "-- ==\n-- { }\n",
    ] {
        let r = parse_test_spec(src, Path::new("/dir"));
        assert!(r.is_err(), "accepted: {src:?} → {r:?}");
        assert!(r.unwrap_err().line >= 2, "{src:?}");
    }
}

#[test]
fn unicode_and_odd_characters_do_not_panic() {
    for src in [
        "-- ==\n-- é input { ü }\n",
        "-- ==\n-- input { \u{1F600} } output { ∀ }\n",
        "--\n--==\n-- input {1}\n",
    ] {
        let _ = parse_test_spec(src, Path::new("/dir"));
    }
    // `--==` (no space) is a block too: the line is just `==` after the dashes.
    let s = parse("--==\n--input {1} output {1}\n");
    assert_eq!(s.blocks[0].datasets.len(), 1);
}
