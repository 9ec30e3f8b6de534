//! Loading a program: the main file and, recursively, the files it imports.
//!
//! Follows Futhark's `import "path"`: the path is relative to the directory
//! of the importing file, and `.fut` is appended (unless already present).
//! Each file is loaded and parsed once, however often it is imported.

use crate::ast::{Dec, ModExp, Program};
use crate::diag::{Diagnostic, DiagnosticKind};
use crate::parser::parse_file;
use crate::span::{FileId, SourceMap, Span};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads `main`, parses it, and follows its imports recursively.
///
/// Returns the parsed files in dependency order: every file comes after the
/// files it imports, and `main` is last. Files are added to `sources` (which
/// may already hold other files, e.g. the prelude). Node ids are drawn from
/// `next_id`.
///
/// Errors: an unreadable main file (a diagnostic without a source location);
/// a missing/unreadable imported file or an import cycle (kind `Import`, at
/// the span of the offending `import`); and all lexical/syntax errors of the
/// files that were read.
pub fn load_program(
    sources: &mut SourceMap,
    main: &Path,
    next_id: &mut u32,
) -> Result<Vec<Program>, Vec<Diagnostic>> {
    load_program_with(sources, main, next_id, &|p| std::fs::read_to_string(p))
}

/// [`load_program`], reading every file (the main file and each import)
/// with `read` instead of from disk: the language server reads the
/// editor's unsaved buffers this way.
pub fn load_program_with(
    sources: &mut SourceMap,
    main: &Path,
    next_id: &mut u32,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Vec<Program>, Vec<Diagnostic>> {
    let mut ld = Loader {
        sources,
        next_id,
        read,
        state: HashMap::new(),
        order: Vec::new(),
        errs: Vec::new(),
    };
    let text = match read(main) {
        Ok(t) => t,
        Err(e) => {
            return Err(vec![Diagnostic::new(
                DiagnosticKind::Import,
                Span::new(FileId(u32::MAX), 0, 0),
                format!("cannot read `{}`: {e}", main.display()),
            )])
        }
    };
    ld.visit(main.to_path_buf(), text, None);
    if ld.errs.is_empty() {
        Ok(ld.order)
    } else {
        Err(ld.errs)
    }
}

enum State {
    /// Being loaded (its imports are being followed): seeing it again is a cycle.
    InProgress,
    Done,
}

struct Loader<'a> {
    sources: &'a mut SourceMap,
    next_id: &'a mut u32,
    read: &'a dyn Fn(&Path) -> std::io::Result<String>,
    state: HashMap<PathBuf, State>,
    order: Vec<Program>,
    errs: Vec<Diagnostic>,
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn collect_imports(decs: &[Dec], out: &mut Vec<(String, Span)>) {
    for d in decs {
        match d {
            Dec::Import(p, s) => out.push((p.clone(), *s)),
            Dec::Local(inner, _) => collect_imports(std::slice::from_ref(inner.as_ref()), out),
            Dec::Module(mb) => collect_mod_imports(&mb.body, out),
            Dec::OpenModule(m, _) | Dec::Include(m, _) => collect_mod_imports(m, out),
            _ => {}
        }
    }
}

/// The `import "…"` module expressions inside `m` (also inside nested modules).
fn collect_mod_imports(m: &ModExp, out: &mut Vec<(String, Span)>) {
    let mut stack = vec![m];
    while let Some(m) = stack.pop() {
        match m {
            ModExp::Import(p, s) => out.push((p.clone(), *s)),
            ModExp::Struct(decs, _) => collect_imports(decs, out),
            ModExp::Apply(f, a, _) => {
                stack.push(f);
                stack.push(a);
            }
            ModExp::Ascribe(m, _, _) | ModExp::Lambda(_, _, m, _) => stack.push(m),
            ModExp::Var(_) => {}
        }
    }
}

/// The file an `import "rel"` in `importer` refers to.
pub fn resolve_import(importer: &Path, rel: &str) -> PathBuf {
    let dir = importer.parent().unwrap_or(Path::new(""));
    let mut p = dir.join(rel);
    if p.extension().and_then(|e| e.to_str()) != Some("fut") {
        let mut s = p.into_os_string();
        s.push(".fut");
        p = PathBuf::from(s);
    }
    p
}

impl Loader<'_> {
    fn visit(&mut self, path: PathBuf, text: String, _from: Option<Span>) {
        let key = canonical(&path);
        self.state.insert(key.clone(), State::InProgress);
        let fid = self.sources.add(path.clone(), text);
        let prog = match parse_file(self.sources, fid, self.next_id) {
            Ok(p) => p,
            Err(es) => {
                self.errs.extend(es);
                self.state.insert(key, State::Done);
                return;
            }
        };
        let mut imports = Vec::new();
        collect_imports(&prog.decs, &mut imports);
        for (rel, span) in imports {
            let target = resolve_import(&path, &rel);
            let tkey = canonical(&target);
            match self.state.get(&tkey) {
                Some(State::Done) => continue,
                Some(State::InProgress) => {
                    self.errs.push(Diagnostic::new(
                        DiagnosticKind::Import,
                        span,
                        format!(
                            "import cycle: `{}` is already being imported",
                            target.display()
                        ),
                    ));
                    continue;
                }
                None => {}
            }
            match (self.read)(&target) {
                Ok(t) => self.visit(target, t, Some(span)),
                Err(e) => self.errs.push(Diagnostic::new(
                    DiagnosticKind::Import,
                    span,
                    format!("cannot read imported file `{}`: {e}", target.display()),
                )),
            }
        }
        self.state.insert(key, State::Done);
        self.order.push(prog);
    }
}
