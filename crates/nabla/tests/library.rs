//! `nabla c --library`: the generated C API driven by a C program
//! (`tests/library/main.c`) compiled together with it under AddressSanitizer
//! and UndefinedBehaviorSanitizer (leak check on), and the header and
//! manifest checked for what futhark-ffi and the Python package rely on.
//! Needs a C compiler with the sanitizers (`cc`, or `$CC`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-library-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn test_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/library")
}

/// Runs `nabla c --library` on `tests/library/prog.fut` into `dir/prog.*`.
fn build_library(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["c", "--library"])
        .arg(test_dir().join("prog.fut"))
        .arg("-o")
        .arg(dir.join("prog"))
        .output()
        .expect("nabla runs");
    assert!(
        out.status.success(),
        "nabla c --library failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_c_api_works_under_the_sanitizers() {
    let dir = scratch("asan");
    build_library(&dir);
    let cc = std::env::var("CC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string());
    let exe = dir.join("main");
    let out = Command::new(&cc)
        .args([
            "-std=c11",
            "-g",
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ])
        .arg("-I")
        .arg(&dir)
        .arg(test_dir().join("main.c"))
        .arg(dir.join("prog.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "compiling the test program failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        // The out-of-memory check asks for 2^41 bytes: malloc must return NULL.
        .env("ASAN_OPTIONS", "detect_leaks=1:allocator_may_return_null=1")
        .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        .output()
        .expect("the test program runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the C test program failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all checks passed"), "{stdout}\n{stderr}");
    assert!(!stderr.contains("ERROR: AddressSanitizer"), "{stderr}");
    assert!(!stderr.contains("ERROR: LeakSanitizer"), "{stderr}");
    assert!(!stderr.contains("runtime error"), "{stderr}");
}

#[test]
fn the_header_parses_without_preprocessor_lines() {
    let dir = scratch("header");
    build_library(&dir);
    let header = std::fs::read_to_string(dir.join("prog.h")).expect("prog.h");
    // futhark-ffi deletes every line starting with `#` and hands the rest to cffi.
    let stripped: String = header
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = dir.join("stripped.c");
    std::fs::write(
        &path,
        format!("#include <stdint.h>\n#include <stddef.h>\n#include <stdbool.h>\n{stripped}"),
    )
    .expect("write");
    let out = Command::new("cc")
        .args(["-std=c11", "-fsyntax-only", "-Werror"])
        .arg(&path)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "int futhark_entry_count_up(struct futhark_context *ctx, int64_t *out0, struct futhark_i32_1d **out1, const int64_t in0);",
        "struct futhark_f64_1d *futhark_new_f64_1d(struct futhark_context *ctx, const double *data, int64_t dim0);",
        "int futhark_store_opaque_point(struct futhark_context *ctx, const struct futhark_opaque_point *obj, void **p, size_t *n);",
        "int futhark_project_opaque_point_x(struct futhark_context *ctx, double *out, const struct futhark_opaque_point *obj);",
        "int futhark_entry_norm(struct futhark_context *ctx, double *out0, const struct futhark_opaque_point *in0);",
    ] {
        assert!(header.contains(needle), "missing `{needle}` in\n{header}");
    }
}

#[test]
fn the_manifest_follows_futharks_schema() {
    let dir = scratch("manifest");
    build_library(&dir);
    let text = std::fs::read_to_string(dir.join("prog.json")).expect("prog.json");
    let m: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(m["backend"], "c");
    assert!(m["version"].is_string());
    let scale = &m["entry_points"]["scale"];
    assert_eq!(scale["cfun"], "futhark_entry_scale");
    assert_eq!(
        scale["inputs"],
        serde_json::json!([
            {"name": "k", "type": "f64", "unique": false},
            {"name": "xs", "type": "[]f64", "unique": true}
        ])
    );
    assert_eq!(
        scale["outputs"],
        serde_json::json!([{"type": "[]f64", "unique": true}])
    );
    assert_eq!(
        m["entry_points"]["count_up"]["outputs"],
        serde_json::json!([{"type": "i64", "unique": false}, {"type": "[]i32", "unique": false}])
    );
    let arr = &m["types"]["[]f64"];
    assert_eq!(arr["kind"], "array");
    assert_eq!(arr["ctype"], "struct futhark_f64_1d *");
    assert_eq!(arr["rank"], 1);
    assert_eq!(arr["elemtype"], "f64");
    assert_eq!(arr["ops"]["values"], "futhark_values_f64_1d");
    let point = &m["types"]["point"];
    assert_eq!(point["kind"], "opaque");
    assert_eq!(point["ctype"], "struct futhark_opaque_point *");
    assert_eq!(point["ops"]["store"], "futhark_store_opaque_point");
    assert_eq!(point["record"]["new"], "futhark_new_opaque_point");
    assert_eq!(
        point["record"]["fields"][1],
        serde_json::json!({"name": "y", "type": "f64", "project": "futhark_project_opaque_point_y"})
    );
    assert!(m["types"].get("f64").is_none(), "primitives are not listed");
}
