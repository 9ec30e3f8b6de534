//! `nabla fmt`: a formatter for Futhark source files, in the style of
//! `futhark fmt`.
//!
//! The program is parsed and printed back from its AST, with the comments
//! (collected from the gaps between tokens) emitted on lines of their own
//! before the construct that follows them. Like `futhark fmt`, the layout
//! follows the input's: an expression written on one line stays on one line;
//! one written over several lines is broken at its natural points (each
//! `let` of a chain on its own line, `then`/`else`, `case`s, arguments and
//! pipeline stages that started a line), indented by two spaces. Top-level
//! definitions are separated by a blank line.
//!
//! Safety net: the result is parsed again and every top-level declaration is
//! compared, without spans, with the original's. A declaration whose
//! printing does not parse back to the same tree is kept as written (its
//! original text, see [`Formatted::verbatim`]). Comments are never dropped:
//! if the output's comments differ from the input's, the input is returned
//! unchanged.

use nabla_syntax::ast::*;
use nabla_syntax::lexer::{lex, Token};
use nabla_syntax::parser::{dump, parse_program_text};
use nabla_syntax::{Diagnostic, FileId};

/// The result of formatting one source text.
#[derive(Clone, Debug)]
pub struct Formatted {
    /// The formatted text.
    pub text: String,
    /// How many top-level declarations were kept as written because their
    /// printing did not parse back to the same tree.
    pub verbatim: usize,
    /// True when the whole input was returned unchanged by the safety net
    /// (the output did not parse, or lost a comment).
    pub unchanged_fallback: bool,
}

/// One comment: its byte offset, its end (before the newline), its text
/// from `--` (trailing whitespace kept).
#[derive(Clone, Debug)]
pub(crate) struct Comment {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) text: String,
}

/// The comments of a source text (none if it does not lex).
pub(crate) fn source_comments(text: &str) -> Vec<Comment> {
    match lex(text, FileId(0)) {
        Ok(t) => comments(text, &t),
        Err(_) => Vec::new(),
    }
}

/// A definition's head as written, without its body: `def f [n] (x: [n]i32) : i32`.
pub(crate) fn val_head(src: &str, v: &ValBind) -> String {
    let mut p = Printer::new(src, &[]);
    let mut v = v.clone();
    v.attrs.clear();
    let text = p.val_bind(&v, 0);
    // The printing is the head, ` =`, then the body as `hang` prints it.
    let body = p.hang(&v.body, 0);
    let head = text
        .strip_suffix(&body)
        .unwrap_or(&text)
        .trim_end()
        .trim_end_matches('=')
        .trim_end();
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A module type expression on as many lines as it needs.
pub(crate) fn mod_type_text(src: &str, t: &ModTypeExp) -> String {
    Printer::new(src, &[]).mod_type(t, 0)
}

/// A module binding's head: `module m (p: S) : T`.
pub(crate) fn module_head(src: &str, m: &ModBind) -> String {
    let mut p = Printer::new(src, &[]);
    let ps: String = m
        .params
        .iter()
        .map(|x| format!(" ({}: {})", x.name.name, p.mod_type(&x.sig, 0)))
        .collect();
    let sig = match &m.sig {
        Some(s) => format!(" : {}", p.mod_type(s, 0)),
        None => String::new(),
    };
    format!("module {}{ps}{sig}", m.name.name)
}

/// A type declaration as written.
pub(crate) fn type_bind_text(t: &TypeBind) -> String {
    let ps: String = t.params.iter().map(|p| format!(" {}", tparam(p))).collect();
    format!(
        "type{} {}{ps} = {}",
        lifted(t.liftedness),
        t.name.name,
        ty(&t.def)
    )
}

/// The comments of a text, in order: `--` to the end of the line, found in
/// the gaps between tokens.
fn comments(text: &str, toks: &[Token]) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut scan = |from: usize, to: usize| {
        let mut i = from;
        while i < to {
            if bytes[i] == b'-' && bytes.get(i + 1) == Some(&b'-') {
                let mut j = i;
                while j < bytes.len() && bytes[j] != b'\n' {
                    j += 1;
                }
                let mut e = j;
                if e > i && bytes[e - 1] == b'\r' {
                    e -= 1;
                }
                out.push(Comment {
                    start: i as u32,
                    end: e as u32,
                    text: text.get(i..e).unwrap_or("").to_string(),
                });
                i = j;
            } else {
                i += 1;
            }
        }
    };
    let mut prev = 0usize;
    for t in toks {
        let s = (t.span.start as usize).min(bytes.len());
        if s > prev {
            scan(prev, s);
        }
        prev = prev.max(t.span.end as usize);
    }
    if prev < bytes.len() {
        scan(prev, bytes.len());
    }
    out
}

/// The span-free rendering of a declaration used to compare trees.
fn shape(d: &Dec) -> String {
    strip_ids(&strip_spans(&format!("{d:?}")))
}

/// Removes the numbers of `NodeId(…)` (they count declarations from the
/// start of the parse).
fn strip_ids(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("NodeId(") {
        out.push_str(&rest[..i + 7]);
        match rest[i..].find(')') {
            Some(j) => rest = &rest[i + j..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    // Names the parser makes up carry the offset they come from
    // (`with_source@120`).
    let mut clean = String::with_capacity(out.len());
    let mut after_at = false;
    for c in out.chars() {
        if after_at && c.is_ascii_digit() {
            continue;
        }
        after_at = c == '@';
        clean.push(c);
    }
    clean
}

/// The shape of the one declaration a text holds, if it parses to one.
fn single_dec_shape(text: &str) -> Option<String> {
    let p = parse(text).ok()?;
    match p.decs.as_slice() {
        [d] => Some(shape(d)),
        _ => None,
    }
}

/// Removes every `Span { … }` from a `Debug` rendering.
fn strip_spans(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("Span {") {
        out.push_str(&rest[..i]);
        match rest[i..].find('}') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where a declaration's text starts (its attributes included).
fn dec_start(d: &Dec) -> u32 {
    match d {
        Dec::Val(v) => v
            .attrs
            .iter()
            .map(|a| a.span.start)
            .min()
            .unwrap_or(v.span.start)
            .min(v.span.start),
        Dec::Type(t) => t.span.start,
        Dec::Open(_, s) | Dec::OpenModule(_, s) | Dec::Include(_, s) | Dec::Import(_, s) => s.start,
        Dec::Module(m) => m.span.start,
        Dec::ModType(m) => m.span.start,
        Dec::Local(_, s) => s.start,
    }
}

fn dec_end(d: &Dec) -> u32 {
    match d {
        Dec::Val(v) => v.span.end,
        Dec::Type(t) => t.span.end,
        Dec::Open(_, s)
        | Dec::OpenModule(_, s)
        | Dec::Include(_, s)
        | Dec::Import(_, s)
        | Dec::Local(_, s) => s.end,
        Dec::Module(m) => m.span.end,
        Dec::ModType(m) => m.span.end,
    }
}

/// Parses `text` (for the formatter); the diagnostics on failure.
fn parse(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let mut next = 0u32;
    parse_program_text(text, FileId(0), &mut next)
}

/// Formats a Futhark source text. A text that does not parse is an error
/// (the parser's diagnostics); nothing else fails.
pub fn format_source(text: &str) -> Result<Formatted, Vec<Diagnostic>> {
    on_big_stack(|| format_on_this_stack(text)).unwrap_or_else(|| {
        Ok(Formatted {
            text: text.to_string(),
            verbatim: 0,
            unchanged_fallback: true,
        })
    })
}

/// Runs `f` on a thread with a large stack: the printer, the tree
/// comparison and dropping the tree recurse as deep as the tree (a chain of
/// 4096 `let`s or operators is one level each). `None` if the thread could
/// not be started or panicked.
fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("nabla-fmt".into())
            .stack_size(256 << 20)
            .spawn_scoped(s, f)
            .ok()
            .and_then(|h| h.join().ok())
    })
}

fn format_on_this_stack(text: &str) -> Result<Formatted, Vec<Diagnostic>> {
    let prog = parse(text)?;
    let toks = lex(text, FileId(0))?;
    let cs = comments(text, &toks);
    let want: Vec<String> = prog.decs.iter().map(shape).collect();
    let (out, verbatim) = Printer::new(text, &cs).program(&prog.decs, &want);
    let same = match parse(&out) {
        Ok(re) => re.decs.iter().map(shape).collect::<Vec<_>>() == want,
        Err(_) => false,
    };
    let same_comments = same
        && match lex(&out, FileId(0)) {
            Ok(t) => comments(&out, &t)
                .into_iter()
                .map(|c| c.text)
                .eq(cs.iter().map(|c| c.text.clone())),
            Err(_) => false,
        };
    if same_comments {
        Ok(Formatted {
            text: out,
            verbatim,
            unchanged_fallback: false,
        })
    } else {
        Ok(Formatted {
            text: text.to_string(),
            verbatim: 0,
            unchanged_fallback: true,
        })
    }
}

/// Formats `text` read from `path`; a parse error rendered with its
/// location (for messages).
pub fn format_file_text(path: &std::path::Path, text: &str) -> Result<Formatted, String> {
    format_source(text).map_err(|diags| {
        let mut sm = nabla_syntax::SourceMap::new();
        sm.add(path.to_path_buf(), text.to_string());
        nabla_syntax::diag::render_all(&diags, &sm)
    })
}

/// `nabla fmt [--check] [FILES…]`: formats the files in place (with
/// `check`, only reports the files that are not formatted); with no files,
/// formats standard input to standard output. Returns the exit status: 0,
/// or 1 when a file does not parse, cannot be read or written, or (with
/// `check`) is not formatted.
pub fn run(files: &[std::path::PathBuf], check: bool) -> i32 {
    use std::io::{Read, Write};
    if files.is_empty() {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("nabla fmt: cannot read standard input: {e}");
            return 1;
        }
        return match format_file_text(std::path::Path::new("<stdin>"), &text) {
            Ok(f) => {
                if check {
                    if f.text != text {
                        eprintln!("<stdin>: not formatted");
                        return 1;
                    }
                    return 0;
                }
                let _ = std::io::stdout().write_all(f.text.as_bytes());
                0
            }
            Err(msg) => {
                eprint!("{msg}");
                1
            }
        };
    }
    let mut status = 0;
    for path in files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("nabla fmt: cannot read {}: {e}", path.display());
                status = 1;
                continue;
            }
        };
        match format_file_text(path, &text) {
            Ok(f) => {
                if f.text == text {
                    continue;
                }
                if check {
                    eprintln!("{}: not formatted", path.display());
                    status = 1;
                } else if let Err(e) = std::fs::write(path, &f.text) {
                    eprintln!("nabla fmt: cannot write {}: {e}", path.display());
                    status = 1;
                }
            }
            Err(msg) => {
                eprint!("{msg}");
                status = 1;
            }
        }
    }
    status
}

/// A span-free, comment-free rendering of a program's declarations, for
/// comparing a program with its formatting in tests (empty if the
/// comparison could not run).
pub fn program_shape(text: &str) -> Result<Vec<String>, Vec<Diagnostic>> {
    on_big_stack(|| Ok(parse(text)?.decs.iter().map(shape).collect())).unwrap_or_else(|| Ok(vec![]))
}

fn ind(n: usize) -> String {
    " ".repeat(n)
}

fn is_op_name(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(nabla_syntax::lexer::is_sym_start)
}

fn qual(q: &QualName) -> String {
    q.to_string()
}

/// A name in binding position: operators in parentheses.
fn bind_name(n: &str) -> String {
    if is_op_name(n) {
        format!("({n})")
    } else {
        n.to_string()
    }
}

/// An operator in infix position: alphanumeric names in backticks.
fn infix(q: &QualName) -> String {
    if is_op_name(&q.name) {
        qual(q)
    } else {
        format!("`{}`", qual(q))
    }
}

fn tparam(t: &TypeParam) -> String {
    match t {
        TypeParam::Size(i) => format!("[{}]", i.name),
        TypeParam::Type(i, Liftedness::Unlifted) => format!("'{}", i.name),
        TypeParam::Type(i, Liftedness::SizeLifted) => format!("'~{}", i.name),
        TypeParam::Type(i, Liftedness::Lifted) => format!("'^{}", i.name),
    }
}

fn lifted(l: Liftedness) -> &'static str {
    match l {
        Liftedness::Unlifted => "",
        Liftedness::SizeLifted => "~",
        Liftedness::Lifted => "^",
    }
}

struct Printer<'a> {
    src: &'a str,
    cs: &'a [Comment],
    /// The next comment not yet emitted.
    next: usize,
}

impl<'a> Printer<'a> {
    fn new(src: &'a str, cs: &'a [Comment]) -> Printer<'a> {
        Printer { src, cs, next: 0 }
    }

    fn slice(&self, a: u32, b: u32) -> &'a str {
        self.src.get(a as usize..b as usize).unwrap_or("")
    }

    /// Whether the original text between two offsets has a line break.
    fn nl_between(&self, a: u32, b: u32) -> bool {
        a < b && self.slice(a, b).contains('\n')
    }

    fn has_comment(&self, a: u32, b: u32) -> bool {
        self.cs[self.next..]
            .iter()
            .any(|c| c.start >= a && c.start < b)
    }

    /// An expression is printed on one line if it was written on one line
    /// and holds no comment.
    fn flat_ok(&self, e: &Expr) -> bool {
        !self.nl_between(e.span.start, e.span.end) && !self.has_comment(e.span.start, e.span.end)
    }

    /// The comments before offset `pos` not yet emitted, as whole lines at
    /// indentation `k` (each ending in a newline), with blank lines between
    /// them kept (at most one inside definitions).
    fn comments_before(&mut self, pos: u32, k: usize) -> String {
        let mut out = String::new();
        let mut last: Option<u32> = None;
        while self.next < self.cs.len() && self.cs[self.next].start < pos {
            let c = &self.cs[self.next];
            if let Some(l) = last {
                let nls = self.slice(l, c.start).matches('\n').count();
                let blanks = nls.saturating_sub(1);
                let blanks = if k == 0 { blanks } else { blanks.min(1) };
                out.push_str(&"\n".repeat(blanks));
            }
            out.push_str(&ind(k));
            out.push_str(&c.text);
            out.push('\n');
            last = Some(c.end);
            self.next += 1;
        }
        if let Some(l) = last {
            if self.slice(l, pos).matches('\n').count() > 1 {
                out.push('\n');
            }
        }
        out
    }

    /// A line break to indentation `k` before the construct at `pos`, with
    /// the comments before it.
    fn nl(&mut self, k: usize, pos: u32) -> String {
        let c = self.comments_before(pos, k);
        format!("\n{c}{}", ind(k))
    }

    /// Skips the comments before `pos` (kept inside verbatim text).
    fn skip_comments(&mut self, pos: u32) {
        while self.next < self.cs.len() && self.cs[self.next].start < pos {
            self.next += 1;
        }
    }

    // ------------------------------------------------------------ declarations

    /// The program's declarations, each checked on its own against its
    /// original shape (`want`) and kept as written where it differs; the
    /// text and the number kept as written.
    fn program(mut self, decs: &[Dec], want: &[String]) -> (String, usize) {
        let mut kept = 0;
        let mut out = String::new();
        for (i, d) in decs.iter().enumerate() {
            let start = dec_start(d);
            if i > 0 {
                let prev = &decs[i - 1];
                let blank = self.slice(dec_end(prev), start).matches('\n').count() > 1
                    || !(is_small(prev) && is_small(d));
                out.push('\n');
                if blank {
                    out.push('\n');
                }
            }
            out.push_str(&self.comments_before(start, 0));
            let saved = self.next;
            let printed = self.dec(d, 0);
            if want
                .get(i)
                .is_some_and(|w| single_dec_shape(&printed).as_ref() == Some(w))
            {
                out.push_str(&printed);
            } else {
                kept += 1;
                self.next = saved;
                let end = dec_end(d);
                out.push_str(self.slice(start, end));
                self.skip_comments(end);
            }
        }
        let rest = self.comments_before(u32::MAX, 0);
        if !rest.is_empty() {
            if !decs.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(rest.trim_end_matches('\n'));
        }
        let mut out = out.trim_end().to_string();
        out.push('\n');
        if decs.is_empty() && self.cs.is_empty() {
            return (String::new(), 0);
        }
        (out, kept)
    }

    fn decs_block(&mut self, decs: &[Dec], k: usize, close: u32) -> String {
        let mut out = String::new();
        for (i, d) in decs.iter().enumerate() {
            let start = dec_start(d);
            if i > 0 {
                let prev = &decs[i - 1];
                if self.slice(dec_end(prev), start).matches('\n').count() > 1
                    || !(is_small(prev) && is_small(d))
                {
                    out.push('\n');
                }
            }
            out.push_str(&self.nl(k, start));
            out.push_str(&self.dec(d, k));
        }
        let c = self.comments_before(close, k);
        if !c.is_empty() {
            out.push('\n');
            out.push_str(c.trim_end_matches('\n'));
        }
        out
    }

    fn dec(&mut self, d: &Dec, k: usize) -> String {
        match d {
            Dec::Val(v) => self.val_bind(v, k),
            Dec::Type(t) => {
                let ps: String = t.params.iter().map(|p| format!(" {}", tparam(p))).collect();
                format!(
                    "type{} {}{ps} = {}",
                    lifted(t.liftedness),
                    t.name.name,
                    ty(&t.def)
                )
            }
            Dec::Open(q, _) => format!("open {}", qual(q)),
            Dec::OpenModule(m, _) => format!("open {}", self.mod_exp(m, k, false)),
            Dec::Include(m, _) => format!("include {}", self.mod_exp(m, k, false)),
            Dec::Import(p, _) => format!("import \"{p}\""),
            Dec::Local(d, _) => format!("local {}", self.dec(d, k)),
            Dec::Module(m) => {
                let ps: String = m
                    .params
                    .iter()
                    .map(|p| format!(" ({}: {})", p.name.name, self.mod_type(&p.sig, k)))
                    .collect();
                let sig = match &m.sig {
                    Some(s) => format!(" : {}", self.mod_type(s, k)),
                    None => String::new(),
                };
                format!(
                    "module {}{ps}{sig} = {}",
                    m.name.name,
                    self.mod_exp(&m.body, k, false)
                )
            }
            Dec::ModType(m) => {
                format!("module type {} = {}", m.name.name, self.mod_type(&m.def, k))
            }
        }
    }

    fn mod_exp(&mut self, m: &ModExp, k: usize, atom: bool) -> String {
        let s = match m {
            ModExp::Var(q) => return qual(q),
            ModExp::Import(p, _) => return format!("import \"{p}\""),
            ModExp::Struct(decs, span) => {
                if decs.is_empty() && !self.has_comment(span.start, span.end) {
                    return "{}".into();
                }
                let body = self.decs_block(decs, k + 2, span.end);
                return format!("{{{body}\n{}}}", ind(k));
            }
            ModExp::Apply(f, a, _) => {
                let head_atom = matches!(**f, ModExp::Lambda(..) | ModExp::Ascribe(..));
                format!(
                    "{} {}",
                    self.mod_exp(f, k, head_atom),
                    self.mod_exp(a, k, true)
                )
            }
            ModExp::Ascribe(m, s, _) => {
                let inner_atom = matches!(**m, ModExp::Lambda(..) | ModExp::Ascribe(..));
                format!(
                    "{} : {}",
                    self.mod_exp(m, k, inner_atom),
                    self.mod_type(s, k)
                )
            }
            ModExp::Lambda(p, r, b, _) => {
                let r = match r {
                    // A refinement's type would take the `->` after it.
                    Some(r @ ModTypeExp::With(..)) => format!(" : ({})", self.mod_type(r, k)),
                    Some(r) => format!(" : {}", self.mod_type_atom(r, k)),
                    None => String::new(),
                };
                format!(
                    "\\({}: {}){r} -> {}",
                    p.name.name,
                    self.mod_type(&p.sig, k),
                    self.mod_exp(b, k, false)
                )
            }
        };
        if atom {
            format!("({s})")
        } else {
            s
        }
    }

    /// A module type where an arrow needs parentheses.
    fn mod_type_atom(&mut self, t: &ModTypeExp, k: usize) -> String {
        let s = self.mod_type(t, k);
        if matches!(t, ModTypeExp::Arrow(..)) {
            format!("({s})")
        } else {
            s
        }
    }

    fn mod_type(&mut self, t: &ModTypeExp, k: usize) -> String {
        match t {
            ModTypeExp::Var(q) => qual(q),
            ModTypeExp::Specs(specs, span) => {
                if specs.is_empty() && !self.has_comment(span.start, span.end) {
                    return "{}".into();
                }
                let mut out = String::from("{");
                for s in specs {
                    let start = spec_span(s).start;
                    out.push_str(&self.nl(k + 2, start));
                    out.push_str(&self.spec(s, k + 2));
                }
                let c = self.comments_before(span.end, k + 2);
                if !c.is_empty() {
                    out.push('\n');
                    out.push_str(c.trim_end_matches('\n'));
                }
                out.push('\n');
                out.push_str(&ind(k));
                out.push('}');
                out
            }
            ModTypeExp::With(b, q, ps, def, _) => {
                let ps: String = ps.iter().map(|p| format!(" {}", tparam(p))).collect();
                format!(
                    "{} with {}{ps} = {}",
                    self.mod_type_atom(b, k),
                    qual(q),
                    ty(def)
                )
            }
            ModTypeExp::Arrow(n, a, r, _) => match n {
                Some(n) => format!(
                    "({}: {}) -> {}",
                    n.name,
                    self.mod_type(a, k),
                    self.mod_type(r, k)
                ),
                None => format!("{} -> {}", self.mod_type_atom(a, k), self.mod_type(r, k)),
            },
        }
    }

    fn spec(&mut self, s: &Spec, k: usize) -> String {
        match s {
            Spec::Val(n, ps, t, _) => {
                let ps: String = ps.iter().map(|p| format!(" {}", tparam(p))).collect();
                format!("val {}{ps} : {}", bind_name(&n.name), ty(t))
            }
            Spec::Type {
                name,
                params,
                liftedness,
                def,
                ..
            } => {
                let ps: String = params.iter().map(|p| format!(" {}", tparam(p))).collect();
                let d = match def {
                    Some(t) => format!(" = {}", ty(t)),
                    None => String::new(),
                };
                format!("type{} {}{ps}{d}", lifted(*liftedness), name.name)
            }
            Spec::Module(n, t, _) => format!("module {}: {}", n.name, self.mod_type(t, k)),
            Spec::Include(t, _) => format!("include {}", self.mod_type(t, k)),
        }
    }

    fn val_bind(&mut self, v: &ValBind, k: usize) -> String {
        let mut head = String::new();
        for a in &v.attrs {
            head.push_str(&format!("#[{}]", a.text));
            head.push_str(&self.nl(k, v.span.start));
        }
        head.push_str(if v.entry { "entry " } else { "def " });
        let infix_def = matches!(v.params.as_slice(), [p1, _] if v.name.span.start >= p1.span.end)
            && is_op_name(&v.name.name)
            && v.type_params.is_empty();
        if infix_def {
            head.push_str(&format!(
                "{} {} {}",
                param_pat(&v.params[0]),
                v.name.name,
                param_pat(&v.params[1])
            ));
        } else {
            head.push_str(&bind_name(&v.name.name));
            for p in &v.type_params {
                head.push(' ');
                head.push_str(&tparam(p));
            }
            let mut last = v.name.span.end;
            for p in &v.params {
                if self.nl_between(last, p.span.start) {
                    head.push_str(&self.nl(k + 4, p.span.start));
                } else {
                    head.push(' ');
                }
                head.push_str(&param_pat(p));
                last = p.span.end;
            }
            if let Some(r) = &v.ret {
                if self.nl_between(last, r.span().start) {
                    head.push_str(&self.nl(k + 4, r.span().start));
                    head.push_str(": ");
                } else {
                    head.push_str(" : ");
                }
                head.push_str(&ty(r));
            }
        }
        if infix_def {
            if let Some(r) = &v.ret {
                head.push_str(" : ");
                head.push_str(&ty(r));
            }
        }
        head.push_str(" =");
        head.push_str(&self.hang(&v.body, k));
        head
    }

    /// A child after `=`, `->`, `then`, `else`, `do`: on the same line if it
    /// was and is printed on one line, else on the next line indented by two.
    fn hang(&mut self, e: &Expr, k: usize) -> String {
        let before = prev_nonspace(self.src, e.span.start);
        if self.flat_ok(e) && !self.nl_between(before, e.span.start) {
            format!(" {}", flat(self.src, e))
        } else {
            let nl = self.nl(k + 2, e.span.start);
            format!("{nl}{}", self.expr(e, k + 2))
        }
    }

    // ------------------------------------------------------------- expressions

    /// An expression starting on a line indented by `k`.
    fn expr(&mut self, e: &Expr, k: usize) -> String {
        if self.flat_ok(e) {
            return flat(self.src, e);
        }
        self.broken(e, k)
    }

    fn broken(&mut self, e: &Expr, k: usize) -> String {
        match &e.kind {
            ExprKind::LetPat { .. } | ExprKind::LetFun { .. } | ExprKind::LetWith { .. } => {
                self.let_chain(e, k)
            }
            ExprKind::If { cond, then_, else_ } => {
                let mut out = format!("if {}", self.expr(cond, k + 3));
                let then_kw = prev_nonspace(self.src, then_.span.start).saturating_sub(4);
                if self.nl_between(cond.span.end, then_kw) {
                    out.push_str(&self.nl(k, then_kw));
                } else {
                    out.push(' ');
                }
                out.push_str("then");
                out.push_str(&self.hang(then_, k));
                let else_kw = prev_nonspace(self.src, else_.span.start).saturating_sub(4);
                if self.nl_between(then_.span.end, else_kw) {
                    out.push_str(&self.nl(k, else_kw));
                } else {
                    out.push(' ');
                }
                out.push_str("else");
                if let ExprKind::If { .. } = else_.kind {
                    out.push(' ');
                    out.push_str(&self.broken(else_, k));
                } else {
                    out.push_str(&self.hang(else_, k));
                }
                out
            }
            ExprKind::Match { scrutinee, cases } => {
                let mut out = format!("match {}", self.expr(scrutinee, k + 6));
                for c in cases {
                    out.push_str(&self.nl(k, c.span.start));
                    out.push_str(&format!("case {} ->", pat(&c.pat)));
                    out.push_str(&self.hang(&c.body, k));
                }
                out
            }
            ExprKind::Loop {
                sizes,
                pat: p,
                init,
                form,
                body,
                attrs,
            } => {
                let mut out = String::new();
                for a in attrs {
                    out.push_str(&format!("#[{}] ", a.text));
                }
                out.push_str("loop ");
                for s in sizes {
                    out.push_str(&format!("[{}] ", s.name));
                }
                out.push_str(&pat(p));
                if let Some(i) = init {
                    out.push_str(" = ");
                    out.push_str(&self.expr(i, k + 2));
                }
                let before_form = init.as_ref().map(|i| i.span.end).unwrap_or(p.span.end);
                let form_start = match form {
                    LoopForm::For(i, _) => i.span.start,
                    LoopForm::ForIn(p, _) => p.span.start,
                    LoopForm::While(c) => c.span.start,
                };
                let sep = if self.nl_between(before_form, prev_nonspace(self.src, form_start)) {
                    self.nl(k, form_start)
                } else {
                    " ".to_string()
                };
                match form {
                    LoopForm::For(i, n) => {
                        out.push_str(&format!("{sep}for {} < {}", i.name, self.expr(n, k + 2)));
                    }
                    LoopForm::ForIn(p, xs) => {
                        out.push_str(&format!("{sep}for {} in {}", pat(p), self.expr(xs, k + 2)));
                    }
                    LoopForm::While(c) => {
                        out.push_str(&format!("{sep}while {}", self.expr(c, k + 2)));
                    }
                }
                out.push_str(" do");
                out.push_str(&self.hang(body, k));
                out
            }
            ExprKind::Lambda { params, ret, body } => {
                if is_index_section(params) {
                    return flat(self.src, e);
                }
                let mut out = String::from("\\");
                out.push_str(&params.iter().map(param_pat).collect::<Vec<_>>().join(" "));
                if let Some(r) = ret {
                    out.push_str(&format!(": {}", ty_term(r)));
                }
                out.push_str(" ->");
                out.push_str(&self.hang(body, k));
                out
            }
            ExprKind::Apply(f, args) => {
                if is_hole(e) {
                    return "???".into();
                }
                let mut out = self.expr(f, k);
                let mut last = f.span.end;
                for a in args {
                    if self.nl_between(last, a.span.start) {
                        out.push_str(&self.nl(k + 2, a.span.start));
                        out.push_str(&self.expr(a, k + 2));
                    } else {
                        out.push(' ');
                        out.push_str(&self.expr(a, k + 2));
                    }
                    last = a.span.end;
                }
                out
            }
            ExprKind::Constr(c, args) => {
                let mut out = format!("#{}", c.name);
                let mut last = c.span.end;
                for a in args {
                    if self.nl_between(last, a.span.start) {
                        out.push_str(&self.nl(k + 2, a.span.start));
                    } else {
                        out.push(' ');
                    }
                    out.push_str(&self.expr(a, k + 2));
                    last = a.span.end;
                }
                out
            }
            ExprKind::BinOp { op, lhs, rhs, .. } => {
                let mut out = self.expr(lhs, k);
                if self.nl_between(lhs.span.end, op.span.start) {
                    out.push_str(&self.nl(k, op.span.start));
                } else {
                    out.push(' ');
                }
                out.push_str(&infix(op));
                if self.nl_between(op.span.end, rhs.span.start) {
                    out.push_str(&self.nl(k + 2, rhs.span.start));
                    out.push_str(&self.expr(rhs, k + 2));
                } else {
                    out.push(' ');
                    out.push_str(&self.expr(rhs, k));
                }
                out
            }
            ExprKind::Parens(inner) => format!("({})", self.expr(inner, k + 1)),
            ExprKind::Tuple(es) => {
                let items = self.items(es, k, e.span.end);
                format!("({items})")
            }
            ExprKind::ArrayLit(es) => {
                let items = self.items(es, k, e.span.end);
                format!("[{items}]")
            }
            ExprKind::Record(fs) => {
                let spans: Vec<(u32, u32)> = fs
                    .iter()
                    .map(|f| match f {
                        RecordField::Named(n, v) => (n.span.start, v.span.end),
                        RecordField::Pun(n) => (n.span.start, n.span.end),
                    })
                    .collect();
                let mut i = 0;
                let body = self.seq(&spans, k, e.span.end, |p, k| {
                    let t = match &fs[i] {
                        RecordField::Named(n, v) => format!("{} ={}", n.name, p.hang(v, k)),
                        RecordField::Pun(n) => n.name.clone(),
                    };
                    i += 1;
                    t
                });
                format!("{{{body}}}")
            }
            ExprKind::Negate(x) => {
                let s = self.expr(x, k);
                prefix_op("-", s)
            }
            ExprKind::Not(x) => {
                let s = self.expr(x, k);
                prefix_op("!", s)
            }
            ExprKind::Ascribe(x, t) => {
                if t.span() == e.span {
                    return flat(self.src, e);
                }
                format!("{} : {}", self.expr(x, k), ty(t))
            }
            ExprKind::Coerce(x, t) => format!("{} :> {}", self.expr(x, k), ty(t)),
            ExprKind::LocalOpen(m, x) => format!("{}.({})", qual(m), self.expr(x, k + 2)),
            ExprKind::Attr(a, x) => format!("#[{}] {}", a.text, self.expr(x, k)),
            ExprKind::Update {
                src,
                path,
                indices,
                value,
            } => {
                let fields = path
                    .iter()
                    .map(|f| f.name.clone())
                    .collect::<Vec<_>>()
                    .join(".");
                format!(
                    "{} with {fields}[{}] = {}",
                    self.expr(src, k),
                    dims(self.src, indices),
                    self.expr(value, k + 2)
                )
            }
            ExprKind::RecordUpdate { src, path, value } => format!(
                "{} with {} = {}",
                self.expr(src, k),
                path.iter()
                    .map(|f| f.name.clone())
                    .collect::<Vec<_>>()
                    .join("."),
                self.expr(value, k + 2)
            ),
            ExprKind::Index(a, ds) => {
                format!("{}[{}]", self.expr(a, k), dims(self.src, ds))
            }
            ExprKind::Project(x, f) => format!("{}.{}", self.expr(x, k), f.name),
            ExprKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let mut out = self.expr(start, k);
                if let Some(s) = second {
                    out.push_str("..");
                    out.push_str(&self.expr(s, k));
                }
                out.push_str(range_op(*kind));
                out.push_str(&self.expr(end, k));
                out
            }
            ExprKind::OpSectionLeft { op, lhs, .. } => {
                format!("({} {})", self.expr(lhs, k + 1), infix(op))
            }
            ExprKind::OpSectionRight { op, rhs, .. } => {
                format!("({} {})", infix(op), self.expr(rhs, k + 1))
            }
            ExprKind::Lit(_)
            | ExprKind::Var { .. }
            | ExprKind::OpSection { .. }
            | ExprKind::ProjSection(_) => flat(self.src, e),
        }
    }

    /// Comma-separated items, each on a new line where it was.
    fn items(&mut self, es: &[Expr], k: usize, close: u32) -> String {
        let spans: Vec<(u32, u32)> = es.iter().map(|x| (x.span.start, x.span.end)).collect();
        let mut i = 0;
        self.seq(&spans, k, close, |p, k| {
            let t = p.expr(&es[i], k);
            i += 1;
            t
        })
    }

    /// Comma-separated items with the given spans, rendered by `item` in
    /// order. Written one per line in the input, they come out one per line
    /// with leading commas (`( a` / `, b` / `)` without the brackets, which
    /// the caller adds: the result starts with a space and ends with a line
    /// break to indentation `k`); otherwise on one line, each item's own
    /// line breaks kept.
    fn seq(
        &mut self,
        spans: &[(u32, u32)],
        k: usize,
        close: u32,
        mut item: impl FnMut(&mut Self, usize) -> String,
    ) -> String {
        let vertical = spans.windows(2).any(|w| self.nl_between(w[0].1, w[1].0));
        let mut out = String::new();
        for (i, &(start, _)) in spans.iter().enumerate() {
            if vertical {
                if i == 0 {
                    out.push(' ');
                } else {
                    out.push_str(&self.nl(k, start));
                    out.push_str(", ");
                }
                out.push_str(&item(self, k + 2));
            } else {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&item(self, k + 2));
            }
        }
        if vertical {
            out.push_str(&self.nl(k, close.saturating_sub(1)));
        }
        out
    }

    /// A chain of `let`s, one per line, then `in` and the body.
    fn let_chain(&mut self, e: &Expr, k: usize) -> String {
        let mut out = String::new();
        let mut cur = e;
        let mut first = true;
        loop {
            let (head, value, body) = match &cur.kind {
                ExprKind::LetPat {
                    sizes,
                    pat: p,
                    value,
                    body,
                } => {
                    if is_let_path(p, value) && self.flat_ok(value) {
                        if !first {
                            out.push_str(&self.nl(k, cur.span.start));
                        }
                        first = false;
                        out.push_str(&format!("let {}", one_line(source(self.src, value))));
                        cur = body;
                        continue;
                    }
                    let sz: String = sizes.iter().map(|s| format!("[{}] ", s.name)).collect();
                    (format!("let {sz}{} =", pat(p)), value, body)
                }
                ExprKind::LetFun {
                    name,
                    type_params,
                    params,
                    ret,
                    value,
                    body,
                } => {
                    let mut h = format!("let {}", bind_name(&name.name));
                    for t in type_params {
                        h.push(' ');
                        h.push_str(&tparam(t));
                    }
                    for p in params {
                        h.push(' ');
                        h.push_str(&param_pat(p));
                    }
                    if let Some(r) = ret {
                        h.push_str(" : ");
                        h.push_str(&ty(r));
                    }
                    h.push_str(" =");
                    (h, value, body)
                }
                ExprKind::LetWith {
                    dest,
                    indices,
                    value,
                    body,
                } => (
                    format!("let {}[{}] =", dest.name, dims(self.src, indices)),
                    value,
                    body,
                ),
                _ => {
                    // The body.
                    out.push_str(&self.nl(k, cur.span.start.saturating_sub(1)));
                    out.push_str("in ");
                    out.push_str(&self.expr(cur, k + 3));
                    return out;
                }
            };
            if !first {
                out.push_str(&self.nl(k, cur.span.start));
            }
            first = false;
            out.push_str(&head);
            out.push_str(&self.hang(value, k));
            cur = body;
        }
    }
}

fn prev_nonspace(src: &str, pos: u32) -> u32 {
    let b = src.as_bytes();
    let mut i = (pos as usize).min(b.len());
    while i > 0 && b[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    i as u32
}

fn is_small(d: &Dec) -> bool {
    matches!(
        d,
        Dec::Import(..) | Dec::Open(..) | Dec::Type(..) | Dec::Include(..)
    ) || matches!(d, Dec::Local(inner, _) if is_small(inner))
}

fn spec_span(s: &Spec) -> nabla_syntax::Span {
    match s {
        Spec::Val(_, _, _, s) | Spec::Module(_, _, s) | Spec::Include(_, s) => *s,
        Spec::Type { span, .. } => *span,
    }
}

fn range_op(k: RangeKind) -> &'static str {
    match k {
        RangeKind::UpToExclusive => "..<",
        RangeKind::ToInclusive => "...",
        RangeKind::DownToExclusive => "..>",
    }
}

fn prefix_op(op: &str, s: String) -> String {
    if s.bytes()
        .next()
        .is_some_and(|c| nabla_syntax::lexer::is_sym_start(c) || c == b'.')
    {
        format!("{op} {s}")
    } else {
        format!("{op}{s}")
    }
}

/// Whether an update expression was desugared from a path mixing fields
/// and indices (`a with [i].f = v`, `let r.f[i] = v`): its value then starts
/// inside the path. Such expressions are printed as written.
fn is_synthetic_update(src: &str, e: &Expr) -> bool {
    let no_eq = |a: u32, b: u32| {
        !src.get(a as usize..b as usize)
            .is_some_and(|t| t.contains('='))
    };
    let path_end = |path: &[Ident], ds: &[DimIndex]| {
        let a = path.iter().map(|f| f.span.end).max().unwrap_or(0);
        let b = ds
            .iter()
            .flat_map(|d| match d {
                DimIndex::Fix(x) => vec![x.span.end],
                DimIndex::Slice { start, end, stride } => [start, end, stride]
                    .iter()
                    .filter_map(|x| x.as_ref().map(|x| x.span.end))
                    .collect(),
            })
            .max()
            .unwrap_or(0);
        a.max(b)
    };
    match &e.kind {
        ExprKind::Update {
            src: source,
            path,
            indices,
            value,
        } => {
            let end = path_end(path, indices);
            value.span.start <= end
                || no_eq(end, value.span.start)
                || source.span.start != e.span.start
        }
        ExprKind::RecordUpdate {
            src: source,
            path,
            value,
        } => {
            let end = path_end(path, &[]);
            value.span.start <= end
                || no_eq(end, value.span.start)
                || source.span.start != e.span.start
        }
        ExprKind::LetPat { pat, .. } => {
            matches!(&pat.kind, PatKind::Id(i) if i.name.contains('@'))
        }
        _ => false,
    }
}

/// `let r.f = v` (a pattern binding whose value is an update starting at
/// the pattern).
fn is_let_path(p: &Pat, value: &Expr) -> bool {
    matches!(p.kind, PatKind::Id(_))
        && value.span.start == p.span.start
        && matches!(
            value.kind,
            ExprKind::Update { .. } | ExprKind::RecordUpdate { .. } | ExprKind::LetPat { .. }
        )
}

fn is_index_section(params: &[Pat]) -> bool {
    matches!(params, [p] if matches!(&p.kind, PatKind::Id(i) if i.name == "index_section_arg'"))
}

fn is_hole(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Apply(f, _) if matches!(&f.kind, ExprKind::Var { name, .. } if name.name == "???" && name.quals.is_empty()))
}

// ---------------------------------------------------------------- flat text

/// Source text on one line: runs of whitespace made one space (unless it
/// holds a string literal, kept as written).
fn one_line(s: &str) -> String {
    if s.contains('"') {
        s.trim().to_string()
    } else {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

fn source<'s>(src: &'s str, e: &Expr) -> &'s str {
    src.get(e.span.start as usize..e.span.end as usize)
        .unwrap_or("")
}

fn lit_text(src: &str, span: nabla_syntax::Span, l: &Literal) -> String {
    let s: String = src
        .get(span.start as usize..span.end as usize)
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let ok = match l {
        Literal::Bool(b) => s == b.to_string(),
        _ => s
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == b'-'),
    };
    if ok {
        s
    } else {
        dump::lit(l)
    }
}

fn dims(src: &str, ds: &[DimIndex]) -> String {
    ds.iter()
        .map(|d| match d {
            DimIndex::Fix(e) => flat(src, e),
            DimIndex::Slice { start, end, stride } => {
                let o = |e: &Option<Expr>| e.as_ref().map(|e| flat(src, e)).unwrap_or_default();
                match stride {
                    Some(_) => format!("{}:{}:{}", o(start), o(end), o(stride)),
                    None => format!("{}:{}", o(start), o(end)),
                }
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An expression on one line.
fn flat(src: &str, e: &Expr) -> String {
    let f = |x: &Expr| flat(src, x);
    if is_synthetic_update(src, e) {
        return one_line(source(src, e));
    }
    match &e.kind {
        ExprKind::Lit(l) => lit_text(src, e.span, l),
        ExprKind::Var { name, .. } => qual(name),
        ExprKind::Parens(x) => format!("({})", f(x)),
        ExprKind::Tuple(es) => format!("({})", es.iter().map(f).collect::<Vec<_>>().join(", ")),
        ExprKind::ArrayLit(es) => format!("[{}]", es.iter().map(f).collect::<Vec<_>>().join(", ")),
        ExprKind::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|r| match r {
                    RecordField::Named(n, v) => format!("{} = {}", n.name, f(v)),
                    RecordField::Pun(n) => n.name.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Range {
            start,
            second,
            end,
            kind,
        } => match second {
            Some(s) => format!("{}..{}{}{}", f(start), f(s), range_op(*kind), f(end)),
            None => format!("{}{}{}", f(start), range_op(*kind), f(end)),
        },
        ExprKind::Project(x, n) => format!("{}.{}", f(x), n.name),
        ExprKind::Index(a, ds) => format!("{}[{}]", f(a), dims(src, ds)),
        ExprKind::Apply(h, args) => {
            if is_hole(e) {
                return "???".into();
            }
            let mut out = f(h);
            for a in args {
                out.push(' ');
                out.push_str(&f(a));
            }
            out
        }
        ExprKind::Negate(x) => prefix_op("-", f(x)),
        ExprKind::Not(x) => prefix_op("!", f(x)),
        ExprKind::BinOp { op, lhs, rhs, .. } => {
            format!("{} {} {}", f(lhs), infix(op), f(rhs))
        }
        ExprKind::OpSection { op, .. } => format!("({})", infix(op)),
        ExprKind::OpSectionLeft { op, lhs, .. } => format!("({} {})", f(lhs), infix(op)),
        ExprKind::OpSectionRight { op, rhs, .. } => format!("({} {})", infix(op), f(rhs)),
        ExprKind::ProjSection(fs) => format!(
            "({})",
            fs.iter()
                .map(|x| format!(".{}", x.name))
                .collect::<String>()
        ),
        ExprKind::Lambda { params, ret, body } => {
            if is_index_section(params) {
                return source(src, e).to_string();
            }
            let ps = params.iter().map(param_pat).collect::<Vec<_>>().join(" ");
            let r = ret
                .as_ref()
                .map(|r| format!(": {}", ty_term(r)))
                .unwrap_or_default();
            format!("\\{ps}{r} -> {}", f(body))
        }
        ExprKind::LetPat {
            sizes,
            pat: p,
            value,
            body,
        } => {
            if is_let_path(p, value) {
                return format!("let {} in {}", one_line(source(src, value)), f(body));
            }
            let sz: String = sizes.iter().map(|s| format!("[{}] ", s.name)).collect();
            format!("let {sz}{} = {} in {}", pat(p), f(value), f(body))
        }
        ExprKind::LetFun {
            name,
            type_params,
            params,
            ret,
            value,
            body,
        } => {
            let mut h = format!("let {}", bind_name(&name.name));
            for t in type_params {
                h.push(' ');
                h.push_str(&tparam(t));
            }
            for p in params {
                h.push(' ');
                h.push_str(&param_pat(p));
            }
            if let Some(r) = ret {
                h.push_str(" : ");
                h.push_str(&ty(r));
            }
            format!("{h} = {} in {}", f(value), f(body))
        }
        ExprKind::LetWith {
            dest,
            indices,
            value,
            body,
        } => format!(
            "let {}[{}] = {} in {}",
            dest.name,
            dims(src, indices),
            f(value),
            f(body)
        ),
        ExprKind::If { cond, then_, else_ } => {
            format!("if {} then {} else {}", f(cond), f(then_), f(else_))
        }
        ExprKind::Match { scrutinee, cases } => {
            let mut out = format!("match {}", f(scrutinee));
            for c in cases {
                out.push_str(&format!(" case {} -> {}", pat(&c.pat), f(&c.body)));
            }
            out
        }
        ExprKind::Loop {
            sizes,
            pat: p,
            init,
            form,
            body,
            attrs,
        } => {
            let mut out = String::new();
            for a in attrs {
                out.push_str(&format!("#[{}] ", a.text));
            }
            out.push_str("loop ");
            for s in sizes {
                out.push_str(&format!("[{}] ", s.name));
            }
            out.push_str(&pat(p));
            if let Some(i) = init {
                out.push_str(&format!(" = {}", f(i)));
            }
            match form {
                LoopForm::For(i, n) => out.push_str(&format!(" for {} < {}", i.name, f(n))),
                LoopForm::ForIn(p, xs) => out.push_str(&format!(" for {} in {}", pat(p), f(xs))),
                LoopForm::While(c) => out.push_str(&format!(" while {}", f(c))),
            }
            out.push_str(&format!(" do {}", f(body)));
            out
        }
        ExprKind::Update {
            src: s,
            path,
            indices,
            value,
        } => {
            let fields = path
                .iter()
                .map(|x| x.name.clone())
                .collect::<Vec<_>>()
                .join(".");
            format!(
                "{} with {fields}[{}] = {}",
                f(s),
                dims(src, indices),
                f(value)
            )
        }
        ExprKind::RecordUpdate {
            src: s,
            path,
            value,
        } => format!(
            "{} with {} = {}",
            f(s),
            path.iter()
                .map(|x| x.name.clone())
                .collect::<Vec<_>>()
                .join("."),
            f(value)
        ),
        ExprKind::Ascribe(x, t) => {
            if t.span() == e.span {
                // A string literal (desugared to an ascribed byte array).
                return source(src, e).to_string();
            }
            format!("{} : {}", f(x), ty(t))
        }
        ExprKind::Coerce(x, t) => format!("{} :> {}", f(x), ty(t)),
        ExprKind::Constr(c, es) => {
            let mut out = format!("#{}", c.name);
            for a in es {
                out.push(' ');
                out.push_str(&f(a));
            }
            out
        }
        ExprKind::LocalOpen(m, x) => format!("{}.({})", qual(m), f(x)),
        ExprKind::Attr(a, x) => format!("#[{}] {}", a.text, f(x)),
    }
}

// ------------------------------------------------------------------- types

fn size(src_less: &SizeExp) -> String {
    match src_less {
        SizeExp::Any(_) => "[]".into(),
        SizeExp::Expr(e) => format!("[{}]", flat("", e)),
    }
}

/// A type at the outermost level.
fn ty(t: &TypeExp) -> String {
    match t {
        TypeExp::Arrow(n, a, r, _) => match n {
            Some(n) => format!("({}: {}) -> {}", n.name, ty(a), ty(r)),
            None => format!("{} -> {}", ty_term(a), ty(r)),
        },
        TypeExp::Exists(ns, b, _) => {
            let ns: String = ns.iter().map(|n| format!("[{}]", n.name)).collect();
            format!("?{ns}.{}", ty(b))
        }
        _ => ty_term(t),
    }
}

/// A type without a top-level arrow or existential.
fn ty_term(t: &TypeExp) -> String {
    match t {
        TypeExp::Arrow(..) | TypeExp::Exists(..) => format!("({})", ty(t)),
        TypeExp::Unique(x, _) => format!("*{}", ty_term(x)),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .map(|(c, ts)| {
                let mut s = format!("#{}", c.name);
                for (i, t) in ts.iter().enumerate() {
                    s.push(' ');
                    // An array's element type would take the next
                    // payload types as its arguments.
                    if matches!(t, TypeExp::Array(..)) && i + 1 < ts.len() {
                        s.push_str(&format!("({})", ty(t)));
                    } else {
                        s.push_str(&ty_payload(t));
                    }
                }
                s
            })
            .collect::<Vec<_>>()
            .join(" | "),
        TypeExp::Named(q, args, _) => {
            let mut s = qual(q);
            for a in args {
                s.push(' ');
                match a {
                    TypeArg::Size(d) => s.push_str(&size(d)),
                    TypeArg::Type(t) => s.push_str(&ty_arg(t)),
                }
            }
            s
        }
        TypeExp::Array(d, x, _) => format!("{}{}", size(d), ty_array_elem(x)),
        _ => ty_atom(t),
    }
}

fn ty_array_elem(t: &TypeExp) -> String {
    match t {
        TypeExp::Sum(..) => format!("({})", ty(t)),
        _ => ty_term(t),
    }
}

/// An argument of a sum type's constructor.
fn ty_payload(t: &TypeExp) -> String {
    match t {
        TypeExp::Array(..) => ty_term(t),
        TypeExp::Named(_, args, _) if args.is_empty() => ty_term(t),
        _ => ty_atom(t),
    }
}

/// An argument of a type constructor.
fn ty_arg(t: &TypeExp) -> String {
    match t {
        TypeExp::Named(_, args, _) if args.is_empty() => ty_term(t),
        _ => ty_atom(t),
    }
}

fn ty_atom(t: &TypeExp) -> String {
    match t {
        TypeExp::Prim(p, _) => p.to_string(),
        TypeExp::Tuple(ts, _) => {
            format!("({})", ts.iter().map(ty).collect::<Vec<_>>().join(", "))
        }
        TypeExp::Record(fs, _) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, t)| format!("{}: {}", n.name, ty(t)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("({})", ty(t)),
    }
}

// ---------------------------------------------------------------- patterns

/// A full pattern, with its attributes (`#[attr] p`).
fn pat(p: &Pat) -> String {
    let mut out = String::new();
    for a in &p.attrs {
        out.push_str(&format!("#[{}] ", a.text));
    }
    out.push_str(&pat_without_attrs(p));
    out
}

/// A full pattern, without its own attributes.
fn pat_without_attrs(p: &Pat) -> String {
    match &p.kind {
        PatKind::Ascribe(x, t) => format!("{}: {}", inner_pat(x, true), ty(t)),
        PatKind::Constr(c, ps) if !ps.is_empty() => {
            let mut s = format!("#{}", c.name);
            for x in ps {
                s.push(' ');
                s.push_str(&inner_pat(x, true));
            }
            s
        }
        _ => inner_pat_without_attrs(p, true),
    }
}

/// A function or lambda parameter.
fn param_pat(p: &Pat) -> String {
    inner_pat(p, false)
}

/// An atomic pattern (a parameter, a constructor's argument): one with
/// attributes is parenthesised, `(#[attr] p)`.
fn inner_pat(p: &Pat, allow_neg: bool) -> String {
    if !p.attrs.is_empty() {
        return format!("({})", pat(p));
    }
    inner_pat_without_attrs(p, allow_neg)
}

/// An atomic pattern, without its own attributes.
fn inner_pat_without_attrs(p: &Pat, allow_neg: bool) -> String {
    match &p.kind {
        PatKind::Id(i) => bind_name(&i.name),
        PatKind::Wildcard => "_".into(),
        PatKind::Tuple(ps) => format!("({})", ps.iter().map(pat).collect::<Vec<_>>().join(", ")),
        PatKind::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, x)| match &x.kind {
                    PatKind::Id(i) if i.name == n.name && x.attrs.is_empty() => n.name.clone(),
                    PatKind::Ascribe(inner, t)
                        if matches!(&inner.kind, PatKind::Id(i) if i.name == n.name)
                            && x.attrs.is_empty()
                            && inner.attrs.is_empty() =>
                    {
                        format!("{}: {}", n.name, ty(t))
                    }
                    _ => format!("{} = {}", n.name, pat(x)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        PatKind::Lit(l) => {
            let s = dump::lit(l);
            if s.starts_with('-') && !allow_neg {
                format!("({s})")
            } else {
                s
            }
        }
        PatKind::Constr(c, ps) if ps.is_empty() => format!("#{}", c.name),
        PatKind::Ascribe(..) | PatKind::Constr(..) => format!("({})", pat_without_attrs(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(s: &str) -> String {
        format_source(s).expect("parses").text
    }

    #[test]
    fn strips_spans() {
        assert_eq!(
            strip_spans("A { span: Span { file: FileId(0), start: 1, end: 2 } }"),
            "A { span:  }"
        );
    }

    #[test]
    fn simple_def_is_stable() {
        let s = "def f (x: i32) : i32 = x + 1\n";
        assert_eq!(fmt(s), s);
    }
}
