//! Thin adaptors over the syntax crate's entry points (parsing the prelude,
//! loading the user's program with its imports), so the driver does not
//! depend on their exact signatures.

use nabla_syntax::{ast, Diagnostic, SourceMap};
use std::path::{Path, PathBuf};

/// Adds the prelude to `sources` as the first file (path `<prelude>`) and parses it.
pub(crate) fn parse_prelude(
    sources: &mut SourceMap,
    next_id: &mut u32,
) -> Result<ast::Program, Vec<Diagnostic>> {
    let file = sources.add(
        PathBuf::from("<prelude>"),
        nabla_typeck::PRELUDE_SOURCE.to_string(),
    );
    nabla_syntax::parse_file(sources, file, next_id)
}

/// Loads the main file `main` and its imports (in dependency order, the main file last).
pub(crate) fn load(
    sources: &mut SourceMap,
    main: &Path,
    next_id: &mut u32,
) -> Result<Vec<ast::Program>, Vec<Diagnostic>> {
    nabla_syntax::load_program(sources, main, next_id)
}

/// Expands the module system (modules, functors, `open`, qualified names)
/// into flat declarations before type checking.
pub(crate) fn expand_modules(
    sources: &SourceMap,
    files: Vec<ast::Program>,
    next_id: &mut u32,
) -> Result<Vec<ast::Program>, Vec<Diagnostic>> {
    nabla_modules::expand_modules(sources, files, next_id)
}
