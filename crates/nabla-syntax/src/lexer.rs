//! The lexer: source text → tokens with byte spans.
//!
//! Follows the lexical grammar of the Futhark language reference
//! ("Identifiers and Keywords", "Primitive Types and Values"):
//!
//! * names: a letter or `_`, then letters, digits, `_` and `'`; `_` alone is
//!   the wildcard. Only ASCII letters are accepted.
//! * operators: a symbol start character (`+-*/%=!><|&^`) followed by symbol
//!   characters (those and `.`). `=` alone and `->` are reserved tokens.
//!   A qualified operator `f64.+` is one [`Tok::Symbol`] with `quals`.
//! * numbers: decimal, `0x` hexadecimal, `0b` binary integers (with `_`
//!   separators), decimal floats with fraction and/or exponent, hexadecimal
//!   floats (`0x1.fp3`), each with an optional type suffix (`1i8`, `2.5f32`,
//!   `3f64` — an integer with a float suffix is a float literal).
//!   Fraction-only floats (`.5`) are not accepted (they would clash with
//!   `(.0)` projection sections).
//! * `--` starts a comment to the end of the line (doc comments `-- |` are
//!   ordinary comments here).
//! * `#name` is a constructor, `#[ … ]` an attribute (its text is kept).
//! * `'a`, `'^a`, `'~a` are type parameters.
//! * A `[` that immediately follows (no whitespace) a name, a literal, `)`, `]`
//!   or `}` is marked `index: true`: Futhark's rule that `a[i]` indexes while
//!   `f [i]` applies `f` to an array literal.
//! * After a `.` that immediately follows the previous token, a number is read
//!   as a plain natural number so that `x.0.1` is two tuple projections.

use crate::ast::Liftedness;
use crate::diag::{Diagnostic, DiagnosticKind};
use crate::span::{FileId, Span};
use nabla_prim::PrimType;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An unqualified name (qualification is assembled by the parser from `.`).
    Ident(String),
    /// An operator, possibly qualified (`+`, `|>`, `f64.+`). `-`, `*`, `|`,
    /// `<`, `!` are operators too; the parser gives them their extra roles.
    Symbol {
        quals: Vec<String>,
        name: String,
    },
    /// An integer literal.
    Int {
        value: i128,
        suffix: Option<PrimType>,
    },
    /// A float literal; `text` is the digits without `_` and without suffix.
    Float {
        value: f64,
        text: String,
        suffix: Option<PrimType>,
    },
    /// A string literal (only used by `import`).
    Str(String),
    /// `#name`
    Constr(String),
    /// `#[text]`
    Attr(String),
    /// `'a`, `'^a`, `'~a`
    TyParam(Liftedness, String),
    /// `???`, a typed hole.
    Hole,
    // Keywords.
    If,
    Then,
    Else,
    Def,
    Let,
    Loop,
    In,
    For,
    Do,
    With,
    Local,
    Open,
    Import,
    Type,
    Entry,
    Module,
    /// `include` (in modules and module types).
    Include,
    /// `val` (in module types).
    Val,
    While,
    Match,
    Case,
    True,
    False,
    // Punctuation.
    LParen,
    RParen,
    /// `[`; `index` is true when it immediately follows an atom (see module docs).
    LBracket {
        index: bool,
    },
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    /// `:>`
    ColonGt,
    Dot,
    /// `..`
    DotDot,
    /// `...`
    DotDotDot,
    /// `..<`
    DotDotLt,
    /// `..>`
    DotDotGt,
    Backslash,
    Backtick,
    Question,
    Tilde,
    /// `=`
    Equals,
    /// `->`
    Arrow,
    Underscore,
    Eof,
}

impl Tok {
    /// A short description for error messages: "`def`", "name `x`", "end of file".
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("name `{s}`"),
            Tok::Symbol { quals, name } => {
                if quals.is_empty() {
                    format!("operator `{name}`")
                } else {
                    format!("operator `{}.{name}`", quals.join("."))
                }
            }
            Tok::Int { .. } => "integer literal".into(),
            Tok::Float { .. } => "float literal".into(),
            Tok::Str(_) => "string literal".into(),
            Tok::Constr(c) => format!("constructor `#{c}`"),
            Tok::Attr(_) => "attribute".into(),
            Tok::TyParam(..) => "type parameter".into(),
            Tok::Eof => "end of file".into(),
            other => format!("`{}`", other.text()),
        }
    }

    /// The token as a syntax error's leading "Unexpected …" names it, in
    /// the words of Futhark's parser: `end of file`; `token: 'x'` for a
    /// name, literal or constructor; the spelling in double quotes for a
    /// keyword, operator or punctuation (`"def"`, `"+"`, `")"`).
    pub fn unexpected(&self) -> String {
        match self {
            Tok::Eof => "end of file".into(),
            Tok::Ident(s) => format!("token: '{s}'"),
            Tok::Constr(c) => format!("token: '#{c}'"),
            Tok::Int { value, suffix } => match suffix {
                Some(p) => format!("token: '{value}{p}'"),
                None => format!("token: '{value}'"),
            },
            Tok::Float { text, suffix, .. } => match suffix {
                Some(p) => format!("token: '{text}{p}'"),
                None => format!("token: '{text}'"),
            },
            Tok::Str(s) => format!("token: '\"{s}\"'"),
            Tok::Attr(_) => "attribute".into(),
            Tok::TyParam(..) => "type parameter".into(),
            Tok::Symbol { quals, name } => {
                if quals.is_empty() {
                    format!("\"{name}\"")
                } else {
                    format!("\"{}.{name}\"", quals.join("."))
                }
            }
            other => format!("\"{}\"", other.text()),
        }
    }

    /// The fixed spelling of keywords and punctuation ("" for others).
    fn text(&self) -> &'static str {
        match self {
            Tok::If => "if",
            Tok::Then => "then",
            Tok::Else => "else",
            Tok::Def => "def",
            Tok::Let => "let",
            Tok::Loop => "loop",
            Tok::In => "in",
            Tok::For => "for",
            Tok::Do => "do",
            Tok::With => "with",
            Tok::Local => "local",
            Tok::Open => "open",
            Tok::Import => "import",
            Tok::Type => "type",
            Tok::Entry => "entry",
            Tok::Module => "module",
            Tok::Include => "include",
            Tok::Val => "val",
            Tok::While => "while",
            Tok::Match => "match",
            Tok::Case => "case",
            Tok::True => "true",
            Tok::False => "false",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket { .. } => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::ColonGt => ":>",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::DotDotDot => "...",
            Tok::DotDotLt => "..<",
            Tok::DotDotGt => "..>",
            Tok::Backslash => "\\",
            Tok::Backtick => "`",
            Tok::Question => "?",
            Tok::Hole => "???",
            Tok::Tilde => "~",
            Tok::Equals => "=",
            Tok::Arrow => "->",
            Tok::Underscore => "_",
            _ => "",
        }
    }
}

/// A token with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// True if this is the first token on its line.
    pub line_start: bool,
    /// True if whitespace or a comment separates it from the previous token.
    pub space_before: bool,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        "if" => Tok::If,
        "then" => Tok::Then,
        "else" => Tok::Else,
        "def" => Tok::Def,
        "let" => Tok::Let,
        "loop" => Tok::Loop,
        "in" => Tok::In,
        "for" => Tok::For,
        "do" => Tok::Do,
        "with" => Tok::With,
        "local" => Tok::Local,
        "open" => Tok::Open,
        "import" => Tok::Import,
        "type" => Tok::Type,
        "entry" => Tok::Entry,
        "module" => Tok::Module,
        "include" => Tok::Include,
        "val" => Tok::Val,
        "while" => Tok::While,
        "match" => Tok::Match,
        "case" => Tok::Case,
        "true" => Tok::True,
        "false" => Tok::False,
        "_" => Tok::Underscore,
        _ => return None,
    })
}

/// Symbol start characters of Futhark operators.
pub fn is_sym_start(c: u8) -> bool {
    matches!(
        c,
        b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'!' | b'>' | b'<' | b'|' | b'&' | b'^'
    )
}

fn is_sym_char(c: u8) -> bool {
    is_sym_start(c) || c == b'.'
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'\''
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    file: FileId,
    toks: Vec<Token>,
    errs: Vec<Diagnostic>,
}

/// Lexes a whole file. Returns the tokens (ending with [`Tok::Eof`]) or
/// all lexical errors found (each a `Lexical` diagnostic).
pub fn lex(text: &str, file: FileId) -> Result<Vec<Token>, Vec<Diagnostic>> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        text,
        pos: 0,
        file,
        toks: Vec::new(),
        errs: Vec::new(),
    };
    lx.run();
    if lx.errs.is_empty() {
        Ok(lx.toks)
    } else {
        Err(lx.errs)
    }
}

impl<'a> Lexer<'a> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start as u32, end as u32)
    }

    fn peek(&self, off: usize) -> u8 {
        *self.src.get(self.pos + off).unwrap_or(&0)
    }

    fn err(&mut self, start: usize, end: usize, msg: impl Into<String>) {
        if self.errs.len() < 100 {
            let sp = self.span(start, end);
            self.errs
                .push(Diagnostic::new(DiagnosticKind::Lexical, sp, msg));
        }
    }

    /// Skips whitespace and comments; returns (saw any, saw newline).
    fn skip_trivia(&mut self) -> (bool, bool) {
        let mut any = false;
        let mut nl = false;
        loop {
            let c = self.peek(0);
            if c == b'\n' {
                nl = true;
                any = true;
                self.pos += 1;
            } else if c == b' ' || c == b'\t' || c == b'\r' || c == 0x0c {
                any = true;
                self.pos += 1;
            } else if c == b'-' && self.peek(1) == b'-' {
                any = true;
                while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else {
                return (any, nl);
            }
        }
    }

    fn run(&mut self) {
        let mut first = true;
        loop {
            let (space, nl) = self.skip_trivia();
            let line_start = nl || first;
            first = false;
            let start = self.pos;
            if self.pos >= self.src.len() {
                let sp = self.span(start, start);
                self.toks.push(Token {
                    tok: Tok::Eof,
                    span: sp,
                    line_start,
                    space_before: space,
                });
                return;
            }
            let before = self.pos;
            if let Some(tok) = self.token(space) {
                let sp = self.span(start, self.pos);
                self.toks.push(Token {
                    tok,
                    span: sp,
                    line_start,
                    space_before: space,
                });
            }
            // Every iteration consumes input.
            if self.pos == before {
                self.pos += 1;
            }
        }
    }

    /// Whether the previous token ends an atom and touches the current position.
    fn prev_is_adjacent_atom(&self, space: bool) -> bool {
        if space {
            return false;
        }
        matches!(
            self.toks.last().map(|t| &t.tok),
            Some(
                Tok::Ident(_)
                    | Tok::RParen
                    | Tok::RBracket
                    | Tok::RBrace
                    | Tok::Int { .. }
                    | Tok::Float { .. }
                    | Tok::True
                    | Tok::False
            )
        )
    }

    fn token(&mut self, space: bool) -> Option<Tok> {
        let start = self.pos;
        let c = self.peek(0);
        let simple = |t: Tok, n: usize, me: &mut Self| {
            me.pos += n;
            Some(t)
        };
        match c {
            b'(' => simple(Tok::LParen, 1, self),
            b')' => simple(Tok::RParen, 1, self),
            b'[' => {
                let index = self.prev_is_adjacent_atom(space);
                simple(Tok::LBracket { index }, 1, self)
            }
            b']' => simple(Tok::RBracket, 1, self),
            b'{' => simple(Tok::LBrace, 1, self),
            b'}' => simple(Tok::RBrace, 1, self),
            b',' => simple(Tok::Comma, 1, self),
            b'\\' => simple(Tok::Backslash, 1, self),
            b'`' => simple(Tok::Backtick, 1, self),
            b'~' => simple(Tok::Tilde, 1, self),
            b'?' => {
                if self.peek(1) == b'?' && self.peek(2) == b'?' {
                    return simple(Tok::Hole, 3, self);
                }
                simple(Tok::Question, 1, self)
            }
            b':' => {
                if self.peek(1) == b'>' {
                    simple(Tok::ColonGt, 2, self)
                } else {
                    simple(Tok::Colon, 1, self)
                }
            }
            b'.' => {
                if self.peek(1) == b'.' {
                    match self.peek(2) {
                        b'.' => simple(Tok::DotDotDot, 3, self),
                        b'<' => simple(Tok::DotDotLt, 3, self),
                        b'>' => simple(Tok::DotDotGt, 3, self),
                        _ => simple(Tok::DotDot, 2, self),
                    }
                } else {
                    simple(Tok::Dot, 1, self)
                }
            }
            b'"' => self.string(),
            b'#' => self.hash(),
            b'\'' => match self.char_literal() {
                Some(tok) => Some(tok),
                None => self.typaram(),
            },
            b'0'..=b'9' => {
                let after_dot =
                    !space && matches!(self.toks.last().map(|t| &t.tok), Some(Tok::Dot));
                if after_dot {
                    while self.peek(0).is_ascii_digit() {
                        self.pos += 1;
                    }
                    let s = &self.text[start..self.pos];
                    match s.parse::<i128>() {
                        Ok(v) => Some(Tok::Int {
                            value: v,
                            suffix: None,
                        }),
                        Err(_) => {
                            self.err(start, self.pos, "field number too large");
                            None
                        }
                    }
                } else {
                    self.number()
                }
            }
            c if is_ident_start(c) => self.ident(),
            c if is_sym_start(c) => {
                let name = self.symbol_chars();
                Some(match name.as_str() {
                    "=" => Tok::Equals,
                    "->" => Tok::Arrow,
                    _ => Tok::Symbol {
                        quals: vec![],
                        name,
                    },
                })
            }
            _ => {
                // Report one whole (possibly multi-byte) character.
                let ch = self.text[start..].chars().next().unwrap_or('?');
                self.pos += ch.len_utf8().max(1);
                self.err(
                    start,
                    self.pos,
                    format!("unexpected character `{}`", ch.escape_default()),
                );
                None
            }
        }
    }

    /// Reads operator characters starting at `pos` (stops before a `--` comment).
    fn symbol_chars(&mut self) -> String {
        let start = self.pos;
        self.pos += 1;
        while is_sym_char(self.peek(0)) && !(self.peek(0) == b'-' && self.peek(1) == b'-') {
            self.pos += 1;
        }
        self.text[start..self.pos].to_string()
    }

    fn read_ident(&mut self) -> String {
        let start = self.pos;
        while is_ident_char(self.peek(0)) {
            self.pos += 1;
        }
        self.text[start..self.pos].to_string()
    }

    fn ident(&mut self) -> Option<Tok> {
        let name = self.read_ident();
        if let Some(k) = keyword(&name) {
            return Some(k);
        }
        // Qualified operator: name(.name)*.op. Only scanned from the head of
        // a dotted chain (never after a `.`), so lexing stays linear.
        let after_dot = matches!(self.toks.last().map(|t| &t.tok), Some(Tok::Dot));
        if self.peek(0) == b'.' && !after_dot {
            let save = self.pos;
            let mut quals = vec![name.clone()];
            loop {
                // at a '.'
                let c = self.peek(1);
                if is_sym_start(c) && !(c == b'-' && self.peek(2) == b'-') {
                    self.pos += 1;
                    let op = self.symbol_chars();
                    return Some(Tok::Symbol { quals, name: op });
                } else if is_ident_start(c) {
                    self.pos += 1;
                    let n = self.read_ident();
                    if keyword(&n).is_some() || self.peek(0) != b'.' {
                        break;
                    }
                    quals.push(n);
                } else {
                    break;
                }
            }
            self.pos = save;
        }
        Some(Tok::Ident(name))
    }

    fn string(&mut self) -> Option<Tok> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let c = self.peek(0);
            if self.pos >= self.src.len() || c == b'\n' {
                self.err(start, self.pos, "unterminated string literal");
                return None;
            }
            if c == b'"' {
                self.pos += 1;
                return Some(Tok::Str(out));
            }
            if c == b'\\' {
                let e = self.peek(1);
                let r = match e {
                    b'n' => '\n',
                    b't' => '\t',
                    b'\\' => '\\',
                    b'"' => '"',
                    b'\'' => '\'',
                    _ => {
                        self.err(
                            self.pos,
                            self.pos + 2,
                            "unknown escape sequence in string literal",
                        );
                        self.pos += 1;
                        continue;
                    }
                };
                out.push(r);
                self.pos += 2;
                continue;
            }
            let ch = self.text[self.pos..].chars().next().unwrap_or('?');
            out.push(ch);
            self.pos += ch.len_utf8();
        }
    }

    /// A character literal (`'a'`, `'\n'`, `'λ'`) at `self.pos`: an
    /// integer literal whose value is the character's Unicode code point,
    /// typed like any integer literal (as in Futhark). `None` (nothing
    /// consumed) when the text is not one, e.g. the type parameter `'a`.
    fn char_literal(&mut self) -> Option<Tok> {
        let rest = &self.text[self.pos + 1..];
        let mut chars = rest.chars();
        let (c, len) = match chars.next()? {
            '\\' => {
                let c = match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    '\\' => '\\',
                    '\'' => '\'',
                    '"' => '"',
                    _ => return None,
                };
                (c, 2)
            }
            '\'' | '\n' => return None,
            c => (c, c.len_utf8()),
        };
        if !rest[len..].starts_with('\'') {
            return None;
        }
        // `'a'b` is not a character literal followed by a name.
        let after = rest.as_bytes().get(len + 1).copied().unwrap_or(b' ');
        if is_ident_char(after) {
            return None;
        }
        self.pos += len + 2;
        Some(Tok::Int {
            value: c as u32 as i128,
            suffix: None,
        })
    }

    fn hash(&mut self) -> Option<Tok> {
        let start = self.pos;
        if self.peek(1) == b'[' {
            // Attribute: scan to the matching ']'.
            self.pos += 2;
            let body_start = self.pos;
            let mut depth = 0usize;
            loop {
                let c = self.peek(0);
                if self.pos >= self.src.len() {
                    self.err(start, self.pos, "unterminated attribute: expected `]`");
                    return None;
                }
                match c {
                    b'[' | b'(' => depth += 1,
                    b')' => depth = depth.saturating_sub(1),
                    b']' => {
                        if depth == 0 {
                            let text = self.text[body_start..self.pos].trim().to_string();
                            self.pos += 1;
                            return Some(Tok::Attr(text));
                        }
                        depth -= 1;
                    }
                    _ => {}
                }
                self.pos += 1;
            }
        }
        if is_ident_start(self.peek(1)) {
            self.pos += 1;
            let name = self.read_ident();
            return Some(Tok::Constr(name));
        }
        self.pos += 1;
        self.err(
            start,
            self.pos,
            "expected a constructor name or `[` after `#`",
        );
        None
    }

    fn typaram(&mut self) -> Option<Tok> {
        let start = self.pos;
        self.pos += 1;
        let lift = match self.peek(0) {
            b'^' => {
                self.pos += 1;
                Liftedness::Lifted
            }
            b'~' => {
                self.pos += 1;
                Liftedness::SizeLifted
            }
            _ => Liftedness::Unlifted,
        };
        if !is_ident_start(self.peek(0)) {
            self.err(
                start,
                self.pos.max(start + 1),
                "expected a type parameter name after `'`",
            );
            return None;
        }
        let name = self.read_ident();
        if keyword(&name).is_some() {
            self.err(
                start,
                self.pos,
                format!("`{name}` is a keyword and cannot name a type parameter"),
            );
            return None;
        }
        Some(Tok::TyParam(lift, name))
    }

    fn digits(&mut self, ok: impl Fn(u8) -> bool) -> String {
        let mut s = String::new();
        while ok(self.peek(0)) || (self.peek(0) == b'_' && !s.is_empty()) {
            let c = self.peek(0);
            if c != b'_' {
                s.push(c as char);
            }
            self.pos += 1;
        }
        s
    }

    fn number(&mut self) -> Option<Tok> {
        let start = self.pos;
        let c1 = self.peek(1);
        if self.peek(0) == b'0' && (c1 == b'x' || c1 == b'X') {
            self.pos += 2;
            let int = self.digits(|c| c.is_ascii_hexdigit());
            let mut frac = None;
            if self.peek(0) == b'.' && self.peek(1).is_ascii_hexdigit() {
                self.pos += 1;
                frac = Some(self.digits(|c| c.is_ascii_hexdigit()));
            }
            let mut exp = None;
            if matches!(self.peek(0), b'p' | b'P') {
                let save = self.pos;
                self.pos += 1;
                let neg = match self.peek(0) {
                    b'+' => {
                        self.pos += 1;
                        false
                    }
                    b'-' => {
                        self.pos += 1;
                        true
                    }
                    _ => false,
                };
                let d = self.digits(|c| c.is_ascii_digit());
                if d.is_empty() {
                    self.pos = save;
                } else {
                    exp = Some((neg, d));
                }
            }
            if int.is_empty() {
                self.err(start, self.pos, "expected hexadecimal digits after `0x`");
                return None;
            }
            if frac.is_some() || exp.is_some() {
                // Hexadecimal float.
                let mut v = 0f64;
                for ch in int.chars() {
                    v = v * 16.0 + ch.to_digit(16).unwrap_or(0) as f64;
                }
                let mut scale = 1.0 / 16.0;
                for ch in frac.unwrap_or_default().chars() {
                    v += ch.to_digit(16).unwrap_or(0) as f64 * scale;
                    scale /= 16.0;
                }
                if let Some((neg, d)) = exp {
                    let e: i32 = d.parse().unwrap_or(i32::MAX).min(10000);
                    v *= 2f64.powi(if neg { -e } else { e });
                }
                return self.float_suffix(start, v, format!("{v:e}"));
            }
            return self.int_value(start, &int, 16);
        }
        if self.peek(0) == b'0' && (c1 == b'b' || c1 == b'B') {
            self.pos += 2;
            let int = self.digits(|c| c == b'0' || c == b'1');
            if int.is_empty() {
                self.err(start, self.pos, "expected binary digits after `0b`");
                return None;
            }
            return self.int_value(start, &int, 2);
        }
        let int = self.digits(|c| c.is_ascii_digit());
        let mut text = int.clone();
        let mut is_float = false;
        if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
            self.pos += 1;
            let f = self.digits(|c| c.is_ascii_digit());
            text.push('.');
            text.push_str(&f);
            is_float = true;
        }
        if matches!(self.peek(0), b'e' | b'E') {
            let save = self.pos;
            self.pos += 1;
            let mut e = String::from("e");
            if matches!(self.peek(0), b'+' | b'-') {
                e.push(self.peek(0) as char);
                self.pos += 1;
            }
            let d = self.digits(|c| c.is_ascii_digit());
            if d.is_empty() {
                self.pos = save;
            } else {
                e.push_str(&d);
                text.push_str(&e);
                is_float = true;
            }
        }
        if is_float {
            let v: f64 = text.parse().unwrap_or(f64::NAN);
            return self.float_suffix(start, v, text);
        }
        self.int_value(start, &int, 10)
    }

    /// Reads an optional type suffix (letters and digits directly after a number).
    fn suffix(&mut self) -> Option<(usize, String)> {
        if !is_ident_start(self.peek(0)) {
            return None;
        }
        let s = self.pos;
        let name = self.read_ident();
        Some((s, name))
    }

    fn int_value(&mut self, start: usize, digits: &str, radix: u32) -> Option<Tok> {
        let value = match i128::from_str_radix(digits, radix) {
            Ok(v) => v,
            Err(_) => {
                self.err(start, self.pos, "integer literal is too large");
                let _ = self.suffix();
                return None;
            }
        };
        match self.suffix() {
            None => Some(Tok::Int {
                value,
                suffix: None,
            }),
            Some((s, suf)) => match PrimType::from_name(&suf) {
                Some(t) if t.is_int() => Some(Tok::Int {
                    value,
                    suffix: Some(t),
                }),
                Some(t) if t.is_float() => Some(Tok::Float {
                    value: value as f64,
                    text: value.to_string(),
                    suffix: Some(t),
                }),
                _ => {
                    self.err(s, self.pos, format!("invalid suffix `{suf}` on a number literal (expected a numeric type such as `i32` or `f64`)"));
                    None
                }
            },
        }
    }

    fn float_suffix(&mut self, _start: usize, value: f64, text: String) -> Option<Tok> {
        match self.suffix() {
            None => Some(Tok::Float {
                value,
                text,
                suffix: None,
            }),
            Some((s, suf)) => match PrimType::from_name(&suf) {
                Some(t) if t.is_float() => Some(Tok::Float {
                    value,
                    text,
                    suffix: Some(t),
                }),
                _ => {
                    self.err(
                        s,
                        self.pos,
                        format!("invalid suffix `{suf}` on a decimal literal (expected `f16`, `f32` or `f64`)"),
                    );
                    None
                }
            },
        }
    }
}
