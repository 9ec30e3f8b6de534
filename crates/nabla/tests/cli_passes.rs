//! The pass manager on the command line: `nabla passes`, `--passes`,
//! `--validate` and `dump-ir --after`, and errors for unknown pass names.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-cli-passes-{}-{name}", std::process::id()));
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

/// Runs `nabla args`, expects success and returns stdout.
fn ok(args: &[&str], stdin: &[u8]) -> String {
    let o = nabla(args, stdin);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Runs `nabla args`, expects a clean failure (no panic) and returns stderr.
fn fails(args: &[&str]) -> String {
    let o = nabla(args, b"");
    let err = text(&o.stderr);
    assert!(
        !o.status.success(),
        "{args:?} succeeded: {}",
        text(&o.stdout)
    );
    assert!(
        matches!(o.status.code(), Some(1) | Some(2)),
        "{args:?}: {:?}",
        o.status
    );
    assert!(
        !err.contains("panicked") && !err.contains("internal compiler error"),
        "{args:?}: {err}"
    );
    err
}

/// `dot` is called twice; the optimiser inlines it and removes it.
const DOT: &str = "\
def dot [n] (xs: [n]f64) (ys: [n]f64): f64 =
  reduce (+) 0 (map2 (*) xs ys)

entry main [n] (xs: [n]f64) (ys: [n]f64): (f64, f64) =
  let d = map2 (-) xs ys
  in (dot xs ys, dot d d)
";

const PASS_NAMES: [&str; 5] = ["inline", "simplify", "propagate", "dce", "dead-functions"];

#[test]
fn passes_are_listed() {
    let listed = ok(&["passes"], b"");
    for name in PASS_NAMES {
        assert!(
            listed.lines().any(|l| l.starts_with(name)),
            "{name}: {listed}"
        );
    }
    assert!(listed.contains("default pipeline:"), "{listed}");
    assert_eq!(ok(&["dump-ir", "--list-passes"], b""), listed);
}

#[test]
fn dump_ir_after_a_pass() {
    let d = scratch("after");
    let f = write(&d, "dot.fut", DOT);
    let f = f.to_str().unwrap();

    let elab = ok(&["dump-ir", f, "--after=elab"], b"");
    assert!(elab.contains("fun dot ("), "{elab}");
    assert!(elab.contains("= dot("), "{elab}");
    assert_eq!(ok(&["dump-ir", f, "--after=none"], b""), elab);
    // The empty pipeline leaves the elaborated IR as it is.
    assert_eq!(ok(&["dump-ir", f, "--passes=", "--validate"], b""), elab);

    // After the first inlining: no more calls, but `dot` is still there.
    let inlined = ok(&["dump-ir", f, "--after=inline", "--validate"], b"");
    assert!(!inlined.contains("= dot("), "{inlined}");
    assert!(inlined.contains("fun dot ("), "{inlined}");

    // The whole default pipeline removes `dot`.
    let optimised = ok(&["dump-ir", f, "--validate"], b"");
    assert!(!optimised.contains("dot("), "{optimised}");
    assert_ne!(optimised, inlined);
}

#[test]
fn passes_replace_the_pipeline() {
    let d = scratch("passes");
    let f = write(&d, "dot.fut", DOT);
    let f = f.to_str().unwrap();

    let only_inline = ok(&["dump-ir", f, "--passes=inline"], b"");
    assert_eq!(
        only_inline,
        ok(&["dump-ir", f, "--after=inline", "--validate"], b"")
    );
    let two = ok(
        &["dump-ir", f, "--passes=inline,dead-functions", "--validate"],
        b"",
    );
    assert!(!two.contains("fun dot ("), "{two}");
    // Without inlining, `dot` is still called and so not dead.
    let no_inline = ok(&["dump-ir", f, "--passes=simplify,dead-functions"], b"");
    assert!(no_inline.contains("fun dot ("), "{no_inline}");

    // `run` and `test` take the same options and agree.
    let input = b"[1.0, 2.0] [3.0, 5.0]";
    let expected = "13.0f64\n13.0f64\n";
    assert_eq!(ok(&["run", f, "--passes=", "--validate"], input), expected);
    assert_eq!(ok(&["run", f, "--passes=inline,dce"], input), expected);
    assert_eq!(ok(&["run", f, "--validate"], input), expected);
    let t = write(
        &d,
        "t.fut",
        &format!("-- ==\n-- input {{ [1.0, 2.0] [3.0, 5.0] }} output {{ 13.0 13.0 }}\n{DOT}"),
    );
    let t = t.to_str().unwrap();
    for passes in ["--passes=", "--passes=inline,simplify"] {
        assert_eq!(
            ok(&["test", t, passes, "--validate"], b""),
            "1 passed, 0 failed\n"
        );
    }
}

#[test]
fn unknown_pass_names_are_clear_errors() {
    let d = scratch("unknown");
    let f = write(&d, "dot.fut", DOT);
    let f = f.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["dump-ir", f, "--passes=inline,inlien"],
        &["dump-ir", f, "--after=bogus"],
        &["run", f, "--passes=bogus"],
        &["test", f, "--passes=bogus"],
        &["dump-ir", f, "--after=elaborate"],
    ];
    for args in commands {
        let err = fails(args);
        assert!(err.contains("unknown pass"), "{args:?}: {err}");
        for name in PASS_NAMES {
            assert!(err.contains(name), "{args:?}: {err}");
        }
    }
    // A known pass that the pipeline does not run.
    let err = fails(&["dump-ir", f, "--passes=inline", "--after=dce"]);
    assert!(err.contains("`dce` is not in the pipeline"), "{err}");
}
