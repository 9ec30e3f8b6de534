//! `nabla fmt`: every program of the repository formats idempotently, to a
//! program with the same syntax tree (spans aside) that type-checks when
//! the original does, with its comments and test blocks kept; plus small
//! cases of the layout.

use nabla::fmt::{format_source, program_shape};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fut_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fut_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
}

/// The comments of a text, in order (`--` to the end of the line, outside
/// string literals; good enough for the repository's programs).
fn comment_texts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut in_str = false;
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'"' => in_str = !in_str,
                b'\\' if in_str => i += 1,
                b'-' if !in_str && b.get(i + 1) == Some(&b'-') => {
                    out.push(line[i..].to_string());
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The test blocks of a program: from each `-- ==` line to the end of its
/// run of comment lines.
fn test_blocks(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() == "-- ==" {
            let start = i;
            while i < lines.len() && lines[i].starts_with("--") {
                i += 1;
            }
            out.push(lines[start..i].join("\n"));
        } else {
            i += 1;
        }
    }
    out
}

/// Formats one file and checks every property; returns (changed,
/// declarations kept verbatim, whole file kept).
fn check_file(path: &Path) -> Option<(bool, usize, bool)> {
    let text = std::fs::read_to_string(path).ok()?;
    let shape = program_shape(&text).ok()?;
    let f = format_source(&text).unwrap_or_else(|_| panic!("{}: parses", path.display()));
    let again = format_source(&f.text)
        .unwrap_or_else(|_| panic!("{}: formatted text parses", path.display()));
    assert_eq!(
        f.text,
        again.text,
        "{}: formatting is not idempotent",
        path.display()
    );
    assert_eq!(
        program_shape(&f.text).expect("parses"),
        shape,
        "{}: formatting changed the syntax tree",
        path.display()
    );
    assert_eq!(
        comment_texts(&f.text),
        comment_texts(&text),
        "{}: comments changed",
        path.display()
    );
    for block in test_blocks(&text) {
        assert!(
            f.text.contains(&block),
            "{}: test block changed:\n{block}\n---\n{}",
            path.display(),
            f.text
        );
    }
    let original_ok = nabla::check(path).is_ok();
    if original_ok {
        let formatted = f.text.clone();
        let main = path.to_path_buf();
        let read = move |p: &Path| {
            if p == main {
                Ok(formatted.clone())
            } else {
                std::fs::read_to_string(p)
            }
        };
        assert!(
            nabla::driver::check_reading(path, &read).is_ok(),
            "{}: the formatted program does not type-check",
            path.display()
        );
    }
    Some((f.text != text, f.verbatim, f.unchanged_fallback))
}

#[test]
fn repository_programs_format_idempotently_and_keep_their_meaning() {
    let root = repo_root();
    let mut files = Vec::new();
    fut_files(&root.join("tests"), &mut files);
    fut_files(&root.join("examples"), &mut files);
    assert!(files.len() > 100, "found {} files", files.len());
    let (mut n, mut changed, mut verbatim, mut whole) = (0, 0, 0, 0);
    for p in &files {
        if let Some((c, v, w)) = check_file(p) {
            if v > 0 || w {
                eprintln!(
                    "{}: {v} declarations kept verbatim, kept whole: {w}",
                    p.display()
                );
            }
            n += 1;
            changed += usize::from(c);
            verbatim += v;
            whole += usize::from(w);
        }
    }
    eprintln!(
        "{n} of {} files parse and format idempotently ({changed} changed, \
         {verbatim} declarations kept verbatim, {whole} files kept whole)",
        files.len()
    );
    assert_eq!(whole, 0, "some files were kept whole");
}

fn fmt(s: &str) -> String {
    format_source(s).expect("parses").text
}

/// Formats, checks idempotency and the tree, returns the text.
fn fmt_ok(s: &str) -> String {
    let f = format_source(s).expect("parses");
    assert!(!f.unchanged_fallback, "kept whole:\n{s}");
    assert_eq!(
        f.verbatim, 0,
        "a declaration was kept verbatim:\n{}",
        f.text
    );
    assert_eq!(fmt(&f.text), f.text, "not idempotent");
    assert_eq!(
        program_shape(&f.text).unwrap(),
        program_shape(s).unwrap(),
        "tree changed:\n{}",
        f.text
    );
    f.text
}

#[test]
fn comments_and_doc_comments_are_kept_before_their_definitions() {
    let src =
        "-- | The file.\n\n-- | Adds one.\n-- Really.\ndef inc (x: i32) =   x+1\n-- trailing\n";
    assert_eq!(
        fmt_ok(src),
        "-- | The file.\n\n-- | Adds one.\n-- Really.\ndef inc (x: i32) = x + 1\n\n-- trailing\n"
    );
}

#[test]
fn pattern_attributes_are_kept() {
    // `#[attr] p` wherever a pattern goes; an attributed parameter or
    // constructor argument is parenthesised. (The parser keeps the
    // attributes in the tree, so `fmt_ok`'s tree comparison also checks
    // them.)
    let src = "def f (#[a] x: i32) (#[b]y) = let #[c] (p, #[d(1)] q) = (x, y)\n  \
               let {u = #[e] u, v} = {u = p, v = q}\n  \
               in loop #[g] acc = u for #[h] z in [v] do match acc\n  \
               case #[i] #[j] 0 -> z\n  case #k (#[l] w) -> w\n  case _ -> acc\n";
    let out = fmt_ok(src);
    for want in [
        "(#[a] x: i32)",
        "(#[b] y)",
        "let #[c] (p, #[d(1)] q) =",
        "{u = #[e] u, v}",
        "loop #[g] acc = u for #[h] z in [v]",
        "case #[i] #[j] 0 ->",
        "case #k (#[l] w) ->",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
}

#[test]
fn test_blocks_are_kept_byte_for_byte() {
    let src = "-- Sum.\n-- ==\n-- input { [1,2,3]   }\n--   output { 6 }\n\n-- random input { [100]i32 }  \ndef main (xs: []i32) = reduce (+) 0 xs\n";
    let out = fmt_ok(src);
    assert!(out.starts_with(
        "-- Sum.\n-- ==\n-- input { [1,2,3]   }\n--   output { 6 }\n\n-- random input { [100]i32 }  \n"
    ));
}

#[test]
fn let_chains_go_one_per_line() {
    let src = "def f (x: i32) =\n  let a = x + 1 in\n      let b = a * 2\n  in a + b\n";
    assert_eq!(
        fmt_ok(src),
        "def f (x: i32) =\n  let a = x + 1\n  let b = a * 2\n  in a + b\n"
    );
}

#[test]
fn comments_inside_expressions_are_kept() {
    let src = "def f (x: i32) =\n  -- first\n  let a = x + 1 -- why\n  -- second\n  let b = a * 2\n  in a + b\n";
    let out = fmt_ok(src);
    for c in ["-- first", "-- why", "-- second"] {
        assert!(out.contains(c), "{out}");
    }
}

#[test]
fn operator_parentheses_are_kept() {
    let src = "def f (a: i32) (b: i32) (c: i32) = (a + b) * c - a * (b - c) - (a - b - c) + a ** b ** c\n";
    assert_eq!(fmt_ok(src), src);
    let src = "def g x = (x |> f64.sqrt) + (-x) + f64.neg (-1) + -1 + (+ 1) 2 + (2 -) 1 + x `f64.max` 1\n";
    assert_eq!(fmt_ok(src), src);
}

#[test]
fn pipelines_and_applications_break_where_they_were_broken() {
    let src = "def f (xs: []i32) =\n  xs\n  |> map (+1)\n     |> reduce (+) 0\n";
    assert_eq!(
        fmt_ok(src),
        "def f (xs: []i32) =\n  xs\n  |> map (+ 1)\n  |> reduce (+) 0\n"
    );
    let src = "def g (xs: []i32) (ys: []i32) =\n  map2 (\\x y -> x + y)\n    xs\n       ys\n";
    assert_eq!(
        fmt_ok(src),
        "def g (xs: []i32) (ys: []i32) =\n  map2 (\\x y -> x + y)\n    xs\n    ys\n"
    );
}

#[test]
fn records_lambdas_loops_and_matches() {
    let src = r#"type point = {x: f64, y: f64}
type shape = #circle f64 | #rect f64 f64
def area (s: shape) : f64 =
  match s
  case #circle r -> 3.14 * r * r
  case #rect w h ->
    w * h
def move (p: point) = p with x = p.x + 1 
def sum (n: i64) = loop acc = 0 for i < n do acc + i
def sum2 (n: i64) =
  loop (acc, j) = (0, 0) while j < n do
    (acc + j, j + 1)
def norm {x, y} = f64.sqrt (x * x + y * y)
def mk (x: f64) : point = {x, y = x}
def apply (f: f64 -> f64) = \(x: f64) : f64 -> f x
"#;
    let out = fmt_ok(src);
    assert!(
        out.contains(
            "  match s\n  case #circle r -> 3.14 * r * r\n  case #rect w h ->\n    w * h\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("def sum (n: i64) = loop acc = 0 for i < n do acc + i\n"),
        "{out}"
    );
    assert!(
        out.contains("  loop (acc, j) = (0, 0) while j < n do\n    (acc + j, j + 1)\n"),
        "{out}"
    );
    assert!(
        out.contains("type shape = #circle f64 | #rect f64 f64\n\ndef"),
        "{out}"
    );
}

#[test]
fn modules_and_sized_types() {
    let src = r#"module type vec = {
  type t
  -- | The length.
  val len [n]: [n]t -> i64
}
module mk (T: {type t}) : vec with t = T.t = {
  type t = T.t
  def len [n] (_: [n]t) = n
}
module m = mk {type t = i32}
type matrix [n][m] = [n][m]f32
def transpose' [n][m] (a: matrix [n] [m]) : [m][n]f32 = transpose a
def both 'a (x: a) : (a, a) = (x, x)
local def hidden = 1i64
"#;
    let out = fmt_ok(src);
    assert!(
        out.contains("-- | The length.\n  val len [n] : [n]t -> i64"),
        "{out}"
    );
    assert!(out.contains("type matrix [n] [m] = [n][m]f32"), "{out}");
}

#[test]
fn a_file_that_does_not_parse_is_an_error_and_left_alone() {
    let dir = std::env::temp_dir().join(format!("nabla-fmt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.fut");
    std::fs::write(&bad, "def f x = (x +\n").unwrap();
    let good = dir.join("good.fut");
    std::fs::write(&good, "def  f x =x\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("fmt")
        .arg(&bad)
        .arg(&good)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.fut:1:"), "{err}");
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), "def f x = (x +\n");
    assert_eq!(std::fs::read_to_string(&good).unwrap(), "def f x = x\n");
    // --check: reports, changes nothing, fails; then passes once formatted.
    std::fs::write(&good, "def  f x =x\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["fmt", "--check"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("good.fut"));
    assert_eq!(std::fs::read_to_string(&good).unwrap(), "def  f x =x\n");
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("fmt")
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["fmt", "--check"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn standard_input_goes_to_standard_output() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("fmt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"def main(x:i32)=x*2\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "def main (x: i32) = x * 2\n"
    );
}

#[test]
fn long_chains_and_deep_nesting_do_not_overflow() {
    let mut src = String::from("def f (x: i32) =\n");
    for i in 0..4000 {
        src.push_str(&format!("  let x{i} = x + {i}\n"));
    }
    src.push_str("  in x\n");
    let out = fmt_ok(&src);
    assert!(out.contains("  let x3999 = x + 3999\n  in x\n"));
    let sum: Vec<String> = (0..4000).map(|i| i.to_string()).collect();
    let src = format!("def g : i32 =\n  {}\n", sum.join("\n  + "));
    fmt_ok(&src);
    let src = format!("def h : i32 = {}1{}\n", "(".repeat(200), ")".repeat(200));
    assert_eq!(fmt_ok(&src), src);
}

/// Not part of the suite: `NABLA_FMT_CORPUS=DIR cargo test --release -p
/// nabla --test fmt corpus_report -- --ignored --nocapture` checks every
/// `.fut` under DIR as the repository's programs are checked and prints
/// the counts (for the conformance suite).
#[test]
#[ignore]
fn corpus_report() {
    let Ok(dir) = std::env::var("NABLA_FMT_CORPUS") else {
        return;
    };
    let mut files = Vec::new();
    fut_files(Path::new(&dir), &mut files);
    let (mut parsed, mut ok, mut changed, mut verbatim, mut whole) = (0, 0, 0, 0, 0);
    let mut failed = Vec::new();
    for p in &files {
        let parses = std::fs::read_to_string(p)
            .ok()
            .is_some_and(|t| program_shape(&t).is_ok_and(|s| !s.is_empty()) || t.trim().is_empty());
        if !parses {
            continue;
        }
        parsed += 1;
        match std::panic::catch_unwind(|| check_file(p)) {
            Ok(Some((c, v, w))) => {
                ok += 1;
                changed += usize::from(c);
                verbatim += v;
                whole += usize::from(w);
                if v > 0 || w {
                    eprintln!("{}: {v} kept verbatim, whole: {w}", p.display());
                }
            }
            _ => failed.push(p.clone()),
        }
    }
    eprintln!(
        "{} files, {parsed} parse; {ok} format idempotently to the same tree with the same \
         comments and test blocks, type-checking when the original does ({changed} changed, \
         {verbatim} declarations kept verbatim, {whole} files kept whole); failed: {failed:?}",
        files.len()
    );
}

#[test]
fn parentheses_that_the_tree_does_not_keep_come_back() {
    // Sum payloads, functor return types refined with `with`, update
    // paths through indices and fields.
    let src = "type~ t [n] = #a ([n]i32) [n]f32 | #b\n\n\
               module type op = {type a type b val f : a -> b}\n\n\
               module c = \\(P: {module F: op}) : (op with a = P.F.a) -> {type a = P.F.a type b = P.F.b def f = P.F.f}\n\n\
               def g (xs: []{f: i32}) (x: i32) = xs with [0].f = x\n";
    let out = fmt_ok(src);
    assert!(out.contains("#a ([n]i32) [n]f32 | #b"), "{out}");
    assert!(out.contains(": (op with a = P.F.a) ->"), "{out}");
    assert!(out.contains("xs with [0].f = x"), "{out}");
}
