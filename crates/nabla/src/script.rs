//! FutharkScript: the small expression language of `nabla script`, of the
//! `-- >` directives of `nabla literate` and of `script input { … }` test
//! datasets (futhark-literate(1), "FUTHARKSCRIPT").
//!
//! An expression is a call of an entry point on arguments (`f x (1, 2)`),
//! a literal in the value format (`1i32`, `2.5`, `true`, `"file"`), an
//! array (`[e, …]`), a tuple (`(e, …)`), a record (`{a = e, …}`),
//! `empty([0]t)`, `let p = e in e` (where `p` is a name or a tuple of
//! names), or a call of a builtin (`$loaddata`, `$loadbytes`, `$loadimg`).
//!
//! Arguments are flattened into the entry point's flat parameters, so a
//! tuple passed to a function of several parameters is spread over them
//! (Futhark's automatic uncurrying), and an opaque value returned by one
//! entry point can be passed to another. Unsuffixed numeric literals take
//! the type of the parameter they are passed to (`i32` and `f64`
//! otherwise).

use crate::driver::Compiled;
use nabla_prim::PrimType;
use nabla_values::{ArrayValue, Value, ValueType};
use std::path::{Path, PathBuf};

/// A byte range in the script text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptSpan {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A parse or evaluation error, with where in the script it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptError {
    /// What went wrong.
    pub message: String,
    /// The part of the script it concerns, when known.
    pub span: Option<ScriptSpan>,
}

impl ScriptError {
    fn new(message: impl Into<String>, span: ScriptSpan) -> ScriptError {
        ScriptError {
            message: message.into(),
            span: Some(span),
        }
    }

    /// The error as `origin:line:col: message`, followed by the script's
    /// line with the span underlined.
    pub fn render(&self, source: &str, origin: &str) -> String {
        self.render_at(source, origin, None)
    }

    /// [`ScriptError::render`] for a script that is line `line` of a file
    /// (a directive): the location is `origin:line:`, the column counted
    /// in the script.
    pub fn render_at(&self, source: &str, origin: &str, line: Option<usize>) -> String {
        let Some(sp) = self.span else {
            return match line {
                Some(l) => format!("{origin}:{l}: {}", self.message),
                None => format!("{origin}: {}", self.message),
            };
        };
        let start = sp.start.min(source.len());
        let line_start = source[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = source[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(source.len());
        let line_no = source[..start].matches('\n').count() + 1;
        let col = source[line_start..start].chars().count() + 1;
        let text = &source[line_start..line_end];
        let width = source[start..sp.end.clamp(start, line_end)]
            .chars()
            .count()
            .max(1);
        let at = match line {
            Some(l) => format!("{origin}:{}", l + line_no - 1),
            None => format!("{origin}:{line_no}:{col}"),
        };
        format!(
            "{at}: {}\n  {text}\n  {}{}",
            self.message,
            " ".repeat(col - 1),
            "^".repeat(width)
        )
    }
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.span {
            Some(sp) => write!(f, "{}..{}: {}", sp.start, sp.end, self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A FutharkScript expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Exp {
    /// A call of an entry point (or a let-bound name, with no arguments).
    Call(String, Vec<Exp>, ScriptSpan),
    /// A call of a builtin (`$loaddata "f"`), without the `$`.
    Builtin(String, Vec<Exp>, ScriptSpan),
    /// A number or boolean literal, as written.
    Lit(String, ScriptSpan),
    /// A string literal (an argument of builtins).
    Str(String, ScriptSpan),
    /// `(e, …)` with at least two elements.
    Tuple(Vec<Exp>, ScriptSpan),
    /// `[e, …]`.
    Array(Vec<Exp>, ScriptSpan),
    /// `{a = e, …}`.
    Record(Vec<(String, Exp)>, ScriptSpan),
    /// `empty([0]…t)`: the shape and the element type.
    Empty(Vec<i64>, PrimType, ScriptSpan),
    /// `let x = e in e` or `let (x, y) = e in e`.
    Let(Vec<String>, bool, Box<Exp>, Box<Exp>, ScriptSpan),
}

impl Exp {
    /// Where the expression is in the script.
    pub fn span(&self) -> ScriptSpan {
        match self {
            Exp::Call(_, _, s)
            | Exp::Builtin(_, _, s)
            | Exp::Lit(_, s)
            | Exp::Str(_, s)
            | Exp::Tuple(_, s)
            | Exp::Array(_, s)
            | Exp::Record(_, s)
            | Exp::Empty(_, _, s)
            | Exp::Let(_, _, _, _, s) => *s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Builtin(String),
    Num(String),
    Str(String),
    Punct(char),
}

fn lex(src: &str) -> Result<Vec<(Tok, ScriptSpan)>, ScriptError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'';
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && bytes.get(i + 1) == Some(&b'-') {
            // A comment, to the end of the line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let span = |end: usize| ScriptSpan { start, end };
        if c.is_ascii_digit() || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < bytes.len() {
                let d = bytes[i];
                let exp_sign = (d == b'-' || d == b'+')
                    && matches!(bytes[i - 1], b'e' | b'E')
                    && !src[start..i].starts_with("0x");
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push((Tok::Num(src[start..i].to_string()), span(i)));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && ident_char(bytes[i]) {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), span(i)));
        } else if c == b'$' {
            i += 1;
            while i < bytes.len() && ident_char(bytes[i]) {
                i += 1;
            }
            if i == start + 1 {
                return Err(ScriptError::new(
                    "expected a builtin name after `$`",
                    span(i),
                ));
            }
            out.push((Tok::Builtin(src[start + 1..i].to_string()), span(i)));
        } else if c == b'"' {
            i += 1;
            let mut s = String::new();
            loop {
                match src[i..].chars().next() {
                    None => return Err(ScriptError::new("unterminated string", span(i))),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let e = src[i + 1..]
                            .chars()
                            .next()
                            .ok_or_else(|| ScriptError::new("unterminated string", span(i + 1)))?;
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        i += 1 + e.len_utf8();
                    }
                    Some(ch) => {
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            out.push((Tok::Str(s), span(i)));
        } else if b"()[]{},=".contains(&c) {
            i += 1;
            out.push((Tok::Punct(c as char), span(i)));
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(ScriptError::new(
                format!("unexpected character `{ch}`"),
                span(i + ch.len_utf8()),
            ));
        }
    }
    Ok(out)
}

/// Parses a FutharkScript expression; errors carry the offending span.
pub fn parse(src: &str) -> Result<Exp, ScriptError> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        len: src.len(),
        depth: 0,
    };
    let e = p.exp()?;
    if let Some((t, sp)) = p.toks.get(p.pos) {
        return Err(ScriptError::new(
            format!("unexpected {} after the expression", describe(t)),
            *sp,
        ));
    }
    Ok(e)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Builtin(s) => format!("`${s}`"),
        Tok::Num(s) => format!("`{s}`"),
        Tok::Str(_) => "a string".into(),
        Tok::Punct(c) => format!("`{c}`"),
    }
}

struct Parser {
    toks: Vec<(Tok, ScriptSpan)>,
    pos: usize,
    len: usize,
    depth: usize,
}

/// Deepest nesting of parentheses, brackets and `let`s accepted.
const MAX_DEPTH: usize = 200;

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn here(&self) -> ScriptSpan {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(ScriptSpan {
            start: self.len,
            end: self.len,
        })
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map(|t| t.1.end)
            .unwrap_or(0)
    }

    fn expect(&mut self, c: char) -> Result<ScriptSpan, ScriptError> {
        match self.toks.get(self.pos) {
            Some((Tok::Punct(d), sp)) if *d == c => {
                self.pos += 1;
                Ok(*sp)
            }
            Some((t, sp)) => Err(ScriptError::new(
                format!("expected `{c}`, found {}", describe(t)),
                *sp,
            )),
            None => Err(ScriptError::new(
                format!("expected `{c}`, found the end of the expression"),
                self.here(),
            )),
        }
    }

    fn ident(&mut self, what: &str) -> Result<(String, ScriptSpan), ScriptError> {
        match self.toks.get(self.pos) {
            Some((Tok::Ident(s), sp)) => {
                let r = (s.clone(), *sp);
                self.pos += 1;
                Ok(r)
            }
            Some((t, sp)) => Err(ScriptError::new(
                format!("expected {what}, found {}", describe(t)),
                *sp,
            )),
            None => Err(ScriptError::new(
                format!("expected {what}, found the end of the expression"),
                self.here(),
            )),
        }
    }

    fn exp(&mut self) -> Result<Exp, ScriptError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScriptError::new(
                "expression nested too deeply",
                self.here(),
            ));
        }
        let r = self.exp_inner();
        self.depth -= 1;
        r
    }

    fn exp_inner(&mut self) -> Result<Exp, ScriptError> {
        let start = self.here().start;
        match self.peek() {
            Some(Tok::Ident(k)) if k == "let" => {
                self.pos += 1;
                let (names, tuple) = if self.peek() == Some(&Tok::Punct('(')) {
                    self.pos += 1;
                    let mut names = vec![self.ident("a name")?.0];
                    while self.peek() == Some(&Tok::Punct(',')) {
                        self.pos += 1;
                        names.push(self.ident("a name")?.0);
                    }
                    self.expect(')')?;
                    (names, true)
                } else {
                    (vec![self.ident("a name or a tuple pattern")?.0], false)
                };
                self.expect('=')?;
                let rhs = self.exp()?;
                match self.toks.get(self.pos) {
                    Some((Tok::Ident(k), _)) if k == "in" => self.pos += 1,
                    _ => return Err(ScriptError::new("expected `in`", self.here())),
                }
                let body = self.exp()?;
                let end = self.prev_end();
                Ok(Exp::Let(
                    names,
                    tuple,
                    Box::new(rhs),
                    Box::new(body),
                    ScriptSpan { start, end },
                ))
            }
            Some(Tok::Ident(f)) if !is_keyword(f) => {
                let f = f.clone();
                self.pos += 1;
                let args = self.args()?;
                let end = self.prev_end();
                Ok(Exp::Call(f, args, ScriptSpan { start, end }))
            }
            Some(Tok::Builtin(f)) => {
                let f = f.clone();
                self.pos += 1;
                let args = self.args()?;
                let end = self.prev_end();
                Ok(Exp::Builtin(f, args, ScriptSpan { start, end }))
            }
            _ => self.atom(),
        }
    }

    fn starts_atom(&self) -> bool {
        match self.peek() {
            Some(Tok::Ident(s)) => !matches!(s.as_str(), "in" | "let"),
            Some(Tok::Num(_) | Tok::Str(_)) => true,
            Some(Tok::Punct(c)) => matches!(c, '(' | '[' | '{'),
            _ => false,
        }
    }

    fn args(&mut self) -> Result<Vec<Exp>, ScriptError> {
        let mut args = Vec::new();
        while self.starts_atom() {
            args.push(self.atom()?);
        }
        Ok(args)
    }

    fn atom(&mut self) -> Result<Exp, ScriptError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScriptError::new(
                "expression nested too deeply",
                self.here(),
            ));
        }
        let r = self.atom_inner();
        self.depth -= 1;
        r
    }

    fn atom_inner(&mut self) -> Result<Exp, ScriptError> {
        let sp = self.here();
        let Some((tok, _)) = self.toks.get(self.pos).cloned() else {
            return Err(ScriptError::new(
                "expected an expression, found the end of the expression",
                sp,
            ));
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Exp::Lit(n, sp)),
            Tok::Str(s) => Ok(Exp::Str(s, sp)),
            Tok::Ident(k) if k == "true" || k == "false" => Ok(Exp::Lit(k, sp)),
            Tok::Ident(k) if k == "empty" => self.empty(sp),
            Tok::Ident(k) if !is_keyword(&k) => Ok(Exp::Call(k, Vec::new(), sp)),
            Tok::Punct('(') => {
                if self.peek() == Some(&Tok::Punct(')')) {
                    return Err(ScriptError::new(
                        "the empty tuple `()` is not a FutharkScript value",
                        sp,
                    ));
                }
                let mut es = vec![self.exp()?];
                while self.peek() == Some(&Tok::Punct(',')) {
                    self.pos += 1;
                    es.push(self.exp()?);
                }
                let close = self.expect(')')?;
                let span = ScriptSpan {
                    start: sp.start,
                    end: close.end,
                };
                Ok(if es.len() == 1 {
                    es.pop().expect("one element")
                } else {
                    Exp::Tuple(es, span)
                })
            }
            Tok::Punct('[') => {
                let mut es = Vec::new();
                if self.peek() != Some(&Tok::Punct(']')) {
                    es.push(self.exp()?);
                    while self.peek() == Some(&Tok::Punct(',')) {
                        self.pos += 1;
                        es.push(self.exp()?);
                    }
                }
                let close = self.expect(']')?;
                let span = ScriptSpan {
                    start: sp.start,
                    end: close.end,
                };
                if es.is_empty() {
                    return Err(ScriptError::new(
                        "an empty array must be written `empty([0]t)`",
                        span,
                    ));
                }
                Ok(Exp::Array(es, span))
            }
            Tok::Punct('{') => {
                let mut fields: Vec<(String, Exp)> = Vec::new();
                if self.peek() != Some(&Tok::Punct('}')) {
                    loop {
                        let (name, nsp) = self.ident("a field name")?;
                        if fields.iter().any(|(n, _)| *n == name) {
                            return Err(ScriptError::new(
                                format!("field `{name}` is given twice"),
                                nsp,
                            ));
                        }
                        self.expect('=')?;
                        fields.push((name, self.exp()?));
                        if self.peek() == Some(&Tok::Punct(',')) {
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                }
                let close = self.expect('}')?;
                Ok(Exp::Record(
                    fields,
                    ScriptSpan {
                        start: sp.start,
                        end: close.end,
                    },
                ))
            }
            t => Err(ScriptError::new(
                format!("expected an expression, found {}", describe(&t)),
                sp,
            )),
        }
    }

    /// `empty` `(` (`[` n `]`)+ type `)`, after `empty`.
    fn empty(&mut self, start: ScriptSpan) -> Result<Exp, ScriptError> {
        self.expect('(')?;
        let mut shape = Vec::new();
        while self.peek() == Some(&Tok::Punct('[')) {
            self.pos += 1;
            let sp = self.here();
            match self.toks.get(self.pos).cloned() {
                Some((Tok::Num(n), _)) => {
                    self.pos += 1;
                    let d: i64 = n
                        .trim_end_matches("i64")
                        .parse()
                        .ok()
                        .filter(|d| *d >= 0)
                        .ok_or_else(|| ScriptError::new("expected a size", sp))?;
                    shape.push(d);
                }
                _ => return Err(ScriptError::new("expected a size", sp)),
            }
            self.expect(']')?;
        }
        if shape.is_empty() {
            return Err(ScriptError::new(
                "expected `[size]` in `empty`, e.g. `empty([0]i32)`",
                self.here(),
            ));
        }
        if !shape.contains(&0) {
            return Err(ScriptError::new(
                "an empty array has a dimension of size 0",
                start,
            ));
        }
        let (name, tsp) = self.ident("an element type")?;
        let t = PrimType::from_name(&name)
            .ok_or_else(|| ScriptError::new(format!("unknown element type `{name}`"), tsp))?;
        let close = self.expect(')')?;
        Ok(Exp::Empty(
            shape,
            t,
            ScriptSpan {
                start: start.start,
                end: close.end,
            },
        ))
    }
}

/// Whether a number literal ends with a type suffix (`1i64`, `2f32`).
fn has_type_suffix(t: &str) -> bool {
    [
        "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
    ]
    .iter()
    .any(|s| t.ends_with(s))
}

fn is_keyword(s: &str) -> bool {
    matches!(s, "let" | "in" | "true" | "false" | "empty")
}

/// A FutharkScript value.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptValue {
    /// A primitive or an array of primitives.
    Value(Value),
    /// A literal whose type is not fixed yet (`2`, `2.5`, or an array of
    /// such literals), as written: it takes the type of the parameter it is
    /// passed to.
    Literal(String),
    /// A string (the argument of a builtin).
    Str(String),
    /// A tuple.
    Tuple(Vec<ScriptValue>),
    /// A record, fields in the order written.
    Record(Vec<(String, ScriptValue)>),
    /// A value an entry point returned that is not a primitive or an array
    /// of them (a record, a tuple, a sum, an opaque type): its flat values
    /// and how it prints.
    Opaque {
        /// The type's name in the program.
        type_name: String,
        /// The flat values.
        values: Vec<Value>,
        /// The value as Futhark prints it (records, tuples, sums), or its
        /// flat values one per line.
        text: String,
    },
}

impl ScriptValue {
    /// The value in the textual value format (records as `{a = …}`,
    /// tuples as `(…, …)`; unsuffixed literals with the default types).
    pub fn to_text(&self) -> String {
        match self {
            ScriptValue::Value(v) => nabla_values::write_value_text(v),
            ScriptValue::Literal(t) => match coerce_literal(t, None) {
                Ok(v) => nabla_values::write_value_text(&v),
                Err(_) => t.clone(),
            },
            ScriptValue::Str(s) => format!("{s:?}"),
            ScriptValue::Tuple(vs) => format!(
                "({})",
                vs.iter()
                    .map(|v| v.to_text())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ScriptValue::Record(fs) => format!(
                "{{{}}}",
                fs.iter()
                    .map(|(n, v)| format!("{n} = {}", v.to_text()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ScriptValue::Opaque { text, .. } => text.clone(),
        }
    }

    /// The value as a primitive or array of primitives (literals with
    /// their default types), if it is one.
    pub fn as_value(&self) -> Option<Value> {
        match self {
            ScriptValue::Value(v) => Some(v.clone()),
            ScriptValue::Literal(t) => coerce_literal(t, None).ok(),
            _ => None,
        }
    }
}

/// Reads literal text (a number, a boolean, or an array of them) with the
/// type `ty`, or with the default types when `None`.
fn coerce_literal(text: &str, ty: Option<ValueType>) -> Result<Value, String> {
    let tys = ty.map(|t| [t]);
    let mut vs = nabla_values::read_values_text(text, tys.as_ref().map(|t| &t[..])).map_err(
        |e| match ty {
            Some(t) => format!("`{text}` is not a value of type {t}: {e}"),
            None => format!("`{text}` is not a value: {e}"),
        },
    )?;
    if vs.len() != 1 {
        return Err(format!("`{text}` is not one value"));
    }
    Ok(vs.remove(0))
}

/// How an entry point is called: its name and flat arguments in, flat
/// results (or an error message) out.
pub type CallEntry<'a> = dyn FnMut(&str, Vec<Value>) -> Result<Vec<Value>, String> + 'a;

/// Evaluates FutharkScript expressions against a compiled program, calling
/// its entry points through `call` (the interpreter or compiled code).
pub struct Evaluator<'a> {
    compiled: &'a Compiled,
    call: &'a mut CallEntry<'a>,
    dir: PathBuf,
}

impl<'a> Evaluator<'a> {
    /// An evaluator for `compiled`: builtins read files relative to `dir`.
    pub fn new(compiled: &'a Compiled, dir: &Path, call: &'a mut CallEntry<'a>) -> Evaluator<'a> {
        Evaluator {
            compiled,
            call,
            dir: dir.to_path_buf(),
        }
    }

    /// Evaluates `e`.
    pub fn eval(&mut self, e: &Exp) -> Result<ScriptValue, ScriptError> {
        let mut env = Vec::new();
        self.eval_in(e, &mut env)
    }

    fn eval_in(
        &mut self,
        e: &Exp,
        env: &mut Vec<(String, ScriptValue)>,
    ) -> Result<ScriptValue, ScriptError> {
        match e {
            Exp::Lit(t, sp) => {
                let v = coerce_literal(t, None).map_err(|m| ScriptError::new(m, *sp))?;
                if t == "true" || t == "false" || has_type_suffix(t) {
                    Ok(ScriptValue::Value(v))
                } else {
                    // Unsuffixed: it reads; its type is fixed where it is used.
                    Ok(ScriptValue::Literal(t.clone()))
                }
            }
            Exp::Str(s, _) => Ok(ScriptValue::Str(s.clone())),
            Exp::Tuple(es, _) => Ok(ScriptValue::Tuple(
                es.iter()
                    .map(|e| self.eval_in(e, env))
                    .collect::<Result<_, _>>()?,
            )),
            Exp::Record(fs, _) => Ok(ScriptValue::Record(
                fs.iter()
                    .map(|(n, e)| Ok((n.clone(), self.eval_in(e, env)?)))
                    .collect::<Result<_, ScriptError>>()?,
            )),
            Exp::Array(es, sp) => {
                let vs: Vec<ScriptValue> = es
                    .iter()
                    .map(|e| self.eval_in(e, env))
                    .collect::<Result<_, _>>()?;
                if vs.iter().all(|v| matches!(v, ScriptValue::Literal(_))) {
                    // Still untyped: keep the text.
                    let parts: Vec<String> = vs
                        .iter()
                        .map(|v| match v {
                            ScriptValue::Literal(t) => t.clone(),
                            _ => unreachable!("all literals"),
                        })
                        .collect();
                    let text = format!("[{}]", parts.join(", "));
                    coerce_literal(&text, None).map_err(|m| ScriptError::new(m, *sp))?;
                    return Ok(ScriptValue::Literal(text));
                }
                // Typed elements fix the type of the untyped ones.
                let elem = vs.iter().find_map(|v| match v {
                    ScriptValue::Value(v) => Some(v.value_type()),
                    _ => None,
                });
                let mut rows = Vec::new();
                for (v, e) in vs.iter().zip(es) {
                    rows.push(match v {
                        ScriptValue::Value(v) => v.clone(),
                        ScriptValue::Literal(t) => {
                            coerce_literal(t, elem).map_err(|m| ScriptError::new(m, e.span()))?
                        }
                        _ => {
                            return Err(ScriptError::new(
                                "array elements must be primitives or arrays of primitives",
                                e.span(),
                            ))
                        }
                    });
                }
                ArrayValue::from_rows(rows)
                    .map(|a| ScriptValue::Value(Value::Array(a)))
                    .map_err(|m| ScriptError::new(format!("irregular array: {m}"), *sp))
            }
            Exp::Empty(shape, t, _) => Ok(ScriptValue::Value(Value::Array(ArrayValue::zeros(
                *t, shape,
            )))),
            Exp::Let(names, tuple, rhs, body, sp) => {
                let v = self.eval_in(rhs, env)?;
                let n = env.len();
                if *tuple {
                    let parts = match v {
                        ScriptValue::Tuple(vs) if vs.len() == names.len() => vs,
                        other => {
                            return Err(ScriptError::new(
                                format!(
                                    "cannot bind a {}-tuple pattern to {}",
                                    names.len(),
                                    shape_of(&other)
                                ),
                                rhs.span(),
                            ))
                        }
                    };
                    env.extend(names.iter().cloned().zip(parts));
                } else {
                    env.push((names[0].clone(), v));
                }
                let r = self.eval_in(body, env);
                env.truncate(n);
                let _ = sp;
                r
            }
            Exp::Call(f, args, sp) => {
                if let Some((_, v)) = env.iter().rev().find(|(n, _)| n == f) {
                    if args.is_empty() {
                        return Ok(v.clone());
                    }
                    return Err(ScriptError::new(
                        format!("`{f}` is a value, not a function"),
                        *sp,
                    ));
                }
                let vals: Vec<ScriptValue> = args
                    .iter()
                    .map(|a| self.eval_in(a, env))
                    .collect::<Result<_, _>>()?;
                self.call_entry(f, vals, *sp)
            }
            Exp::Builtin(f, args, sp) => {
                let vals: Vec<ScriptValue> = args
                    .iter()
                    .map(|a| self.eval_in(a, env))
                    .collect::<Result<_, _>>()?;
                self.builtin(f, vals, *sp)
            }
        }
    }

    fn call_entry(
        &mut self,
        f: &str,
        args: Vec<ScriptValue>,
        sp: ScriptSpan,
    ) -> Result<ScriptValue, ScriptError> {
        let types = self
            .compiled
            .entry_types(f)
            .map_err(|m| ScriptError::new(m, sp))?;
        let flat = flatten_args(&args, &types.params).map_err(|m| {
            ScriptError::new(format!("in the arguments of entry point {f}: {m}"), sp)
        })?;
        let results = (self.call)(f, flat).map_err(|m| ScriptError::new(m, sp))?;
        Ok(entry_results(self.compiled, f, results))
    }

    fn builtin(
        &mut self,
        f: &str,
        args: Vec<ScriptValue>,
        sp: ScriptSpan,
    ) -> Result<ScriptValue, ScriptError> {
        let file = |args: &[ScriptValue]| match args {
            [ScriptValue::Str(s)] => Ok(self.dir.join(s)),
            _ => Err(ScriptError::new(
                format!("${f} takes one argument, a file name in quotes"),
                sp,
            )),
        };
        match f {
            "loaddata" => {
                let path = file(&args)?;
                let mut vs = nabla_values::read_values_file(&path, None)
                    .map_err(|e| ScriptError::new(format!("$loaddata: {e}"), sp))?;
                Ok(if vs.len() == 1 {
                    ScriptValue::Value(vs.remove(0))
                } else {
                    ScriptValue::Tuple(vs.into_iter().map(ScriptValue::Value).collect())
                })
            }
            "loadbytes" => {
                let path = file(&args)?;
                let bytes = std::fs::read(&path).map_err(|e| {
                    ScriptError::new(format!("$loadbytes: {}: {e}", path.display()), sp)
                })?;
                let n = bytes.len() as i64;
                Ok(ScriptValue::Value(Value::Array(ArrayValue::from_vec(
                    &[n],
                    bytes,
                ))))
            }
            "loadimg" => {
                let path = file(&args)?;
                crate::literate::load_png(&path)
                    .map(ScriptValue::Value)
                    .map_err(|m| ScriptError::new(format!("$loadimg: {m}"), sp))
            }
            "loadaudio" => {
                let path = file(&args)?;
                load_wav(&path)
                    .map(ScriptValue::Value)
                    .map_err(|m| ScriptError::new(format!("$loadaudio: {m}"), sp))
            }
            "restore" => Err(ScriptError::new(
                format!("the builtin ${f} is not supported by nabla"),
                sp,
            )),
            _ => Err(ScriptError::new(
                format!(
                    "unknown builtin ${f} (builtins: $loaddata, $loadbytes, $loadimg, $loadaudio)"
                ),
                sp,
            )),
        }
    }
}

/// `$loadaudio "file.wav"` (Futhark's builtin, which reads any format
/// ffmpeg reads; here WAV only, with the `hound` crate): the samples as a
/// `[channels][frames]f64`, one row per channel, in [-1, 1]. Integer PCM
/// samples of b bits are divided by 2^(b-1) (8-bit WAV, stored unsigned,
/// is centred first by `hound`); 32-bit float samples are kept as they are.
/// Errors: a file that cannot be read or is no WAV file hound supports.
pub fn load_wav(path: &Path) -> Result<Value, String> {
    let fail = |e: hound::Error| format!("{}: {e}", path.display());
    let mut reader = hound::WavReader::open(path).map_err(fail)?;
    let spec = reader.spec();
    let samples: Vec<f64> = match spec.sample_format {
        hound::SampleFormat::Float => reader
            .samples::<f32>()
            .map(|x| x.map(f64::from))
            .collect::<Result<_, _>>()
            .map_err(fail)?,
        hound::SampleFormat::Int => {
            let scale = 2f64.powi(i32::from(spec.bits_per_sample) - 1);
            reader
                .samples::<i32>()
                .map(|x| x.map(|v| f64::from(v) / scale))
                .collect::<Result<_, _>>()
                .map_err(fail)?
        }
    };
    let channels = usize::from(spec.channels);
    if channels == 0 {
        return Err(format!("{}: a WAV file without channels", path.display()));
    }
    // WAV interleaves the channels: frame after frame.
    let frames = samples.len() / channels;
    let mut rows: Vec<f64> = Vec::with_capacity(samples.len());
    for c in 0..channels {
        rows.extend(
            samples
                .iter()
                .skip(c)
                .step_by(channels)
                .take(frames)
                .copied(),
        );
    }
    Ok(Value::Array(ArrayValue::from_vec(
        &[channels as i64, frames as i64],
        rows,
    )))
}

fn shape_of(v: &ScriptValue) -> String {
    match v {
        ScriptValue::Tuple(vs) => format!("a {}-tuple", vs.len()),
        ScriptValue::Record(_) => "a record".into(),
        ScriptValue::Opaque { type_name, .. } => format!("a value of type {type_name}"),
        ScriptValue::Str(_) => "a string".into(),
        _ => "a non-tuple value".into(),
    }
}

/// The leaves of argument values in flat order: tuples in order, record
/// fields sorted by name (as the flat parameters of a record are),
/// opaque values as their flat values.
fn leaves<'v>(v: &'v ScriptValue, out: &mut Vec<&'v ScriptValue>) {
    match v {
        ScriptValue::Tuple(vs) => vs.iter().for_each(|v| leaves(v, out)),
        ScriptValue::Record(fs) => {
            let mut sorted: Vec<&(String, ScriptValue)> = fs.iter().collect();
            sorted.sort_by(|a, b| field_order(&a.0, &b.0));
            sorted.into_iter().for_each(|(_, v)| leaves(v, out));
        }
        other => out.push(other),
    }
}

/// Futhark's field order: numeric names numerically, before the others,
/// which are alphabetical.
fn field_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// The flat argument values of `args` for parameters of types `params`.
pub fn flatten_args(args: &[ScriptValue], params: &[ValueType]) -> Result<Vec<Value>, String> {
    let mut ls = Vec::new();
    for a in args {
        leaves(a, &mut ls);
    }
    let mut flat: Vec<Value> = Vec::new();
    let mut i = 0;
    for l in ls {
        match l {
            ScriptValue::Opaque { values, .. } => {
                flat.extend(values.iter().cloned());
                i += values.len();
            }
            ScriptValue::Str(_) => {
                return Err("a string is not a value (only builtins take strings)".into())
            }
            ScriptValue::Value(v) => {
                flat.push(v.clone());
                i += 1;
            }
            ScriptValue::Literal(t) => {
                flat.push(coerce_literal(t, params.get(i).copied())?);
                i += 1;
            }
            ScriptValue::Tuple(_) | ScriptValue::Record(_) => unreachable!("flattened"),
        }
    }
    if flat.len() != params.len() {
        return Err(format!(
            "expected {} flat values ({}), got {}",
            params.len(),
            params
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            flat.len()
        ));
    }
    for (k, (v, t)) in flat.iter().zip(params).enumerate() {
        if v.value_type() != *t {
            return Err(format!(
                "value {} has type {}, but the parameter has type {t}",
                k + 1,
                v.value_type()
            ));
        }
    }
    Ok(flat)
}

/// The flat results of entry point `f` as a script value: one value per
/// source-level result (a tuple of them when there are several); a result
/// that is not a primitive or an array of primitives is opaque.
pub fn entry_results(c: &Compiled, f: &str, results: Vec<Value>) -> ScriptValue {
    let entry = c.program.entry(f);
    let layout = entry.and_then(|e| {
        let sig = e.signature.as_ref()?;
        (sig.results.len() == e.result_arity.len()
            && e.result_arity.iter().sum::<usize>() == results.len())
        .then_some((sig, &e.result_arity))
    });
    let mut parts: Vec<ScriptValue> = match layout {
        None => results.into_iter().map(ScriptValue::Value).collect(),
        Some((sig, arity)) => {
            let mut at = 0;
            let mut parts = Vec::new();
            for (ty, &n) in sig.results.iter().zip(arity.iter()) {
                let vs = &results[at..at + n];
                at += n;
                if ty.opaque.is_none() && n == 1 {
                    parts.push(ScriptValue::Value(vs[0].clone()));
                } else {
                    let text = crate::driver::show_structured(ty, vs).unwrap_or_else(|| {
                        vs.iter()
                            .map(nabla_values::write_value_text)
                            .collect::<Vec<_>>()
                            .join("\n")
                    });
                    parts.push(ScriptValue::Opaque {
                        type_name: ty.name.clone(),
                        values: vs.to_vec(),
                        text,
                    });
                }
            }
            parts
        }
    };
    if parts.len() == 1 {
        parts.remove(0)
    } else {
        ScriptValue::Tuple(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_calls_lets_and_literals() {
        let e = parse("let (a, b) = f 1 [2, 3] in g {x = a, y = (b, 2.5f32)}").unwrap();
        let Exp::Let(names, true, rhs, body, _) = e else {
            panic!("not a let")
        };
        assert_eq!(names, vec!["a", "b"]);
        assert!(matches!(*rhs, Exp::Call(ref f, ref args, _) if f == "f" && args.len() == 2));
        assert!(matches!(*body, Exp::Call(ref f, ref args, _) if f == "g" && args.len() == 1));
        assert!(matches!(
            parse("empty([0][3]f32)").unwrap(),
            Exp::Empty(ref s, PrimType::F32, _) if s == &[0, 3]
        ));
        assert!(matches!(
            parse("$loaddata \"x.in\"").unwrap(),
            Exp::Builtin(..)
        ));
        assert!(matches!(parse("-1.5e-3f64").unwrap(), Exp::Lit(ref t, _) if t == "-1.5e-3f64"));
    }

    #[test]
    fn errors_carry_spans() {
        let e = parse("f (1, 2").unwrap_err();
        assert_eq!(e.span, Some(ScriptSpan { start: 7, end: 7 }));
        let e = parse("f 1 ) 2").unwrap_err();
        assert_eq!(e.span, Some(ScriptSpan { start: 4, end: 5 }));
        assert!(e.render("f 1 ) 2", "<expr>").contains("<expr>:1:5"));
        assert!(parse("let x = 1 x").is_err());
        assert!(parse("f @").is_err());
        assert!(parse("[]").is_err());
        assert!(parse(&"(".repeat(10_000)).is_err());
    }

    #[test]
    fn literals_take_the_parameter_type() {
        let t = ValueType::new(PrimType::F32, 1);
        let v = flatten_args(&[ScriptValue::Literal("[1, 2]".into())], &[t]).unwrap();
        assert_eq!(v[0].value_type(), t);
        let pair = ScriptValue::Tuple(vec![
            ScriptValue::Literal("1".into()),
            ScriptValue::Literal("2".into()),
        ]);
        let i64t = ValueType::new(PrimType::I64, 0);
        assert_eq!(flatten_args(&[pair], &[i64t, i64t]).unwrap().len(), 2);
        assert!(flatten_args(&[ScriptValue::Literal("1".into())], &[i64t, i64t]).is_err());
    }

    proptest::proptest! {
        /// Any text parses or gives an error with a span inside it (whose
        /// rendering does not panic either).
        #[test]
        fn parsing_never_panics(src in "[ -~λ\n]{0,40}|[()\\[\\]{}, =$a-z0-9.\"-]{0,40}") {
            if let Err(e) = parse(&src) {
                let sp = e.span.expect("parse errors have spans");
                proptest::prop_assert!(sp.start <= sp.end && sp.end <= src.len());
                let _ = e.render(&src, "<p>");
            }
        }
    }
}
