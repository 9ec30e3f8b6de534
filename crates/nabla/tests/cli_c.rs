//! End-to-end tests of `nabla c` and `nabla test --backend=c` (need a C
//! compiler: `cc`, or `$CC`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-cli-c-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn run(program: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("the program ends")
}

fn nabla(args: &[&str], stdin: &[u8]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_nabla")), args, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const PROGRAM: &str = "\
-- ==
-- entry: main
-- input { [1, 2, 3] 4 } output { [4, 8, 12] 24i64 }
-- input { [1, 2, 3] 0 } error: division by zero

entry main (xs: []i32) (k: i32) : ([]i32, i64) =
  (map (\\x -> x * k) xs, i64.i32 (reduce (+) 0 (map (\\x -> x * k / k) xs)) * i64.i32 k)

def f3 (xs: []f64) : f64 =
  let m = map (\\i -> map (\\x -> x * f64.i64 (i + 1)) xs) (iota 2)
  in f64.sum (map (\\j -> f64.sum (flatten (map (map (\\x -> x * x)) m[0:2, j:j+1]))) (indices xs))

-- ==
-- entry: v3
-- input { [1.0, 2.0, 3.0] } output { [10.0, 20.0, 30.0] }

entry v3 (xs: []f64) = vjp f3 xs 1.0
";

#[test]
fn nabla_c_builds_an_executable_beside_the_source() {
    let d = scratch("build");
    let f = d.join("prog.fut");
    std::fs::write(&f, PROGRAM).expect("write the program");
    let o = nabla(&["c", f.to_str().expect("UTF-8")], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The entry point with a vjp that static AD leaves to dynamic AD (a
    // free array of a map's lambda sliced in two dimensions, in reverse
    // mode) is left out, with a warning.
    assert!(
        text(&o.stderr).contains("warning: entry point v3 left out"),
        "{}",
        text(&o.stderr)
    );
    let exe = d.join("prog");
    assert!(d.join("prog.c").is_file());
    let got = run(&exe, &[], b"[1, 2, 3] 4");
    assert!(got.status.success(), "{}", text(&got.stderr));
    let want = nabla(&["run", f.to_str().expect("UTF-8")], b"[1, 2, 3] 4");
    assert_eq!(text(&got.stdout), text(&want.stdout));
    assert_eq!(text(&got.stdout), "[4i32, 8i32, 12i32]\n24i64\n");
    // A run-time error: status 1, the message and the location.
    let bad = run(&exe, &[], b"[1] 0");
    assert_eq!(bad.status.code(), Some(1));
    let err = text(&bad.stderr);
    assert!(err.starts_with("Error: division by zero\nat "), "{err}");
    assert!(err.contains("prog.fut:7:"), "{err}");
    // The left-out entry point says so.
    let left = run(&exe, &["-e", "v3"], b"[1.0, 2.0]");
    assert_eq!(left.status.code(), Some(1));
    assert!(text(&left.stderr).contains("was left out"));
    // -o names the executable.
    let out = d.join("other");
    let o = nabla(
        &[
            "c",
            f.to_str().expect("UTF-8"),
            "-o",
            out.to_str().expect("UTF-8"),
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.is_file());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn nabla_test_backend_c_counts_skips_separately() {
    let d = scratch("test");
    let f = d.join("prog.fut");
    std::fs::write(&f, PROGRAM).expect("write the program");
    let o = nabla(&["test", "--backend=c", f.to_str().expect("UTF-8")], b"");
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("SKIP "), "{out}");
    assert!(
        out.trim_end().ends_with("2 passed, 0 failed, 1 skipped"),
        "{out}"
    );
    let o = nabla(&["test", f.to_str().expect("UTF-8")], b"");
    assert!(text(&o.stdout).trim_end().ends_with("3 passed, 0 failed"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn recursion_too_deep_for_the_stack_is_a_run_time_error() {
    // Each recursive function checks the stack its calls use since the
    // entry point started: a recursion deeper than the stack allows stops
    // with status 1 and a message instead of a segmentation fault. The
    // same function runs as deep as the stack allows.
    let d = scratch("deep");
    let f = d.join("deep.fut");
    std::fs::write(
        &f,
        "def depth (n: i64) : i64 = if n == 0 then 0 else 1 + depth (n - 1)\n\
         entry main (n: i64) = depth n\n",
    )
    .expect("write the program");
    let o = nabla(&["c", f.to_str().expect("UTF-8")], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let exe = d.join("deep");
    let c = std::fs::read_to_string(d.join("deep.c")).expect("the C source");
    assert!(c.contains("NB_STACK_CHECK(\""), "no stack check emitted");
    let ok = run(&exe, &[], b"20000i64");
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert_eq!(text(&ok.stdout), "20000i64\n");
    let deep = run(&exe, &[], b"1000000000i64");
    assert_eq!(
        deep.status.code(),
        Some(1),
        "status {:?}: {}",
        deep.status,
        text(&deep.stderr)
    );
    let err = text(&deep.stderr);
    assert!(
        err.starts_with("Error: stack overflow: the recursion of depth is too deep"),
        "{err}"
    );
    assert!(err.contains("deep.fut:1:"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn programs_without_recursion_have_no_stack_checks() {
    let d = scratch("flat");
    let f = d.join("flat.fut");
    std::fs::write(&f, "entry main (n: i64) = n + 1\n").expect("write the program");
    let o = nabla(&["c", f.to_str().expect("UTF-8")], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let c = std::fs::read_to_string(d.join("flat.c")).expect("the C source");
    assert!(
        !c.contains("NB_STACK"),
        "stack checks in a program without recursion"
    );
    let _ = std::fs::remove_dir_all(&d);
}
