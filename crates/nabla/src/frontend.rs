//! Thin adaptors over the syntax crate's entry points (parsing the prelude,
//! loading the user's program with its imports), so the driver does not
//! depend on their exact signatures.

use nabla_syntax::{ast, Diagnostic, DiagnosticKind, SourceMap, Span};
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
) -> Result<nabla_modules::Expansion, Vec<Diagnostic>> {
    nabla_modules::expand_program(sources, files, next_id)
}

/// Type-checks the expanded program `files` and matches the `val`
/// specifications of its ascriptions against the members' inferred types
/// (then drops the declarations the module pass made up for them). The
/// errors of both, in source order.
///
/// `applied`: the definitions made by applying functors
/// ([`nabla_modules::Expansion::applied_declarations`]), whose functions'
/// results may alias top-level arrays here: whether they may is decided
/// on the functor's body by [`check_opaque_ascription`].
pub(crate) fn check_expanded(
    sources: &SourceMap,
    files: &mut [ast::Program],
    value_checks: &nabla_modules::ValueChecks,
    applied: &std::collections::HashSet<String>,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut warnings = vec![];
    let options = nabla_typeck::CheckOptions {
        global_alias_exempt: applied.clone(),
    };
    let mut diags = match nabla_typeck::check_program_with_options(sources, files, &options) {
        Ok(w) => {
            warnings = w;
            Vec::new()
        }
        // A made-up declaration the type checker cannot type is no error
        // of the program (the module pass checked the specification).
        Err(d) => {
            let (w, errors): (Vec<_>, Vec<_>) = d
                .into_iter()
                .filter(|d| !value_checks.is_made_up(d.span))
                .partition(|d| d.kind == DiagnosticKind::Warning);
            warnings = w;
            errors
        }
    };
    diags.extend(value_checks.check(files));
    value_checks.remove_declarations(files);
    // Warnings about declarations the module pass made up are not the
    // program's.
    warnings.retain(|w| !value_checks.is_made_up(w.span));
    if diags.is_empty() {
        return Ok(user_facing_names(warnings));
    }
    // The errors in source order, then the warnings (which may explain
    // them: "Defaulting ambiguous type to i32.").
    diags.sort_by_key(|d| (d.span.file, d.span.start));
    diags.extend(warnings);
    Err(user_facing_names(diags))
}

/// Checks that the program (`files` as parsed, already type-checked with
/// the ordinary expansion) uses no abstract type of an opaquely ascribed
/// module as its definition outside the module: type-checks the sealed
/// expansion of [`nabla_modules::expand_modules_sealed`], when there is
/// anything to seal. A type error in a declaration the module pass made
/// up (a shape of module type the sealing does not handle) makes the check
/// give up rather than reject a program that may be valid.
pub(crate) fn check_opaque_ascription(
    sources: &SourceMap,
    files: Vec<ast::Program>,
    next_id: u32,
) -> Result<(), Vec<Diagnostic>> {
    // Deep (but bounded) programs must not overflow the caller's stack when
    // the copies are dropped. Without such a thread the check is skipped
    // (the program already passed the ordinary one).
    with_big_stack(move || check_sealed(sources, files, next_id)).unwrap_or(Ok(()))
}

/// Runs `f` on a thread with a 256 MiB stack (the front end's passes
/// recurse over the syntax tree); `None` if no such thread can be started
/// or `f` panics.
fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, f)
            .ok()?
            .join()
            .ok()
    })
}

/// A copy of `files` when some module in them is ascribed a module type
/// (`module M: S`, `m : S`, or a functor's result type) or some functor is
/// defined, else `None` (also when no thread for the copy can be started:
/// the check of opaque ascription is then skipped).
pub(crate) fn copy_if_ascribed(files: &[ast::Program]) -> Option<Vec<ast::Program>> {
    fn module_exp(m: &ast::ModExp) -> bool {
        match m {
            ast::ModExp::Ascribe(..) => true,
            ast::ModExp::Struct(decs, _) => decs.iter().any(dec),
            ast::ModExp::Apply(f, a, _) => module_exp(f) || module_exp(a),
            ast::ModExp::Lambda(..) => true,
            ast::ModExp::Var(_) | ast::ModExp::Import(..) => false,
        }
    }
    fn dec(d: &ast::Dec) -> bool {
        match d {
            ast::Dec::Module(mb) => {
                mb.sig.is_some() || !mb.params.is_empty() || module_exp(&mb.body)
            }
            ast::Dec::OpenModule(m, _) | ast::Dec::Include(m, _) => module_exp(m),
            ast::Dec::Local(d, _) => dec(d),
            _ => false,
        }
    }
    let ascribed = files.iter().any(|f| f.decs.iter().any(dec));
    if ascribed {
        with_big_stack(|| files.to_vec())
    } else {
        None
    }
}

fn check_sealed(
    sources: &SourceMap,
    files: Vec<ast::Program>,
    mut next_id: u32,
) -> Result<(), Vec<Diagnostic>> {
    let mut sealed = match nabla_modules::expand_modules_sealed(sources, files, &mut next_id) {
        Ok(Some(sealed)) => sealed,
        Ok(None) => return Ok(()),
        Err(diags) => return Err(user_facing_names(diags)),
    };
    let made_up = |span: Span| {
        sealed
            .generated
            .iter()
            .any(|g| g.file == span.file && g.start <= span.start && span.end <= g.end)
    };
    let options = nabla_typeck::CheckOptions {
        global_alias_exempt: std::mem::take(&mut sealed.applied_declarations),
    };
    if let Err(diags) =
        nabla_typeck::check_program_with_options(sources, &mut sealed.files, &options)
    {
        let diags: Vec<Diagnostic> = diags
            .into_iter()
            .filter(|d| !sealed.value_checks.is_made_up(d.span))
            .collect();
        if diags.iter().any(|d| made_up(d.span)) {
            return Ok(());
        }
        if !diags.is_empty() {
            return Err(user_facing_names(diags));
        }
    }
    let diags = sealed.value_checks.check(&sealed.files);
    if diags.is_empty() {
        Ok(())
    } else {
        Err(user_facing_names(diags))
    }
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
        for note in &mut d.notes {
            *note = strip_redefinition_suffixes(note);
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
