//! `nabla c --server`: a raw session of Futhark's server protocol on the
//! executable's stdin/stdout. Needs a C compiler (`cc`, or `$CC`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-server-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// Builds the server for `tests/library/prog.fut` in `dir`.
pub fn build_server(dir: &Path) -> PathBuf {
    let exe = dir.join("prog");
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["c", "--server"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/library/prog.fut"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("nabla runs");
    assert!(
        out.status.success(),
        "nabla c --server failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The replies to `commands`, one string per command (the lines before its
/// `%%% OK`), after checking the greeting.
fn session(exe: &Path, dir: &Path, commands: &[&str]) -> Vec<String> {
    let mut child = Command::new(exe)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut input = String::new();
    for c in commands {
        input.push_str(c);
        input.push('\n');
    }
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("the server ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut replies: Vec<String> = text.split("%%% OK\n").map(str::to_string).collect();
    assert_eq!(
        replies.first().map(String::as_str),
        Some(""),
        "greeting: {text}"
    );
    assert_eq!(replies.last().map(String::as_str), Some(""), "{text}");
    replies.remove(0);
    replies.pop();
    assert_eq!(replies.len(), commands.len(), "{text}");
    replies
}

#[test]
fn a_raw_server_session() {
    let dir = scratch("raw");
    let exe = build_server(&dir);
    std::fs::write(dir.join("xs.txt"), "[1.0, 2.0, 3.5]\n").expect("write");
    std::fs::write(dir.join("two.txt"), "2i64 [1i32, 2i32]\n").expect("write");
    std::fs::write(dir.join("extra.txt"), "2i64 3i64\n").expect("write");
    let r = session(
        &exe,
        &dir,
        &[
            "entry_points",
            "restore xs.txt xs []f64",
            "call sum s xs",
            "store s.bin s",
            "inputs scale",
            "output scale",
            "output count_up",
            "outputs count_up",
            "restore two.txt n i64 is []i32",
            "call count_up t n",
            "type t",
            "kind point",
            "fields point",
            "call count_up m i n",
            "shape i",
            "call get g is n",
            "call mk p s s",
            "project px p x",
            "new q point px s",
            "call norm nq q",
            "rename nq nq2",
            "type nq2",
            "restore extra.txt e i64",
            "frobnicate",
            "set_tuning_param x 1",
            "free xs",
            "call sum s2 xs",
            "rank [][]bool",
            "elemtype [][]bool",
            "report",
            "clear",
            "pause_profiling",
            "unpause_profiling",
            "tuning_params sum",
            "project x0 t 0",
            "store x0.bin x0",
            "restore xs.txt a []f64",
            "restore two.txt n2 i64 b []i32",
            "call dot d a a",
            "call zeros z n2",
            "call dot d2 a z",
            "fields \"(i64, []i32)\"",
            "new q2 point px",
            "call sum s3 b",
        ],
    );
    assert!(r[38].starts_with("runtime: "), "{}", r[38]);
    assert!(r[39].starts_with("runtime: "), "{}", r[39]);
    assert_eq!(
        r[40],
        "%%% FAILURE\nError: entry point arguments have invalid sizes\n"
    );
    assert_eq!(r[41], "0 i64\n1 []i32\n");
    assert!(r[42].starts_with("%%% FAILURE\n"), "{}", r[42]);
    assert!(r[43].starts_with("%%% FAILURE\nInput 0"), "{}", r[43]);
    assert!(r[0].lines().any(|l| l == "count_up"), "{}", r[0]);
    assert_eq!(r[1], "");
    assert!(r[2].starts_with("runtime: "), "{}", r[2]);
    assert_eq!(r[2].lines().count(), 1);
    let mut want = b"b\x02\x00 f64".to_vec();
    want.extend(6.5f64.to_le_bytes());
    assert_eq!(std::fs::read(dir.join("s.bin")).expect("s.bin"), want);
    assert_eq!(r[4], "f64\n*[]f64\n");
    assert_eq!(r[5], "*[]f64\n");
    assert_eq!(r[6], "(i64, []i32)\n");
    assert_eq!(r[7], "i64\n[]i32\n");
    assert_eq!(r[8], "");
    assert!(r[9].starts_with("runtime: "), "{}", r[9]);
    assert_eq!(r[10], "(i64, []i32)\n");
    assert_eq!(r[11], "record\n");
    assert_eq!(r[12], "x f64\ny f64\n");
    assert!(r[13].starts_with("runtime: "), "{}", r[13]); // one name per result
    assert_eq!(r[14], "2\n");
    // index 2 out of bounds for a 2-element array
    assert!(
        r[15].starts_with("%%% FAILURE\nError: Index [2] out of bounds"),
        "{}",
        r[15]
    );
    assert!(r[15].contains("\nat "), "{}", r[15]);
    assert!(r[16].starts_with("runtime: "));
    assert_eq!(r[17], "");
    assert_eq!(r[18], "");
    assert!(r[19].starts_with("runtime: "));
    assert_eq!(r[21], "f64\n");
    assert!(r[22].starts_with("%%% FAILURE\n"), "{}", r[22]);
    assert!(r[22].contains("Expected EOF"), "{}", r[22]);
    assert!(r[23].starts_with("%%% FAILURE\n"), "{}", r[23]);
    assert!(r[24].starts_with("%%% FAILURE\n"), "{}", r[24]);
    assert_eq!(r[25], "");
    assert_eq!(r[26], "%%% FAILURE\nUnknown variable: xs\n");
    assert_eq!(r[27], "2\n");
    assert_eq!(r[28], "bool\n");
    assert!(r[29].starts_with('{'), "{}", r[29]);
    assert_eq!(r[34], "");
    let mut want = b"b\x02\x00 i64".to_vec();
    want.extend(3i64.to_le_bytes());
    assert_eq!(std::fs::read(dir.join("x0.bin")).expect("x0.bin"), want);
}
