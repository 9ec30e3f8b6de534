//! Parses every `.fut` file of the repository's test corpus (`tests/`,
//! `examples/`, the prelude). Files under `tests/errors/` named
//! `syntax_error*` must fail with a syntax error; all others must parse.

use nabla_syntax::{diag::render_all, parse_file, DiagnosticKind, SourceMap};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let rd = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for ent in rd.flatten() {
        let p = ent.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn repository_programs_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    collect(&root.join("tests"), &mut files);
    collect(&root.join("examples"), &mut files);
    collect(&root.join("crates/nabla-typeck/src"), &mut files);
    assert!(files.len() > 20, "only {} .fut files found", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut sm = SourceMap::new();
        let f = sm.add(path.clone(), text);
        let mut id = 0;
        let r = parse_file(&sm, f, &mut id);
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("syntax_error") {
            match r {
                Err(ds) => assert!(ds
                    .iter()
                    .all(|d| matches!(d.kind, DiagnosticKind::Syntax | DiagnosticKind::Lexical))),
                Ok(_) => failures.push(format!("{} parsed but should not", path.display())),
            }
        } else if let Err(ds) = r {
            failures.push(render_all(&ds, &sm));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
