//! The bodies of the fuzz targets, shared by `cargo fuzz` (the crate in
//! `fuzz/`, on nightly) and the bounded stable run in
//! `crates/nabla/tests/fuzz_targets.rs`.
//!
//! Each function feeds arbitrary bytes to one stage of the front end. Errors
//! (diagnostics, value errors) are the expected outcome for most inputs; a
//! bug shows as a panic: either one that escapes the stage, or an "internal
//! error" diagnostic, which the stages report when they catch a panic of
//! their own (these functions turn such diagnostics back into panics, so the
//! fuzzer sees them). Inputs that must be text and are not UTF-8 are skipped.

use nabla_syntax::{Diagnostic, FileId, SourceMap};
use std::path::PathBuf;

/// Panics if one of `diags` reports a bug (a caught panic, an internal error)
/// rather than a problem with the input.
fn assert_no_internal_error(stage: &str, diags: &[Diagnostic]) {
    for d in diags {
        assert!(
            !is_internal(&d.message),
            "{stage}: internal error diagnostic: {}",
            d.message
        );
    }
}

fn is_internal(message: &str) -> bool {
    message.contains("internal error")
        || message.contains("internal compiler error")
        || message.contains("panicked")
}

/// The value reader: `data` as a stream of textual and binary values; if
/// that succeeds, again with the types just read as the expected ones, and
/// each value written back (text and binary) and re-read. As UTF-8 text
/// (when it is), through the text-only reader too.
pub fn value_reader(data: &[u8]) {
    if let Ok(values) = nabla_values::read_values(data, None) {
        let types: Vec<_> = values.iter().map(|v| v.value_type()).collect();
        let _ = nabla_values::read_values(data, Some(&types));
        for v in &values {
            let text = nabla_values::write_value_text(v);
            let _ = nabla_values::read_values_text(&text, None);
            let mut bin = Vec::new();
            nabla_values::write_value_binary(v, &mut bin);
            let _ = nabla_values::read_values(&bin, None);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = nabla_values::read_values_text(text, None);
    }
}

/// The parser: `data` (UTF-8) as a whole program, and as a single
/// expression, type and pattern.
pub fn parser(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut next_id = 0u32;
    if let Err(ds) = nabla_syntax::parse_program_text(text, FileId(0), &mut next_id) {
        assert_no_internal_error("parser", &ds);
    }
    let _ = nabla_syntax::parse_expr_text(text, FileId(0));
    let _ = nabla_syntax::parse_type_text(text, FileId(0));
    let _ = nabla_syntax::parse_pat_text(text, FileId(0));
}

/// The type checker: `data` (UTF-8) parsed as a program after the prelude,
/// its modules expanded, then type-checked (all in memory; imports are not
/// followed). Inputs that do not parse stop after the parser.
pub fn type_checker(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = SourceMap::new();
    let mut next_id = 0u32;
    let pre = sources.add(
        PathBuf::from("<prelude>"),
        nabla_typeck::PRELUDE_SOURCE.to_string(),
    );
    let prelude = nabla_syntax::parse_file(&sources, pre, &mut next_id)
        .unwrap_or_else(|ds| panic!("the prelude does not parse: {ds:?}"));
    let file = sources.add(PathBuf::from("fuzz.fut"), text.to_string());
    let user = match nabla_syntax::parse_file(&sources, file, &mut next_id) {
        Ok(p) => p,
        Err(ds) => return assert_no_internal_error("parser", &ds),
    };
    let mut files = match nabla_modules::expand_modules(&sources, vec![prelude, user], &mut next_id)
    {
        Ok(fs) => fs,
        Err(ds) => return assert_no_internal_error("module pass", &ds),
    };
    if let Err(ds) = nabla_typeck::check_program(&sources, &mut files) {
        assert_no_internal_error("type checker", &ds);
    }
}

/// The whole front end, as `nabla check` runs it: `data` (UTF-8) written to
/// a temporary `.fut` file and checked by [`crate::check`] (prelude,
/// imports, module expansion, type checking); a program that checks is then
/// elaborated to the IR, which must validate (size errors aside, as in
/// `tests/frontend_fuzz.rs`).
pub fn front_end(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    let dir = std::env::temp_dir().join(format!("nabla-fuzz-{}-{thread}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join("main.fut");
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let checked = crate::check(&path);
    let _ = std::fs::remove_file(&path);
    let checked = match checked {
        Ok(c) => c,
        Err(e) => return assert_no_internal_error("nabla check", &e.diagnostics),
    };
    let program = match nabla_elab::elaborate(&checked.files) {
        Ok(p) => p,
        Err(ds) => return assert_no_internal_error("elaborator", &ds),
    };
    if let Err(es) = nabla_ir::validate_program(&program) {
        let es: Vec<String> = es
            .iter()
            .filter(|e| !e.is_size_error())
            .map(|e| e.to_string())
            .collect();
        assert!(
            es.is_empty(),
            "the elaborated IR is invalid: {}",
            es.join("; ")
        );
    }
}
