//! The generated executable's interface: IR programs (in the IR's text
//! form) compiled with the system C compiler and run on textual and binary
//! input, with the options of Futhark's compiled programs. Needs `cc` (or
//! `$CC`).

use nabla_cgen::{compile_c, generate_c};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// An executable in its own directory, removed when dropped.
struct Built(PathBuf);

impl std::ops::Deref for Built {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Compiles an IR program to an executable in a fresh directory.
fn build(name: &str, ir: &str) -> Built {
    let prog = nabla_ir::parse_program(ir).expect("the test program parses");
    let src = generate_c(&prog, &|_| "test.fut:1:1".to_string()).expect("C generation");
    let dir = std::env::temp_dir().join(format!("nabla-cgen-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let c = dir.join("prog.c");
    std::fs::write(&c, src).expect("write the C file");
    let exe = dir.join("prog");
    compile_c(&c, &exe).expect("the C compiler succeeds");
    Built(exe)
}

fn run(exe: &Built, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(&exe.0)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the executable starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("the executable ends")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const SUM_AND_DIV: &str = r#"
fun main (xs_0: [?]f64, a_1: i32, b_2: i32): (f64, i32, [?]f64) = {
  let n_3: i64 = size(xs_0, 0)
  let red_7: f64 = reduce(n_3, \(p_4: f64, p_5: f64): (f64) -> {
    let b_6: f64 = p_4 + p_5
    in (b_6)
  }, (0.0f64), xs_0)
  let q_8: i32 = a_1 / b_2
  let map_11: [n_3]f64 = map(n_3, \(p_9: f64): (f64) -> {
    let b_10: f64 = p_9 * 1.0e7f64
    in (b_10)
  }, xs_0)
  in (red_7, q_8, map_11)
}

entry main = main (params [1, 1, 1], results [1, 1, 1])
"#;

#[test]
fn text_input_and_output() {
    let exe = build("text", SUM_AND_DIV);
    let o = run(&exe, &[], b"-- a comment\n[1.5, 2_0.25e0, 0x10f64] -7 2\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o),
        "37.75f64\n-4i32\n[1.5e7f64, 2.025e8f64, 1.6e8f64]\n"
    );
    // Empty arrays and the binary output.
    let o = run(&exe, &[], b"empty([0]f64) 1i32 1i32");
    assert_eq!(stdout(&o), "0.0f64\n1i32\nempty([0]f64)\n");
    let o = run(&exe, &["-b"], b"[1.0] 1 1");
    assert_eq!(&o.stdout[..7], b"b\x02\x00 f64");
}

#[test]
fn binary_input() {
    let exe = build("binary", SUM_AND_DIV);
    let mut input = Vec::new();
    input.extend_from_slice(b"b\x02\x01 f64");
    input.extend_from_slice(&2u64.to_le_bytes());
    input.extend_from_slice(&1.0f64.to_le_bytes());
    input.extend_from_slice(&2.0f64.to_le_bytes());
    input.extend_from_slice(b"b\x02\x00 i32");
    input.extend_from_slice(&9i32.to_le_bytes());
    input.extend_from_slice(b" 4 ");
    let o = run(&exe, &[], &input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), "3.0f64\n2i32\n[1.0e7f64, 2.0e7f64]\n");
}

#[test]
fn runtime_errors_exit_with_status_1() {
    let exe = build("errors", SUM_AND_DIV);
    let o = run(&exe, &[], b"[1.0] 1 0");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("Error: division by zero\nat test.fut:1:1"),
        "{err}"
    );
    // Bad input: a clear message, status 1.
    let o = run(&exe, &[], b"[1.0, true] 1 1");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read input"));
    let o = run(&exe, &[], b"[1.0] 1");
    assert_eq!(o.status.code(), Some(1));
    let o = run(&exe, &["-e", "nope"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no entry point named nope"));
}

#[test]
fn runs_timings_and_no_output() {
    let exe = build("options", SUM_AND_DIV);
    let times = exe.with_extension("times");
    let o = run(
        &exe,
        &["-r", "3", "-t", times.to_str().expect("a UTF-8 path"), "-n"],
        b"[1.0] 1 1",
    );
    assert!(o.status.success());
    assert_eq!(stdout(&o), "");
    let t = std::fs::read_to_string(&times).expect("the timing file");
    assert_eq!(t.lines().count(), 3);
    assert!(t.lines().all(|l| l.parse::<u64>().is_ok()), "{t}");
}

#[test]
fn jvp_left_for_dynamic_ad_is_rejected_cleanly() {
    let prog = nabla_ir::parse_program(
        "fun main (x_0: f64): (f64) = {\n  let t_1: f64 = jvp(\\(p_2: f64): (f64) -> {\n    in (p_2)\n  }, (x_0), (x_0))\n  in (t_1)\n}\n\nentry main = main (params [1], results [1])\n",
    )
    .expect("parses");
    let e = generate_c(&prog, &|_| String::new()).expect_err("jvp is not supported");
    match &e {
        nabla_cgen::CgenError::Unsupported { construct } => {
            assert!(construct.contains("jvp"), "{e}")
        }
        _ => panic!("not an unsupported construct: {e}"),
    }
}

#[test]
fn f16_arithmetic_rounds_through_f32() {
    let exe = build(
        "f16",
        "fun main (a_0: f16, b_1: f16): (f16, u16) = {\n  let c_2: f16 = a_0 + b_1\n  let d_3: u16 = bitcast<f16->u16>(c_2)\n  in (c_2, d_3)\n}\n\nentry main = main (params [1, 1], results [1, 1])\n",
    );
    let o = run(&exe, &[], b"2048f16 1f16");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), "2048.0f16\n26624u16\n");
}
