//! Reading the IR's text form back: [`parse_program`] is the inverse of
//! [`crate::print_program`].
//!
//! For every program `p`, `parse_program(&print_program(&p))` gives `p` back
//! up to [`eq_modulo_spans`]: spans (the text has none; parsed statements and
//! functions get `Span::default()`), the names of variables that occur
//! nowhere in their function (a parsed function's `var_names` has one entry
//! per index up to the largest one written, with empty names in the gaps),
//! and whether a name carries its `_index` suffix (the printer shows `x` and
//! `x_5` for `Var(5)` alike; the parser stores `x_5`, the elaborator's
//! convention). Printing the parsed program gives the same text again.
//!
//! The parser is a hand-written lexer and recursive descent. It never
//! panics: every malformed input is a [`ParseError`] with a line and column
//! (nesting of bodies deeper than [`MAX_NESTING`] is an error too).
//!
//! # The text format
//!
//! Layout and newlines are not significant; `--` starts a comment that runs
//! to the end of the line (filetests keep their directives there).
//!
//! ```text
//! program  ::= (function | entry)*
//! function ::= "fun" fname "(" [param ("," param)*] ")" ":" "(" [rtype ("," rtype)*] ")"
//!              ["unique" "(" bool ("," bool)* ")"] "=" body
//! rtype    ::= ["*"] type                  -- `*`: the result is unique
//! entry    ::= "entry" name "=" funref "(" "params" ints "," "results" ints ")" signature?
//! signature ::= "signature" "(" "params" "[" (string ":" etype),* "]" "," "results" "[" etype,* "]" ")"
//! etype    ::= "*"? string ("shape" "[" string,* "]")? ("opaque" int ("{" (string ":" etype "[" int "," int "]"),* "}")?)?
//! ints     ::= "[" [INT ("," INT)*] "]"
//! fname    ::= IDENT | STRING              -- quoted when not an identifier or reserved
//! funref   ::= fname ["@" INT]             -- `@k`: function number k (shared names)
//! param    ::= var ":" ["*"] type          -- `*`: unique (consumable)
//! type     ::= PRIM | ("[" dim "]")+ PRIM | "acc" "(" type ")"
//! dim      ::= INT | var | "?"
//! var      ::= IDENT_N | STRING "_" N      -- `name_N` is Var(N), e.g. `xs_3`, `"+^"_4`, `_5`
//! atom     ::= var | const
//! const    ::= ["-"] NUMBER SUFFIX | "true" | "false"
//!            | ["-"] F "." ("inf" | "nan") | F ".nan" "(" HEX ")"   -- F: f16, f32, f64
//! body     ::= "{" (segattr? "let" pat "=" exp)* "in" "(" [atom ("," atom)*] ")" "}"
//! segattr  ::= "#" "[" SEGKIND ("sequential" | "parallel" "(" INT ")") "]"
//!                                        -- `lower`'s decision; SEGKIND: seg_map, seg_red, seg_scan, seg_hist, seg_scatter
//! pat      ::= param | "(" [param ("," param)*] ")"
//! lambda   ::= "\" "(" [param ("," param)*] ")" ":" "(" [type ("," type)*] ")" "->" body
//! exp      ::= atom | "(" [atom ("," atom)*] ")"
//!            | atom BINOP atom | atom CMPOP atom          -- `+ - * / % // %% ** & | ^ << >> >>> && ||`, `== != < <= > >=`
//!            | ("quot" | "rem" | "min" | "max" | "atan2" | "hypot") "(" atom "," atom ")"
//!            | UNOP "(" atom ")"                          -- `neg`, `!`, `sqrt`, `isnan`, `popc`, …
//!            | ("fma" | "mad" | "lerp") "(" atom "," atom "," atom ")"
//!            | PRIM "." PRIM "(" atom ")"                 -- conversion `to.from(x)`
//!            | "bitcast" "<" PRIM "->" PRIM ">" "(" atom ")"
//!            | funref "(" [atom ("," atom)*] ")"          -- call
//!            | "if" atom "then" body "else" body
//!            | "loop" "(" [param "=" atom ("," param "=" atom)*] ")" form "do" body
//!            | "loop" "(" [param ("," param)*] ")" "init" "(" atoms ")" form "do" body
//!            | var "[" [index ("," index)*] "]"
//!            | var "with" "[" [index ("," index)*] "]" "=" atom
//!            | "[" [atom ("," atom)*] "]" ":" "[" "]" type  -- array literal with its row type
//!            | "iota" "<" PRIM ">" "(" atom "," atom "," atom ")"   -- n, start, step
//!            | "replicate" "(" atom "," atom ")" | "copy" "(" var ")" | "size" "(" var "," INT ")"
//!            | "reshape" "(" "[" atoms "]" "," var ")" | "rearrange" "(" ints "," var ")"
//!            | "concat" "(" vars ")" | "rotate" "(" atom "," var ")" | "reverse" "(" var ")"
//!            | "assert_eq_sizes" "(" (atom ",")* STRING ")" | "assert" "(" atom "," STRING ")"
//!            | "map" "(" atom "," lambda ("," var)* ")"
//!            | ("reduce" | "reduce_comm" | "scan") "(" atom "," lambda "," "(" atoms ")" ("," var)* ")"
//!            | "hist" "(" atom "," "(" vars ")" "," lambda "," "(" atoms ")" "," var ("," var)* ")"
//!            | "scatter" "(" atom "," "(" vars ")" "," "(" vars ")" "," "(" vars ")" ")"
//!            | "with_acc" "(" "[" [accin ("," accin)*] "]" "," lambda ")"
//!            | "update_acc" "(" var "," "[" atoms "]" "," atom ")"
//!            | ("jvp" | "vjp") "(" lambda "," "(" atoms ")" "," "(" atoms ")" ")"
//!            | "with_vjp" "(" INT "," lambda "," lambda "," "(" atoms ")" ")"  -- saved values, f, rule, args
//! form     ::= "for" var "<" atom | "while" body
//! index    ::= atom | atom ":+" atom "*" atom             -- start :+ len * stride
//! accin    ::= var ("add" | "write" | "op" "(" lambda "," atom ")")
//! ```
//!
//! Strings are written between `"` with the escapes `\\`, `\"`, `\n`, `\t`,
//! `\r`, `\0`, `\'` and `\u{HEX}`. Numbers are Futhark literals (decimal,
//! `0x`, `0b`; floats with `.`/exponent or hexadecimal), and constants always
//! carry a type suffix (`3i64`, `1.5f32`). In `bitcast<a->b>`, `a` is the
//! source type; in `to.from(x)` the target comes first, as in Futhark's
//! `f64.i32`.
//!
//! Functions are numbered (`FunId`) in order of appearance; a call may name a
//! function defined further down.

use crate::print::{
    base_name, binop_text, cmpop_symbol, ternop_name, unop_name, BINOPS, CMPOPS, TERNOPS, UNOPS,
};
use crate::rewrite::{self, Visitor};
use crate::seg::{SegKind, SegLevel, SegOp, Segments};
use crate::{
    AccInput, AccOp, Atom, Body, Dim, DimIndex, EntryParam, EntryPoint, EntrySignature, EntryType,
    Exp, FunId, Function, Lambda, LoopForm, OpaqueField, OpaqueInfo, OpaqueVariant, Param, Program,
    Soac, Span, Stm, Type, Var,
};
use nabla_prim::{ConvOp, PrimType, PrimValue};

/// The deepest nesting of bodies (branches, loop bodies, lambdas) the parser
/// accepts.
pub const MAX_NESTING: usize = 5000;

/// The largest variable index the parser accepts (a function's `var_names`
/// gets one entry per index up to the largest one used).
pub const MAX_VAR_INDEX: u32 = 1 << 20;

pub use crate::error::{ParseError, ParseProblem};

/// Parses a whole program in the text form of [`crate::print_program`] (see
/// the module docs for the grammar).
pub fn parse_program(text: &str) -> Result<Program, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        names: Vec::new(),
        calls: Vec::new(),
        functions_parsed: 0,
        segments: Segments::new(),
    };
    p.program()
}

// ---------------------------------------------------------------- lexer --

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_']*`: a keyword, a function name or a variable.
    Ident(String),
    /// A string literal (escapes resolved).
    Str(String),
    /// A quoted variable `"name"_N`: the name and the digits of `N`.
    QVar(String, String),
    /// A number, suffix included (`3i32`, `1.5e-7f64`, `0x7ff8`).
    Num(String),
    Sym(&'static str),
    Eof,
}

struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

/// Symbols, longest first (the lexer takes the first that matches).
const SYMBOLS: &[&str] = &[
    ">>>", "->", "//", "%%", "**", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=", ":+", "+", "-",
    "*", "/", "%", "&", "|", "^", "<", ">", "!", "(", ")", "[", "]", "{", "}", ",", ":", "=", "\\",
    ".", "@", "?", "#",
];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let cs: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    // Advances over `n` characters, keeping line and column.
    let advance = |i: &mut usize, line: &mut usize, col: &mut usize, n: usize| {
        for _ in 0..n {
            if cs.get(*i) == Some(&'\n') {
                *line += 1;
                *col = 1;
            } else {
                *col += 1;
            }
            *i += 1;
        }
    };
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col, 1);
            continue;
        }
        if c == '-' && cs.get(i + 1) == Some(&'-') {
            while i < cs.len() && cs[i] != '\n' {
                advance(&mut i, &mut line, &mut col, 1);
            }
            continue;
        }
        let (tline, tcol) = (line, col);
        let start = i;
        let tok = if is_ident_start(c) {
            let mut j = i;
            while j < cs.len() && is_ident_char(cs[j]) {
                j += 1;
            }
            let s: String = cs[i..j].iter().collect();
            advance(&mut i, &mut line, &mut col, j - start);
            Tok::Ident(s)
        } else if c.is_ascii_digit() {
            let hex = cs.get(i + 1).is_some_and(|&x| x == 'x' || x == 'X') && c == '0';
            let mut j = i;
            while j < cs.len() {
                let x = cs[j];
                let exponent_sign = (x == '+' || x == '-')
                    && !hex
                    && j > i
                    && matches!(cs[j - 1], 'e' | 'E')
                    && cs.get(j + 1).is_some_and(|d| d.is_ascii_digit());
                if x.is_ascii_alphanumeric() || x == '_' || x == '.' || exponent_sign {
                    j += 1;
                } else {
                    break;
                }
            }
            let s: String = cs[i..j].iter().collect();
            advance(&mut i, &mut line, &mut col, j - start);
            Tok::Num(s)
        } else if c == '"' {
            let mut j = i + 1;
            let mut s = String::new();
            loop {
                match cs.get(j) {
                    None => {
                        return Err(ParseError {
                            line: tline,
                            column: tcol,
                            problem: ParseProblem::Lexical("unterminated string".into()),
                        })
                    }
                    Some('"') => {
                        j += 1;
                        break;
                    }
                    Some('\\') => {
                        let (ch, len) = unescape(&cs[j..]).ok_or_else(|| {
                            // Locate the bad escape itself.
                            let before: String = cs[i..j].iter().collect();
                            let nl = before.matches('\n').count();
                            let column = match before.rfind('\n') {
                                Some(k) => before[k + 1..].chars().count() + 1,
                                None => tcol + before.chars().count(),
                            };
                            ParseError {
                                line: tline + nl,
                                column,
                                problem: ParseProblem::Lexical("invalid escape in string (known: \\\\ \\\" \\n \\t \\r \\0 \\' \\u{HEX})".into()),
                            }
                        })?;
                        s.push(ch);
                        j += len;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        j += 1;
                    }
                }
            }
            // `"name"_N` is a variable.
            if cs.get(j) == Some(&'_') && cs.get(j + 1).is_some_and(|d| d.is_ascii_digit()) {
                let mut k = j + 1;
                while k < cs.len() && cs[k].is_ascii_digit() {
                    k += 1;
                }
                let digits: String = cs[j + 1..k].iter().collect();
                advance(&mut i, &mut line, &mut col, k - start);
                Tok::QVar(s, digits)
            } else {
                advance(&mut i, &mut line, &mut col, j - start);
                Tok::Str(s)
            }
        } else {
            let rest = &cs[i..];
            let sym = SYMBOLS.iter().find(|s| {
                let n = s.chars().count();
                rest.len() >= n && s.chars().zip(rest).all(|(a, &b)| a == b)
            });
            match sym {
                Some(s) => {
                    advance(&mut i, &mut line, &mut col, s.len());
                    Tok::Sym(s)
                }
                None => {
                    return Err(ParseError {
                        line: tline,
                        column: tcol,
                        problem: ParseProblem::Lexical(format!("unexpected character {c:?}")),
                    })
                }
            }
        };
        toks.push(Token {
            tok,
            line: tline,
            col: tcol,
        });
    }
    toks.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(toks)
}

/// The character an escape sequence (starting at the backslash) stands for,
/// and the sequence's length.
fn unescape(cs: &[char]) -> Option<(char, usize)> {
    Some(match cs.get(1)? {
        '\\' => ('\\', 2),
        '"' => ('"', 2),
        '\'' => ('\'', 2),
        'n' => ('\n', 2),
        't' => ('\t', 2),
        'r' => ('\r', 2),
        '0' => ('\0', 2),
        'u' => {
            if cs.get(2) != Some(&'{') {
                return None;
            }
            let close = cs.iter().take(12).position(|&c| c == '}')?;
            let hex: String = cs.get(3..close)?.iter().collect();
            if hex.is_empty() {
                return None;
            }
            let code = u32::from_str_radix(&hex, 16).ok()?;
            (char::from_u32(code)?, close + 1)
        }
        _ => return None,
    })
}

// --------------------------------------------------------------- parser --

type R<T> = Result<T, ParseError>;

/// A function reference as written: the name, the `@k` number if any, and
/// the token where it is (for errors).
type FunRef = (String, Option<u32>, usize);

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Current nesting of bodies.
    depth: usize,
    /// The current function's variable names (without the `_index`), by index.
    names: Vec<Option<String>>,
    /// Every call, in order: the function name, the `@k` number if written,
    /// and the token where it is. `Exp::Apply` holds the call's index here
    /// until [`Parser::resolve_calls`] replaces it with the function's.
    calls: Vec<FunRef>,
    /// How many functions were parsed before the current one (its
    /// `FunId`).
    functions_parsed: usize,
    /// The segment decisions read so far.
    segments: Segments,
}

/// A primitive type written as a word.
fn prim(s: &str) -> Option<PrimType> {
    PrimType::from_name(s)
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    /// A [`ParseProblem::Invalid`] at token `pos`.
    fn err_at<T>(&self, pos: usize, msg: impl Into<String>) -> R<T> {
        self.problem_at(pos, ParseProblem::Invalid(msg.into()))
    }

    /// `problem` at token `pos`.
    fn problem_at<T>(&self, pos: usize, problem: ParseProblem) -> R<T> {
        let t = &self.toks[pos.min(self.toks.len() - 1)];
        Err(ParseError {
            line: t.line,
            column: t.col,
            problem,
        })
    }

    /// A [`ParseProblem::Invalid`] at the current token.
    fn err<T>(&self, msg: impl Into<String>) -> R<T> {
        self.err_at(self.pos, msg)
    }

    /// "expected X, found Y" at the current token.
    fn expected<T>(&self, what: &str) -> R<T> {
        self.problem_at(
            self.pos,
            ParseProblem::Expected {
                expected: what.to_string(),
                found: describe(self.peek()),
            },
        )
    }

    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }

    fn is_word(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == s)
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.next();
            true
        } else {
            false
        }
    }

    fn sym(&mut self, s: &str) -> R<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            self.expected(&format!("`{s}`"))
        }
    }

    fn word(&mut self, s: &str) -> R<()> {
        if self.is_word(s) {
            self.next();
            Ok(())
        } else {
            self.expected(&format!("`{s}`"))
        }
    }

    /// `open item (, item)* close`, or `open close`.
    fn list<T>(
        &mut self,
        open: &str,
        close: &str,
        mut item: impl FnMut(&mut Self) -> R<T>,
    ) -> R<Vec<T>> {
        self.sym(open)?;
        let mut out = Vec::new();
        if self.eat_sym(close) {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat_sym(close) {
                return Ok(out);
            }
            if !self.eat_sym(",") {
                return self.expected(&format!("`,` or `{close}`"));
            }
        }
    }

    /// `(, var)*` up to (not including) the closing `)`.
    fn var_tail(&mut self) -> R<Vec<Var>> {
        let mut out = Vec::new();
        while self.eat_sym(",") {
            out.push(self.var()?);
        }
        Ok(out)
    }

    // ------------------------------------------------------- top level --

    fn program(&mut self) -> R<Program> {
        let mut prog = Program::default();
        let mut entry_refs = Vec::new();
        loop {
            match self.peek() {
                Tok::Ident(w) if w == "fun" => {
                    self.functions_parsed = prog.functions.len();
                    let f = self.function()?;
                    prog.functions.push(f);
                }
                Tok::Ident(w) if w == "entry" => {
                    let (e, r) = self.entry()?;
                    prog.entries.push(e);
                    entry_refs.push(r);
                }
                Tok::Eof => break,
                _ => return self.expected("`fun` or `entry`"),
            }
        }
        let ids = self.resolve_calls(&prog.functions)?;
        let mut fix = FixCalls { ids: &ids };
        for f in &mut prog.functions {
            fix.body(&mut f.body);
        }
        for (e, (name, at, pos)) in prog.entries.iter_mut().zip(entry_refs) {
            e.fun = self.resolve(&prog.functions, &name, at, pos)?;
        }
        prog.segments = std::mem::take(&mut self.segments);
        Ok(prog)
    }

    fn resolve_calls(&self, funs: &[Function]) -> R<Vec<FunId>> {
        self.calls
            .iter()
            .map(|(name, at, pos)| self.resolve(funs, name, *at, *pos))
            .collect()
    }

    fn resolve(&self, funs: &[Function], name: &str, at: Option<u32>, pos: usize) -> R<FunId> {
        match at {
            Some(k) => match funs.get(k as usize) {
                Some(f) if f.name == name => Ok(FunId(k)),
                Some(f) => self.err_at(
                    pos,
                    format!("function number {k} is named `{}`, not `{name}`", f.name),
                ),
                None => self.err_at(
                    pos,
                    format!(
                        "no function number {k} (the program has {} functions)",
                        funs.len()
                    ),
                ),
            },
            None => {
                let ids: Vec<usize> = (0..funs.len()).filter(|&i| funs[i].name == name).collect();
                match ids[..] {
                    [i] => Ok(FunId(i as u32)),
                    [] => self.problem_at(
                        pos,
                        ParseProblem::UnknownFunction {
                            name: name.to_string(),
                        },
                    ),
                    _ => self.err_at(
                        pos,
                        format!(
                            "several functions are named `{name}` (numbers {:?}): write `{name}@NUMBER`",
                            ids
                        ),
                    ),
                }
            }
        }
    }

    /// A function name: an identifier or a string.
    fn fun_name(&mut self) -> R<String> {
        match self.peek().clone() {
            Tok::Ident(s) | Tok::Str(s) => {
                self.next();
                Ok(s)
            }
            _ => self.expected("a function name"),
        }
    }

    /// A function reference `name` or `name@k`: (name, k, token position).
    fn fun_ref(&mut self) -> R<FunRef> {
        let pos = self.pos;
        let name = self.fun_name()?;
        let at = if self.eat_sym("@") {
            Some(self.small_int("a function number")? as u32)
        } else {
            None
        };
        Ok((name, at, pos))
    }

    /// A plain non-negative integer (no suffix), at most `u32::MAX`.
    fn small_int(&mut self, what: &str) -> R<usize> {
        match self.peek() {
            Tok::Num(s) => match s.parse::<u32>() {
                Ok(n) => {
                    self.next();
                    Ok(n as usize)
                }
                Err(_) => self.err(format!("`{s}` is not a valid {what}")),
            },
            _ => self.expected(what),
        }
    }

    fn function(&mut self) -> R<Function> {
        self.word("fun")?;
        let name = self.fun_name()?;
        self.names.clear();
        let params = self.list("(", ")", |p| p.param())?;
        self.sym(":")?;
        let rets = self.list("(", ")", |p| {
            let unique = p.eat_sym("*");
            Ok((unique, p.ty()?))
        })?;
        let mut unique_ret: Vec<bool> = rets.iter().map(|r| r.0).collect();
        let ret = rets.into_iter().map(|r| r.1).collect();
        if self.is_word("unique") {
            if unique_ret.iter().any(|&u| u) {
                return self.err("uniqueness written both as `*` and as `unique(...)`");
            }
            self.next();
            unique_ret = self.list("(", ")", |p| {
                let b = match p.peek() {
                    Tok::Ident(w) if w == "true" => true,
                    Tok::Ident(w) if w == "false" => false,
                    _ => return p.expected("`true` or `false`"),
                };
                p.next();
                Ok(b)
            })?;
        }
        self.sym("=")?;
        let body = self.body()?;
        let var_names = std::mem::take(&mut self.names)
            .into_iter()
            .enumerate()
            .map(|(i, n)| match n {
                Some(n) => format!("{n}_{i}"),
                None => String::new(),
            })
            .collect();
        Ok(Function {
            name,
            params,
            ret,
            unique_ret,
            body,
            var_names,
            span: Span::default(),
        })
    }

    fn entry(&mut self) -> R<(EntryPoint, FunRef)> {
        self.word("entry")?;
        let name = self.fun_name()?;
        self.sym("=")?;
        let r = self.fun_ref()?;
        self.sym("(")?;
        self.word("params")?;
        let param_arity = self.list("[", "]", |p| p.small_int("an arity"))?;
        self.sym(",")?;
        self.word("results")?;
        let result_arity = self.list("[", "]", |p| p.small_int("an arity"))?;
        self.sym(")")?;
        let signature = if self.is_word("signature") {
            Some(self.entry_signature()?)
        } else {
            None
        };
        Ok((
            EntryPoint {
                name,
                fun: FunId(0),
                param_arity,
                result_arity,
                signature,
            },
            r,
        ))
    }

    /// `signature (params ["x": TYPE, …], results [TYPE, …])`.
    fn entry_signature(&mut self) -> R<EntrySignature> {
        self.word("signature")?;
        self.sym("(")?;
        self.word("params")?;
        let params = self.list("[", "]", |p| {
            let name = p.string()?;
            p.sym(":")?;
            let ty = p.entry_type()?;
            Ok(EntryParam { name, ty })
        })?;
        self.sym(",")?;
        self.word("results")?;
        let results = self.list("[", "]", |p| p.entry_type())?;
        self.sym(")")?;
        Ok(EntrySignature { params, results })
    }

    /// `"name": TYPE [start, len]`.
    fn opaque_field(&mut self) -> R<OpaqueField> {
        let name = self.string()?;
        self.sym(":")?;
        let ty = self.entry_type()?;
        let pos = self.pos;
        let range = self.list("[", "]", |p| p.small_int("a flat value index"))?;
        let [start, len] = range[..] else {
            return self.err_at(pos, "expected `[start, len]`");
        };
        Ok(OpaqueField {
            name,
            ty,
            start,
            len,
        })
    }

    /// `*? "name" (shape ["n", …])? (opaque N ({"field": TYPE [start, len], …})?
    /// (variants {"name": [TYPE [start, len], …], …})? (element RANK TYPE)?)?`.
    fn entry_type(&mut self) -> R<EntryType> {
        let unique = self.eat_sym("*");
        let name = self.string()?;
        let shape = if self.is_word("shape") {
            self.next();
            self.list("[", "]", |p| p.string())?
        } else {
            vec![]
        };
        let opaque = if self.is_word("opaque") {
            self.next();
            let flat = self.small_int("a number of flat values")?;
            let fields = if self.is_sym("{") {
                Some(self.list("{", "}", |p| p.opaque_field())?)
            } else {
                None
            };
            let variants = if self.is_word("variants") {
                self.next();
                Some(self.list("{", "}", |p| {
                    let name = p.string()?;
                    p.sym(":")?;
                    let payload = p.list("[", "]", |p| p.opaque_field())?;
                    Ok(OpaqueVariant { name, payload })
                })?)
            } else {
                None
            };
            let element = if self.is_word("element") {
                self.next();
                let rank = self.small_int("a rank")?;
                Some((rank, Box::new(self.entry_type()?)))
            } else {
                None
            };
            Some(OpaqueInfo {
                flat,
                fields,
                variants,
                element,
            })
        } else {
            None
        };
        Ok(EntryType {
            name,
            unique,
            opaque,
            shape,
        })
    }

    // ---------------------------------------------- variables and types --

    /// Records the name of variable `idx`, written at token `pos`.
    fn name_var(&mut self, name: String, digits: &str, pos: usize) -> R<Var> {
        let idx = match digits.parse::<u32>() {
            Ok(i) if i <= MAX_VAR_INDEX => i,
            _ => {
                return self.err_at(
                    pos,
                    format!("variable index {digits} is too large (at most {MAX_VAR_INDEX})"),
                )
            }
        };
        let i = idx as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        match &self.names[i] {
            Some(old) if *old != name => self.err_at(
                pos,
                format!("variable {idx} is written both `{old}_{idx}` and `{name}_{idx}`"),
            ),
            Some(_) => Ok(Var(idx)),
            None => {
                self.names[i] = Some(name);
                Ok(Var(idx))
            }
        }
    }

    /// Whether the current token is a variable.
    fn at_var(&self) -> bool {
        match self.peek() {
            Tok::QVar(..) => true,
            Tok::Ident(s) => split_var(s).is_some(),
            _ => false,
        }
    }

    fn var(&mut self) -> R<Var> {
        let pos = self.pos;
        match self.peek().clone() {
            Tok::QVar(name, digits) => {
                self.next();
                self.name_var(name, &digits, pos)
            }
            Tok::Ident(s) => match split_var(&s) {
                Some((name, digits)) => {
                    self.next();
                    self.name_var(name.to_string(), digits, pos)
                }
                None => self.err(format!("expected a variable (`name_index`), found `{s}`")),
            },
            _ => self.expected("a variable"),
        }
    }

    fn param(&mut self) -> R<Param> {
        let var = self.var()?;
        self.sym(":")?;
        let unique = self.eat_sym("*");
        let ty = self.ty()?;
        Ok(Param { var, ty, unique })
    }

    fn prim_type(&mut self) -> R<PrimType> {
        match self.peek() {
            Tok::Ident(s) => match prim(s) {
                Some(t) => {
                    self.next();
                    Ok(t)
                }
                None => self.expected("a primitive type"),
            },
            _ => self.expected("a primitive type"),
        }
    }

    fn ty(&mut self) -> R<Type> {
        if self.is_word("acc") {
            self.next();
            self.sym("(")?;
            if self.is_word("acc") {
                return self.err("an accumulator of an accumulator");
            }
            let t = self.array_ty()?;
            self.sym(")")?;
            return Ok(match t {
                Type::Prim(p) | Type::Acc(p, _) => Type::Acc(p, vec![]),
                Type::Array(p, ds) => Type::Acc(p, ds),
            });
        }
        self.array_ty()
    }

    /// A scalar or array type (no `acc`).
    fn array_ty(&mut self) -> R<Type> {
        let mut dims = Vec::new();
        while self.eat_sym("[") {
            let d = if self.eat_sym("?") {
                Dim::Ext
            } else if self.at_var() {
                Dim::Var(self.var()?)
            } else {
                let neg = self.eat_sym("-");
                match self.peek() {
                    Tok::Num(s) => match s.parse::<i64>() {
                        Ok(n) => {
                            self.next();
                            Dim::Const(if neg { n.wrapping_neg() } else { n })
                        }
                        Err(_) => return self.err(format!("`{s}` is not a valid size")),
                    },
                    _ => return self.expected("a size (a number, a variable or `?`)"),
                }
            };
            self.sym("]")?;
            dims.push(d);
        }
        let p = self.prim_type()?;
        Ok(if dims.is_empty() {
            Type::Prim(p)
        } else {
            Type::Array(p, dims)
        })
    }

    // ------------------------------------------------------------ atoms --

    fn atom(&mut self) -> R<Atom> {
        let pos = self.pos;
        let neg = self.eat_sym("-");
        match self.peek().clone() {
            Tok::Num(s) => {
                self.next();
                let v = constant(&s, neg).or_else(|m| self.err_at(pos, m))?;
                Ok(Atom::Const(v))
            }
            Tok::Ident(w) if (w == "true" || w == "false") && !neg => {
                self.next();
                Ok(Atom::Const(PrimValue::Bool(w == "true")))
            }
            Tok::Ident(w)
                if prim(&w).is_some_and(|t| t.is_float()) && *self.peek_at(1) == Tok::Sym(".") =>
            {
                let t = prim(&w).unwrap_or(PrimType::F64);
                self.next();
                self.next();
                let what = match self.peek() {
                    Tok::Ident(x) if x == "inf" || x == "nan" => x.clone(),
                    _ => return self.err_at(pos, format!("expected `{t}.inf` or `{t}.nan`")),
                };
                self.next();
                match what.as_str() {
                    "inf" => {
                        let inf = if neg {
                            f64::NEG_INFINITY
                        } else {
                            f64::INFINITY
                        };
                        Ok(Atom::Const(PrimValue::from_f64(t, inf)))
                    }
                    _ => {
                        if self.eat_sym("(") {
                            if neg {
                                return self.err_at(pos, "a NaN with its bits takes no `-`");
                            }
                            let bits = match self.peek() {
                                Tok::Num(s) => s
                                    .strip_prefix("0x")
                                    .and_then(|h| u64::from_str_radix(h, 16).ok()),
                                _ => None,
                            };
                            let Some(bits) = bits.filter(|b| t.bits() == 64 || b >> t.bits() == 0)
                            else {
                                return self.expected(&format!("the bits of an {t} NaN (`0x…`)"));
                            };
                            self.next();
                            self.sym(")")?;
                            Ok(Atom::Const(PrimValue::from_bits(t, bits)))
                        } else {
                            let (canon, sign) = match t {
                                PrimType::F16 => {
                                    (u64::from(nabla_prim::f16::NAN.to_bits()), 1 << 15)
                                }
                                PrimType::F32 => (u64::from(f32::NAN.to_bits()), 1 << 31),
                                _ => (f64::NAN.to_bits(), 1 << 63),
                            };
                            let bits = if neg { canon | sign } else { canon };
                            Ok(Atom::Const(PrimValue::from_bits(t, bits)))
                        }
                    }
                }
            }
            _ if neg => self.err_at(pos + 1, "expected a number after `-`"),
            _ if self.at_var() => Ok(Atom::Var(self.var()?)),
            _ => self.expected("a variable or a constant"),
        }
    }

    fn atoms(&mut self, open: &str, close: &str) -> R<Vec<Atom>> {
        self.list(open, close, |p| p.atom())
    }

    fn vars(&mut self) -> R<Vec<Var>> {
        self.list("(", ")", |p| p.var())
    }

    // ----------------------------------------------------------- bodies --

    fn body(&mut self) -> R<Body> {
        if self.depth >= MAX_NESTING {
            return self.problem_at(self.pos, ParseProblem::TooDeep { limit: MAX_NESTING });
        }
        self.depth += 1;
        let r = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.body_inner());
        self.depth -= 1;
        r
    }

    fn body_inner(&mut self) -> R<Body> {
        self.sym("{")?;
        let mut stms = Vec::new();
        loop {
            let decision = if self.is_sym("#") {
                let at = self.pos;
                Some((self.segment_decision()?, at))
            } else {
                None
            };
            if !self.is_word("let") {
                if decision.is_some() {
                    return self.expected("`let` after a segment decision");
                }
                break;
            }
            self.next();
            let pat = if self.is_sym("(") {
                self.list("(", ")", |p| p.param())?
            } else {
                vec![self.param()?]
            };
            if let Some((op, at)) = decision {
                let Some(first) = pat.first() else {
                    return self.err_at(at, "a segment decision on a statement that binds nothing");
                };
                let key = (FunId(self.functions_parsed as u32), first.var);
                if self.segments.insert(key, op).is_some() {
                    return self.err_at(at, "a second segment decision for the same statement");
                }
            }
            self.sym("=")?;
            let exp = self.exp()?;
            stms.push(Stm {
                pat,
                exp,
                span: Span::default(),
            });
        }
        if !self.is_word("in") {
            return self.expected("`let` or `in`");
        }
        self.next();
        let result = self.atoms("(", ")")?;
        self.sym("}")?;
        Ok(Body { stms, result })
    }

    /// `#[seg_map parallel(4096)]`, `#[seg_scan sequential]` (see
    /// [`crate::seg`]).
    fn segment_decision(&mut self) -> R<SegOp> {
        self.sym("#")?;
        self.sym("[")?;
        let kind = match self.peek() {
            Tok::Ident(w) => SegKind::from_name(w),
            _ => None,
        };
        let Some(kind) = kind else {
            return self.expected(
                "a segment kind (`seg_map`, `seg_red`, `seg_scan`, `seg_hist`, `seg_scatter`)",
            );
        };
        self.next();
        let level = if self.is_word("sequential") {
            self.next();
            SegLevel::Sequential
        } else if self.is_word("parallel") {
            self.next();
            self.sym("(")?;
            let min_width = self.small_int("the fewest rows run in parallel")? as u64;
            self.sym(")")?;
            SegLevel::Parallel { min_width }
        } else {
            return self.expected("`sequential` or `parallel(ROWS)`");
        };
        self.sym("]")?;
        Ok(SegOp { kind, level })
    }

    fn lambda(&mut self) -> R<Lambda> {
        self.sym("\\")?;
        let params = self.list("(", ")", |p| p.param())?;
        self.sym(":")?;
        let ret = self.list("(", ")", |p| p.ty())?;
        self.sym("->")?;
        let body = self.body()?;
        Ok(Lambda { params, body, ret })
    }

    // ------------------------------------------------------ expressions --

    fn exp(&mut self) -> R<Exp> {
        let word = match self.peek().clone() {
            Tok::Sym("(") => return Ok(Exp::Atoms(self.atoms("(", ")")?)),
            Tok::Sym("[") => {
                let xs = self.atoms("[", "]")?;
                self.sym(":")?;
                self.sym("[")?;
                self.sym("]")?;
                let t = self.ty()?;
                return Ok(Exp::ArrayLit(xs, t));
            }
            Tok::Sym("!") if *self.peek_at(1) == Tok::Sym("(") => {
                self.next();
                return self.unop(nabla_prim::UnOp::Not);
            }
            Tok::Str(_) => return self.call(),
            Tok::Ident(w) => w,
            _ => return self.atom_exp(),
        };
        let paren = *self.peek_at(1) == Tok::Sym("(");
        if paren {
            if let Some(&op) = UNOPS.iter().find(|&&o| unop_name(o) == word) {
                self.next();
                return self.unop(op);
            }
            if let Some(&op) = BINOPS.iter().find(|&&o| binop_text(o) == (false, &word)) {
                self.next();
                self.sym("(")?;
                let a = self.atom()?;
                self.sym(",")?;
                let b = self.atom()?;
                self.sym(")")?;
                return Ok(Exp::BinOp(op, a, b));
            }
            if let Some(&op) = TERNOPS.iter().find(|&&o| ternop_name(o) == word) {
                self.next();
                let xs = self.atoms("(", ")")?;
                return match xs[..] {
                    [a, b, c] => Ok(Exp::TernOp(op, a, b, c)),
                    _ => self.err(format!("`{word}` takes 3 arguments, got {}", xs.len())),
                };
            }
        }
        match word.as_str() {
            "if" => {
                self.next();
                let cond = self.atom()?;
                self.word("then")?;
                let then_ = self.body()?;
                self.word("else")?;
                let else_ = self.body()?;
                Ok(Exp::If { cond, then_, else_ })
            }
            "loop" => self.loop_exp(),
            "map" | "reduce" | "reduce_comm" | "scan" | "hist" | "scatter" if paren => {
                self.next();
                Ok(Exp::Soac(self.soac(&word)?))
            }
            "with_acc" if paren => {
                self.next();
                self.sym("(")?;
                let inputs = self.list("[", "]", |p| {
                    let array = p.var()?;
                    let word = match p.peek() {
                        Tok::Ident(w) if w == "add" || w == "write" || w == "op" => w.clone(),
                        _ => return p.expected("`add`, `write` or `op(...)`"),
                    };
                    p.next();
                    let op = match word.as_str() {
                        "add" => AccOp::Add,
                        "write" => AccOp::Write,
                        _ => {
                            p.sym("(")?;
                            let lam = p.lambda()?;
                            p.sym(",")?;
                            let ne = p.atom()?;
                            p.sym(")")?;
                            AccOp::Lambda(Box::new(lam), ne)
                        }
                    };
                    Ok(AccInput { array, op })
                })?;
                self.sym(",")?;
                let lam = self.lambda()?;
                self.sym(")")?;
                Ok(Exp::WithAcc { inputs, lam })
            }
            "update_acc" if paren => {
                self.next();
                self.sym("(")?;
                let acc = self.var()?;
                self.sym(",")?;
                let indices = self.atoms("[", "]")?;
                self.sym(",")?;
                let value = self.atom()?;
                self.sym(")")?;
                Ok(Exp::UpdateAcc {
                    acc,
                    indices,
                    value,
                })
            }
            "jvp" | "vjp" if paren => {
                self.next();
                self.sym("(")?;
                let lam = self.lambda()?;
                self.sym(",")?;
                let primals = self.atoms("(", ")")?;
                self.sym(",")?;
                let extra = self.atoms("(", ")")?;
                self.sym(")")?;
                Ok(if word == "jvp" {
                    Exp::Jvp {
                        lam,
                        primals,
                        tangents: extra,
                    }
                } else {
                    Exp::Vjp {
                        lam,
                        primals,
                        adjoints: extra,
                    }
                })
            }
            "with_vjp" if paren => {
                self.next();
                self.sym("(")?;
                let tape = self.small_int("the number of saved values")?;
                self.sym(",")?;
                let lam = self.lambda()?;
                self.sym(",")?;
                let rule = self.lambda()?;
                self.sym(",")?;
                let args = self.atoms("(", ")")?;
                self.sym(")")?;
                Ok(Exp::WithVjp {
                    lam,
                    rule,
                    args,
                    tape,
                })
            }
            "iota" if *self.peek_at(1) == Tok::Sym("<") => {
                self.next();
                self.sym("<")?;
                let ty = self.prim_type()?;
                self.sym(">")?;
                let xs = self.atoms("(", ")")?;
                match xs[..] {
                    [n, start, step] => Ok(Exp::Iota { n, start, step, ty }),
                    _ => self.err(format!("`iota` takes 3 arguments, got {}", xs.len())),
                }
            }
            "bitcast" if *self.peek_at(1) == Tok::Sym("<") => {
                self.next();
                self.sym("<")?;
                let from = self.prim_type()?;
                self.sym("->")?;
                let to = self.prim_type()?;
                self.sym(">")?;
                self.sym("(")?;
                let a = self.atom()?;
                self.sym(")")?;
                Ok(Exp::Conv(ConvOp::BitCast(from, to), a))
            }
            "replicate" | "rotate" if paren => {
                self.next();
                self.sym("(")?;
                let n = self.atom()?;
                self.sym(",")?;
                let e = if word == "replicate" {
                    Exp::Replicate(n, self.atom()?)
                } else {
                    Exp::Rotate(n, self.var()?)
                };
                self.sym(")")?;
                Ok(e)
            }
            "copy" | "reverse" if paren => {
                self.next();
                self.sym("(")?;
                let v = self.var()?;
                self.sym(")")?;
                Ok(if word == "copy" {
                    Exp::Copy(v)
                } else {
                    Exp::Reverse(v)
                })
            }
            "size" if paren => {
                self.next();
                self.sym("(")?;
                let v = self.var()?;
                self.sym(",")?;
                let d = self.small_int("a dimension number")?;
                self.sym(")")?;
                Ok(Exp::Size(v, d))
            }
            "reshape" if paren => {
                self.next();
                self.sym("(")?;
                let shape = self.atoms("[", "]")?;
                self.sym(",")?;
                let v = self.var()?;
                self.sym(")")?;
                Ok(Exp::Reshape(shape, v))
            }
            "rearrange" if paren => {
                self.next();
                self.sym("(")?;
                let perm = self.list("[", "]", |p| p.small_int("a dimension number"))?;
                self.sym(",")?;
                let v = self.var()?;
                self.sym(")")?;
                Ok(Exp::Rearrange(perm, v))
            }
            "concat" if paren => {
                self.next();
                Ok(Exp::Concat(self.vars()?))
            }
            "assert_eq_sizes" if paren => {
                self.next();
                self.sym("(")?;
                let mut xs = Vec::new();
                while !matches!(self.peek(), Tok::Str(_)) {
                    xs.push(self.atom()?);
                    self.sym(",")?;
                }
                let msg = self.string()?;
                self.sym(")")?;
                Ok(Exp::AssertEqSizes(xs, msg))
            }
            "assert" if paren => {
                self.next();
                self.sym("(")?;
                let c = self.atom()?;
                self.sym(",")?;
                let msg = self.string()?;
                let mut xs = Vec::new();
                while self.peek() == &Tok::Sym(",") {
                    self.sym(",")?;
                    xs.push(self.atom()?);
                }
                self.sym(")")?;
                Ok(Exp::Assert(c, msg, xs))
            }
            _ if prim(&word).is_some()
                && *self.peek_at(1) == Tok::Sym(".")
                && matches!(self.peek_at(2), Tok::Ident(x) if prim(x).is_some()) =>
            {
                let to = self.prim_type()?;
                self.sym(".")?;
                let from = self.prim_type()?;
                self.sym("(")?;
                let a = self.atom()?;
                self.sym(")")?;
                Ok(Exp::Conv(ConvOp::Convert(from, to), a))
            }
            _ if paren || *self.peek_at(1) == Tok::Sym("@") => self.call(),
            _ => self.atom_exp(),
        }
    }

    fn string(&mut self) -> R<String> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.next();
                Ok(s)
            }
            _ => self.expected("a string"),
        }
    }

    fn unop(&mut self, op: nabla_prim::UnOp) -> R<Exp> {
        self.sym("(")?;
        let a = self.atom()?;
        self.sym(")")?;
        Ok(Exp::UnOp(op, a))
    }

    fn call(&mut self) -> R<Exp> {
        let (name, at, pos) = self.fun_ref()?;
        let args = self.atoms("(", ")")?;
        let k = self.calls.len() as u32;
        self.calls.push((name, at, pos));
        Ok(Exp::Apply(FunId(k), args))
    }

    /// An expression that starts with an atom: the atom alone, an infix
    /// operation, an index or an in-place update.
    fn atom_exp(&mut self) -> R<Exp> {
        let pos = self.pos;
        let a = self.atom()?;
        if let Tok::Sym(s) = *self.peek() {
            if let Some(&op) = BINOPS.iter().find(|&&o| binop_text(o) == (true, s)) {
                self.next();
                return Ok(Exp::BinOp(op, a, self.atom()?));
            }
            if let Some(&op) = CMPOPS.iter().find(|&&o| cmpop_symbol(o) == s) {
                self.next();
                return Ok(Exp::CmpOp(op, a, self.atom()?));
            }
        }
        let indexed = self.is_sym("[");
        let updated = self.is_word("with");
        if !indexed && !updated {
            return Ok(Exp::Atoms(vec![a]));
        }
        let Atom::Var(arr) = a else {
            return self.err_at(pos, "only a variable can be indexed or updated");
        };
        if indexed {
            let idx = self.list("[", "]", |p| p.dim_index())?;
            return Ok(Exp::Index(arr, idx));
        }
        self.word("with")?;
        let idx = self.list("[", "]", |p| p.dim_index())?;
        self.sym("=")?;
        let v = self.atom()?;
        Ok(Exp::Update(arr, idx, v))
    }

    fn dim_index(&mut self) -> R<DimIndex> {
        let start = self.atom()?;
        if !self.eat_sym(":+") {
            return Ok(DimIndex::Fix(start));
        }
        let len = self.atom()?;
        self.sym("*")?;
        let stride = self.atom()?;
        Ok(DimIndex::Slice { start, len, stride })
    }

    fn loop_exp(&mut self) -> R<Exp> {
        self.word("loop")?;
        let items = self.list("(", ")", |p| {
            let param = p.param()?;
            let init = if p.eat_sym("=") {
                Some(p.atom()?)
            } else {
                None
            };
            Ok((param, init))
        })?;
        let inline = items.iter().filter(|x| x.1.is_some()).count();
        let params: Vec<Param> = items.iter().map(|x| x.0.clone()).collect();
        let init = if self.is_word("init") {
            if inline > 0 {
                return self.err("initial values written both after `=` and in `init (...)`");
            }
            self.next();
            self.atoms("(", ")")?
        } else if inline == items.len() {
            items.into_iter().filter_map(|x| x.1).collect()
        } else {
            return self
                .expected("an initial value `= atom` for every loop parameter, or `init (...)`");
        };
        let form = if self.is_word("for") {
            self.next();
            let i = self.var()?;
            self.sym("<")?;
            let bound = self.atom()?;
            LoopForm::For { i, bound }
        } else if self.is_word("while") {
            self.next();
            LoopForm::While {
                cond: Box::new(self.body()?),
            }
        } else {
            return self.expected("`for` or `while`");
        };
        self.word("do")?;
        let body = self.body()?;
        Ok(Exp::Loop {
            params,
            init,
            form,
            body,
        })
    }

    fn soac(&mut self, word: &str) -> R<Soac> {
        self.sym("(")?;
        let w = self.atom()?;
        self.sym(",")?;
        let s = match word {
            "map" => {
                let lam = self.lambda()?;
                let arrs = self.var_tail()?;
                Soac::Map { w, lam, arrs }
            }
            "reduce" | "reduce_comm" | "scan" => {
                let lam = self.lambda()?;
                self.sym(",")?;
                let neutral = self.atoms("(", ")")?;
                let arrs = self.var_tail()?;
                if word == "scan" {
                    Soac::Scan {
                        w,
                        lam,
                        neutral,
                        arrs,
                    }
                } else {
                    Soac::Reduce {
                        w,
                        lam,
                        neutral,
                        arrs,
                        commutative: word == "reduce_comm",
                    }
                }
            }
            "hist" => {
                let dest = self.vars()?;
                self.sym(",")?;
                let lam = self.lambda()?;
                self.sym(",")?;
                let neutral = self.atoms("(", ")")?;
                self.sym(",")?;
                let indices = self.var()?;
                let values = self.var_tail()?;
                Soac::Hist {
                    w,
                    dest,
                    lam,
                    neutral,
                    indices,
                    values,
                }
            }
            _ => {
                let dest = self.vars()?;
                self.sym(",")?;
                let indices = self.vars()?;
                self.sym(",")?;
                let values = self.vars()?;
                Soac::Scatter {
                    w,
                    dest,
                    indices,
                    values,
                }
            }
        };
        self.sym(")")?;
        Ok(s)
    }
}

/// Splits `name_N` into the name and the digits of `N` (the part after the
/// last `_`, which must be all digits).
fn split_var(s: &str) -> Option<(&str, &str)> {
    let k = s.rfind('_')?;
    let digits = &s[k + 1..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&s[..k], digits))
}

/// A token as an error message names it.
fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Str(_) => "a string".into(),
        Tok::QVar(s, d) => format!("variable `\"{s}\"_{d}`"),
        Tok::Num(s) => format!("`{s}`"),
        Tok::Sym(s) => format!("`{s}`"),
        Tok::Eof => "the end of the text".into(),
    }
}

/// A suffixed numeric constant (`3i32`, `1.5f64`), negated when `neg`.
fn constant(text: &str, neg: bool) -> Result<PrimValue, String> {
    let Some(t) = PrimType::ALL
        .into_iter()
        .find(|t| *t != PrimType::Bool && text.ends_with(t.name()))
    else {
        return Err(format!(
            "constant `{text}` needs a type suffix (`i32`, `f64`, …)"
        ));
    };
    let digits = &text[..text.len() - t.name().len()];
    let num = if neg {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    let r = if t.is_float() {
        nabla_prim::parse_float_literal(&num, t)
    } else {
        nabla_prim::parse_int_literal(&num, t)
    };
    r.map_err(|e| format!("bad constant `{}{text}`: {e}", if neg { "-" } else { "" }))
}

/// Replaces the call numbers that [`Parser::call`] left in `Exp::Apply`
/// with the resolved functions.
struct FixCalls<'a> {
    ids: &'a [FunId],
}

impl Visitor for FixCalls<'_> {
    fn atom(&mut self, _a: &mut Atom) {}
    fn var(&mut self, _v: &mut Var) {}
    fn bind(&mut self, _v: &mut Var) {}
    fn dim(&mut self, _d: &mut Dim) {}
    fn fun(&mut self, f: &mut FunId) {
        if let Some(id) = self.ids.get(f.0 as usize) {
            *f = *id;
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || rewrite::walk_body_deep(b, self))
    }
}

// ------------------------------------------------------------ equality --

/// Whether two programs are equal up to what the text form does not keep:
/// spans, the names of variables that occur nowhere in their function (so
/// `var_names` may differ in length past the last variable used, and in the
/// names of unused indices), and a trailing `_index` on a variable's name
/// (`x` and `x_5` both print as `x_5`). Float constants compare by their
/// bits, so a program with a NaN constant equals itself.
pub fn eq_modulo_spans(a: &Program, b: &Program) -> bool {
    let (a, ca) = normalise(a);
    let (b, cb) = normalise(b);
    a == b
        && ca.len() == cb.len()
        && ca
            .iter()
            .zip(&cb)
            .all(|(x, y)| x.prim_type() == y.prim_type() && x.to_bits() == y.to_bits())
}

/// A copy of `p` with spans cleared, unused variable names cleared and
/// trimmed, and every float constant replaced by zero; and the constants
/// as they were, in traversal order.
fn normalise(p: &Program) -> (Program, Vec<PrimValue>) {
    let mut p = p.clone();
    let mut consts = Vec::new();
    for f in &mut p.functions {
        f.span = Span::default();
        let mut n = Normalise {
            consts: &mut consts,
            used: vec![false; f.var_names.len()],
        };
        for q in &mut f.params {
            n.param(q);
        }
        for t in &mut f.ret {
            n.ty(t);
        }
        n.body(&mut f.body);
        let used = n.used;
        let keep = used.iter().rposition(|&u| u).map_or(0, |i| i + 1);
        f.var_names.resize(keep, String::new());
        for (i, (name, u)) in f.var_names.iter_mut().zip(&used).enumerate() {
            *name = if *u {
                base_name(name, i as u32).to_string()
            } else {
                String::new()
            };
        }
    }
    (p, consts)
}

struct Normalise<'a> {
    consts: &'a mut Vec<PrimValue>,
    used: Vec<bool>,
}

impl Normalise<'_> {
    fn mark(&mut self, v: Var) {
        let i = v.0 as usize;
        if i >= self.used.len() {
            self.used.resize(i + 1, false);
        }
        self.used[i] = true;
    }
}

impl Visitor for Normalise<'_> {
    fn atom(&mut self, a: &mut Atom) {
        match a {
            Atom::Var(v) => self.mark(*v),
            Atom::Const(c) => {
                self.consts.push(*c);
                if c.prim_type().is_float() {
                    *c = PrimValue::zero(c.prim_type());
                }
            }
        }
    }
    fn var(&mut self, v: &mut Var) {
        self.mark(*v);
    }
    fn bind(&mut self, v: &mut Var) {
        self.mark(*v);
    }
    fn dim(&mut self, d: &mut Dim) {
        if let Dim::Var(v) = d {
            self.mark(*v);
        }
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            for s in &mut b.stms {
                s.span = Span::default();
                rewrite::walk_exp(&mut s.exp, self);
                for p in &mut s.pat {
                    self.param(p);
                }
            }
            for a in &mut b.result {
                self.atom(a);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::print_prim_value;
    use crate::print_program;
    use crate::test_util::{p, stm, v};
    use nabla_prim::f16;

    /// A program in printed form that uses every expression form.
    const EVERYTHING: &str = r#"fun helper (x_0: f64): (f64) = {
  in (x_0)
}

fun main (n_0: i64, xs_1: *[n_0]f64, m_2: [3][?]i32, b_3: bool): (*[n_0]f64, f64) = {
  let a_4: f64 = xs_1[0i64]
  let s_5: [n_0]f64 = xs_1[0i64:+n_0*1i64]
  let c_6: f64 = a_4 + -1.5f64
  let d_7: f64 = a_4 - -f64.inf
  let e_8: bool = a_4 <= c_6
  let f_9: f64 = min(a_4, c_6)
  let g_10: f64 = sqrt(a_4)
  let h_11: bool = !(b_3)
  let i_12: f64 = fma(a_4, c_6, 2.0f64)
  let j_13: i32 = i32.f64(a_4)
  let k_14: u64 = bitcast<f64->u64>(a_4)
  let l_15: f64 = helper(a_4)
  let "+^"_16: f64 = if b_3 then {
    in (a_4)
  } else {
    let _17: f64 = neg(a_4)
    in (_17)
  }
  let (q_18: f64, r_19: i64) = loop (acc_20: f64 = 0.0f64, t_21: i64 = 0i64) for i_22 < n_0 do {
    in (acc_20, t_21)
  }
  let w_23: f64 = loop (z_24: f64 = 1.0f64) while {
    let lt_25: bool = z_24 < 100.0f64
    in (lt_25)
  } do {
    let z2_26: f64 = z_24 * 2.0f64
    in (z2_26)
  }
  let ys_27: *[n_0]f64 = xs_1 with [0i64] = a_4
  let lit_28: [2][3]i32 = [m_2, m_2]: [][3]i32
  let io_29: [n_0]i64 = iota<i64>(n_0, 0i64, 1i64)
  let rp_30: [n_0]f64 = replicate(n_0, a_4)
  let cp_31: [n_0]f64 = copy(s_5)
  let sz_32: i64 = size(m_2, 1)
  let rs_33: [n_0][1]f64 = reshape([n_0, 1i64], cp_31)
  let ra_34: [1][n_0]f64 = rearrange([1, 0], rs_33)
  let cc_35: [?]f64 = concat(cp_31, rp_30)
  let ro_36: [n_0]f64 = rotate(1i64, cp_31)
  let rv_37: [n_0]f64 = reverse(cp_31)
  let () = assert_eq_sizes(n_0, sz_32, "a \"quoted\"\nmessage\\")
  let () = assert_eq_sizes("nothing")
  let () = assert(b_3, "tab\there \u{1}")
  let () = assert(b_3, "sizes {} and {}", n_0, 7i64)
  let mp_38: [n_0]f64 = map(n_0, \(x_39: f64): (f64) -> {
    let y_40: f64 = x_39 / 3.0f32
    in (y_40)
  }, cp_31)
  let mp2_41: [n_0]i64 = map(n_0, \(): (i64) -> {
    in (1i64)
  })
  let rd_42: f64 = reduce(n_0, \(x_43: f64, y_44: f64): (f64) -> {
    let z_45: f64 = x_43 + y_44
    in (z_45)
  }, (0.0f64), cp_31)
  let rc_46: f64 = reduce_comm(n_0, \(x_47: f64, y_48: f64): (f64) -> {
    in (x_47)
  }, (0.0f64), cp_31)
  let sc_49: [n_0]f64 = scan(n_0, \(x_50: f64, y_51: f64): (f64) -> {
    in (y_51)
  }, (0.0f64), cp_31)
  let hi_52: [n_0]f64 = hist(n_0, (rp_30), \(x_53: f64, y_54: f64): (f64) -> {
    in (y_54)
  }, (0.0f64), io_29, cp_31)
  let st_55: [n_0]f64 = scatter(n_0, (rv_37), (io_29), (cp_31))
  let (wa_56: [n_0]f64, wb_57: [n_0]f64, wx_58: i64) = with_acc([ro_36 add, hi_52 write, st_55 op(\(u_59: f64, v_60: f64): (f64) -> {
    in (u_59)
  }, 0.0f64)], \(ac_61: acc([n_0]f64), ad_62: acc([n_0]f64), ae_63: acc([n_0]f64)): (acc([n_0]f64), acc([n_0]f64), acc([n_0]f64), i64) -> {
    let af_64: acc([n_0]f64) = update_acc(ac_61, [0i64], a_4)
    in (af_64, ad_62, ae_63, 7i64)
  })
  let (jp_65: f64, jt_66: f64) = jvp(\(x_67: f64): (f64) -> {
    in (x_67)
  }, (a_4), (1.0f64))
  let (vp_68: f64, va_69: f64) = vjp(\(x_70: f64): (f64) -> {
    in (x_70)
  }, (a_4), (1.0f64))
  let (tv_72: f64, tw_73: bool) = (a_4, true)
  let nn_74: f32 = -f32.nan
  let nb_75: f64 = f64.nan(0x7ff0000000000001)
  let hf_76: f16 = 0.0999755859375f16
  let ng_77: i8 = -128i8
  let (wt_78: f64, wr_79: f64) = with_vjp(1, \(x_80: f64): (f64, f64) -> {
    in (x_80, x_80)
  }, \(s_81: f64, g_82: f64): (f64) -> {
    in (g_82)
  }, (a_4))
  in (ys_27, a_4)
}

entry main = main (params [1, 1, 1, 1], results [1, 1])
entry "odd name" = helper (params [1], results [1])
"#;

    #[test]
    fn everything_reads_back_to_the_same_text() {
        let text = EVERYTHING;
        let prog = parse_program(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(prog.functions.len(), 2);
        assert_eq!(print_program(&prog), text);
        let again = parse_program(&print_program(&prog)).unwrap();
        assert!(eq_modulo_spans(&prog, &again));
    }

    /// A one-function program whose body binds `exps` (one `i64`-typed
    /// variable each, names `r`) over parameters `a_0: f64`, `b_1: f64`,
    /// `c_2: f64`, `k_3: i64`.
    fn with_stms(exps: Vec<(Type, Exp)>) -> Program {
        let f64t = Type::Prim(PrimType::F64);
        let mut names: Vec<String> = ["a", "b", "c", "k"].iter().map(|s| s.to_string()).collect();
        let mut stms = vec![];
        for (i, (t, e)) in exps.into_iter().enumerate() {
            let var = 4 + i as u32;
            names.push("r".into());
            stms.push(stm(vec![p(var, t)], e));
        }
        Program {
            functions: vec![Function {
                name: "f".into(),
                params: vec![
                    p(0, f64t.clone()),
                    p(1, f64t.clone()),
                    p(2, f64t),
                    p(3, Type::Prim(PrimType::I64)),
                ],
                ret: vec![],
                unique_ret: vec![],
                body: Body {
                    stms,
                    result: vec![],
                },
                var_names: names,
                span: Span::default(),
            }],
            entries: vec![],
            ..Default::default()
        }
    }

    fn round_trip(prog: &Program) -> Program {
        let text = print_program(prog);
        let back = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(eq_modulo_spans(prog, &back), "{text}\n{back:#?}");
        assert_eq!(print_program(&back), text);
        back
    }

    #[test]
    fn every_operator_round_trips() {
        let f = Type::Prim(PrimType::F64);
        let b = Type::Prim(PrimType::Bool);
        let mut exps = vec![];
        for op in BINOPS {
            exps.push((f.clone(), Exp::BinOp(op, v(0), v(1))));
        }
        for op in CMPOPS {
            exps.push((b.clone(), Exp::CmpOp(op, v(0), v(1))));
        }
        for op in UNOPS {
            exps.push((f.clone(), Exp::UnOp(op, v(0))));
        }
        for op in TERNOPS {
            exps.push((f.clone(), Exp::TernOp(op, v(0), v(1), v(2))));
        }
        for from in PrimType::ALL {
            for to in PrimType::ALL {
                exps.push((Type::Prim(to), Exp::Conv(ConvOp::Convert(from, to), v(0))));
                exps.push((Type::Prim(to), Exp::Conv(ConvOp::BitCast(from, to), v(0))));
            }
        }
        let prog = with_stms(exps);
        let back = round_trip(&prog);
        // Structural equality too (no floats involved).
        assert_eq!(back.functions[0].body, prog.functions[0].body);
    }

    #[test]
    fn operator_spellings_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for op in BINOPS {
            assert!(seen.insert(binop_text(op).1), "{op:?}");
        }
        for op in CMPOPS {
            assert!(seen.insert(cmpop_symbol(op)), "{op:?}");
        }
        for op in UNOPS {
            assert!(seen.insert(unop_name(op)), "{op:?}");
        }
        for op in TERNOPS {
            assert!(seen.insert(ternop_name(op)), "{op:?}");
        }
    }

    #[test]
    fn constants_round_trip_exactly() {
        let mut vals = vec![
            PrimValue::I8(i8::MIN),
            PrimValue::I8(i8::MAX),
            PrimValue::I16(i16::MIN),
            PrimValue::I32(-7),
            PrimValue::I64(i64::MIN),
            PrimValue::I64(i64::MAX),
            PrimValue::U8(255),
            PrimValue::U16(65535),
            PrimValue::U32(u32::MAX),
            PrimValue::U64(u64::MAX),
            PrimValue::Bool(true),
            PrimValue::Bool(false),
        ];
        let f64s = [
            0.0,
            -0.0,
            0.1,
            1.0 / 3.0,
            1e300,
            -1e-300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_0000_0000_0000),
        ];
        for x in f64s {
            vals.push(PrimValue::F64(x));
            vals.push(PrimValue::F32(x as f32));
            vals.push(PrimValue::F16(f16::from_f64(x)));
        }
        vals.push(PrimValue::F32(f32::from_bits(0x7f80_0001)));
        vals.push(PrimValue::F32(f32::from_bits(1)));
        vals.push(PrimValue::F16(f16::from_bits(0x7c01)));
        vals.push(PrimValue::F16(f16::from_bits(1)));
        vals.push(PrimValue::F16(f16::MAX));
        for x in vals {
            let exp = Exp::Atoms(vec![Atom::Const(x)]);
            let prog = with_stms(vec![(Type::Prim(x.prim_type()), exp)]);
            let back = round_trip(&prog);
            let Exp::Atoms(a) = &back.functions[0].body.stms[0].exp else {
                panic!("not atoms")
            };
            let Atom::Const(y) = a[0] else {
                panic!("not a constant")
            };
            assert_eq!(
                (y.prim_type(), y.to_bits()),
                (x.prim_type(), x.to_bits()),
                "{}",
                print_prim_value(&x)
            );
        }
    }

    #[test]
    fn equality_sees_float_bits_and_ignores_spans() {
        let a = with_stms(vec![(
            Type::Prim(PrimType::F64),
            Exp::Atoms(vec![Atom::Const(PrimValue::F64(f64::NAN))]),
        )]);
        assert!(eq_modulo_spans(&a, &a));
        let b = with_stms(vec![(
            Type::Prim(PrimType::F64),
            Exp::Atoms(vec![Atom::Const(PrimValue::F64(-f64::NAN))]),
        )]);
        assert!(!eq_modulo_spans(&a, &b));
        let c = with_stms(vec![(
            Type::Prim(PrimType::U64),
            Exp::Atoms(vec![Atom::Const(PrimValue::U64(0))]),
        )]);
        let d = with_stms(vec![(
            Type::Prim(PrimType::U64),
            Exp::Atoms(vec![Atom::Const(PrimValue::U64(1))]),
        )]);
        assert!(!eq_modulo_spans(&c, &d));
        let mut e = c.clone();
        e.functions[0].body.stms[0].span = Span::new(nabla_syntax::FileId(0), 3, 9);
        e.functions[0].var_names.push("unused".into());
        assert!(eq_modulo_spans(&c, &e));
        e.functions[0].var_names[0] = "other".into();
        assert!(!eq_modulo_spans(&c, &e));
    }

    #[test]
    fn names_round_trip() {
        let mut prog = with_stms(vec![]);
        let f = &mut prog.functions[0];
        f.var_names = vec![
            "x_0".into(),
            "".into(),
            "+^".into(),
            "a b\"c".into(),
            "y'".into(),
            "_".into(),
        ];
        f.params.push(p(4, Type::Prim(PrimType::I32)));
        f.params.push(p(5, Type::Prim(PrimType::I32)));
        let back = round_trip(&prog);
        assert_eq!(
            back.functions[0].var_names,
            vec!["x_0", "_1", "+^_2", "a b\"c_3", "y'_4", "__5"]
        );
        let text = print_program(&prog);
        assert!(
            text.contains(
                "(x_0: f64, _1: f64, \"+^\"_2: f64, \"a b\\\"c\"_3: i64, y'_4: i32, __5: i32)"
            ),
            "{text}"
        );
    }

    #[test]
    fn var_names_get_gaps_and_conflicts_are_errors() {
        let prog = parse_program("fun f (x_3: i32): (i32) = {\n  in (x_3)\n}\n").unwrap();
        assert_eq!(prog.functions[0].var_names, vec!["", "", "", "x_3"]);
        let e = parse_program("fun f (x_3: i32): (i32) = {\n  in (y_3)\n}\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7));
        assert!(
            e.problem.to_string().contains("x_3") && e.problem.to_string().contains("y_3"),
            "{e}"
        );
    }

    fn call_program(names: &[&str], calls: &[u32]) -> Program {
        let mut prog = Program::default();
        for (i, n) in names.iter().enumerate() {
            let stms = calls
                .iter()
                .map(|&c| stm(vec![], Exp::Apply(FunId(c), vec![])))
                .collect();
            prog.functions.push(Function {
                name: n.to_string(),
                params: vec![],
                ret: vec![],
                unique_ret: vec![],
                body: Body {
                    stms: if i == 0 { stms } else { vec![] },
                    result: vec![],
                },
                var_names: vec![],
                span: Span::default(),
            });
            prog.entries.push(EntryPoint {
                name: n.to_string(),
                fun: FunId(i as u32),
                param_arity: vec![],
                result_arity: vec![],
                signature: None,
            });
        }
        prog
    }

    #[test]
    fn functions_with_odd_or_shared_names_round_trip() {
        let prog = call_program(
            &["main", "map", "f<t=[]i32>", "g", "g", "sqrt", "f64"],
            &[1, 2, 3, 4, 5, 6],
        );
        let text = print_program(&prog);
        assert!(text.contains("= \"map\"()"), "{text}");
        assert!(text.contains("= g@3()"), "{text}");
        assert!(text.contains("= g@4()"), "{text}");
        assert!(text.contains("fun \"f<t=[]i32>\" ()"), "{text}");
        let back = round_trip(&prog);
        assert_eq!(back, prog);
        // A later function may be called; an ambiguous name is an error.
        let e = parse_program("fun f (): () = {\n  let () = g()\n  in ()\n}\nfun g (): () = {\n  in ()\n}\nfun g (): () = {\n  in ()\n}\n").unwrap_err();
        assert!(
            matches!(&e.problem, ParseProblem::Invalid(m) if m.contains("several functions")),
            "{e}"
        );
        assert_eq!((e.line, e.column), (2, 12));
        let e = parse_program("fun f (): () = {\n  let () = h()\n  in ()\n}\n").unwrap_err();
        assert_eq!(
            e.problem,
            ParseProblem::UnknownFunction { name: "h".into() },
            "{e}"
        );
    }

    #[test]
    fn invalid_counts_are_representable() {
        // Uniqueness flags and loop initial values that do not match.
        let text = "fun f (x_0: i32): (i32, i32) unique(true) = {\n  let y_1: i32 = loop (a_2: i32, b_3: i32) init (x_0) for i_4 < 3i32 do {\n    in (a_2, b_3)\n  }\n  in (y_1, y_1)\n}\n";
        let prog = parse_program(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(prog.functions[0].unique_ret, vec![true]);
        assert_eq!(print_program(&prog), text);
    }

    #[test]
    fn comments_and_layout_are_ignored() {
        let text = "-- test: validate\nfun f(x_0:i32):(i32)={let y_1:i32=x_0+ -1i32 -- a comment\nin(y_1)}";
        let prog = parse_program(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_program(&prog),
            "fun f (x_0: i32): (i32) = {\n  let y_1: i32 = x_0 + -1i32\n  in (y_1)\n}\n"
        );
    }

    #[test]
    fn errors_have_positions_and_messages() {
        let cases: &[(&str, (usize, usize), &str)] = &[
            ("fun f (): () = {\n  in (x)\n}", (2, 7), "variable"),
            (
                "fun f (): () = {\n  let x_0: i32 = 3\n  in ()\n}",
                (2, 18),
                "type suffix",
            ),
            (
                "fun f (): () = {\n  let x_0: i32 = 300i8\n  in ()\n}",
                (2, 18),
                "300",
            ),
            (
                "fun f (): () = {\n  let () = assert(true, \"a\\qb\")\n  in ()\n}",
                (2, 27),
                "escape",
            ),
            (
                "fun f (): () = {\n  let () = assert(true, \"ab\n",
                (2, 25),
                "unterminated",
            ),
            ("fun f (): () = {\n  in ()\n", (3, 1), "end of the text"),
            (
                "fun f (): () = {\n  let x_0: i32 = 1i32 $ 2i32\n",
                (2, 23),
                "unexpected character",
            ),
            (
                "entry main = main (params [1], results [1])\n",
                (1, 14),
                "no function named",
            ),
            (
                "fun f (x_99999999999: i32): () = {\n in ()\n}",
                (1, 8),
                "too large",
            ),
            ("let", (1, 1), "expected `fun` or `entry`"),
        ];
        for (text, pos, msg) in cases {
            let e = parse_program(text).expect_err(text);
            assert_eq!((e.line, e.column), *pos, "{text}: {e}");
            assert!(e.problem.to_string().contains(msg), "{text}: {e}");
        }
    }

    #[test]
    fn errors_say_what_kind_of_problem() {
        let e = parse_program("let").unwrap_err();
        assert_eq!(
            e.problem,
            ParseProblem::Expected {
                expected: "`fun` or `entry`".into(),
                found: "`let`".into()
            },
            "{e}"
        );
        assert_eq!(e.to_string(), "1:1: expected `fun` or `entry`, found `let`");
        let e = parse_program("fun f (): () = {\n  let x_0: i32 = 1i32 $ 2i32\n").unwrap_err();
        assert!(matches!(e.problem, ParseProblem::Lexical(_)), "{e}");
    }

    #[test]
    fn nested_accumulator_types_are_an_error_not_a_crash() {
        let text = format!(
            "fun f (x_0: {}f64): () = {{ in () }}",
            "acc(".repeat(100_000)
        );
        let e = parse_program(&text).unwrap_err();
        assert!(
            matches!(&e.problem, ParseProblem::Invalid(m) if m.contains("accumulator of an accumulator")),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let n = MAX_NESTING + 10;
        let mut text = String::from("fun f (c_0: bool): () = {\n");
        for _ in 0..n {
            text.push_str("let () = if c_0 then {\n");
        }
        for _ in 0..n {
            text.push_str("in ()\n} else {\nin ()\n}\n");
        }
        text.push_str("in ()\n}\n");
        let e = parse_program(&text).unwrap_err();
        assert_eq!(
            e.problem,
            ParseProblem::TooDeep { limit: MAX_NESTING },
            "{e}"
        );
    }

    /// Truncations and random mutations of printed programs never panic;
    /// whatever parses prints and parses again to an equal program.
    #[test]
    fn mutated_text_never_panics() {
        let base = EVERYTHING;
        let chars: Vec<char> = base.chars().collect();
        let check = |text: &str| {
            if let Ok(prog) = parse_program(text) {
                let printed = print_program(&prog);
                let again = parse_program(&printed)
                    .unwrap_or_else(|e| panic!("{e}\nprinted:\n{printed}\nfrom:\n{text}"));
                assert!(eq_modulo_spans(&prog, &again), "{text}");
            }
        };
        for k in 0..chars.len() {
            let s: String = chars[..k].iter().collect();
            check(&s);
        }
        let alphabet: Vec<char> = "(){}[],:;=-+*/%<>!&|^\\\"'_.@?0123456789 \nabcxyzfiu_e\u{e9}"
            .chars()
            .collect();
        // A small deterministic generator (xorshift), so failures reproduce.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rand = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut cs = chars.clone();
            for _ in 0..1 + rand(4) {
                let i = rand(cs.len());
                match rand(3) {
                    0 => {
                        cs.remove(i);
                    }
                    1 => cs.insert(i, alphabet[rand(alphabet.len())]),
                    _ => cs[i] = alphabet[rand(alphabet.len())],
                }
            }
            let s: String = cs.into_iter().collect();
            check(&s);
        }
    }
}
