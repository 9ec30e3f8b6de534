//! End-to-end tests of the `nabla` binary: run, check, dump-ir, test.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

fn nabla(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nabla");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn no_panic(o: &Output) {
    let err = text(&o.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "panic: {err}"
    );
}

const SCALE: &str = "\
def main (xs: []i32) (k: i32) : []i32 = map (\\x -> x * k) xs

entry pair (x: f64) : (f64, bool) = (x * 2.0, x > 1.0)
";

#[test]
fn run_reads_text_input_and_prints_results() {
    let d = scratch("run");
    let f = write(&d, "scale.fut", SCALE);
    let o = nabla(&["run", f.to_str().unwrap()], b"[1, 2, 3] 4");
    no_panic(&o);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "[4i32, 8i32, 12i32]\n");

    // Another entry point; a tuple result prints one value per line.
    let o = nabla(&["run", f.to_str().unwrap(), "-e", "pair"], b"1.5");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "3.0f64\ntrue\n");
}

#[test]
fn run_reads_binary_input_and_writes_binary_output() {
    let d = scratch("binary");
    let f = write(&d, "scale.fut", SCALE);
    let mut input = Vec::new();
    nabla_values::write_value_binary(
        &nabla_values::Value::Array(nabla_values::ArrayValue::from_vec(&[2], vec![5i32, -1])),
        &mut input,
    );
    input.extend_from_slice(b" 3");
    let o = nabla(&["run", f.to_str().unwrap()], &input);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "[15i32, -3i32]\n");

    let o = nabla(&["run", "--binary-output", f.to_str().unwrap()], b"[1] 2");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut want = Vec::new();
    nabla_values::write_value_binary(
        &nabla_values::Value::Array(nabla_values::ArrayValue::from_vec(&[1], vec![2i32])),
        &mut want,
    );
    assert_eq!(o.stdout, want);
}

#[test]
fn run_reports_bad_input_and_missing_entry() {
    let d = scratch("badinput");
    let f = write(&d, "scale.fut", SCALE);
    let o = nabla(&["run", f.to_str().unwrap()], b"[1, 2, 3]");
    no_panic(&o);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("input"), "{}", text(&o.stderr));

    let o = nabla(&["run", f.to_str().unwrap(), "-e", "nope"], b"");
    no_panic(&o);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("no entry point named nope") && err.contains("pair"),
        "{err}"
    );
}

#[test]
fn run_time_error_has_location() {
    let d = scratch("rterr");
    let f = write(
        &d,
        "idx.fut",
        "def main (xs: []i32) (i: i64) : i32 =\n  xs[i]\n",
    );
    let o = nabla(&["run", f.to_str().unwrap()], b"[1, 2] 7i64");
    no_panic(&o);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("idx.fut:2:3"), "{err}");
    assert!(err.contains("out of bounds"), "{err}");
    assert!(err.contains("xs[i]"), "source line missing: {err}");
}

#[test]
fn check_accepts_good_and_reports_type_errors() {
    let d = scratch("check");
    let good = write(&d, "good.fut", SCALE);
    let o = nabla(&["check", good.to_str().unwrap()], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());

    let bad = write(&d, "bad.fut", "def f (x: i32) : i32 =\n  x + true\n");
    let o = nabla(&["check", bad.to_str().unwrap()], b"");
    no_panic(&o);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("type error"), "{err}");
    assert!(err.contains("bad.fut:2:7"), "{err}");
    assert!(err.contains("x + true"), "{err}");
}

#[test]
fn missing_file_and_syntax_error_do_not_panic() {
    let d = scratch("missing");
    let o = nabla(&["check", d.join("nothere.fut").to_str().unwrap()], b"");
    no_panic(&o);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("nothere.fut"),
        "{}",
        text(&o.stderr)
    );

    let f = write(&d, "syn.fut", "def main (x: i32) = (x +\n");
    let o = nabla(&["run", f.to_str().unwrap()], b"1");
    no_panic(&o);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("syn.fut"), "{}", text(&o.stderr));

    let deep = format!(
        "def main (x: i32) : i32 = {}x{}\n",
        "(".repeat(50_000),
        ")".repeat(50_000)
    );
    let f = write(&d, "deep.fut", &deep);
    let o = nabla(&["check", f.to_str().unwrap()], b"");
    no_panic(&o);
    assert!(o.status.code().is_some(), "killed by a signal: {o:?}");
}

#[test]
fn dump_ir_prints_functions_and_entries() {
    let d = scratch("dump");
    let f = write(&d, "scale.fut", SCALE);
    let o = nabla(&["dump-ir", f.to_str().unwrap()], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("fun main ("), "{out}");
    assert!(out.contains("map("), "{out}");
    assert!(out.contains("entry main = "), "{out}");
    assert!(out.contains("entry pair = "), "{out}");
}

#[test]
fn test_command_counts_and_reports_failures() {
    let d = scratch("test");
    write(
        &d,
        "a_pass.fut",
        "-- Scaling.\n-- ==\n-- input { [1,2,3] 2 } output { [2,4,6] }\n-- input { empty([0]i32) 3 }\n-- output { empty([0]i32) }\n\
         -- input { [1,\n--          2] 1 }\n-- output { [1, 2] }\ndef main (xs: []i32) (k: i32) = map (\\x -> x * k) xs\n",
    );
    write(&d, "b_fail.fut", "-- ==\n-- input { 1 } output { 3 }\n-- input { 2 } output { 3 }\ndef main (x: i32) = x + 1\n");
    // Not a test file (no block): ignored. Deeper directories are searched.
    write(&d, "lib/util.fut", "def helper (x: i32) = x\n");
    write(&d, "sub/c_err.fut", "-- ==\n-- input { [1,2] 5i64 } error: out of bounds\n-- input { [1,2] 0i64 } error: bounds\ndef main (xs: []i32) (i: i64) = xs[i]\n");
    let o = nabla(&["test", d.to_str().unwrap()], b"");
    no_panic(&o);
    let out = text(&o.stdout);
    assert!(!o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"5 passed, 2 failed"), "{out}");
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("FAIL ") && lines[0].contains("b_fail.fut:main #0 (input { 1 })"),
        "{out}"
    );
    assert!(lines[0].contains("expected 3i32, got 2i32"), "{out}");
    assert!(
        lines[1].contains("c_err.fut:main #1") && lines[1].contains("succeeded"),
        "{out}"
    );

    // Only the passing file: exit 0.
    let o = nabla(&["test", d.join("a_pass.fut").to_str().unwrap()], b"");
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout), "3 passed, 0 failed\n");
}

#[test]
fn test_command_handles_files_random_compile_errors_and_skips() {
    let d = scratch("test2");
    write(&d, "data/in.txt", "[1, 2, 3]\n");
    write(&d, "data/out.txt", "6\n");
    {
        use flate2::write::GzEncoder;
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"[10, 20]").unwrap();
        std::fs::write(d.join("data/in2.gz"), gz.finish().unwrap()).unwrap();
    }
    write(
        &d,
        "files.fut",
        "-- ==\n-- input @ data/in.txt output @ data/out.txt\n-- input @ data/in2.gz output { 30 }\n\
         -- compiled input { [1] } output { 999 }\n\
         def main (xs: []i32) : i32 = reduce (+) 0 xs\n\n\
         -- ==\n-- entry: check_sum\n-- random input { [100]i32 } output { true }\n\
         entry check_sum (xs: []i32) : bool = reduce (+) 0 xs == reduce (+) 0 (reverse xs)\n",
    );
    write(
        &d,
        "typeerr.fut",
        "-- ==\n-- error: mismatched|type\ndef main (x: i32) : bool = x\n",
    );
    write(
        &d,
        "typeerr_wrong.fut",
        "-- ==\n-- error: no-such-words\ndef main (x: i32) : bool = x\n",
    );
    write(
        &d,
        "compile_only.fut",
        "-- Just type-checks.\n-- ==\ndef main (x: i32) = x\n",
    );
    write(
        &d,
        "disabled.fut",
        "-- ==\n-- tags { notest }\n-- input { 1 } output { 99 }\ndef main (x: i32) = x\n",
    );
    write(&d, "multi.fut", "-- ==\n-- entry: inc inc2\n-- input { 1 } output { 2 }\nentry inc (x: i32) = x + 1\nentry inc2 (x: i32) = x + 1\n");
    let o = nabla(&["test", d.to_str().unwrap(), "-j", "2"], b"");
    no_panic(&o);
    let out = text(&o.stdout);
    // files: 2 datasets (compiled skipped) + 1 random; typeerr 1; typeerr_wrong 1 (fails);
    // compile_only 1; disabled 0; multi 2.
    assert_eq!(
        out.lines().last(),
        Some("7 passed, 1 failed, 1 skipped"),
        "{out}"
    );
    assert!(
        out.contains("files.fut #2 (input { [1] }): `compiled` dataset"),
        "{out}"
    );
    assert!(
        out.contains("FAIL") && out.contains("typeerr_wrong.fut"),
        "{out}"
    );
    assert!(!o.status.success());
}

/// Every directive of Futhark's test-block language: `structure` blocks
/// are accepted (not checked), `script` datasets run (their FutharkScript
/// calls the entry point), `compiled` and `auto output` datasets are
/// skipped by the interpreter (with a reason each), and
/// `warning:` fails because nabla gives no warnings.
#[test]
fn test_command_takes_every_directive() {
    let d = scratch("directives");
    write(
        &d,
        "all.fut",
        "-- Directives.\n-- ==\n-- tags { some_tag no_opencl }\n-- structure { Screma 1 /Loop/Screma 0 }\n\
         -- structure gpu { SegRed 1 }\n-- entry: sum\n-- input { [1, 2] } output { 3 }\n\
         -- compiled input { [5] } output { 5 }\n-- \"auto\" input { [7, 8] } auto output\n\
         -- script input { pair 2 } output { 4 }\n\
         entry sum (xs: []i32) : i32 = reduce (+) 0 xs\n\
         entry pair (x: i32) : []i32 = [x, x]\n",
    );
    write(
        &d,
        "warn.fut",
        "-- ==\n-- warning: unused\ndef main (x: i32) = let y = 1 in x\n",
    );
    // `warning: ^$` matches the empty warning text: it passes.
    write(
        &d,
        "nowarn.fut",
        "-- ==\n-- warning: ^$\ndef main (x: i32) = x\n",
    );
    write(
        &d,
        "bad_structure.fut",
        "-- ==\n-- structure { Screma many }\ndef main (x: i32) = x\n",
    );
    let o = nabla(&["test", d.to_str().unwrap(), "-j", "1"], b"");
    no_panic(&o);
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().last(),
        Some("3 passed, 2 failed, 2 skipped"),
        "{out}"
    );
    for want in [
        "all.fut #1 (input { [5] }): `compiled` dataset (run it with --backend=c)",
        "all.fut #2 (\"auto\"): `auto output` needs a reference run",
        "warn.fut (warning expected): expected a compiler warning matching /unused/",
        "bad_structure.fut: bad test block: line 2: `structure` block: `many` is not a count",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    assert!(!o.status.success());
}

#[test]
fn test_command_reports_missing_path() {
    let d = scratch("test3");
    let o = nabla(&["test", d.join("none").to_str().unwrap()], b"");
    no_panic(&o);
    assert!(!o.status.success());
    assert!(
        text(&o.stdout).ends_with("0 passed, 1 failed\n"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn test_command_times_out_hanging_programs() {
    let d = scratch("timeout");
    write(&d, "hang.fut", "-- ==\n-- input { 1 } output { 1 }\ndef main (x: i32) : i32 = loop y = x while y >= 0 do y\n");
    write(
        &d,
        "ok.fut",
        "-- ==\n-- input { 1 } output { 1 }\ndef main (x: i32) : i32 = x\n",
    );
    let o = nabla(&["test", "--timeout", "1", d.to_str().unwrap()], b"");
    no_panic(&o);
    let out = text(&o.stdout);
    // The dataset is stopped (not abandoned) and named.
    assert!(out.contains("hang.fut:main #0"), "{out}");
    assert!(out.contains("timed out after 1 s"), "{out}");
    assert!(out.ends_with("1 passed, 1 failed\n"), "{out}");
}

/// `nabla run` prints a record result as `{a = …, b = …}` and a tuple
/// inside a result as `(…, …)`, as Futhark does; the components of a
/// top-level tuple stay one per line; `-b` writes the flat values.
#[test]
fn run_prints_records_and_tuples_as_futhark() {
    let d = scratch("records");
    write(
        &d,
        "rec.fut",
        "type point = {x: f64, y: f64}\n\
         def main (k: i32) : (point, ((i32, bool), []f64), {inner: point, n: i64}) =\n\
         \x20 ({x = 1.0, y = 2.0}, ((k, true), [1.0, 2.0]), {inner = {x = 3.0, y = 4.0}, n = 5})\n",
    );
    let o = nabla(&["run", d.join("rec.fut").to_str().unwrap()], b"7");
    no_panic(&o);
    assert_eq!(
        text(&o.stdout),
        "{x = 1.0f64, y = 2.0f64}\n((7i32, true), [1.0f64, 2.0f64])\n\
         {inner = {x = 3.0f64, y = 4.0f64}, n = 5i64}\n"
    );
    let o = nabla(&["run", "-b", d.join("rec.fut").to_str().unwrap()], b"7");
    assert!(o.status.success());
    let flat = nabla_values::read_values(&o.stdout, None).expect("binary values");
    assert_eq!(flat.len(), 8, "the flat values: {flat:?}");
}

/// `nabla run` prints sum-type results as `#name payload…` (a nested sum
/// with a payload in parentheses) and arrays of records, tuples and sums
/// element by element, as Futhark does.
#[test]
fn run_prints_sums_and_arrays_of_records_as_futhark() {
    let d = scratch("sums");
    write(
        &d,
        "sums.fut",
        "type opt 'a = #none | #some a\n\
         type point = {x: f64, y: f64}\n\
         entry shapes (b: bool) : (opt i32, #circle f64 | #rect f64 f64, opt (i32, f64)) =\n\
         \x20 (if b then #some 3 else #none, if b then #rect 2.0 3.0 else #circle 1.0, #some (1, 2.0))\n\
         entry points (n: i64) : [][]point = tabulate_2d n 2 (\\i j -> {x = f64.i64 i, y = f64.i64 j})\n\
         entry nested (n: i64) : []opt (opt i32) =\n\
         \x20 tabulate n (\\i -> if i == 0 then #none else if i == 1 then #some #none else #some (#some (i32.i64 i)))\n\
         entry pairs (n: i64) : [](i32, []f64) = tabulate n (\\i -> (i32.i64 i, replicate 2 1.0))\n",
    );
    let file = d.join("sums.fut");
    let run = |entry: &str, input: &[u8]| {
        let o = nabla(&["run", "-e", entry, file.to_str().unwrap()], input);
        no_panic(&o);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    assert_eq!(
        run("shapes", b"true"),
        "#some 3i32\n#rect 2.0f64 3.0f64\n#some (1i32, 2.0f64)\n"
    );
    assert_eq!(
        run("shapes", b"false"),
        "#none\n#circle 1.0f64\n#some (1i32, 2.0f64)\n"
    );
    assert_eq!(
        run("points", b"2"),
        "[[{x = 0.0f64, y = 0.0f64}, {x = 0.0f64, y = 1.0f64}], \
         [{x = 1.0f64, y = 0.0f64}, {x = 1.0f64, y = 1.0f64}]]\n"
    );
    assert_eq!(run("points", b"0"), "empty([0][2]point)\n");
    assert_eq!(
        run("nested", b"3"),
        "[#none, #some #none, #some (#some 2i32)]\n"
    );
    assert_eq!(
        run("pairs", b"2"),
        "[(0i32, [1.0f64, 1.0f64]), (1i32, [1.0f64, 1.0f64])]\n"
    );
}
