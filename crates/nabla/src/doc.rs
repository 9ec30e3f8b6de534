//! `nabla doc DIR -o OUTDIR`: HTML documentation of a package's `.fut`
//! files, like `futhark doc`.
//!
//! One page per file (`a/b.fut` gives `a/b.html`) lists its public (not
//! `local`) definitions, type declarations, module types and modules, each
//! with its head as written (parameters and declared types) and its
//! documentation comment: the block of line comments right before it whose
//! first line starts with `-- |`, rendered as Markdown. A leading
//! documentation comment separated from the first declaration by a blank
//! line is the file's abstract, shown on the index page; a file whose
//! abstract is just `ignore` is left out. `index.html` links the files.
//!
//! As `futhark doc` does, every file of the package (also those left out)
//! is type-checked with its imports, and each error is reported; the
//! documentation is still written, and the exit status is 1.

use crate::fmt::{mod_type_text, module_head, source_comments, type_bind_text, val_head, Comment};
use nabla_syntax::ast::*;
use nabla_syntax::parser::parse_program_text;
use nabla_syntax::FileId;
use std::path::{Path, PathBuf};

/// One documented item of a file.
struct Item {
    /// The anchor and the name shown.
    name: String,
    /// What it is: `def`, `type`, `module type`, `module`.
    kind: &'static str,
    /// Its head as written (`def f (x: i32) : i32`).
    head: String,
    /// Its documentation comment as Markdown.
    doc: String,
}

/// The documentation of one file.
struct FileDoc {
    /// Path relative to the package directory, with `/`.
    rel: String,
    abstract_md: String,
    items: Vec<Item>,
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn markdown(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new(md);
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// The text of a comment line without `--` (and `|`) and one space.
fn comment_body(c: &str) -> &str {
    let s = c.strip_prefix("--").unwrap_or(c);
    let s = s
        .strip_prefix(" |")
        .or_else(|| s.strip_prefix('|'))
        .unwrap_or(s);
    s.strip_prefix(' ').unwrap_or(s).trim_end()
}

/// The documentation comment right before offset `pos`: the comments
/// ending there, one per line with nothing but line breaks between, whose
/// first starts with `-- |`.
fn doc_before(src: &str, cs: &[Comment], pos: u32) -> String {
    let gap_ok = |a: u32, b: u32| {
        let g = src.get(a as usize..b as usize).unwrap_or("x");
        g.trim().is_empty() && g.matches('\n').count() == 1
    };
    let Some(last) = cs.iter().rposition(|c| c.end <= pos) else {
        return String::new();
    };
    if !gap_ok(cs[last].end, pos) {
        return String::new();
    }
    let mut first = last;
    while first > 0 && gap_ok(cs[first - 1].end, cs[first].start) {
        first -= 1;
    }
    // The block's doc comment starts at its last `-- |` line.
    let Some(start) = (first..=last)
        .rev()
        .find(|&i| cs[i].text.starts_with("-- |"))
    else {
        return String::new();
    };
    cs[start..=last]
        .iter()
        .map(|c| comment_body(&c.text))
        .collect::<Vec<_>>()
        .join("\n")
}

fn dec_start(d: &Dec) -> u32 {
    match d {
        Dec::Val(v) => v
            .attrs
            .iter()
            .map(|a| a.span.start)
            .chain([v.span.start])
            .min()
            .unwrap_or(v.span.start),
        Dec::Type(t) => t.span.start,
        Dec::Module(m) => m.span.start,
        Dec::ModType(m) => m.span.start,
        Dec::Open(_, s)
        | Dec::OpenModule(_, s)
        | Dec::Include(_, s)
        | Dec::Import(_, s)
        | Dec::Local(_, s) => s.start,
    }
}

/// The public items of a list of declarations (members of modules get
/// qualified names).
fn items(src: &str, cs: &[Comment], decs: &[Dec], prefix: &str, out: &mut Vec<Item>) {
    for d in decs {
        let doc = doc_before(src, cs, dec_start(d));
        match d {
            Dec::Val(v) => out.push(Item {
                name: format!("{prefix}{}", v.name.name),
                kind: if v.entry { "entry" } else { "def" },
                head: val_head(src, v),
                doc,
            }),
            Dec::Type(t) => out.push(Item {
                name: format!("{prefix}{}", t.name.name),
                kind: "type",
                head: type_bind_text(t),
                doc,
            }),
            Dec::ModType(m) => out.push(Item {
                name: format!("{prefix}{}", m.name.name),
                kind: "module type",
                head: format!(
                    "module type {} = {}",
                    m.name.name,
                    mod_type_text(src, &m.def)
                ),
                doc,
            }),
            Dec::Module(m) => {
                let name = format!("{prefix}{}", m.name.name);
                out.push(Item {
                    name: name.clone(),
                    kind: "module",
                    head: module_head(src, m),
                    doc,
                });
                if let ModExp::Struct(inner, _) = &m.body {
                    if m.sig.is_none() && m.params.is_empty() {
                        items(src, cs, inner, &format!("{name}."), out);
                    }
                }
            }
            Dec::Local(..)
            | Dec::Open(..)
            | Dec::OpenModule(..)
            | Dec::Include(..)
            | Dec::Import(..) => {}
        }
    }
}

/// The file's abstract: a leading documentation comment followed by a blank
/// line (or by nothing).
fn file_abstract(src: &str, cs: &[Comment], first_dec: Option<u32>) -> String {
    let Some(c0) = cs.first() else {
        return String::new();
    };
    if !c0.text.starts_with("-- |")
        || !src
            .get(..c0.start as usize)
            .is_some_and(|s| s.trim().is_empty())
    {
        return String::new();
    }
    let mut last = 0;
    while last + 1 < cs.len() {
        let g = src
            .get(cs[last].end as usize..cs[last + 1].start as usize)
            .unwrap_or("x");
        if g.trim().is_empty() && g.matches('\n').count() == 1 {
            last += 1;
        } else {
            break;
        }
    }
    let end = first_dec.unwrap_or(src.len() as u32);
    let gap = src.get(cs[last].end as usize..end as usize).unwrap_or("");
    if first_dec.is_some() && gap.matches('\n').count() < 2 {
        return String::new();
    }
    cs[..=last]
        .iter()
        .map(|c| comment_body(&c.text))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fut_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fut_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
    Ok(())
}

const STYLE: &str = "body{font-family:sans-serif;max-width:50em;margin:auto;padding:1em}\
pre{background:#f4f4f4;padding:.5em;overflow-x:auto}\
.item{border-top:1px solid #ddd;margin-top:1em}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        html_escape(title)
    )
}

fn file_page(f: &FileDoc, up: &str) -> String {
    let mut body = format!(
        "<p><a href=\"{up}index.html\">Index</a></p>\n<h1>{}</h1>\n",
        html_escape(&f.rel)
    );
    if !f.abstract_md.is_empty() {
        body.push_str(&markdown(&f.abstract_md));
    }
    if !f.items.is_empty() {
        body.push_str("<h2>Contents</h2>\n<ul>\n");
        for it in &f.items {
            body.push_str(&format!(
                "<li><a href=\"#{}\">{} {}</a></li>\n",
                html_escape(&it.name),
                it.kind,
                html_escape(&it.name)
            ));
        }
        body.push_str("</ul>\n");
    }
    for it in &f.items {
        body.push_str(&format!(
            "<div class=\"item\" id=\"{}\">\n<pre><code>{}</code></pre>\n{}</div>\n",
            html_escape(&it.name),
            html_escape(&it.head),
            markdown(&it.doc)
        ));
    }
    page(&f.rel, &body)
}

/// Type-checks each of `files` with its imports (as `nabla check` does),
/// printing each error on stderr once (an error in a file that others
/// import is found again when they are checked; warnings are not shown, as
/// in `futhark doc`); a file already checked as an import of an earlier
/// one is not checked again. Returns whether all are well-typed.
fn type_check(files: &[PathBuf], verbose: bool) -> bool {
    let mut checked = std::collections::HashSet::new();
    let mut reported = std::collections::HashSet::new();
    let mut all_well_typed = true;
    for path in files {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if checked.contains(&key) {
            continue;
        }
        if verbose {
            eprintln!("Type-checking {}", path.display());
        }
        let read = |p: &Path| std::fs::read_to_string(p);
        match crate::driver::check_reading(path, &read) {
            Ok(program) => {
                for file in &program.sources.files {
                    checked.insert(
                        std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone()),
                    );
                }
            }
            Err((e, sources)) => {
                all_well_typed = false;
                let errors: Vec<_> = e
                    .diagnostics
                    .iter()
                    .filter(|d| d.kind != nabla_syntax::DiagnosticKind::Warning)
                    .collect();
                if errors.is_empty() {
                    // An error without a diagnostic (an unreadable file).
                    if reported.insert(e.to_string()) {
                        eprintln!("{e}");
                    }
                }
                for d in errors {
                    let message = d.render(&sources);
                    if reported.insert(message.clone()) {
                        eprintln!("{}", message.trim_end());
                    }
                }
            }
        }
    }
    all_well_typed
}

/// `nabla doc DIR -o OUTDIR`: writes the documentation; returns the exit
/// status (1 when a file does not parse or is not well-typed, or a file
/// cannot be read or written; the other files are still documented).
pub fn run(dir: &Path, outdir: &Path, verbose: bool) -> i32 {
    let mut files = Vec::new();
    if let Err(e) = fut_files(dir, &mut files) {
        eprintln!("nabla doc: cannot read {}: {e}", dir.display());
        return 1;
    }
    let mut status = 0;
    let mut docs = Vec::new();
    let mut parsed = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(dir)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        if verbose {
            eprintln!("Documenting {rel}");
        }
        let src = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("nabla doc: cannot read {}: {e}", path.display());
                status = 1;
                continue;
            }
        };
        let mut next = 0u32;
        let prog = match parse_program_text(&src, FileId(0), &mut next) {
            Ok(p) => p,
            Err(diags) => {
                let mut sm = nabla_syntax::SourceMap::new();
                sm.add(path.clone(), src.clone());
                eprint!("{}", nabla_syntax::diag::render_all(&diags, &sm));
                status = 1;
                continue;
            }
        };
        parsed.push(path.clone());
        let cs = source_comments(&src);
        let abstract_md = file_abstract(&src, &cs, prog.decs.first().map(dec_start));
        if abstract_md.trim() == "ignore" {
            continue;
        }
        let mut its = Vec::new();
        items(&src, &cs, &prog.decs, "", &mut its);
        docs.push(FileDoc {
            rel,
            abstract_md,
            items: its,
        });
    }
    if !type_check(&parsed, verbose) {
        status = 1;
    }
    if let Err(e) = std::fs::create_dir_all(outdir) {
        eprintln!("nabla doc: cannot create {}: {e}", outdir.display());
        return 1;
    }
    let mut index = String::from("<h1>Documentation</h1>\n<dl>\n");
    for f in &docs {
        let html_rel = format!("{}.html", f.rel.strip_suffix(".fut").unwrap_or(&f.rel));
        let depth = f.rel.matches('/').count();
        let up = "../".repeat(depth);
        let target = outdir.join(&html_rel);
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(&target, file_page(f, &up)) {
            eprintln!("nabla doc: cannot write {}: {e}", target.display());
            status = 1;
        }
        index.push_str(&format!(
            "<dt><a href=\"{}\">{}</a></dt>\n<dd>{}</dd>\n",
            html_escape(&html_rel),
            html_escape(&f.rel),
            markdown(&f.abstract_md)
        ));
    }
    index.push_str("</dl>\n");
    let target = outdir.join("index.html");
    if let Err(e) = std::fs::write(&target, page("Documentation", &index)) {
        eprintln!("nabla doc: cannot write {}: {e}", target.display());
        status = 1;
    }
    status
}
