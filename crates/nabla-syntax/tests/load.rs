//! Import loading: dependency order, sharing, missing files, cycles.

use nabla_syntax::ast::Dec;
use nabla_syntax::{load_program, DiagnosticKind, SourceMap};
use std::fs;

fn names(progs: &[nabla_syntax::ast::Program], sm: &SourceMap) -> Vec<String> {
    progs
        .iter()
        .map(|p| {
            sm.file(p.file)
                .path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn loads_in_dependency_order_once_each() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("lib")).unwrap();
    fs::write(
        dir.path().join("main.fut"),
        "import \"lib/a\"\nimport \"b\"\ndef main = a + b",
    )
    .unwrap();
    fs::write(dir.path().join("lib/a.fut"), "import \"../b\"\ndef a = b").unwrap();
    fs::write(
        dir.path().join("b.fut"),
        "local import \"c.fut\"\ndef b = 1",
    )
    .unwrap();
    fs::write(dir.path().join("c.fut"), "def c = 2").unwrap();
    let mut sm = SourceMap::new();
    sm.add("prelude.fut".into(), "def id x = x".into());
    let mut id = 100;
    let progs = load_program(&mut sm, &dir.path().join("main.fut"), &mut id).unwrap();
    assert_eq!(
        names(&progs, &sm),
        vec!["c.fut", "b.fut", "a.fut", "main.fut"]
    );
    // 4 files + prelude
    assert_eq!(sm.files.len(), 5);
    // fresh node ids, one per def
    let mut ids = vec![];
    for p in &progs {
        for d in &p.decs {
            if let Dec::Val(v) = d {
                ids.push(v.id.0);
            }
        }
    }
    ids.sort();
    assert_eq!(ids, vec![100, 101, 102, 103]);
}

#[test]
fn missing_import_is_reported_at_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = "def x = 1\nimport \"nope\"\n";
    fs::write(dir.path().join("main.fut"), src).unwrap();
    let mut sm = SourceMap::new();
    let mut id = 0;
    let ds = load_program(&mut sm, &dir.path().join("main.fut"), &mut id).unwrap_err();
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].kind, DiagnosticKind::Import);
    assert_eq!(ds[0].span.start as usize, src.find("import").unwrap());
    assert!(ds[0].message.contains("nope.fut"), "{}", ds[0].message);
}

#[test]
fn cycles_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("main.fut"), "import \"a\"").unwrap();
    fs::write(dir.path().join("a.fut"), "import \"b\"").unwrap();
    fs::write(dir.path().join("b.fut"), "import \"a\"").unwrap();
    let mut sm = SourceMap::new();
    let mut id = 0;
    let ds = load_program(&mut sm, &dir.path().join("main.fut"), &mut id).unwrap_err();
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].kind, DiagnosticKind::Import);
    assert!(ds[0].message.contains("cycle"));
    assert!(sm.file(ds[0].span.file).path.ends_with("b.fut"));
}

#[test]
fn syntax_errors_in_imports_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("main.fut"), "import \"a\"\ndef main = 1").unwrap();
    fs::write(dir.path().join("a.fut"), "def a = (").unwrap();
    let mut sm = SourceMap::new();
    let mut id = 0;
    let ds = load_program(&mut sm, &dir.path().join("main.fut"), &mut id).unwrap_err();
    assert_eq!(ds[0].kind, DiagnosticKind::Syntax);
    assert!(sm.file(ds[0].span.file).path.ends_with("a.fut"));
}

#[test]
fn missing_main_file() {
    let mut sm = SourceMap::new();
    let mut id = 0;
    let ds = load_program(
        &mut sm,
        std::path::Path::new("/nonexistent/zzz.fut"),
        &mut id,
    )
    .unwrap_err();
    assert_eq!(ds[0].kind, DiagnosticKind::Import);
    // rendering a location-less diagnostic does not panic
    let r = ds[0].render(&sm);
    assert!(r.contains("zzz.fut"));
}
