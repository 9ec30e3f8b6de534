//! `nabla c --server` through Futhark's Python client: a virtual
//! environment under the target directory gets `futhark-server`,
//! `futhark-data` and `numpy` from PyPI (the test fails when that fails),
//! then `tests/library/drive_server.py` drives the server (put_value,
//! call, get_value, tuple results via project, a FAILURE raising
//! `futhark_server.Failure`). Needs `python3` with `venv`, network access
//! to PyPI and a C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

fn venv() -> PathBuf {
    // CARGO_MANIFEST_DIR is crates/nabla; the target directory is the workspace's.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("python-venv")
}

fn ok(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn futhark_server_drives_a_nabla_server() {
    let venv = venv();
    let python = venv.join("bin/python");
    // A venv without pip is what a python3 without ensurepip leaves
    // behind (a run before .ci/setup installed python3-venv): made again.
    if !python.exists() || !venv.join("bin/pip").exists() {
        ok(
            Command::new("python3")
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
            "python3 -m venv",
        );
    }
    ok(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "futhark-server",
            "futhark-data",
            "numpy",
        ]),
        "pip install futhark-server futhark-data numpy",
    );
    let dir = std::env::temp_dir().join(format!("nabla-pyserver-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let exe = dir.join("prog");
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/library");
    ok(
        Command::new(env!("CARGO_BIN_EXE_nabla"))
            .args(["c", "--server"])
            .arg(lib.join("prog.fut"))
            .arg("-o")
            .arg(&exe),
        "nabla c --server",
    );
    let out = Command::new(&python)
        .arg(lib.join("drive_server.py"))
        .arg(&exe)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim() == "ok",
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
