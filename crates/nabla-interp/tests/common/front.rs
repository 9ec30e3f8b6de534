//! Compiles Futhark source text to the core IR through the front end (for
//! tests and benchmarks of the interpreter on real programs).
#![allow(dead_code)]

use nabla_syntax::SourceMap;
use std::path::PathBuf;

/// Parses, type-checks (with the prelude) and elaborates `src`.
pub fn compile(src: &str) -> nabla_ir::Program {
    let mut sources = SourceMap::new();
    let mut next_id = 0u32;
    let pre = sources.add(
        PathBuf::from("<prelude>"),
        nabla_typeck::PRELUDE_SOURCE.to_string(),
    );
    let mut files = vec![nabla_syntax::parse_file(&sources, pre, &mut next_id)
        .unwrap_or_else(|d| panic!("prelude: {d:?}"))];
    let main = sources.add(PathBuf::from("test.fut"), src.to_string());
    files.push(
        nabla_syntax::parse_file(&sources, main, &mut next_id)
            .unwrap_or_else(|d| panic!("parse: {d:?}")),
    );
    if let Err(d) = nabla_typeck::check_program(&sources, &mut files) {
        panic!("type errors: {d:?}");
    }
    nabla_elab::elaborate(&files).unwrap_or_else(|d| panic!("elaboration: {d:?}"))
}
