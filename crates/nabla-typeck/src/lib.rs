//! Type checking with inference for nabla's Futhark subset. See [`check_program`].
//!
//! Hindley–Milner-style inference with unification, extended (as in Futhark's
//! type checker) with constrained type variables for overloaded literals and
//! operators, "has field" constraints for record projection on values of not
//! yet known type, and "has constructor" constraints for structurally typed
//! sum types. Sizes are tracked best-effort (see `unify`).

mod causality;
mod check;
mod consume;
mod recursion;
mod rules;
mod safety;
mod sig;
mod unify;

#[cfg(test)]
mod tests;

use nabla_syntax::{ast, Diagnostic, DiagnosticKind, SourceMap, Span};

pub use sig::intrinsic_signatures;

/// The names of the built-in numeric modules (`i8` … `f64`, `bool`).
pub fn builtin_modules() -> &'static [&'static str] {
    sig::MODULES
}

/// The member names of the built-in module `m` (values and operators), or
/// `None` if `m` is not a built-in module.
pub fn builtin_module_members(m: &str) -> Option<Vec<String>> {
    sig::module_member_names(m)
}

/// The prelude, in our Futhark subset: array and function utilities that are
/// not intrinsics. Loaded as the first file of every program.
pub const PRELUDE_SOURCE: &str = include_str!("prelude.fut");

/// Type-checks `files` (in dependency order: the prelude first, the main file
/// last) and fills the AST's `ty`, `res` and `inst` slots (see the contract in
/// the crate docs of `nabla-elab`/the team brief).
///
/// Each file sees the non-`local` top-level names of all earlier files (and
/// everything sees the prelude); within a file, a definition sees the earlier
/// ones, and later definitions shadow earlier ones.
///
/// Errors: one diagnostic (kind `Type`) for the first error of each top-level
/// definition that fails; checking continues with the next definition.
/// The AST's annotations are complete only when the result is `Ok`.
pub fn check_program(
    sources: &SourceMap,
    files: &mut [ast::Program],
) -> Result<(), Vec<Diagnostic>> {
    check_program_with_warnings(sources, files).map(|_| ())
}

/// [`check_program`], also giving the warnings (kind `Warning`) of a program
/// that type-checks: comparing arrays with `==`, a size expression with a
/// binding, a uniqueness annotation on a non-array type, an `#[unroll]` that
/// cannot apply. Errors as for [`check_program`].
pub fn check_program_with_warnings(
    sources: &SourceMap,
    files: &mut [ast::Program],
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    check_program_with_options(sources, files, &CheckOptions::default())
}

/// How [`check_program_with_options`] checks.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Top-level definitions (by flat name) whose functions' results may
    /// alias top-level arrays: the copies of a functor's body made by
    /// applying it (`nabla_modules::Expansion::applied_declarations`). In
    /// Futhark the body is checked once against its parameters' module
    /// types, where a value of an abstract type is no array and so aliases
    /// nothing; in these copies the types are the argument's.
    pub global_alias_exempt: std::collections::HashSet<String>,
}

/// [`check_program_with_warnings`] under `options`.
pub fn check_program_with_options(
    _sources: &SourceMap,
    files: &mut [ast::Program],
    options: &CheckOptions,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    // Run on a thread with a big stack so deeply nested (but bounded) input
    // cannot overflow the caller's stack; a panic becomes a diagnostic.
    let result = std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || {
                let mut checker = check::Checker::new();
                checker
                    .global_alias_exempt
                    .clone_from(&options.global_alias_exempt);
                let diags = checker.check_files(files);
                let mut warnings = std::mem::take(&mut checker.warnings);
                if diags.is_empty() {
                    warnings.extend(safety::safety_check_warnings(files));
                }
                (diags, warnings)
            });
        match h {
            Ok(h) => h.join().map_err(|_| ()),
            Err(_) => Err(()),
        }
    });
    let (diags, warnings) = match result {
        Ok(d) => d,
        Err(()) => (
            vec![Diagnostic::new(
                DiagnosticKind::Type,
                Span::default(),
                "internal error in the type checker (please report)",
            )],
            vec![],
        ),
    };
    if diags.is_empty() {
        Ok(warnings)
    } else {
        // The warnings of the definitions checked before the error come
        // after it (Futhark prints them too: "Defaulting ambiguous type"
        // often explains a later error).
        let mut diags = diags;
        diags.extend(warnings);
        Err(diags)
    }
}
