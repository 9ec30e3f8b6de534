//! Hand-written recursive-descent / Pratt parser for nabla's Futhark subset.
//!
//! The grammar follows the Futhark language reference ("Declarations",
//! "Expressions", "Patterns", "Resolving Ambiguities"). Where the reference's
//! precedence table and Futhark's actual parser disagree, the actual parser
//! (`Parser.y`) is followed. Binary operators, loosest first (all left
//! associative except `<|`, which is right associative, and ranges):
//!
//! | level | operators |
//! |------:|-----------|
//! | 1 | `e : t`, `e :> t` |
//! | 2 | `..`, `...`, `..<`, `..>` (ranges) |
//! | 3 | `` `f` `` (backtick infix) |
//! | 4 | `e with …` |
//! | 5 | `|>…` |
//! | 6 | `<|…` (right) |
//! | 7 | `||…` |
//! | 8 | `&&…` |
//! | 9 | `<=… >=… >… <… ==… !=… !… =…` |
//! | 10 | `&… ^… |…` |
//! | 11 | `<<… >>…` |
//! | 12 | `+… -…` |
//! | 13 | `*… /… %… //… %%…` |
//! | 14 | `**…` |
//! | 15 | prefix `-e`, `!e` |
//! | 16 | application by juxtaposition |
//! | 17 | `a[i]` indexing, `e.f` projection |
//!
//! A user-defined operator takes the level of its longest leading built-in
//! operator (`+^` like `+`, `>>=` like `>>`, `>->` like `>`, `<-<` like `<`).
//! `if`, `let`, `loop`, `match`, lambdas and attributes extend as far to the
//! right as possible.
//!
//! Notable decisions (see also the crate report):
//! * `a.b.c` where `a` is a plain name yields `ExprKind::Var` with
//!   `QualName { quals: [a, b], name: c }`; the type checker decides whether
//!   `a` is a module or a record variable (and then turns the rest into
//!   projections). Projections of anything else (`(e).x`, `f(x).y`,
//!   `xs[0].y`) and numeric fields (`x.0`) yield `ExprKind::Project`.
//! * `-` directly applied to a numeric literal is folded into a negative
//!   literal (`-1` is `Lit(Int(-1))`, `(-1)` is `Parens(Lit(-1))`), so that
//!   `-128i8` is in range. Other negations are `ExprKind::Negate`.
//! * `#[attr] loop …` stores the attributes in `ExprKind::Loop::attrs`;
//!   other expression attributes become `ExprKind::Attr`. Attributes on
//!   patterns are kept in `Pat::attrs` (the pattern's span is without
//!   them); attributes on `type` declarations are dropped (the AST has no
//!   slot).
//! * `in` may be omitted when the body of a `let` is another `let`.
//! * `assert c e` is an ordinary application of the name `assert`.
//! * A string literal is an array of `u8` (its UTF-8 bytes), ascribed
//!   `[]u8`. An index section `(.[i])` is the lambda `\x -> x[i]`.
//! * Not supported (syntax error with a message): char literals, typed
//!   holes, fraction-only floats (`.5`).
//!
//! Robustness: nesting deeper than [`MAX_DEPTH`] (or a chain of more than
//! [`MAX_CHAIN`] `let`s / infix operators) is reported as a syntax error
//! instead of overflowing the stack; every loop consumes input.

pub mod dump;
mod update;

use crate::ast::*;
use crate::diag::{Diagnostic, DiagnosticKind};
use crate::lexer::{lex, Tok, Token};
use crate::span::{FileId, SourceMap, Span};
use nabla_prim::PrimType;

/// Maximum syntactic nesting (parentheses, nested expressions, types, patterns).
pub const MAX_DEPTH: u32 = 256;
/// Maximum length of a `let … in let …` chain or an infix operator chain
/// (these are parsed iteratively but produce deep trees).
pub const MAX_CHAIN: u32 = 4096;

type PResult<T> = Result<T, Diagnostic>;

/// Parses one file of `sources`. Every `def`/`entry`/top-level `let` gets a
/// fresh [`NodeId`] taken from `next_id` (which is incremented), so ids stay
/// unique across files parsed with the same counter.
///
/// Errors: all lexical errors of the file, or the syntax errors found (the
/// parser skips to the next declaration after an error, so several may be
/// reported).
pub fn parse_file(
    sources: &SourceMap,
    file: FileId,
    next_id: &mut u32,
) -> Result<Program, Vec<Diagnostic>> {
    let text = match sources.files.get(file.0 as usize) {
        Some(f) => f.text.as_str(),
        None => {
            return Err(vec![Diagnostic::new(
                DiagnosticKind::Syntax,
                Span::new(file, 0, 0),
                format!("no source file with id {}", file.0),
            )])
        }
    };
    parse_program_text(text, file, next_id)
}

/// Parses a whole program from text (the file id is only used for spans).
pub fn parse_program_text(
    text: &str,
    file: FileId,
    next_id: &mut u32,
) -> Result<Program, Vec<Diagnostic>> {
    with_big_stack(|| parse_program_tokens(text, file, next_id))
}

fn parse_program_tokens(
    text: &str,
    file: FileId,
    next_id: &mut u32,
) -> Result<Program, Vec<Diagnostic>> {
    let toks = lex(text, file)?;
    let mut p = Parser::new(toks, next_id);
    let decs = p.program();
    if p.errs.is_empty() {
        Ok(Program { file, decs })
    } else {
        Err(p.errs)
    }
}

/// Parses a single expression (the whole text must be one expression).
/// Handy for tests and for a REPL.
pub fn parse_expr_text(text: &str, file: FileId) -> Result<Expr, Vec<Diagnostic>> {
    parse_whole(text, file, |p| p.expr())
}

/// Parses a single type expression (the whole text must be one type).
pub fn parse_type_text(text: &str, file: FileId) -> Result<TypeExp, Vec<Diagnostic>> {
    parse_whole(text, file, |p| p.ty())
}

/// Parses a single pattern (the whole text must be one pattern).
pub fn parse_pat_text(text: &str, file: FileId) -> Result<Pat, Vec<Diagnostic>> {
    parse_whole(text, file, |p| p.pat())
}

/// Lexes `text` and parses it with `item` (on a large stack), which must
/// consume every token.
fn parse_whole<T: Send>(
    text: &str,
    file: FileId,
    item: fn(&mut Parser<'_>) -> PResult<T>,
) -> Result<T, Vec<Diagnostic>> {
    with_big_stack(|| {
        let toks = lex(text, file)?;
        let mut id = 0;
        let mut p = Parser::new(toks, &mut id);
        let r = item(&mut p).and_then(|x| p.expect_eof().map(|_| x));
        r.map_err(|e| vec![e])
    })
}

/// Stack size for the parsing thread: enough for [`MAX_DEPTH`] levels of the
/// largest (unoptimised) recursive-descent frames.
const PARSER_STACK: usize = 64 << 20;

/// Runs the recursive-descent parser on a thread with a large stack, so that
/// the nesting limit, not the caller's stack size, bounds recursion. Falls
/// back to the current thread if no thread can be spawned.
fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut f = Some(f);
    let r = std::thread::scope(|s| {
        let g = &mut f;
        std::thread::Builder::new()
            .name("nabla-parser".into())
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, move || (g.take().expect("parser closure"))())
            .ok()
            .map(|h| h.join())
    });
    match r {
        Some(Ok(v)) => v,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => (f.take().expect("parser closure not run"))(),
    }
}

// Binding powers of the infix levels (see the module table).
const BP_ASCRIBE: u8 = 5;
const BP_EXP2: u8 = 6;
const BP_RANGE: u8 = 10;
const BP_BACKTICK: u8 = 20;
const BP_WITH: u8 = 30;

/// Precedence (binding power) and right-associativity of an operator name,
/// by its longest leading built-in operator.
pub fn op_precedence(name: &str) -> (u8, bool) {
    let two = name.get(0..2).unwrap_or("");
    match two {
        "|>" => return (40, false),
        "<|" => return (50, true),
        "||" => return (60, false),
        "&&" => return (70, false),
        "<<" | ">>" => return (100, false),
        "**" => return (130, false),
        "//" | "%%" => return (120, false),
        "<=" | ">=" | "==" | "!=" => return (80, false),
        _ => {}
    }
    match name.as_bytes().first() {
        Some(b'<' | b'>' | b'=' | b'!') => (80, false),
        Some(b'&' | b'^' | b'|') => (90, false),
        Some(b'+' | b'-') => (110, false),
        Some(b'*' | b'/' | b'%') => (120, false),
        _ => (110, false),
    }
}

enum LetHead {
    Pat {
        sizes: Vec<Ident>,
        pat: Pat,
        value: Expr,
    },
    Fun {
        name: Ident,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        value: Expr,
    },
    With {
        dest: Ident,
        indices: Vec<DimIndex>,
        value: Expr,
    },
}

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    next_id: &'a mut u32,
    depth: u32,
    chain: u32,
    errs: Vec<Diagnostic>,
}

fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr {
        kind,
        span,
        ty: None,
    }
}

fn mkpat(kind: PatKind, span: Span) -> Pat {
    Pat {
        kind,
        span,
        ty: None,
        attrs: Vec::new(),
    }
}

impl<'a> Parser<'a> {
    fn new(toks: Vec<Token>, next_id: &'a mut u32) -> Parser<'a> {
        Parser {
            toks,
            pos: 0,
            next_id,
            depth: 0,
            chain: 0,
            errs: Vec::new(),
        }
    }

    // ---------------------------------------------------------------- tokens

    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> &Tok {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn tok_at(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn span(&self) -> Span {
        self.tok_at(0).span
    }

    /// End of the previous token (for spans of finished nodes).
    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.toks[self.pos - 1].span
        }
    }

    fn bump(&mut self) -> Token {
        let t = self.tok_at(0).clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at(&self, t: &Tok) -> bool {
        std::mem::discriminant(self.peek()) == std::mem::discriminant(t)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn err_here(&self, expected: &str) -> Diagnostic {
        Diagnostic::new(
            DiagnosticKind::Syntax,
            self.err_span(),
            format!(
                "Unexpected {}: expected {expected}",
                self.peek().unexpected()
            ),
        )
    }

    /// Where to report a problem with the current token: the token itself,
    /// or, at the end of the file, just after the last token (not on the
    /// empty line after it).
    fn err_span(&self) -> Span {
        if matches!(self.peek(), Tok::Eof) && self.pos > 0 {
            let prev = self.toks[self.pos - 1].span;
            Span::new(prev.file, prev.end, prev.end)
        } else {
            self.span()
        }
    }

    fn expect(&mut self, t: &Tok, expected: &str) -> PResult<Span> {
        if self.at(t) {
            Ok(self.bump().span)
        } else {
            Err(self.err_here(expected))
        }
    }

    /// Expects a closing delimiter, pointing at the opening one in the error.
    fn expect_close(&mut self, t: &Tok, what: &str, open: Span) -> PResult<Span> {
        if self.at(t) {
            Ok(self.bump().span)
        } else {
            Err(self
                .err_here(what)
                .with_label(open, "unclosed delimiter opened here"))
        }
    }

    fn expect_eof(&mut self) -> PResult<()> {
        if self.at(&Tok::Eof) {
            Ok(())
        } else {
            Err(self.err_here("end of input"))
        }
    }

    fn is_sym(&self, n: usize, s: &str) -> bool {
        matches!(self.peek_at(n), Tok::Symbol { quals, name } if quals.is_empty() && name == s)
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.err_here(what)),
        }
    }

    /// A field name: a name or a natural number (`x.0`, `{0 = a}`).
    fn field_id(&mut self) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            Tok::Int {
                value,
                suffix: None,
            } if value >= 0 => {
                let span = self.bump().span;
                Ok(Ident {
                    name: value.to_string(),
                    span,
                })
            }
            _ => Err(self.err_here("a field name")),
        }
    }

    /// Runs `f` one nesting level deeper, failing cleanly past [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::new(
                DiagnosticKind::Syntax,
                self.span(),
                format!("nesting too deep (the limit is {MAX_DEPTH} levels)"),
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn chain_step(&mut self) -> PResult<()> {
        self.chain += 1;
        if self.chain + self.depth >= MAX_CHAIN {
            return Err(Diagnostic::new(
                DiagnosticKind::Syntax,
                self.span(),
                format!("expression too long (more than {MAX_CHAIN} chained `let`s or operators)"),
            ));
        }
        Ok(())
    }

    fn fresh_id(&mut self) -> NodeId {
        let id = NodeId(*self.next_id);
        *self.next_id = self.next_id.wrapping_add(1);
        id
    }

    // ---------------------------------------------------------- declarations

    fn program(&mut self) -> Vec<Dec> {
        let mut decs = Vec::new();
        while !self.at(&Tok::Eof) {
            let start = self.pos;
            match self.dec() {
                Ok(d) => decs.push(d),
                Err(e) => {
                    self.errs.push(e);
                    if self.errs.len() >= 50 {
                        break;
                    }
                    self.recover(start);
                }
            }
        }
        decs
    }

    /// Skips to the next token that can start a declaration.
    fn recover(&mut self, start: usize) {
        if self.pos == start {
            self.bump();
        }
        loop {
            let t = self.tok_at(0);
            match t.tok {
                Tok::Eof
                | Tok::Def
                | Tok::Entry
                | Tok::Type
                | Tok::Import
                | Tok::Open
                | Tok::Local
                | Tok::Include
                | Tok::Module => return,
                Tok::Let | Tok::Attr(_) if t.line_start => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    fn dec(&mut self) -> PResult<Dec> {
        let mut attrs = Vec::new();
        while let Tok::Attr(text) = self.peek().clone() {
            let span = self.bump().span;
            attrs.push(Attr { text, span });
        }
        let start = self.span();
        match self.peek() {
            Tok::Def | Tok::Entry | Tok::Let => {
                let mut vb = self.val_bind()?;
                vb.attrs = attrs;
                Ok(Dec::Val(vb))
            }
            Tok::Type => Ok(Dec::Type(self.type_bind()?)),
            Tok::Local => {
                self.bump();
                let d = self.nested(|p| p.dec())?;
                let span = start.to(self.prev_span());
                Ok(Dec::Local(Box::new(d), span))
            }
            Tok::Open => {
                self.bump();
                let m = self.mod_exp()?;
                let span = start.to(m.span());
                Ok(match m {
                    ModExp::Var(q) => Dec::Open(q, span),
                    m => Dec::OpenModule(m, span),
                })
            }
            Tok::Include => {
                self.bump();
                let m = self.mod_exp()?;
                let span = start.to(m.span());
                Ok(Dec::Include(m, span))
            }
            Tok::Import => {
                self.bump();
                match self.peek().clone() {
                    Tok::Str(s) => {
                        let sp = self.bump().span;
                        Ok(Dec::Import(s, start.to(sp)))
                    }
                    _ => Err(self.err_here("a string literal (the imported path) after `import`")),
                }
            }
            Tok::Module if matches!(self.peek_at(1), Tok::Type) => {
                self.bump();
                self.bump();
                let name = self.ident("a module type name after `module type`")?;
                self.expect(&Tok::Equals, "`=` after the module type's name")?;
                let def = self.mod_type()?;
                let span = start.to(self.prev_span());
                Ok(Dec::ModType(ModTypeBind { name, def, span }))
            }
            Tok::Module => {
                self.bump();
                let name = self.ident("a module name after `module`")?;
                let mut params = Vec::new();
                while self.at(&Tok::LParen) {
                    params.push(self.mod_param()?);
                }
                let sig = if self.eat(&Tok::Colon) {
                    Some(self.mod_type()?)
                } else {
                    None
                };
                self.expect(&Tok::Equals, "`=`, `:` or a parameter `(p: S)` in the module declaration")?;
                let body = self.mod_exp()?;
                let span = start.to(self.prev_span());
                Ok(Dec::Module(ModBind {
                    name,
                    params,
                    sig,
                    body,
                    span,
                }))
            }
            _ => Err(self.err_here(
                "a declaration (`def`, `entry`, `type`, `module`, `import`, `open`, `include` or `local`)",
            )),
        }
    }

    // --------------------------------------------------------------- modules

    /// A functor parameter `(name: S)`.
    fn mod_param(&mut self) -> PResult<ModParam> {
        let open = self.expect(&Tok::LParen, "`(` starting a module parameter")?;
        let name = self.ident("a module parameter name")?;
        self.expect(&Tok::Colon, "`:` after the module parameter's name")?;
        let sig = self.mod_type()?;
        let close = self.expect_close(&Tok::RParen, "`)` after the module parameter", open)?;
        Ok(ModParam {
            name,
            sig,
            span: open.to(close),
        })
    }

    /// A module expression: applications, optionally ascribed (`m : S`), or a
    /// functor lambda `\(p: S) -> m`.
    fn mod_exp(&mut self) -> PResult<ModExp> {
        self.nested(|p| {
            let start = p.span();
            if p.eat(&Tok::Backslash) {
                let param = p.mod_param()?;
                let ret = if p.eat(&Tok::Colon) {
                    Some(p.mod_type_no_arrow()?)
                } else {
                    None
                };
                p.expect(&Tok::Arrow, "`->` in the functor `\\(p: S) -> m`")?;
                let body = p.mod_exp()?;
                let span = start.to(body.span());
                return Ok(ModExp::Lambda(Box::new(param), ret, Box::new(body), span));
            }
            let mut m = p.mod_atom()?;
            while p.starts_mod_atom() {
                let arg = p.mod_atom()?;
                let span = start.to(arg.span());
                m = ModExp::Apply(Box::new(m), Box::new(arg), span);
            }
            if p.eat(&Tok::Colon) {
                let sig = p.mod_type()?;
                let span = start.to(sig.span());
                m = ModExp::Ascribe(Box::new(m), sig, span);
            }
            Ok(m)
        })
    }

    /// Whether a functor argument starts here (`import` does not: after
    /// `open m` it starts the next declaration).
    fn starts_mod_atom(&self) -> bool {
        matches!(self.peek(), Tok::Ident(_) | Tok::LParen | Tok::LBrace)
    }

    fn mod_atom(&mut self) -> PResult<ModExp> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Ident(_) => Ok(ModExp::Var(self.qualname("a module name")?)),
            Tok::LParen => {
                self.bump();
                let m = self.mod_exp()?;
                self.expect_close(&Tok::RParen, "`)` after the module expression", start)?;
                Ok(m)
            }
            Tok::LBrace => {
                self.bump();
                let mut decs = Vec::new();
                while !self.at(&Tok::RBrace) && !self.at(&Tok::Eof) {
                    decs.push(self.nested(|p| p.dec())?);
                }
                let close = self.expect_close(&Tok::RBrace, "`}` closing the module", start)?;
                Ok(ModExp::Struct(decs, start.to(close)))
            }
            Tok::Import => {
                self.bump();
                match self.peek().clone() {
                    Tok::Str(s) => {
                        let sp = self.bump().span;
                        Ok(ModExp::Import(s, start.to(sp)))
                    }
                    _ => Err(self.err_here("a string literal (the imported path) after `import`")),
                }
            }
            _ => Err(self.err_here("a module expression (a name, `{ … }`, `(…)` or `import`)")),
        }
    }

    /// A module type expression, including functor types `(p: S) -> R` and `S -> R`.
    fn mod_type(&mut self) -> PResult<ModTypeExp> {
        self.nested(|p| {
            let start = p.span();
            if p.at(&Tok::LParen)
                && matches!(p.peek_at(1), Tok::Ident(_))
                && matches!(p.peek_at(2), Tok::Colon)
            {
                let param = p.mod_param()?;
                p.expect(&Tok::Arrow, "`->` after a functor type's parameter")?;
                let ret = p.mod_type()?;
                let span = start.to(ret.span());
                return Ok(ModTypeExp::Arrow(
                    Some(param.name),
                    Box::new(param.sig),
                    Box::new(ret),
                    span,
                ));
            }
            let t = p.mod_type_no_arrow()?;
            if p.eat(&Tok::Arrow) {
                let ret = p.mod_type()?;
                let span = start.to(ret.span());
                return Ok(ModTypeExp::Arrow(None, Box::new(t), Box::new(ret), span));
            }
            Ok(t)
        })
    }

    /// A module type without a top-level `->`: a name, `{ specs }` or `( … )`,
    /// refined by any number of `with t = u`.
    fn mod_type_no_arrow(&mut self) -> PResult<ModTypeExp> {
        let start = self.span();
        let mut t = match self.peek().clone() {
            Tok::Ident(_) => ModTypeExp::Var(self.qualname("a module type name")?),
            Tok::LParen => {
                self.bump();
                let t = self.mod_type()?;
                self.expect_close(&Tok::RParen, "`)` after the module type", start)?;
                t
            }
            Tok::LBrace => {
                self.bump();
                let mut specs = Vec::new();
                while !self.at(&Tok::RBrace) && !self.at(&Tok::Eof) {
                    specs.push(self.nested(|p| p.spec())?);
                }
                let close =
                    self.expect_close(&Tok::RBrace, "`}` closing the module type", start)?;
                ModTypeExp::Specs(specs, start.to(close))
            }
            _ => return Err(self.err_here("a module type (a name or `{ … }`)")),
        };
        while self.eat(&Tok::With) {
            let name = self.qualname("a type name after `with`")?;
            let params = self.type_params()?;
            self.expect(&Tok::Equals, "`=` in the refinement `with t = …`")?;
            let def = self.ty()?;
            let span = start.to(def.span());
            t = ModTypeExp::With(Box::new(t), name, params, def, span);
        }
        Ok(t)
    }

    /// One specification in a module type.
    fn spec(&mut self) -> PResult<Spec> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Attr(_) => {
                self.bump();
                self.spec()
            }
            Tok::Val => {
                self.bump();
                let name = if let Some(op) = self.binding_op()? {
                    op
                } else {
                    match self.peek().clone() {
                        Tok::Ident(n) => {
                            let span = self.bump().span;
                            Ident { name: n, span }
                        }
                        Tok::Symbol { quals, name } if quals.is_empty() => {
                            let span = self.bump().span;
                            Ident { name, span }
                        }
                        _ => return Err(self.err_here("a name or operator after `val`")),
                    }
                };
                let tparams = self.type_params()?;
                self.expect(&Tok::Colon, "`:` and the type in the `val` specification")?;
                let t = self.ty()?;
                let span = start.to(t.span());
                Ok(Spec::Val(name, tparams, t, span))
            }
            Tok::Type => {
                self.bump();
                let liftedness = if self.is_sym(0, "^") {
                    self.bump();
                    Liftedness::Lifted
                } else if self.at(&Tok::Tilde) {
                    self.bump();
                    Liftedness::SizeLifted
                } else {
                    Liftedness::Unlifted
                };
                let name = self.ident("a type name after `type`")?;
                let params = self.type_params()?;
                let def = if self.eat(&Tok::Equals) {
                    Some(self.ty()?)
                } else {
                    None
                };
                let span = start.to(self.prev_span());
                Ok(Spec::Type {
                    name,
                    params,
                    liftedness,
                    def,
                    span,
                })
            }
            Tok::Module => {
                self.bump();
                let name = self.ident("a module name after `module`")?;
                self.expect(
                    &Tok::Colon,
                    "`:` after the module's name in the specification",
                )?;
                let t = self.mod_type()?;
                let span = start.to(t.span());
                Ok(Spec::Module(name, t, span))
            }
            Tok::Include => {
                self.bump();
                let t = self.mod_type()?;
                let span = start.to(t.span());
                Ok(Spec::Include(t, span))
            }
            _ => Err(self.err_here("a specification (`val`, `type`, `module` or `include`)")),
        }
    }

    /// `name(.name)*`
    fn qualname(&mut self, what: &str) -> PResult<QualName> {
        let first = self.ident(what)?;
        let mut quals = Vec::new();
        let mut name = first.name;
        let mut span = first.span;
        while self.at(&Tok::Dot) && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let n = self.ident("a name")?;
            quals.push(std::mem::replace(&mut name, n.name));
            span = span.to(n.span);
        }
        Ok(QualName { quals, name, span })
    }

    /// `(op)` in binding position: returns the operator name if present.
    fn binding_op(&mut self) -> PResult<Option<Ident>> {
        if self.at(&Tok::LParen) && matches!(self.peek_at(2), Tok::RParen) {
            if let Tok::Symbol { quals, name } = self.peek_at(1).clone() {
                let l = self.bump().span;
                let sym_span = self.span();
                if !quals.is_empty() {
                    return Err(Diagnostic::new(
                        DiagnosticKind::Syntax,
                        sym_span,
                        "cannot bind a qualified operator name",
                    ));
                }
                if name == "!" {
                    return Err(Diagnostic::new(
                        DiagnosticKind::Syntax,
                        sym_span,
                        "`!` is a prefix operator and cannot be used as infix operator",
                    ));
                }
                self.bump();
                let r = self.bump().span;
                return Ok(Some(Ident {
                    name,
                    span: l.to(r),
                }));
            }
        }
        Ok(None)
    }

    fn val_bind(&mut self) -> PResult<ValBind> {
        let kw = self.bump();
        let entry = kw.tok == Tok::Entry;
        let start = kw.span;
        let mut params = Vec::new();
        let mut type_params = Vec::new();
        let name = if let Some(op) = self.binding_op()? {
            op
        } else if let Tok::Ident(n) = self.peek().clone() {
            let span = self.bump().span;
            if self.is_sym(0, "!") {
                return Err(Diagnostic::new(
                    DiagnosticKind::Syntax,
                    self.span(),
                    "`!` is a prefix operator and cannot be used as infix operator",
                ));
            }
            Ident { name: n, span }
        } else if self.starts_param_pat() {
            // Infix definition: `def (a: t) +^ (b: t) = …`
            let p1 = self.param_pat()?;
            let op = match self.peek().clone() {
                Tok::Symbol { quals, name } if quals.is_empty() && name != "!" => {
                    let span = self.bump().span;
                    Ident { name, span }
                }
                _ => return Err(self.err_here("an operator (infix definition `def x op y = …`)")),
            };
            let p2 = self.param_pat()?;
            params.push(p1);
            params.push(p2);
            op
        } else {
            return Err(self.err_here(&format!(
                "a name after `{}`",
                kw.tok.describe().trim_matches('`')
            )));
        };
        if params.is_empty() {
            type_params = self.type_params()?;
            while self.starts_param_pat() {
                params.push(self.param_pat()?);
            }
        }
        let ret = if self.eat(&Tok::Colon) {
            Some(self.ty()?)
        } else {
            None
        };
        if !self.at(&Tok::Equals) {
            return Err(self.err_here("`=` or a parameter in the definition"));
        }
        self.bump();
        let body = self.expr()?;
        let span = start.to(self.prev_span());
        let id = self.fresh_id();
        Ok(ValBind {
            id,
            entry,
            name,
            type_params,
            params,
            ret,
            body,
            attrs: vec![],
            span,
            ty: None,
        })
    }

    /// `'a`, `'^a`, `'~a`, `[n]`, any number of them.
    fn type_params(&mut self) -> PResult<Vec<TypeParam>> {
        let mut out = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::TyParam(l, name) => {
                    let span = self.bump().span;
                    out.push(TypeParam::Type(Ident { name, span }, l));
                }
                Tok::LBracket { .. }
                    if matches!(self.peek_at(1), Tok::Ident(_))
                        && matches!(self.peek_at(2), Tok::RBracket) =>
                {
                    self.bump();
                    let id = self.ident("a size parameter name")?;
                    self.bump();
                    out.push(TypeParam::Size(id));
                }
                _ => return Ok(out),
            }
        }
    }

    fn type_bind(&mut self) -> PResult<TypeBind> {
        let start = self.bump().span;
        let liftedness = if self.is_sym(0, "^") {
            self.bump();
            Liftedness::Lifted
        } else if self.at(&Tok::Tilde) {
            self.bump();
            Liftedness::SizeLifted
        } else {
            Liftedness::Unlifted
        };
        let name = self.ident("a type name after `type`")?;
        let params = self.type_params()?;
        self.expect(
            &Tok::Equals,
            "`=` or a type parameter in the type declaration",
        )?;
        let def = self.ty()?;
        let span = start.to(self.prev_span());
        Ok(TypeBind {
            name,
            params,
            liftedness,
            def,
            span,
        })
    }

    // ----------------------------------------------------------------- types

    /// A type expression (`TypeExp` in the reference).
    fn ty(&mut self) -> PResult<TypeExp> {
        self.nested(|p| p.ty_inner())
    }

    fn ty_inner(&mut self) -> PResult<TypeExp> {
        let start = self.span();
        // `(x: t) -> u`
        if self.at(&Tok::LParen)
            && matches!(self.peek_at(1), Tok::Ident(_))
            && matches!(self.peek_at(2), Tok::Colon)
        {
            self.bump();
            let name = self.ident("a parameter name")?;
            self.bump();
            let t = self.ty()?;
            self.expect_close(&Tok::RParen, "`)`", start)?;
            self.expect(&Tok::Arrow, "`->` after a named parameter type `(x: t)`")?;
            let r = self.ty()?;
            let span = start.to(r.span());
            return Ok(TypeExp::Arrow(Some(name), Box::new(t), Box::new(r), span));
        }
        if self.eat(&Tok::Question) {
            let mut names = Vec::new();
            while self.at(&Tok::LBracket { index: false }) {
                self.bump();
                names.push(self.ident("a size name in `?[n].t`")?);
                self.expect(&Tok::RBracket, "`]`")?;
            }
            if names.is_empty() {
                return Err(self.err_here("`[` (existential sizes `?[n].t`)"));
            }
            self.expect(&Tok::Dot, "`.` after the existential sizes")?;
            let t = self.ty()?;
            let span = start.to(t.span());
            return Ok(TypeExp::Exists(names, Box::new(t), span));
        }
        let t = self.ty_term()?;
        if self.eat(&Tok::Arrow) {
            let r = self.ty()?;
            let span = start.to(r.span());
            return Ok(TypeExp::Arrow(None, Box::new(t), Box::new(r), span));
        }
        Ok(t)
    }

    fn ty_term(&mut self) -> PResult<TypeExp> {
        self.nested(|p| {
            let start = p.span();
            if p.is_sym(0, "*") {
                p.bump();
                let t = p.ty_term()?;
                let span = start.to(t.span());
                return Ok(TypeExp::Unique(Box::new(t), span));
            }
            if matches!(p.peek(), Tok::Constr(_)) {
                let mut cs = Vec::new();
                loop {
                    let c = match p.peek().clone() {
                        Tok::Constr(c) => {
                            let span = p.bump().span;
                            Ident { name: c, span }
                        }
                        _ => return Err(p.err_here("a constructor `#name` in the sum type")),
                    };
                    let mut payload = Vec::new();
                    while p.starts_ty_atom() {
                        payload.push(p.ty_atom()?);
                    }
                    cs.push((c, payload));
                    if p.is_sym(0, "|") {
                        p.bump();
                    } else {
                        break;
                    }
                }
                let span = start.to(p.prev_span());
                return Ok(TypeExp::Sum(cs, span));
            }
            let t = p.ty_atom()?;
            if let TypeExp::Named(q, args, _) = t {
                let mut args = args;
                while p.starts_ty_atom() {
                    if p.at(&Tok::LBracket { index: false }) {
                        args.push(TypeArg::Size(p.size_exp()?));
                    } else {
                        args.push(TypeArg::Type(p.ty_atom()?));
                    }
                }
                let span = start.to(p.prev_span());
                return Ok(TypeExp::Named(q, args, span));
            }
            Ok(t)
        })
    }

    fn starts_ty_atom(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Ident(_) | Tok::LParen | Tok::LBrace | Tok::LBracket { .. }
        )
    }

    /// `[e]` or `[]`.
    fn size_exp(&mut self) -> PResult<SizeExp> {
        let open = self.bump().span;
        if self.at(&Tok::RBracket) {
            let close = self.bump().span;
            return Ok(SizeExp::Any(open.to(close)));
        }
        let e = self.expr()?;
        self.expect_close(&Tok::RBracket, "`]` after the size", open)?;
        Ok(SizeExp::Expr(Box::new(e)))
    }

    fn ty_atom(&mut self) -> PResult<TypeExp> {
        self.nested(|p| {
            let start = p.span();
            match p.peek().clone() {
                Tok::LParen => {
                    p.bump();
                    if p.at(&Tok::RParen) {
                        let e = p.bump().span;
                        return Ok(TypeExp::Tuple(vec![], start.to(e)));
                    }
                    let t = p.ty()?;
                    if p.at(&Tok::Comma) {
                        let mut ts = vec![t];
                        while p.eat(&Tok::Comma) {
                            if p.at(&Tok::RParen) {
                                break;
                            }
                            ts.push(p.ty()?);
                        }
                        let e =
                            p.expect_close(&Tok::RParen, "`,` or `)` in the tuple type", start)?;
                        return Ok(TypeExp::Tuple(ts, start.to(e)));
                    }
                    p.expect_close(&Tok::RParen, "`)` or `,`", start)?;
                    Ok(t)
                }
                Tok::LBrace => {
                    p.bump();
                    let mut fs = Vec::new();
                    while !p.at(&Tok::RBrace) {
                        let f = p.field_id()?;
                        p.expect(&Tok::Colon, "`:` after the field name in a record type")?;
                        let t = p.ty()?;
                        fs.push((f, t));
                        if !p.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    let e = p.expect_close(&Tok::RBrace, "`,` or `}` in the record type", start)?;
                    Ok(TypeExp::Record(fs, start.to(e)))
                }
                Tok::LBracket { .. } => {
                    let d = p.size_exp()?;
                    let t = p.ty_term()?;
                    let span = start.to(t.span());
                    Ok(TypeExp::Array(d, Box::new(t), span))
                }
                Tok::Ident(_) => {
                    let q = p.qualname("a type")?;
                    if q.quals.is_empty() {
                        if let Some(pt) = PrimType::from_name(&q.name) {
                            return Ok(TypeExp::Prim(pt, q.span));
                        }
                    }
                    let span = q.span;
                    Ok(TypeExp::Named(q, vec![], span))
                }
                _ => Err(p.err_here("a type")),
            }
        })
    }

    // -------------------------------------------------------------- patterns

    /// A full pattern (`Pat` in the reference).
    fn pat(&mut self) -> PResult<Pat> {
        self.nested(|p| {
            let start = p.span();
            if let Tok::Attr(text) = p.peek().clone() {
                // Pattern attributes are kept for the formatter.
                let span = p.bump().span;
                let mut inner = p.pat()?;
                inner.attrs.insert(0, Attr { text, span });
                return Ok(inner);
            }
            let inner = if let Tok::Constr(c) = p.peek().clone() {
                let cspan = p.bump().span;
                let mut args = Vec::new();
                while p.starts_inner_pat() {
                    args.push(p.inner_pat(true)?);
                }
                let span = start.to(p.prev_span());
                mkpat(
                    PatKind::Constr(
                        Ident {
                            name: c,
                            span: cspan,
                        },
                        args,
                    ),
                    span,
                )
            } else {
                p.inner_pat(true)?
            };
            if p.eat(&Tok::Colon) {
                let t = p.ty()?;
                let span = start.to(t.span());
                return Ok(mkpat(PatKind::Ascribe(Box::new(inner), t), span));
            }
            Ok(inner)
        })
    }

    fn starts_param_pat(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Ident(_)
                | Tok::Underscore
                | Tok::LParen
                | Tok::LBrace
                | Tok::Int { .. }
                | Tok::Float { .. }
                | Tok::True
                | Tok::False
                | Tok::Constr(_)
        )
    }

    fn starts_inner_pat(&self) -> bool {
        self.starts_param_pat()
            || (self.is_sym(0, "-")
                && matches!(self.peek_at(1), Tok::Int { .. } | Tok::Float { .. }))
    }

    /// A function/lambda parameter: no negative literals, nullary constructors only.
    fn param_pat(&mut self) -> PResult<Pat> {
        self.inner_pat(false)
    }

    fn lit_of(tok: &Tok) -> Option<Literal> {
        match tok {
            Tok::Int { value, suffix } => Some(Literal::Int {
                value: *value,
                suffix: *suffix,
            }),
            Tok::Float {
                value,
                text,
                suffix,
            } => Some(Literal::Float {
                value: *value,
                text: text.clone(),
                suffix: *suffix,
            }),
            Tok::True => Some(Literal::Bool(true)),
            Tok::False => Some(Literal::Bool(false)),
            _ => None,
        }
    }

    fn inner_pat(&mut self, allow_neg: bool) -> PResult<Pat> {
        let p = self;
        {
            let start = p.span();
            if let Some(l) = Self::lit_of(p.peek()) {
                let span = p.bump().span;
                return Ok(mkpat(PatKind::Lit(l), span));
            }
            match p.peek().clone() {
                Tok::Ident(name) => {
                    let span = p.bump().span;
                    Ok(mkpat(PatKind::Id(Ident { name, span }), span))
                }
                Tok::Underscore => {
                    let span = p.bump().span;
                    Ok(mkpat(PatKind::Wildcard, span))
                }
                Tok::Constr(c) => {
                    let span = p.bump().span;
                    Ok(mkpat(
                        PatKind::Constr(Ident { name: c, span }, vec![]),
                        span,
                    ))
                }
                Tok::Symbol { .. } if allow_neg && p.is_sym(0, "-") => {
                    p.bump();
                    let lit = Self::lit_of(p.peek()).and_then(negate_lit);
                    match lit {
                        Some(l) => {
                            let e = p.bump().span;
                            Ok(mkpat(PatKind::Lit(l), start.to(e)))
                        }
                        None => Err(p.err_here("a number after `-` in a pattern")),
                    }
                }
                Tok::LParen => {
                    if let Some(op) = p.binding_op()? {
                        let span = op.span;
                        return Ok(mkpat(PatKind::Id(op), span));
                    }
                    p.bump();
                    if p.at(&Tok::RParen) {
                        let e = p.bump().span;
                        return Ok(mkpat(PatKind::Tuple(vec![]), start.to(e)));
                    }
                    let first = p.pat()?;
                    if p.at(&Tok::Comma) {
                        let mut ps = vec![first];
                        while p.eat(&Tok::Comma) {
                            if p.at(&Tok::RParen) {
                                break;
                            }
                            ps.push(p.pat()?);
                        }
                        let e =
                            p.expect_close(&Tok::RParen, "`,` or `)` in the tuple pattern", start)?;
                        return Ok(mkpat(PatKind::Tuple(ps), start.to(e)));
                    }
                    let e = p.expect_close(&Tok::RParen, "`)` or `,` in the pattern", start)?;
                    let mut first = first;
                    first.span = start.to(e);
                    Ok(first)
                }
                Tok::LBrace => {
                    p.bump();
                    let mut fs = Vec::new();
                    while !p.at(&Tok::RBrace) {
                        let f = p.field_id()?;
                        let fp = if p.eat(&Tok::Equals) {
                            p.pat()?
                        } else if p.eat(&Tok::Colon) {
                            let t = p.ty()?;
                            let span = f.span.to(t.span());
                            mkpat(
                                PatKind::Ascribe(
                                    Box::new(mkpat(PatKind::Id(f.clone()), f.span)),
                                    t,
                                ),
                                span,
                            )
                        } else {
                            if f.name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                                return Err(Diagnostic::new(
                                    DiagnosticKind::Syntax,
                                    f.span,
                                    "a numeric record field needs a pattern: `{0 = p}`",
                                ));
                            }
                            mkpat(PatKind::Id(f.clone()), f.span)
                        };
                        fs.push((f, fp));
                        if !p.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    let e =
                        p.expect_close(&Tok::RBrace, "`,` or `}` in the record pattern", start)?;
                    Ok(mkpat(PatKind::Record(fs), start.to(e)))
                }
                _ => Err(p.err_here("a pattern")),
            }
        }
    }

    // ----------------------------------------------------------- expressions

    /// A full expression (`exp`, including ascription).
    fn expr(&mut self) -> PResult<Expr> {
        self.bp(0)
    }

    /// An expression without a top-level ascription (array indices, sections).
    fn exp2(&mut self) -> PResult<Expr> {
        self.bp(BP_EXP2)
    }

    /// Number of tokens of the infix operator at offset `n`, if there is one.
    fn binop_len_at(&self, n: usize) -> Option<usize> {
        match self.peek_at(n) {
            Tok::Symbol { quals, name } if !(quals.is_empty() && name == "!") => Some(1),
            Tok::Backtick => {
                let mut k = n + 1;
                if !matches!(self.peek_at(k), Tok::Ident(_)) {
                    return None;
                }
                k += 1;
                while matches!(self.peek_at(k), Tok::Dot)
                    && matches!(self.peek_at(k + 1), Tok::Ident(_))
                {
                    k += 2;
                }
                if matches!(self.peek_at(k), Tok::Backtick) {
                    Some(k + 1 - n)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Parses an infix operator (symbol or `` `name` ``) into a name.
    fn binop(&mut self) -> PResult<QualName> {
        match self.peek().clone() {
            Tok::Symbol { quals, name } => {
                let span = self.bump().span;
                Ok(QualName { quals, name, span })
            }
            Tok::Backtick => {
                let open = self.bump().span;
                let mut q = self.qualname("a function name between backticks")?;
                let close = self.expect(&Tok::Backtick, "a closing backtick")?;
                q.span = open.to(close);
                Ok(q)
            }
            _ => Err(self.err_here("an operator")),
        }
    }

    /// Pratt loop over infix operators with binding power at least `min`.
    fn bp(&mut self, min: u8) -> PResult<Expr> {
        self.nested(|p| {
            let saved_chain = p.chain;
            let r = p.bp_loop(min);
            p.chain = saved_chain;
            r
        })
    }

    fn bp_loop(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.prefix()?;
        loop {
            let start = lhs.span;
            match self.peek().clone() {
                Tok::Colon | Tok::ColonGt if BP_ASCRIBE >= min => {
                    let coerce = self.bump().tok == Tok::ColonGt;
                    let t = self.ty()?;
                    let span = start.to(t.span());
                    let kind = if coerce {
                        ExprKind::Coerce(Box::new(lhs), t)
                    } else {
                        ExprKind::Ascribe(Box::new(lhs), t)
                    };
                    lhs = mk(kind, span);
                }
                Tok::DotDot | Tok::DotDotDot | Tok::DotDotLt | Tok::DotDotGt if BP_RANGE >= min => {
                    let first = self.bump();
                    let mut second = None;
                    let kind_tok = if first.tok == Tok::DotDot {
                        second = Some(Box::new(self.bp(BP_RANGE + 1)?));
                        match self.peek() {
                            Tok::DotDotDot | Tok::DotDotLt | Tok::DotDotGt => self.bump().tok,
                            _ => {
                                return Err(self
                                    .err_here("`...`, `..<` or `..>` to finish the range `a..b`"))
                            }
                        }
                    } else {
                        first.tok
                    };
                    let kind = match kind_tok {
                        Tok::DotDotDot => RangeKind::ToInclusive,
                        Tok::DotDotLt => RangeKind::UpToExclusive,
                        _ => RangeKind::DownToExclusive,
                    };
                    let end = self.bp(BP_RANGE + 1)?;
                    let span = start.to(end.span);
                    lhs = mk(
                        ExprKind::Range {
                            start: Box::new(lhs),
                            second,
                            end: Box::new(end),
                            kind,
                        },
                        span,
                    );
                }
                Tok::With if BP_WITH >= min => {
                    self.bump();
                    self.chain_step()?;
                    let path = self.update_path(false)?;
                    let what = match path.last() {
                        Some(update::PathStep::Index(..)) => {
                            "`=` after the indices of `with [...]`"
                        }
                        _ => "`=` after the field path of `with`",
                    };
                    self.expect(&Tok::Equals, what)?;
                    let value = self.bp(BP_WITH + 1)?;
                    let span = start.to(value.span);
                    lhs = update::update_expr(lhs, path, value, span);
                }
                Tok::Symbol { .. } | Tok::Backtick => {
                    let Some(len) = self.binop_len_at(0) else {
                        break;
                    };
                    // `(e op)` is a left section: leave the operator to the caller.
                    if matches!(self.peek_at(len), Tok::RParen) {
                        break;
                    }
                    let (lbp, right) = match self.peek() {
                        Tok::Symbol { name, .. } => op_precedence(name),
                        _ => (BP_BACKTICK, false),
                    };
                    if lbp < min {
                        break;
                    }
                    let op = self.binop()?;
                    self.chain_step()?;
                    let rhs = self.bp(if right { lbp } else { lbp + 1 })?;
                    let span = start.to(rhs.span);
                    lhs = mk(
                        ExprKind::BinOp {
                            op,
                            op_res: None,
                            op_inst: vec![],
                            lhs: Box::new(lhs),
                            rhs: Box::new(rhs),
                        },
                        span,
                    );
                }
                _ => break,
            }
        }
        Ok(lhs)
    }

    /// Prefix operators, keyword-introduced forms, and application.
    fn prefix(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Symbol { quals, name } if quals.is_empty() && (name == "-" || name == "!") => {
                self.bump();
                let e = self.nested(|p| p.prefix())?;
                let span = start.to(e.span);
                if name == "-" {
                    if let ExprKind::Lit(l) = &e.kind {
                        if let Some(nl) = negate_lit(l.clone()) {
                            return Ok(mk(ExprKind::Lit(nl), span));
                        }
                    }
                    Ok(mk(ExprKind::Negate(Box::new(e)), span))
                } else {
                    Ok(mk(ExprKind::Not(Box::new(e)), span))
                }
            }
            Tok::If => {
                let saved_chain = self.chain;
                let r = self.if_chain();
                self.chain = saved_chain;
                r
            }
            Tok::Let => self.let_expr(),
            Tok::Loop => self.loop_expr(vec![]),
            Tok::Match => self.match_expr(),
            Tok::Backslash => {
                self.bump();
                let mut params = Vec::new();
                while self.starts_param_pat() {
                    params.push(self.param_pat()?);
                }
                if params.is_empty() {
                    return Err(self.err_here("a parameter after `\\`"));
                }
                let ret = if self.eat(&Tok::Colon) {
                    Some(self.ty_term()?)
                } else {
                    None
                };
                self.expect(&Tok::Arrow, "`->` after the lambda's parameters")?;
                let body = self.expr()?;
                let span = start.to(body.span);
                Ok(mk(
                    ExprKind::Lambda {
                        params,
                        ret,
                        body: Box::new(body),
                    },
                    span,
                ))
            }
            Tok::Attr(_) => {
                let mut attrs = Vec::new();
                while let Tok::Attr(text) = self.peek().clone() {
                    let span = self.bump().span;
                    attrs.push(Attr { text, span });
                }
                if self.at(&Tok::Loop) {
                    return self.loop_expr(attrs);
                }
                let mut e = self.expr()?;
                for a in attrs.into_iter().rev() {
                    let span = a.span.to(e.span);
                    e = mk(ExprKind::Attr(a, Box::new(e)), span);
                }
                Ok(e)
            }
            _ => self.apply(),
        }
    }

    fn starts_atom(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Ident(_)
                | Tok::Int { .. }
                | Tok::Float { .. }
                | Tok::True
                | Tok::False
                | Tok::LParen
                | Tok::LBracket { .. }
                | Tok::LBrace
                | Tok::Constr(_)
                | Tok::Str(_)
                | Tok::Hole
        )
    }

    fn apply(&mut self) -> PResult<Expr> {
        let head = self.atom()?;
        let mut args = Vec::new();
        while self.starts_atom() {
            args.push(self.atom()?);
        }
        // A lambda may be the last argument without parentheses
        // (`tabulate n \i -> e`); its body extends as far right as possible.
        if self.at(&Tok::Backslash) {
            args.push(self.nested(|p| p.prefix())?);
        }
        if let ExprKind::Constr(c, payload) = &head.kind {
            if payload.is_empty() && !args.is_empty() {
                let span = head
                    .span
                    .to(args.last().map(|a| a.span).unwrap_or(head.span));
                return Ok(mk(ExprKind::Constr(c.clone(), args), span));
            }
        }
        if args.is_empty() {
            return Ok(head);
        }
        let span = head
            .span
            .to(args.last().map(|a| a.span).unwrap_or(head.span));
        Ok(mk(ExprKind::Apply(Box::new(head), args), span))
    }

    /// An atom with its postfix projections/indexing. (Not counted as a
    /// nesting level itself: every recursion out of it goes through `bp`.)
    fn atom(&mut self) -> PResult<Expr> {
        let p = self;
        {
            let mut e = p.atom_base()?;
            // Postfix: projection, qualified names, local open, indexing.
            loop {
                if matches!(p.peek(), Tok::Dot | Tok::LBracket { index: true }) {
                    p.chain_step()?;
                }
                match p.peek().clone() {
                    Tok::Dot => match p.peek_at(1).clone() {
                        Tok::Ident(f) => {
                            p.bump();
                            let fspan = p.bump().span;
                            let span = e.span.to(fspan);
                            e = match e.kind {
                                ExprKind::Var { name, .. } => {
                                    let mut quals = name.quals;
                                    quals.push(name.name);
                                    let name = QualName {
                                        quals,
                                        name: f,
                                        span,
                                    };
                                    mk(
                                        ExprKind::Var {
                                            name,
                                            res: None,
                                            inst: vec![],
                                        },
                                        span,
                                    )
                                }
                                kind => mk(
                                    ExprKind::Project(
                                        Box::new(mk(kind, e.span)),
                                        Ident {
                                            name: f,
                                            span: fspan,
                                        },
                                    ),
                                    span,
                                ),
                            };
                        }
                        Tok::Int {
                            value,
                            suffix: None,
                        } if value >= 0 => {
                            p.bump();
                            let fspan = p.bump().span;
                            let span = e.span.to(fspan);
                            e = mk(
                                ExprKind::Project(
                                    Box::new(e),
                                    Ident {
                                        name: value.to_string(),
                                        span: fspan,
                                    },
                                ),
                                span,
                            );
                        }
                        Tok::LParen
                            if matches!(p.peek_at(2), Tok::Symbol { .. })
                                && matches!(p.peek_at(3), Tok::RParen)
                                && matches!(e.kind, ExprKind::Var { .. }) =>
                        {
                            // `M.(+)`: a qualified operator as a function.
                            let ExprKind::Var { name, .. } = e.kind else {
                                unreachable!("checked by the guard")
                            };
                            p.bump();
                            p.bump();
                            let Tok::Symbol {
                                quals: inner,
                                name: op,
                            } = p.bump().tok
                            else {
                                unreachable!("checked by the guard")
                            };
                            let close = p.bump().span;
                            let span = e.span.to(close);
                            let mut quals = name.quals;
                            quals.push(name.name);
                            quals.extend(inner);
                            let op = QualName {
                                quals,
                                name: op,
                                span,
                            };
                            e = mk(
                                ExprKind::OpSection {
                                    op,
                                    op_res: None,
                                    op_inst: vec![],
                                },
                                span,
                            );
                        }
                        Tok::LParen => {
                            let q = match &e.kind {
                                ExprKind::Var { name, .. } => name.clone(),
                                _ => {
                                    return Err(Diagnostic::new(
                                        DiagnosticKind::Syntax,
                                        p.tok_at(1).span,
                                        "only a module name can be opened locally with `m.(e)`",
                                    ))
                                }
                            };
                            p.bump();
                            let open = p.bump().span;
                            let inner = p.expr()?;
                            let close = p.expect_close(&Tok::RParen, "`)`", open)?;
                            let span = e.span.to(close);
                            e = mk(ExprKind::LocalOpen(q, Box::new(inner)), span);
                        }
                        _ => {
                            p.bump();
                            return Err(p.err_here("a field name or `(` after `.`"));
                        }
                    },
                    Tok::LBracket { index: true } => {
                        let open = p.bump().span;
                        let idx = p.dim_indices(open)?;
                        let span = e.span.to(p.prev_span());
                        e = mk(ExprKind::Index(Box::new(e), idx), span);
                    }
                    _ => break,
                }
            }
            Ok(e)
        }
    }

    /// After `[`: indices/slices up to and including `]`.
    fn dim_indices(&mut self, open: Span) -> PResult<Vec<DimIndex>> {
        let mut out = Vec::new();
        while !self.at(&Tok::RBracket) {
            let start = if self.at(&Tok::Colon) {
                None
            } else {
                Some(self.exp2()?)
            };
            if !self.eat(&Tok::Colon) {
                match start {
                    Some(e) => out.push(DimIndex::Fix(e)),
                    None => return Err(self.err_here("an index")),
                }
            } else {
                let ends = |p: &Self| matches!(p.peek(), Tok::Colon | Tok::Comma | Tok::RBracket);
                let end = if ends(self) { None } else { Some(self.exp2()?) };
                let stride = if self.eat(&Tok::Colon) {
                    if matches!(self.peek(), Tok::Comma | Tok::RBracket) {
                        None
                    } else {
                        Some(self.exp2()?)
                    }
                } else {
                    None
                };
                out.push(DimIndex::Slice { start, end, stride });
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect_close(&Tok::RBracket, "`,` or `]` in the index", open)?;
        Ok(out)
    }

    fn atom_base(&mut self) -> PResult<Expr> {
        let start = self.span();
        if let Some(l) = Self::lit_of(self.peek()) {
            self.bump();
            return Ok(mk(ExprKind::Lit(l), start));
        }
        match self.peek().clone() {
            Tok::Ident(name) => {
                self.bump();
                let q = QualName { quals: vec![], name, span: start };
                Ok(mk(ExprKind::Var { name: q, res: None, inst: vec![] }, start))
            }
            Tok::Constr(c) => {
                self.bump();
                Ok(mk(ExprKind::Constr(Ident { name: c, span: start }, vec![]), start))
            }
            Tok::Hole => {
                // A typed hole: a call of the intrinsic `???: () -> a`,
                // whose type is inferred from the context; evaluating it is
                // a run-time error (nabla-elab).
                self.bump();
                let name = QualName {
                    quals: vec![],
                    name: "???".to_string(),
                    span: start,
                };
                let hole = mk(ExprKind::Var { name, res: None, inst: vec![] }, start);
                let unit = mk(ExprKind::Tuple(vec![]), start);
                Ok(mk(ExprKind::Apply(Box::new(hole), vec![unit]), start))
            }
            Tok::Str(text) => {
                // A string literal is the array of its UTF-8 bytes, `[]u8`.
                self.bump();
                let bytes = text
                    .bytes()
                    .map(|b| {
                        let lit = Literal::Int {
                            value: i128::from(b),
                            suffix: Some(PrimType::U8),
                        };
                        mk(ExprKind::Lit(lit), start)
                    })
                    .collect();
                let array = mk(ExprKind::ArrayLit(bytes), start);
                let u8_array = TypeExp::Array(
                    SizeExp::Any(start),
                    Box::new(TypeExp::Prim(PrimType::U8, start)),
                    start,
                );
                Ok(mk(ExprKind::Ascribe(Box::new(array), u8_array), start))
            }
            Tok::LParen => self.paren(),
            Tok::LBracket { .. } => {
                self.bump();
                let mut es = Vec::new();
                while !self.at(&Tok::RBracket) {
                    es.push(self.expr()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let e = self.expect_close(&Tok::RBracket, "`,` or `]` in the array literal", start)?;
                Ok(mk(ExprKind::ArrayLit(es), start.to(e)))
            }
            Tok::LBrace => {
                self.bump();
                let mut fs = Vec::new();
                while !self.at(&Tok::RBrace) {
                    let f = self.field_id()?;
                    if self.eat(&Tok::Equals) {
                        let e = self.expr()?;
                        fs.push(RecordField::Named(f, e));
                    } else {
                        if f.name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                            return Err(self.err_here("`=` after a numeric field name"));
                        }
                        fs.push(RecordField::Pun(f));
                    }
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let e = self.expect_close(&Tok::RBrace, "`,` or `}` in the record", start)?;
                Ok(mk(ExprKind::Record(fs), start.to(e)))
            }
            Tok::Symbol { quals, name } if quals.is_empty() && name == "-" => Err(Diagnostic::new(
                DiagnosticKind::Syntax,
                start,
                "unexpected `-` here: to pass a negative argument write `f (-x)` (`f -x` is a subtraction)",
            )),
            _ => Err(self.err_here("an expression")),
        }
    }

    /// After `(.` with `[` next: an index section, as a lambda whose
    /// parameter has a name no program uses.
    /// The rest of a section that projects and indexes (`(.[i])`,
    /// `(.a[i].b)`), after `(`, the leading `.` and the `fields` read so
    /// far: the function `\x -> x.fields[i]…`.
    fn index_section(&mut self, open: Span, fields: Vec<Ident>) -> PResult<Expr> {
        const PARAM: &str = "index_section_arg'";
        let param = Ident {
            name: PARAM.to_string(),
            span: open,
        };
        let var = |span: Span| {
            let name = QualName {
                quals: vec![],
                name: PARAM.to_string(),
                span,
            };
            mk(
                ExprKind::Var {
                    name,
                    res: None,
                    inst: vec![],
                },
                span,
            )
        };
        let mut body = var(open);
        for f in fields {
            let span = open.to(f.span);
            body = mk(ExprKind::Project(Box::new(body), f), span);
        }
        loop {
            self.chain_step()?;
            if matches!(self.peek(), Tok::LBracket { .. }) {
                let lb = self.bump().span;
                let idx = self.dim_indices(lb)?;
                let span = open.to(self.prev_span());
                body = mk(ExprKind::Index(Box::new(body), idx), span);
            } else if self.eat(&Tok::Dot) {
                if matches!(self.peek(), Tok::LBracket { .. }) {
                    continue;
                }
                let f = self.field_id()?;
                let span = open.to(f.span);
                body = mk(ExprKind::Project(Box::new(body), f), span);
            } else {
                break;
            }
        }
        let close =
            self.expect_close(&Tok::RParen, "`[`, `.` or `)` in the index section", open)?;
        let span = open.to(close);
        Ok(mk(
            ExprKind::Lambda {
                params: vec![mkpat(PatKind::Id(param), open)],
                ret: None,
                body: Box::new(body),
            },
            span,
        ))
    }

    /// After seeing `(`: unit, parens, tuple, or a section.
    fn paren(&mut self) -> PResult<Expr> {
        let open = self.bump().span;
        if self.at(&Tok::RParen) {
            let e = self.bump().span;
            return Ok(mk(ExprKind::Tuple(vec![]), open.to(e)));
        }
        // Index section `(.[i])`, possibly followed by more indices and
        // fields (`(.[i].a)`): the function `\x -> x[i]…`.
        if self.at(&Tok::Dot) && matches!(self.peek_at(1), Tok::LBracket { .. }) {
            self.bump();
            return self.index_section(open, vec![]);
        }
        // Projection section `(.a.b)` / `(.0)`.
        if self.at(&Tok::Dot) {
            let mut fields = Vec::new();
            while self.eat(&Tok::Dot) {
                if let Tok::LBracket { .. } = self.peek() {
                    return Err(Diagnostic::new(
                        DiagnosticKind::Syntax,
                        self.span(),
                        "index sections `(.[i])` are not supported",
                    ));
                }
                fields.push(self.field_id()?);
                if matches!(self.peek(), Tok::LBracket { index: true }) {
                    return self.index_section(open, fields);
                }
            }
            let e =
                self.expect_close(&Tok::RParen, "`.` or `)` in the projection section", open)?;
            return Ok(mk(ExprKind::ProjSection(fields), open.to(e)));
        }
        // Operator sections `(+)`, `(*2)`; `(-x)` is a negation.
        if let Some(len) = self.binop_len_at(0) {
            let is_minus = self.is_sym(0, "-");
            if !is_minus || matches!(self.peek_at(len), Tok::RParen) {
                let op = self.binop()?;
                if self.at(&Tok::RParen) {
                    let e = self.bump().span;
                    return Ok(mk(
                        ExprKind::OpSection {
                            op,
                            op_res: None,
                            op_inst: vec![],
                        },
                        open.to(e),
                    ));
                }
                let rhs = self.exp2()?;
                let e =
                    self.expect_close(&Tok::RParen, "`)` to close the operator section", open)?;
                return Ok(mk(
                    ExprKind::OpSectionRight {
                        op,
                        op_res: None,
                        op_inst: vec![],
                        rhs: Box::new(rhs),
                    },
                    open.to(e),
                ));
            }
        }
        let first = self.expr()?;
        if let Some(len) = self.binop_len_at(0) {
            if matches!(self.peek_at(len), Tok::RParen) {
                let op = self.binop()?;
                let e = self.bump().span;
                return Ok(mk(
                    ExprKind::OpSectionLeft {
                        op,
                        op_res: None,
                        op_inst: vec![],
                        lhs: Box::new(first),
                    },
                    open.to(e),
                ));
            }
        }
        if self.at(&Tok::Comma) {
            let mut es = vec![first];
            while self.eat(&Tok::Comma) {
                if self.at(&Tok::RParen) {
                    break;
                }
                es.push(self.expr()?);
            }
            let e = self.expect_close(&Tok::RParen, "`,` or `)` in the tuple", open)?;
            return Ok(mk(ExprKind::Tuple(es), open.to(e)));
        }
        let e = self.expect_close(&Tok::RParen, "`)`, `,` or an operator", open)?;
        Ok(mk(ExprKind::Parens(Box::new(first)), open.to(e)))
    }

    fn size_binders(&mut self) -> PResult<Vec<Ident>> {
        let mut out: Vec<Ident> = Vec::new();
        while (matches!(self.peek(), Tok::LBracket { index: false })
            || (!out.is_empty() && matches!(self.peek(), Tok::LBracket { .. })))
            && matches!(self.peek_at(1), Tok::Ident(_))
            && matches!(self.peek_at(2), Tok::RBracket)
        {
            self.bump();
            out.push(self.ident("a size name")?);
            self.bump();
        }
        Ok(out)
    }

    /// One `let` binding up to and including its value.
    fn let_head(&mut self) -> PResult<LetHead> {
        self.expect(&Tok::Let, "`let`")?;
        // let a[i] = v, let r.f = v, let a[i].f[j] = v
        if matches!(self.peek(), Tok::Ident(_))
            && matches!(self.peek_at(1), Tok::LBracket { index: true } | Tok::Dot)
        {
            let dest = self.ident("a name")?;
            let mut path = self.update_path(true)?;
            let what = match path.last() {
                Some(update::PathStep::Index(..)) => "`=` after `let a[...]`",
                _ => "`=` after the field path of `let`",
            };
            self.expect(&Tok::Equals, what)?;
            let value = self.expr()?;
            if let [update::PathStep::Index(..)] = path.as_slice() {
                let Some(update::PathStep::Index(indices, _)) = path.pop() else {
                    unreachable!("one index group")
                };
                return Ok(LetHead::With {
                    dest,
                    indices,
                    value,
                });
            }
            let span = dest.span.to(value.span);
            let src = update::variable(&dest.name, dest.span);
            let value = update::update_expr(src, path, value, span);
            return Ok(LetHead::Pat {
                sizes: vec![],
                pat: mkpat(PatKind::Id(dest.clone()), dest.span),
                value,
            });
        }
        // Local function: let f params = …  /  let (op) params = …
        let is_fun_start = |p: &Self, n: usize| {
            matches!(
                p.peek_at(n),
                Tok::Ident(_)
                    | Tok::Underscore
                    | Tok::LParen
                    | Tok::LBrace
                    | Tok::TyParam(..)
                    | Tok::LBracket { index: false }
                    | Tok::Constr(_)
                    | Tok::Int { .. }
                    | Tok::Float { .. }
                    | Tok::True
                    | Tok::False
            )
        };
        let fun_name = if matches!(self.peek(), Tok::Ident(_)) && is_fun_start(self, 1) {
            Some(self.ident("a name")?)
        } else if self.at(&Tok::LParen)
            && matches!(self.peek_at(1), Tok::Symbol { .. })
            && matches!(self.peek_at(2), Tok::RParen)
            && is_fun_start(self, 3)
        {
            self.binding_op()?
        } else {
            None
        };
        if let Some(name) = fun_name {
            let type_params = self.type_params()?;
            let mut params = Vec::new();
            while self.starts_param_pat() {
                params.push(self.param_pat()?);
            }
            if params.is_empty() {
                return Err(self.err_here("a parameter of the local function"));
            }
            let ret = if self.eat(&Tok::Colon) {
                Some(self.ty()?)
            } else {
                None
            };
            self.expect(&Tok::Equals, "`=` in the local function definition")?;
            let value = self.expr()?;
            return Ok(LetHead::Fun {
                name,
                type_params,
                params,
                ret,
                value,
            });
        }
        let sizes = self.size_binders()?;
        let pat = self.pat()?;
        self.expect(&Tok::Equals, "`=` after the pattern of `let`")?;
        let value = self.expr()?;
        Ok(LetHead::Pat { sizes, pat, value })
    }

    /// `if … then … else …`. Chains of `else if` are parsed iteratively: an
    /// `else if` does not count as nesting (only as a chain step, bounded by
    /// [`MAX_CHAIN`]), so generated code with long chains parses.
    fn if_chain(&mut self) -> PResult<Expr> {
        let mut arms: Vec<(Span, Expr, Expr)> = Vec::new();
        let else_ = loop {
            let arm_start = self.bump().span;
            let cond = self.expr()?;
            self.expect(&Tok::Then, "`then` after the condition of `if`")?;
            let then_ = self.expr()?;
            if !self.at(&Tok::Else) {
                return Err(self
                    .err_here("`else` (every `if` needs an `else` branch)")
                    .with_label(arm_start, "this `if` has no `else`"));
            }
            self.bump();
            arms.push((arm_start, cond, then_));
            if self.at(&Tok::If) {
                self.chain_step()?;
                continue;
            }
            break self.expr()?;
        };
        let mut e = else_;
        while let Some((arm_start, cond, then_)) = arms.pop() {
            let span = arm_start.to(e.span);
            e = mk(
                ExprKind::If {
                    cond: Box::new(cond),
                    then_: Box::new(then_),
                    else_: Box::new(e),
                },
                span,
            );
        }
        Ok(e)
    }

    /// `let … in …`, iteratively over chains of `let`s.
    fn let_expr(&mut self) -> PResult<Expr> {
        let saved_chain = self.chain;
        let r = self.let_chain();
        self.chain = saved_chain;
        r
    }

    fn let_chain(&mut self) -> PResult<Expr> {
        let mut heads: Vec<(Span, LetHead)> = Vec::new();
        let body = loop {
            let start = self.span();
            let h = self.let_head()?;
            heads.push((start, h));
            self.chain_step()?;
            if self.eat(&Tok::In) {
                if self.at(&Tok::Let) {
                    continue;
                }
                break self.expr()?;
            }
            match self.peek() {
                Tok::Let => continue,
                Tok::Def | Tok::Type | Tok::Module | Tok::Entry => {
                    return Err(Diagnostic::new(
                        DiagnosticKind::Syntax,
                        self.span(),
                        format!(
                            "Unexpected {}: missing `in` after the `let` binding?",
                            self.peek().unexpected()
                        ),
                    ))
                }
                _ => {
                    return Err(self
                        .err_here("`in` after the `let` binding")
                        .with_label(start, "the `let` that needs an `in`"))
                }
            }
        };
        let mut e = body;
        while let Some((start, h)) = heads.pop() {
            let span = start.to(e.span);
            let body = Box::new(e);
            let kind = match h {
                LetHead::Pat { sizes, pat, value } => ExprKind::LetPat {
                    sizes,
                    pat,
                    value: Box::new(value),
                    body,
                },
                LetHead::Fun {
                    name,
                    type_params,
                    params,
                    ret,
                    value,
                } => ExprKind::LetFun {
                    name,
                    type_params,
                    params,
                    ret,
                    value: Box::new(value),
                    body,
                },
                LetHead::With {
                    dest,
                    indices,
                    value,
                } => ExprKind::LetWith {
                    dest,
                    indices,
                    value: Box::new(value),
                    body,
                },
            };
            e = mk(kind, span);
        }
        Ok(e)
    }

    fn loop_expr(&mut self, attrs: Vec<Attr>) -> PResult<Expr> {
        let start = attrs.first().map(|a| a.span).unwrap_or(self.span());
        self.expect(&Tok::Loop, "`loop`")?;
        let sizes = self.size_binders()?;
        let pat = self.pat()?;
        let init = if self.eat(&Tok::Equals) {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        let form = match self.peek() {
            Tok::For => {
                self.bump();
                if matches!(self.peek(), Tok::Ident(_)) && self.is_sym(1, "<") {
                    let i = self.ident("a loop variable")?;
                    self.bump();
                    let bound = self.expr()?;
                    LoopForm::For(i, Box::new(bound))
                } else {
                    let p = self.pat()?;
                    self.expect(&Tok::In, "`in` (or `<`) in the `for` loop header")?;
                    let xs = self.expr()?;
                    LoopForm::ForIn(p, Box::new(xs))
                }
            }
            Tok::While => {
                self.bump();
                LoopForm::While(Box::new(self.expr()?))
            }
            _ => return Err(self.err_here("`for`, `while` or `=` after the loop pattern")),
        };
        self.expect(&Tok::Do, "`do` after the loop header")?;
        let body = self.expr()?;
        let span = start.to(body.span);
        Ok(mk(
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body: Box::new(body),
                attrs,
            },
            span,
        ))
    }

    fn match_expr(&mut self) -> PResult<Expr> {
        let start = self.bump().span;
        let scrutinee = self.expr()?;
        let mut cases = Vec::new();
        while self.at(&Tok::Case) {
            let cstart = self.bump().span;
            let pat = self.pat()?;
            self.expect(&Tok::Arrow, "`->` after the case pattern")?;
            let body = self.expr()?;
            let span = cstart.to(body.span);
            cases.push(Case { pat, body, span });
        }
        if cases.is_empty() {
            return Err(self.err_here("`case` after the scrutinee of `match`"));
        }
        let span = start.to(self.prev_span());
        Ok(mk(
            ExprKind::Match {
                scrutinee: Box::new(scrutinee),
                cases,
            },
            span,
        ))
    }
}

/// The negation of a numeric literal (None for booleans).
fn negate_lit(l: Literal) -> Option<Literal> {
    match l {
        Literal::Int { value, suffix } => Some(Literal::Int {
            value: value.checked_neg()?,
            suffix,
        }),
        Literal::Float {
            value,
            text,
            suffix,
        } => {
            let text = match text.strip_prefix('-') {
                Some(t) => t.to_string(),
                None => format!("-{text}"),
            };
            Some(Literal::Float {
                value: -value,
                text,
                suffix,
            })
        }
        Literal::Bool(_) => None,
    }
}
