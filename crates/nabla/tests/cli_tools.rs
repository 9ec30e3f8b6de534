//! End-to-end tests of `nabla eval`, `nabla repl` and `nabla dataset`,
//! driven as a user drives them: arguments, standard input, pipes between
//! commands. Also the command line's smaller messages (help, a missing
//! file, "did you mean").

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-tools-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
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

fn ok(o: &Output) -> String {
    let err = text(&o.stderr);
    assert!(
        o.status.success(),
        "failed ({:?}): {err}\nstdout: {}",
        o.status,
        text(&o.stdout)
    );
    assert!(!err.contains("panicked"), "{err}");
    text(&o.stdout)
}

fn fails(o: &Output) -> String {
    let err = text(&o.stderr);
    assert!(
        !o.status.success(),
        "should fail; stdout: {}",
        text(&o.stdout)
    );
    assert!(
        !err.contains("panicked") && !err.contains("internal compiler error"),
        "{err}"
    );
    err
}

const LIB: &str = "\
def square (x: i32) = x * x
def norm (xs: []f64) = f64.sqrt (f64.sum (map (\\x -> x * x) xs))
type point = {x: f64, y: f64}
def origin : point = {x = 0, y = 0}
";

// ---------------------------------------------------------------- eval

#[test]
fn eval_prints_values_in_the_value_format() {
    let o = nabla(
        &[
            "eval",
            "1 + 2",
            "map (+1) (iota 3)",
            "(1f32, true)",
            "{a = 1u8, b = [2.5, 3]}",
            "[[1,2],[3,4]]",
        ],
        b"",
    );
    assert_eq!(
        ok(&o),
        "3i32\n[1i64, 2i64, 3i64]\n(1.0f32, true)\n{a = 1u8, b = [2.5f64, 3.0f64]}\n[[1i32, 2i32], [3i32, 4i32]]\n"
    );
}

#[test]
fn eval_uses_the_definitions_of_a_file_and_the_prelude() {
    let d = scratch("eval-file");
    let f = write(&d, "lib.fut", LIB);
    let o = nabla(
        &[
            "eval",
            "-f",
            f.to_str().unwrap(),
            "square 7",
            "norm [3, 4]",
            "origin",
            "reduce (+) 0 (map square (1...3))",
        ],
        b"",
    );
    assert_eq!(ok(&o), "49i32\n5.0f64\n{x = 0.0f64, y = 0.0f64}\n14i32\n");
}

#[test]
fn eval_reports_type_errors_at_the_expression() {
    let o = nabla(&["eval", "1 + true"], b"");
    let err = fails(&o);
    assert!(err.contains("type error"), "{err}");
    assert!(err.contains("<expr>:1:"), "{err}");
}

#[test]
fn eval_suggests_a_close_name() {
    let d = scratch("eval-typo");
    let f = write(&d, "lib.fut", LIB);
    let err = fails(&nabla(
        &["eval", "-f", f.to_str().unwrap(), "sqaure 3"],
        b"",
    ));
    assert!(err.contains("Unknown name \"sqaure\""), "{err}");
    assert!(err.contains("did you mean `square`?"), "{err}");
    assert!(err.contains("<expr>:1:1"), "{err}");
}

#[test]
fn eval_reports_run_time_errors_with_their_location() {
    let o = nabla(&["eval", "let xs = iota 3 in xs[5]"], b"");
    let err = fails(&o);
    assert!(err.contains("<expr>:1:"), "{err}");
    assert!(err.to_lowercase().contains("index"), "{err}");
}

#[test]
fn eval_rejects_functions_and_a_broken_file() {
    let err = fails(&nabla(&["eval", "\\(x: i32) -> x"], b""));
    assert!(err.contains("cannot be printed"), "{err}");
    let d = scratch("eval-bad");
    let f = write(&d, "bad.fut", "def f (x: i32) : bool = x\n");
    let err = fails(&nabla(&["eval", "-f", f.to_str().unwrap(), "1"], b""));
    assert!(err.contains("bad.fut:1:"), "{err}");
    let err = fails(&nabla(&["eval", "-f", "/nonexistent/x.fut", "1"], b""));
    assert!(err.contains("file not found: /nonexistent/x.fut"), "{err}");
}

// ---------------------------------------------------------------- repl

#[test]
fn repl_evaluates_expressions_and_keeps_declarations() {
    let input = "\
1 + 1
def double (x: i32) = 2 * x
double 21
let y = 5
double y
let z = 1 in z + y
:type double
:type [1f32, 2]
:quit
3 + 3
";
    let o = nabla(&["repl"], input.as_bytes());
    let out = ok(&o);
    assert_eq!(
        out,
        "2i32\n42i32\n10i32\n6i32\ndouble : (i32) -> i32\n[1f32, 2] : [2]f32\n",
        "stderr: {}",
        text(&o.stderr)
    );
}

#[test]
fn repl_loads_files_and_survives_errors() {
    let d = scratch("repl-load");
    let f = write(&d, "lib.fut", LIB);
    let other = write(&d, "other.fut", "def square (x: i32) = x * x * 0\n");
    let input = format!(
        "\
square 3
sqaure 3
def bad = 1 + true
square 4
:load {}
square 5
:help
:bogus
",
        other.display()
    );
    let o = nabla(&["repl", f.to_str().unwrap()], input.as_bytes());
    let out = ok(&o);
    let err = text(&o.stderr);
    assert!(out.starts_with("9i32\n16i32\nLoaded "), "{out}\n{err}");
    assert!(out.contains("0i32\n"), "{out}");
    assert!(out.contains(":load") && out.contains(":type"), "{out}");
    assert!(err.contains("did you mean `square`?"), "{err}");
    assert!(err.contains("<repl>:1:"), "{err}");
    assert!(err.contains("Unknown command `:bogus`"), "{err}");
}

#[test]
fn repl_redefinitions_shadow_earlier_ones() {
    let input = "def x = 1i32\ndef x = x + 10\nx\n";
    let o = nabla(&["repl"], input.as_bytes());
    assert_eq!(ok(&o), "11i32\n");
}

/// A program with a breakpoint in a function that `main` calls.
const BREAKING: &str = "\
def f (x: i32) (ys: []i32) =
  let z = x * 2
  let w = #[break] (z + x)
  in map (+w) ys

def main (xs: []i32) = f 3 xs
";

#[test]
fn repl_stops_at_a_breakpoint_with_its_variables_and_stack() {
    let d = scratch("repl-break");
    let f = write(&d, "brk.fut", BREAKING);
    let input = "\
main [1, 2]
z
x + z
:type ys
:frame 1
xs
:frame 9
:frame 0
z * 10

main [5]
:unbreak
main [7]
:frame 0
";
    let o = nabla(&["repl", f.to_str().unwrap()], input.as_bytes());
    let out = ok(&o).replace(&format!("{}/", d.display()), "");
    let err = text(&o.stderr);
    let stack0 = ">#0: brk.fut:3:11 in f\n #1: brk.fut:6:24 in main\n #2: <expr>:1:1 in the expression entered\n";
    let stack1 = " #0: brk.fut:3:11 in f\n>#1: brk.fut:6:24 in main\n #2: <expr>:1:1 in the expression entered\n";
    let expected = format!(
        "Breakpoint at brk.fut:3:11\n{stack0}Variables of frame #0: x, ys, z\n<Enter> to continue.\n\
         6i32\n9i32\nys : [2]i32\n\
         {stack1}Variables of frame #1: xs\n[1i32, 2i32]\n\
         {stack0}Variables of frame #0: x, ys, z\n60i32\nContinuing...\n[10i32, 11i32]\n\
         Breakpoint at brk.fut:3:11\n{stack0}Variables of frame #0: x, ys, z\n<Enter> to continue.\n\
         Continuing...\n[14i32]\n[16i32]\n"
    );
    assert_eq!(out, expected, "stderr: {err}");
    assert!(
        err.contains("Invalid stack frame `9`: the frames are 0 to 2."),
        "{err}"
    );
    // After the run, `:frame` has no breakpoint to look at.
    assert!(err.ends_with("Not stopped at a breakpoint.\n"), "{err}");
}

#[test]
fn repl_breakpoint_in_a_loop_stops_at_every_iteration() {
    let d = scratch("repl-break-loop");
    let f = write(
        &d,
        "loop.fut",
        "def total (xs: []f64) =\n  loop acc = 0f64 for i < length xs do\n    #[break] (acc + xs[i])\n",
    );
    let input = "total [1, 2, 4]\ni\nacc\n\ni\nacc\n\ni\nacc\n\n";
    let o = nabla(&["repl", f.to_str().unwrap()], input.as_bytes());
    let out = ok(&o).replace(&format!("{}/", d.display()), "");
    let values: Vec<&str> = out
        .lines()
        .filter(|l| l.ends_with("i64") || l.ends_with("f64"))
        .collect();
    assert_eq!(
        values,
        ["0i64", "0.0f64", "1i64", "1.0f64", "2i64", "3.0f64", "7.0f64"],
        "{out}"
    );
    assert_eq!(
        out.matches("Breakpoint at loop.fut:3:5").count(),
        3,
        "{out}"
    );
}

#[test]
fn repl_nanbreak_stops_where_an_operator_makes_a_new_nan() {
    let d = scratch("repl-nan");
    let f = write(&d, "nan.fut", "def g (v: f64) = f64.sqrt v + 1\n");
    let input = "\
g (-1)
:nanbreak
f64.nan + 1
g 4
g (-1)
v
:frame 1

:nanbreak
g (-1)
";
    let o = nabla(&["repl", f.to_str().unwrap()], input.as_bytes());
    let out = ok(&o).replace(&format!("{}/", d.display()), "");
    let expected = "\
f64.nan
Now stopping where an operator makes a new NaN.
f64.nan
3.0f64
NaN produced at nan.fut:1:18
>#0: nan.fut:1:18 in g
 #1: <expr>:1:1 in the expression entered
Variables of frame #0: v
<Enter> to continue.
-1.0f64
 #0: nan.fut:1:18 in g
>#1: <expr>:1:1 in the expression entered
No variables to show in frame #1.
Continuing...
f64.nan
No longer stopping at new NaNs.
f64.nan
";
    assert_eq!(out, expected, "stderr: {}", text(&o.stderr));
}

/// Outside the REPL a breakpoint changes nothing: `nabla run` (optimised
/// or not) and `nabla eval` run through it.
#[test]
fn breakpoints_only_stop_the_repl() {
    let d = scratch("break-run");
    let f = write(&d, "brk.fut", BREAKING);
    let file = f.to_str().unwrap();
    for passes in [&[][..], &["--passes="][..]] {
        let mut args = vec!["run", file];
        args.extend_from_slice(passes);
        assert_eq!(
            ok(&nabla(&args, b"[1, 2]")),
            "[10i32, 11i32]\n",
            "{passes:?}"
        );
    }
    assert_eq!(
        ok(&nabla(&["eval", "-f", file, "main [1]"], b"")),
        "[10i32]\n"
    );
}

// ---------------------------------------------------------------- dataset

#[test]
fn dataset_generates_text_values_of_the_given_types() {
    let o = nabla(
        &[
            "dataset",
            "-g",
            "[3][4]f32",
            "-g",
            "i32",
            "--i64-bounds=-5:5",
            "-g",
            "[10]i64",
            "-g",
            "bool",
        ],
        b"",
    );
    let out = ok(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(
        lines[0].starts_with("[[") && lines[0].matches("f32").count() == 12,
        "{out}"
    );
    assert!(lines[1].ends_with("i32"), "{out}");
    let ints: Vec<i64> = lines[2]
        .trim_matches(|c| c == '[' || c == ']')
        .split(", ")
        .map(|x| x.trim_end_matches("i64").parse().unwrap())
        .collect();
    assert_eq!(ints.len(), 10);
    assert!(ints.iter().all(|x| (-5..=5).contains(x)), "{out}");
    assert!(lines[3] == "true" || lines[3] == "false", "{out}");
    // Floats are drawn from [0, 1] by default.
    let floats: Vec<f32> = lines[0]
        .split(['[', ']', ','])
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.trim_end_matches("f32").parse().unwrap())
        .collect();
    assert_eq!(floats.len(), 12);
    assert!(floats.iter().all(|x| (0.0..=1.0).contains(x)), "{out}");
    // The values read back, as their type.
    let values = nabla(&["dataset", "-t"], lines[0].as_bytes());
    assert_eq!(ok(&values), "[3][4]f32\n");
}

#[test]
fn dataset_is_reproducible_from_its_seed() {
    let a = ok(&nabla(&["dataset", "-s", "7", "-g", "[5]f64"], b""));
    let b = ok(&nabla(&["dataset", "--seed=7", "-g", "[5]f64"], b""));
    let c = ok(&nabla(&["dataset", "-s", "8", "-g", "[5]f64"], b""));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn dataset_binary_output_is_read_by_nabla_run() {
    let d = scratch("dataset-run");
    let prog = write(
        &d,
        "sum.fut",
        "entry main (xs: [][]f32) = (length xs, length xs[0], f32.sum (flatten xs) >= 0)\n",
    );
    let data = nabla(&["dataset", "-b", "-g", "[3][4]f32"], b"");
    let bytes = data.stdout.clone();
    ok(&data);
    assert_eq!(&bytes[..2], b"b\x02");
    assert_eq!(bytes.len(), 7 + 2 * 8 + 12 * 4);
    let o = nabla(&["run", prog.to_str().unwrap()], &bytes);
    assert_eq!(ok(&o), "3i64\n4i64\ntrue\n");
    // The same values as text, and back.
    let text_form = ok(&nabla(&["dataset"], &bytes));
    let again = nabla(&["dataset", "-b"], text_form.as_bytes());
    assert_eq!(again.stdout, bytes);
    // Header and payload can be written apart.
    let header = nabla(&["dataset", "--binary-only-header", "-g", "[3][4]f32"], b"");
    let payload = nabla(&["dataset", "--binary-no-header", "-g", "[3][4]f32"], b"");
    assert_eq!([header.stdout, payload.stdout].concat(), bytes);
}

#[test]
fn dataset_rejects_bad_options() {
    let err = fails(&nabla(&["dataset", "-g", "[n]f32"], b""));
    assert!(err.contains("constant"), "{err}");
    let err = fails(&nabla(&["dataset", "--i8-bounds=0:300", "-g", "i8"], b""));
    assert!(err.contains("invalid bounds for i8"), "{err}");
    let err = fails(&nabla(&["dataset", "-g", "string"], b""));
    assert!(err.contains("cannot generate"), "{err}");
    let err = fails(&nabla(&["dataset", "--frobnicate"], b""));
    assert!(err.contains("unknown option"), "{err}");
    let help = ok(&nabla(&["dataset", "--help"], b""));
    assert!(help.contains("--T-bounds=MIN:MAX"), "{help}");
}

// ---------------------------------------------------------------- small things

#[test]
fn help_lists_every_subcommand() {
    let help = ok(&nabla(&["--help"], b""));
    for cmd in [
        "run",
        "c",
        "eval",
        "repl",
        "dataset",
        "check",
        "dump-ir",
        "passes",
        "test",
        "bench",
        "script",
        "literate",
        "gradbench",
        "adbench",
        "pkg",
        "lsp",
        "fmt",
        "doc",
    ] {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "{cmd} missing from:\n{help}"
        );
    }
    assert!(!help.contains("run, check, dump-ir, test"), "{help}");
}

#[test]
fn a_missing_main_file_is_file_not_found() {
    for cmd in ["check", "run", "c"] {
        let err = fails(&nabla(&[cmd, "/nonexistent/prog.fut"], b""));
        assert!(
            err.contains("file not found: /nonexistent/prog.fut"),
            "{cmd}: {err}"
        );
        assert!(!err.contains("import"), "{cmd}: {err}");
    }
}

#[test]
fn type_mismatches_do_not_show_uniqueness() {
    let d = scratch("unique");
    let f = write(&d, "u.fut", "def f (x: *[3]f64) = f64.sqrt x\n");
    let err = fails(&nabla(&["check", f.to_str().unwrap()], b""));
    assert!(err.contains("found `[3]f64`"), "{err}");
    assert!(err.contains("= [3]f64 is not f64"), "{err}");
    // (The source line quoted under the message keeps what was written.)
    assert!(
        !err.contains("`*[3]f64`") && !err.contains("*[3]f64 is"),
        "{err}"
    );
}

/// On a terminal (a pseudo-terminal made by util-linux's `script`; the
/// test is skipped without it) the REPL prompts, edits lines and keeps a
/// history: the up arrow brings back the previous line.
#[test]
fn repl_on_a_terminal_prompts_and_recalls_history() {
    use std::io::Read;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    // `script` (util-linux; Debian's essential package bsdutils) makes the
    // pseudo-terminal. A machine without it fails this test: the REPL's
    // terminal mode would go untested.
    assert!(
        Command::new("script").arg("--version").output().is_ok(),
        "no `script` command (util-linux) to make a pseudo-terminal for the REPL"
    );
    let cmd = format!("{} repl", env!("CARGO_BIN_EXE_nabla"));
    // A terminal that can edit lines (with TERM=dumb, as in a bare
    // chroot, the REPL reads plain lines, rightly).
    let mut child = Command::new("script")
        .env("TERM", "xterm")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start script");
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    // Waits until the output (without terminal escapes) holds `want` `times` times.
    let mut wait_for = |want: &str, times: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let plain = strip_escapes(&seen);
            if plain.matches(want).count() >= times {
                return plain;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => panic!("no `{want}` (×{times}) in the REPL's output:\n{plain}"),
            }
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    wait_for("[0]> ", 1);
    stdin.write_all(b"20 + 22\r").unwrap();
    wait_for("42i32", 1);
    wait_for("[1]> ", 1);
    stdin.write_all(b"\x1b[A\r").unwrap();
    wait_for("42i32", 2);
    wait_for("[2]> ", 1);
    stdin.write_all(b":quit\r").unwrap();
    let out = wait_for("Leaving", 1);
    assert!(out.contains("Type :help"), "{out}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `text` without ANSI escape sequences (`ESC [ … letter`).
fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() || d == '~' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An executable made by `nabla c` reads what `nabla dataset -b` writes
/// (skipped without a C compiler).
#[test]
fn dataset_binary_output_is_read_by_a_compiled_program() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler `{cc}`");
        return;
    }
    let d = scratch("dataset-c");
    let prog = write(
        &d,
        "sum.fut",
        "entry main (xs: [][]f32) (k: i64) = (length xs * k, length xs[0], f32.sum (flatten xs) >= 0)\n",
    );
    let exe = d.join("sum");
    ok(&nabla(
        &["c", prog.to_str().unwrap(), "-o", exe.to_str().unwrap()],
        b"",
    ));
    let data = nabla(
        &[
            "dataset",
            "-b",
            "-g",
            "[3][4]f32",
            "--i64-bounds=2:2",
            "-g",
            "i64",
        ],
        b"",
    );
    let bytes = data.stdout.clone();
    ok(&data);
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the compiled program");
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(ok(&o), "6i64\n4i64\ntrue\n");
}
