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

/// Rewrites the flat names the module pass gave to redefinitions
/// (`helper#2`, `M.x#2`) back to what the user wrote (`helper`, `M.x`) in
/// the messages of `diags`.
pub(crate) fn user_facing_names(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    for d in &mut diags {
        d.message = strip_redefinition_suffixes(&d.message);
        for (_, label) in &mut d.labels {
            *label = strip_redefinition_suffixes(label);
        }
    }
    diags
}

/// Drops every `#` followed by digits that directly follows a name (a
/// constructor `#name` never starts with a digit, so it is kept).
fn strip_redefinition_suffixes(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let after_name =
            i > 0 && (chars[i - 1].is_alphanumeric() || "_'+-*/%=!<>&|^".contains(chars[i - 1]));
        if chars[i] == '#' && after_name && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
            while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn redefinition_suffixes_are_stripped_but_constructors_kept() {
        let s = super::strip_redefinition_suffixes("`helper#2` and `M.x#12` vs #some and `+^#3`");
        assert_eq!(s, "`helper` and `M.x` vs #some and `+^`");
    }
}
