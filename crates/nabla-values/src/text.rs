//! Futhark's textual value format (reader and writer), and the stream reader
//! that accepts textual and binary values mixed.
//!
//! The grammar follows `futhark-data` (the library behind `futhark test`,
//! `futhark dataset` and compiled programs' input):
//!
//! * scalars: `true`, `false`; integers in decimal, `0x` hexadecimal or `0b`
//!   binary, with `_` allowed between digits, an optional sign and an optional
//!   type suffix (`i8`…`u64`, or `f16`/`f32`/`f64` on a decimal integer);
//!   decimals `1.5`, `1e3`, `2.5e-3` with an optional float suffix;
//!   `f32.nan`, `f64.inf`, `-f16.inf`;
//! * arrays `[v, v, …]` (a trailing comma is allowed) that must be regular;
//! * empty arrays `empty([0]i32)`, `empty([2][0]f64)` (some dimension must be 0);
//! * values are separated by whitespace; `--` starts a comment to end of line.
//!
//! Types: an array's element type is that of its first element that says its
//! type (a suffix, `nan`/`inf`, a boolean, or an `empty(…)` element); without
//! one, integers are `i32` and arrays with a decimal are `f64` (as the
//! `futhark test` manual says). When the caller gives the expected type,
//! unsuffixed literals take it.
//!
//! Integer literals may be anything in `-2^(n-1) ..= 2^n - 1` for an n-bit
//! type and are wrapped to it (so `-1u8` is 255 and `255i8` is -1, as
//! `futhark-data` does by two's complement truncation); anything beyond is an
//! error.

use crate::binary::read_binary_value;
use crate::elem::{with_elem_type, Elem};
use crate::{ArrayValue, Value, ValueError, ValueType};
use nabla_prim::{f16, PrimType, PrimValue};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

/// Deepest array nesting the text reader accepts (deeper input is an error,
/// never a stack overflow).
pub const MAX_NESTING: usize = 256;

/// Reads all values in `text` (Futhark's textual value format only).
///
/// With `expected`, there must be exactly one value per expected type, each of
/// that element type and rank; unsuffixed literals take the expected element
/// type. Without it, unsuffixed integers are `i32` and decimals `f64`.
///
/// Errors (irregular arrays, bad literals, type mismatches, out-of-range
/// integers, wrong value count) carry the line:column where they were found.
pub fn read_values_text(
    text: &str,
    expected: Option<&[ValueType]>,
) -> Result<Vec<Value>, ValueError> {
    read_stream(text.as_bytes(), expected, false)
}

/// Reads all values in `bytes`, where each value may be textual or in
/// Futhark's binary data format (one that starts with `b` after whitespace is
/// binary), freely mixed, as compiled Futhark programs accept on standard
/// input.
///
/// With `expected`, there must be exactly one value per expected type; binary
/// values must have exactly the expected element type and rank; textual ones
/// follow [`read_values_text`]'s rules. Errors carry a line:column for text and
/// a byte offset for binary data.
pub fn read_values(bytes: &[u8], expected: Option<&[ValueType]>) -> Result<Vec<Value>, ValueError> {
    read_stream(bytes, expected, true)
}

/// Reads a file of values (textual, binary or mixed; see [`read_values`]),
/// gunzipping it first when it starts with the gzip magic bytes `1f 8b` or its
/// name ends in `.gz`. Errors name the file.
pub fn read_values_file(
    path: &Path,
    expected: Option<&[ValueType]>,
) -> Result<Vec<Value>, ValueError> {
    let raw = std::fs::read(path)
        .map_err(|e| ValueError::new(format!("cannot read file: {e}")).in_file(path))?;
    let gz_name = path.extension().is_some_and(|e| e == "gz");
    let gz_magic = raw.starts_with(&[0x1f, 0x8b]);
    let data = if gz_magic || gz_name {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| {
                ValueError::new(format!("cannot decompress gzip data: {e}")).in_file(path)
            })?;
        out
    } else {
        raw
    };
    read_values(&data, expected).map_err(|e| e.in_file(path))
}

fn read_stream(
    src: &[u8],
    expected: Option<&[ValueType]>,
    allow_binary: bool,
) -> Result<Vec<Value>, ValueError> {
    let mut p = Parser { src, pos: 0 };
    let mut out = Vec::new();
    loop {
        p.skip_ws();
        if p.pos >= src.len() {
            break;
        }
        let exp = match expected {
            Some(ts) => match ts.get(out.len()) {
                Some(t) => Some(*t),
                None => {
                    return Err(p.err(
                        p.pos,
                        format!("expected {} value(s), but there are more", ts.len()),
                    ))
                }
            },
            None => None,
        };
        let v = if allow_binary && src[p.pos] == b'b' {
            let start = p.pos;
            let (v, next) = read_binary_value(src, start)?;
            if let Some(t) = exp {
                if v.value_type() != t {
                    return Err(ValueError::at(
                        src,
                        start,
                        false,
                        format!(
                            "expected a value of type {t}, but the binary value has type {}",
                            v.value_type()
                        ),
                    ));
                }
            }
            p.pos = next;
            v
        } else {
            p.parse_value(exp)?
        };
        out.push(v);
    }
    if let Some(ts) = expected {
        if out.len() != ts.len() {
            return Err(p.err(
                src.len(),
                format!(
                    "expected {} value(s), but found only {}",
                    ts.len(),
                    out.len()
                ),
            ));
        }
    }
    Ok(out)
}

/// A scalar literal as written, before its type is known.
#[derive(Clone, Copy, Debug)]
struct Lit {
    kind: LitKind,
    suffix: Option<PrimType>,
    /// Byte offset where the literal starts.
    pos: usize,
}

#[derive(Clone, Copy, Debug)]
enum LitKind {
    Int {
        neg: bool,
        mag: u64,
    },
    /// A decimal with `.` or an exponent: the text is `src[pos..end]`.
    Float {
        end: usize,
    },
    Bool(bool),
    /// `fNN.nan` / `fNN.inf` / `-fNN.inf`: its type is the suffix.
    Special(f64),
}

impl Lit {
    /// The type this literal insists on, if any.
    fn explicit_type(&self) -> Option<PrimType> {
        match self.kind {
            LitKind::Bool(_) => Some(PrimType::Bool),
            _ => self.suffix,
        }
    }
}

/// What has been learnt about one value while parsing it.
#[derive(Default)]
struct Collect {
    lits: Vec<Lit>,
    /// Known size of each dimension.
    dims: Vec<Option<i64>>,
    /// The rank, once a scalar or `empty(…)` fixed it.
    rank: Option<usize>,
    /// Lower bound on the rank from arrays seen.
    min_rank: usize,
    /// First explicit element type and where it was written.
    first_type: Option<(PrimType, usize)>,
    any_float: bool,
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Parser<'a> {
    fn err(&self, at: usize, msg: impl Into<String>) -> ValueError {
        ValueError::at(self.src, at, true, msg)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn starts_with(&self, s: &[u8]) -> bool {
        self.src[self.pos..].starts_with(s)
    }

    /// Skips whitespace and `--` comments.
    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.starts_with(b"--") {
                while let Some(c) = self.peek() {
                    if c == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            None => "end of input".to_string(),
            Some(_) => {
                let rest = &self.src[self.pos..];
                let end = rest
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || matches!(b, b',' | b']' | b'['))
                    .unwrap_or(rest.len())
                    .clamp(1, 20);
                format!("'{}'", String::from_utf8_lossy(&rest[..end]))
            }
        }
    }

    fn parse_value(&mut self, expected: Option<ValueType>) -> Result<Value, ValueError> {
        let start = self.pos;
        let mut c = Collect::default();
        self.parse_elem(&mut c, 0)?;
        self.finish(c, start, expected)
    }

    fn parse_elem(&mut self, c: &mut Collect, depth: usize) -> Result<(), ValueError> {
        match self.peek() {
            Some(b'[') => self.parse_array(c, depth),
            Some(b'"') => self.parse_string(c, depth),
            Some(b'e') if self.starts_with(b"empty") => self.parse_empty(c, depth),
            _ => {
                let lit = self.parse_scalar()?;
                if depth < c.min_rank || c.rank.is_some_and(|r| r != depth) {
                    return Err(self.err(
                        lit.pos,
                        "irregular array: a scalar where an array is expected",
                    ));
                }
                c.rank = Some(depth);
                if let Some(t) = lit.explicit_type() {
                    if c.first_type.is_none() {
                        c.first_type = Some((t, lit.pos));
                    }
                }
                if matches!(lit.kind, LitKind::Float { .. }) {
                    c.any_float = true;
                }
                c.lits.push(lit);
                Ok(())
            }
        }
    }

    fn set_dim(&self, c: &mut Collect, depth: usize, n: i64, at: usize) -> Result<(), ValueError> {
        if c.dims.len() <= depth {
            c.dims.resize(depth + 1, None);
        }
        match c.dims[depth] {
            Some(m) if m != n => Err(self.err(
                at,
                format!("irregular array: this row has {n} elements, but an earlier one has {m}"),
            )),
            _ => {
                c.dims[depth] = Some(n);
                Ok(())
            }
        }
    }

    fn parse_array(&mut self, c: &mut Collect, depth: usize) -> Result<(), ValueError> {
        let open = self.pos;
        if depth >= MAX_NESTING {
            return Err(self.err(open, format!("arrays nested more than {MAX_NESTING} deep")));
        }
        if c.rank.is_some_and(|r| depth >= r) {
            return Err(self.err(open, "irregular array: an array where a scalar is expected"));
        }
        c.min_rank = c.min_rank.max(depth + 1);
        self.pos += 1; // '['
        self.skip_ws();
        let mut count: i64 = 0;
        loop {
            if self.peek() == Some(b']') {
                self.pos += 1;
                break;
            }
            if self.peek().is_none() {
                return Err(self.err(open, "unclosed '['"));
            }
            self.parse_elem(c, depth + 1)?;
            count += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                None => return Err(self.err(open, "unclosed '['")),
                Some(_) => {
                    return Err(self.err(
                        self.pos,
                        format!("expected ',' or ']', found {}", self.describe_here()),
                    ))
                }
            }
        }
        self.set_dim(c, depth, count, open)
    }

    /// A string literal `"…"`: as in Futhark's value format, the array of
    /// the `u8`s of its UTF-8 encoding (escapes `\n \t \r \0 \\ \" \xHH`).
    fn parse_string(&mut self, c: &mut Collect, depth: usize) -> Result<(), ValueError> {
        let open = self.pos;
        if c.rank.is_some_and(|r| r != depth + 1) || c.min_rank > depth + 1 {
            return Err(self.err(open, "irregular array: a string where it does not fit"));
        }
        c.min_rank = c.min_rank.max(depth + 1);
        c.rank = Some(depth + 1);
        if c.first_type.is_none() {
            c.first_type = Some((PrimType::U8, open));
        }
        self.pos += 1; // '"'
        let mut count: i64 = 0;
        loop {
            let at = self.pos;
            let byte = match self.peek() {
                None => return Err(self.err(open, "unclosed string literal")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    let esc = self.src.get(self.pos + 1).copied();
                    self.pos += 2;
                    match esc {
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'r') => b'\r',
                        Some(b'0') => 0,
                        Some(b'\\') => b'\\',
                        Some(b'"') => b'"',
                        Some(b'x') => {
                            let hex = self.src.get(self.pos..self.pos + 2).unwrap_or(b"");
                            let v = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.err(at, "expected two hex digits after \\x"))?;
                            self.pos += 2;
                            v
                        }
                        _ => return Err(self.err(at, "unknown escape in a string literal")),
                    }
                }
                Some(b) => {
                    self.pos += 1;
                    b
                }
            };
            c.lits.push(Lit {
                kind: LitKind::Int {
                    neg: false,
                    mag: u64::from(byte),
                },
                suffix: Some(PrimType::U8),
                pos: at,
            });
            count += 1;
        }
        self.set_dim(c, depth, count, open)
    }

    /// `empty([d1]…[dn]t)` at nesting depth `depth`.
    fn parse_empty(&mut self, c: &mut Collect, depth: usize) -> Result<(), ValueError> {
        let start = self.pos;
        self.pos += 5; // "empty"
        self.skip_ws();
        if self.peek() != Some(b'(') {
            return Err(self.err(start, "expected '(' after 'empty'"));
        }
        self.pos += 1;
        self.skip_ws();
        let mut dims = Vec::new();
        while self.peek() == Some(b'[') {
            self.pos += 1;
            self.skip_ws();
            let dpos = self.pos;
            let lit = self.parse_scalar()?;
            let d = match (lit.kind, lit.suffix) {
                (LitKind::Int { neg: false, mag }, None | Some(PrimType::I64))
                    if mag <= i64::MAX as u64 =>
                {
                    mag as i64
                }
                _ => return Err(self.err(dpos, "expected a non-negative array size")),
            };
            dims.push(d);
            self.skip_ws();
            if self.peek() != Some(b']') {
                return Err(self.err(
                    self.pos,
                    format!("expected ']', found {}", self.describe_here()),
                ));
            }
            self.pos += 1;
            self.skip_ws();
            if dims.len() > MAX_NESTING {
                return Err(self.err(start, format!("more than {MAX_NESTING} dimensions")));
            }
        }
        let tpos = self.pos;
        let name_end = self.src[self.pos..]
            .iter()
            .position(|&b| !is_ident_char(b))
            .map_or(self.src.len(), |p| self.pos + p);
        let name = std::str::from_utf8(&self.src[self.pos..name_end]).unwrap_or("");
        let t = PrimType::from_name(name).ok_or_else(|| {
            self.err(
                tpos,
                format!("expected a primitive type, found {}", self.describe_here()),
            )
        })?;
        self.pos = name_end;
        self.skip_ws();
        if self.peek() != Some(b')') {
            return Err(self.err(
                self.pos,
                format!("expected ')', found {}", self.describe_here()),
            ));
        }
        self.pos += 1;
        if dims.is_empty() {
            return Err(self.err(
                start,
                "empty(…) needs at least one dimension, as in empty([0]i32)",
            ));
        }
        if !dims.contains(&0) {
            return Err(self.err(start, "empty(…) needs at least one dimension of size 0"));
        }
        let rank = depth + dims.len();
        if rank < c.min_rank || c.rank.is_some_and(|r| r != rank) {
            return Err(self.err(
                start,
                "irregular array: this empty array has the wrong rank",
            ));
        }
        c.rank = Some(rank);
        c.min_rank = rank;
        for (k, &d) in dims.iter().enumerate() {
            self.set_dim(c, depth + k, d, start)?;
        }
        if c.first_type.is_none() {
            c.first_type = Some((t, tpos));
        } else if let Some((ft, _)) = c.first_type {
            if ft != t {
                return Err(self.err(
                    tpos,
                    format!("element type {t} differs from the array's element type {ft}"),
                ));
            }
        }
        Ok(())
    }

    fn parse_scalar(&mut self) -> Result<Lit, ValueError> {
        let start = self.pos;
        for (word, b) in [(&b"true"[..], true), (&b"false"[..], false)] {
            if self.starts_with(word)
                && !self
                    .src
                    .get(self.pos + word.len())
                    .is_some_and(|&c| is_ident_char(c))
            {
                self.pos += word.len();
                return Ok(Lit {
                    kind: LitKind::Bool(b),
                    suffix: None,
                    pos: start,
                });
            }
        }
        let mut neg = false;
        match self.peek() {
            Some(b'-') => {
                neg = true;
                self.pos += 1;
            }
            Some(b'+') => self.pos += 1,
            _ => {}
        }
        // fNN.nan / fNN.inf
        for t in [PrimType::F16, PrimType::F32, PrimType::F64] {
            let name = t.name().as_bytes();
            if self.starts_with(name) && self.src.get(self.pos + 3) == Some(&b'.') {
                self.pos += 4;
                let w_end = self.src[self.pos..]
                    .iter()
                    .position(|&b| !is_ident_char(b))
                    .map_or(self.src.len(), |p| self.pos + p);
                let word = &self.src[self.pos..w_end];
                let x = match word {
                    b"nan" => f64::NAN,
                    b"inf" if neg => f64::NEG_INFINITY,
                    b"inf" => f64::INFINITY,
                    _ => return Err(self.err(start, format!("expected {t}.nan or {t}.inf"))),
                };
                self.pos = w_end;
                self.check_end_of_literal(start)?;
                return Ok(Lit {
                    kind: LitKind::Special(x),
                    suffix: Some(t),
                    pos: start,
                });
            }
        }
        let kind = match self.peek() {
            Some(b'0') if matches!(self.src.get(self.pos + 1), Some(b'x' | b'X')) => {
                self.pos += 2;
                LitKind::Int {
                    neg,
                    mag: self.digits(16, start)?,
                }
            }
            Some(b'0') if matches!(self.src.get(self.pos + 1), Some(b'b' | b'B')) => {
                self.pos += 2;
                LitKind::Int {
                    neg,
                    mag: self.digits(2, start)?,
                }
            }
            Some(b) if b.is_ascii_digit() => {
                let mag = self.digits(10, start);
                let mut is_float = false;
                if self.peek() == Some(b'.')
                    && self
                        .src
                        .get(self.pos + 1)
                        .is_some_and(|b| b.is_ascii_digit())
                {
                    self.pos += 1;
                    self.skip_digits();
                    is_float = true;
                }
                if matches!(self.peek(), Some(b'e' | b'E')) {
                    let mut q = self.pos + 1;
                    if matches!(self.src.get(q), Some(b'+' | b'-')) {
                        q += 1;
                    }
                    if self.src.get(q).is_some_and(|b| b.is_ascii_digit()) {
                        self.pos = q;
                        self.skip_digits();
                        is_float = true;
                    }
                }
                if is_float {
                    LitKind::Float { end: self.pos }
                } else {
                    LitKind::Int { neg, mag: mag? }
                }
            }
            _ => {
                self.pos = start;
                return Err(self.err(
                    start,
                    format!("expected a value, found {}", self.describe_here()),
                ));
            }
        };
        // Optional type suffix.
        let s_start = self.pos;
        let s_end = self.src[self.pos..]
            .iter()
            .position(|&b| !is_ident_char(b))
            .map_or(self.src.len(), |p| self.pos + p);
        let suffix = if s_end > s_start {
            let s = std::str::from_utf8(&self.src[s_start..s_end]).unwrap_or("");
            match PrimType::from_name(s) {
                Some(t) if t != PrimType::Bool => {
                    if t.is_int() && matches!(kind, LitKind::Float { .. }) {
                        return Err(self.err(
                            s_start,
                            format!("a decimal number cannot have the integer type suffix {t}"),
                        ));
                    }
                    Some(t)
                }
                _ => {
                    return Err(self.err(
                        s_start,
                        format!(
                            "invalid type suffix or character after number: '{}'",
                            String::from_utf8_lossy(&self.src[s_start..s_end])
                        ),
                    ))
                }
            }
        } else {
            None
        };
        self.pos = s_end;
        self.check_end_of_literal(start)?;
        Ok(Lit {
            kind,
            suffix,
            pos: start,
        })
    }

    fn check_end_of_literal(&self, start: usize) -> Result<(), ValueError> {
        match self.peek() {
            Some(b) if is_ident_char(b) || b == b'.' => Err(self.err(
                self.pos,
                format!(
                    "unexpected character '{}' after the literal starting here: {}",
                    b as char,
                    String::from_utf8_lossy(&self.src[start..self.pos])
                ),
            )),
            _ => Ok(()),
        }
    }

    fn skip_digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit() || b == b'_') {
            self.pos += 1;
        }
    }

    /// Digits in `radix` with `_` separators (the first must be a digit);
    /// errors if none or if the magnitude exceeds `u64`. Always consumes all
    /// digit characters so that error positions are sensible.
    fn digits(&mut self, radix: u32, start: usize) -> Result<u64, ValueError> {
        let first = self.pos;
        if !self.peek().is_some_and(|b| (b as char).is_digit(radix)) {
            return Err(self.err(first, "expected a digit"));
        }
        let mut mag: u64 = 0;
        let mut overflow = false;
        while let Some(b) = self.peek() {
            if b == b'_' {
                self.pos += 1;
                continue;
            }
            match (b as char).to_digit(radix) {
                Some(d) => {
                    match mag
                        .checked_mul(radix as u64)
                        .and_then(|m| m.checked_add(d as u64))
                    {
                        Some(m) => mag = m,
                        None => overflow = true,
                    }
                    self.pos += 1;
                }
                None => break,
            }
        }
        if overflow {
            return Err(self.err(start, "integer literal too large"));
        }
        Ok(mag)
    }

    /// Turns the collected literals into a value.
    fn finish(
        &self,
        c: Collect,
        start: usize,
        expected: Option<ValueType>,
    ) -> Result<Value, ValueError> {
        let rank =
            match (c.rank, expected) {
                (Some(r), Some(t)) if r != t.rank => {
                    return Err(self.err(
                        start,
                        format!("expected a value of type {t}, but this value has rank {r}"),
                    ))
                }
                (Some(r), _) => r,
                (None, Some(t)) if t.rank >= c.min_rank => t.rank,
                (None, Some(t)) => {
                    return Err(self.err(
                        start,
                        format!(
                            "expected a value of type {t}, but this value has rank at least {}",
                            c.min_rank
                        ),
                    ))
                }
                (None, None) => return Err(self.err(
                    start,
                    "cannot tell the type of an empty array; write it as empty([0]t) with a type t",
                )),
            };
        let elem = match (expected, c.first_type) {
            (Some(t), Some((ft, at))) if ft != t.elem => {
                return Err(self.err(
                    at,
                    format!("expected a value of type {t}, found an element of type {ft}"),
                ))
            }
            (Some(t), _) => t.elem,
            (None, Some((ft, _))) => ft,
            (None, None) if c.any_float => PrimType::F64,
            (None, None) => PrimType::I32,
        };
        let mut shape: Vec<i64> = c.dims.iter().map(|d| d.unwrap_or(0)).collect();
        shape.resize(rank, 0);
        let n = crate::shape_elems(&shape).ok_or_else(|| self.err(start, "array too large"))?;
        if n != c.lits.len() {
            return Err(self.err(start, "irregular array"));
        }
        let buffer = with_elem_type!(elem, T => {
            let mut v: Vec<T> = Vec::with_capacity(n);
            for lit in &c.lits {
                v.push(<T as FromLit>::from_lit(lit, self.src).map_err(|m| self.err(lit.pos, m))?);
            }
            T::into_buffer(v)
        });
        if rank == 0 {
            Ok(Value::Prim(buffer.get(0)))
        } else {
            Ok(Value::Array(ArrayValue {
                shape: shape.into(),
                offset: 0,
                buffer,
            }))
        }
    }
}

/// Conversion of a literal to an element type, with Futhark's typing rules.
trait FromLit: Sized {
    fn from_lit(lit: &Lit, src: &[u8]) -> Result<Self, String>;
}

fn type_clash(lit: &Lit, want: PrimType) -> Option<String> {
    match lit.explicit_type() {
        Some(t) if t != want => Some(format!(
            "found a literal of type {t} in a value of element type {want}"
        )),
        _ => None,
    }
}

fn float_text(lit: &Lit, end: usize, src: &[u8]) -> String {
    src[lit.pos..end]
        .iter()
        .filter(|&&b| b != b'_')
        .map(|&b| b as char)
        .collect()
}

macro_rules! int_from_lit {
    ($($t:ty),*) => {$(
        impl FromLit for $t {
            fn from_lit(lit: &Lit, _src: &[u8]) -> Result<Self, String> {
                let want = <$t as Elem>::TYPE;
                if let Some(m) = type_clash(lit, want) {
                    return Err(m);
                }
                match lit.kind {
                    LitKind::Int { neg, mag } => {
                        let bits = want.bits();
                        let v: i128 = if neg { -(mag as i128) } else { mag as i128 };
                        let lo = -(1i128 << (bits - 1));
                        let hi = (1i128 << bits) - 1;
                        // A literal with its type written (`32767i8`) wraps
                        // to that type, as Futhark's value reader does; an
                        // unsuffixed one must fit.
                        if (v < lo || v > hi) && lit.explicit_type().is_none() {
                            return Err(format!("integer literal {v} does not fit in type {want}"));
                        }
                        Ok(v as $t)
                    }
                    _ => Err(format!("expected a value of element type {want}, found a {}", kind_name(lit))),
                }
            }
        }
    )*};
}
int_from_lit!(i8, i16, i32, i64, u8, u16, u32, u64);

fn kind_name(lit: &Lit) -> &'static str {
    match lit.kind {
        LitKind::Int { .. } => "integer",
        LitKind::Float { .. } | LitKind::Special(_) => "floating-point number",
        LitKind::Bool(_) => "boolean",
    }
}

impl FromLit for f64 {
    fn from_lit(lit: &Lit, src: &[u8]) -> Result<Self, String> {
        if let Some(m) = type_clash(lit, PrimType::F64) {
            return Err(m);
        }
        match lit.kind {
            LitKind::Int { neg, mag } => Ok(if neg { -(mag as f64) } else { mag as f64 }),
            LitKind::Float { end } => float_text(lit, end, src)
                .parse::<f64>()
                .map_err(|e| format!("bad floating-point literal: {e}")),
            LitKind::Special(x) => Ok(x),
            LitKind::Bool(_) => Err("expected a value of element type f64, found a boolean".into()),
        }
    }
}

impl FromLit for f32 {
    fn from_lit(lit: &Lit, src: &[u8]) -> Result<Self, String> {
        if let Some(m) = type_clash(lit, PrimType::F32) {
            return Err(m);
        }
        match lit.kind {
            LitKind::Int { neg, mag } => Ok(if neg { -(mag as f32) } else { mag as f32 }),
            LitKind::Float { end } => float_text(lit, end, src)
                .parse::<f32>()
                .map_err(|e| format!("bad floating-point literal: {e}")),
            LitKind::Special(x) => Ok(x as f32),
            LitKind::Bool(_) => Err("expected a value of element type f32, found a boolean".into()),
        }
    }
}

impl FromLit for f16 {
    fn from_lit(lit: &Lit, src: &[u8]) -> Result<Self, String> {
        if let Some(m) = type_clash(lit, PrimType::F16) {
            return Err(m);
        }
        // Via f64: the f64 nearest the decimal is so close that rounding it to
        // f16 gives the f16 nearest the decimal except in vanishingly rare ties.
        let x = match lit.kind {
            LitKind::Int { neg, mag } => {
                if neg {
                    -(mag as f64)
                } else {
                    mag as f64
                }
            }
            LitKind::Float { end } => float_text(lit, end, src)
                .parse::<f64>()
                .map_err(|e| format!("bad floating-point literal: {e}"))?,
            LitKind::Special(x) => x,
            LitKind::Bool(_) => {
                return Err("expected a value of element type f16, found a boolean".into())
            }
        };
        Ok(f16::from_f64(x))
    }
}

impl FromLit for bool {
    fn from_lit(lit: &Lit, _src: &[u8]) -> Result<Self, String> {
        match lit.kind {
            LitKind::Bool(b) => Ok(b),
            _ => Err(format!("expected a boolean, found a {}", kind_name(lit))),
        }
    }
}

// ---------------------------------------------------------------- writer

/// Futhark's textual rendering of a value, as `futhark run` and
/// `futhark dataset --text` print it: every scalar carries its type suffix
/// (`1i32`, `2.5f64`; booleans are `true`/`false`), array elements are
/// separated by `", "`, arrays with no elements are `empty([2][0]f64)`, and
/// special floats are `f32.nan`, `f64.inf`, `-f64.inf`.
///
/// Floats use the shortest decimal digits that read back to the same value
/// (so text round-trips exactly), laid out as Haskell's `show` does, which is
/// what `futhark-data` prints: `1.0`, `0.1`, `1234567.0`, `1.0e7`, `1.0e-2`.
/// `f16` values are printed through `f32`.
pub fn write_value_text(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Prim(p) => write_prim(&mut out, *p),
        Value::Array(a) => write_array(&mut out, a),
    }
    out
}

fn write_array(out: &mut String, a: &ArrayValue) {
    if a.num_elems() == 0 {
        out.push_str("empty(");
        for d in a.shape() {
            let _ = write!(out, "[{d}]");
        }
        out.push_str(a.elem_type().name());
        out.push(')');
        return;
    }
    crate::elem::on_buffer!(&a.buffer, v => {
        let elems = &v[a.offset..a.offset + a.num_elems()];
        write_nested(out, a.shape(), elems);
    })
}

fn write_nested<T: Elem>(out: &mut String, shape: &[i64], elems: &[T]) {
    match shape {
        [] => write_prim(out, elems[0].to_prim()),
        [_, rest @ ..] => {
            let row = crate::shape_elems(rest).unwrap_or(0);
            out.push('[');
            for (i, chunk) in elems.chunks(row.max(1)).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_nested(out, rest, chunk);
            }
            out.push(']');
        }
    }
}

fn write_prim(out: &mut String, p: PrimValue) {
    let _ = match p {
        PrimValue::I8(x) => write!(out, "{x}i8"),
        PrimValue::I16(x) => write!(out, "{x}i16"),
        PrimValue::I32(x) => write!(out, "{x}i32"),
        PrimValue::I64(x) => write!(out, "{x}i64"),
        PrimValue::U8(x) => write!(out, "{x}u8"),
        PrimValue::U16(x) => write!(out, "{x}u16"),
        PrimValue::U32(x) => write!(out, "{x}u32"),
        PrimValue::U64(x) => write!(out, "{x}u64"),
        PrimValue::F16(x) => {
            let y = x.to_f32();
            write_float(out, y.is_nan(), y.is_infinite(), y < 0.0, y, "f16");
            Ok(())
        }
        PrimValue::F32(x) => {
            write_float(out, x.is_nan(), x.is_infinite(), x < 0.0, x, "f32");
            Ok(())
        }
        PrimValue::F64(x) => {
            write_float(out, x.is_nan(), x.is_infinite(), x < 0.0, x, "f64");
            Ok(())
        }
        PrimValue::Bool(b) => write!(out, "{b}"),
    };
}

/// A small stack buffer for formatting one number without allocating.
struct StackBuf {
    buf: [u8; 64],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn write_float(
    out: &mut String,
    nan: bool,
    inf: bool,
    neg: bool,
    x: impl std::fmt::LowerExp,
    suffix: &str,
) {
    if nan {
        out.push_str(suffix);
        out.push_str(".nan");
        return;
    }
    if inf {
        if neg {
            out.push('-');
        }
        out.push_str(suffix);
        out.push_str(".inf");
        return;
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: "-1.2345e7".
    let mut sb = StackBuf {
        buf: [0; 64],
        len: 0,
    };
    let _ = write!(sb, "{x:e}");
    let s = std::str::from_utf8(&sb.buf[..sb.len]).unwrap_or("0e0");
    let s = match s.strip_prefix('-') {
        Some(r) => {
            out.push('-');
            r
        }
        None => s,
    };
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    // Digits without the point, in a stack buffer.
    let mut digits = [0u8; 64];
    let mut nd = 0;
    for &c in mant.as_bytes() {
        if c != b'.' {
            digits[nd] = c;
            nd += 1;
        }
    }
    let ds = std::str::from_utf8(&digits[..nd]).unwrap_or("0");
    haskell_float_layout(out, ds, exp);
    out.push_str(suffix);
}

/// Appends the value `d1.d2d3… × 10^exp` (digits `ds`, no leading zeros
/// except a lone "0") laid out as Haskell's `show` for floating-point numbers
/// does: fixed notation when `0.1 <= |x| < 10^7`, else `d.ddde<n>`; always at
/// least one digit after the point.
fn haskell_float_layout(out: &mut String, ds: &str, exp: i64) {
    if ds == "0" {
        out.push_str("0.0");
        return;
    }
    // Haskell's floatToDigits exponent: x = 0.ds × 10^e.
    let e = exp + 1;
    if (0..=7).contains(&e) {
        let e = e as usize;
        if e == 0 {
            out.push_str("0.");
            out.push_str(ds);
        } else if ds.len() <= e {
            out.push_str(ds);
            for _ in ds.len()..e {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&ds[..e]);
            out.push('.');
            out.push_str(&ds[e..]);
        }
    } else {
        let (first, rest) = ds.split_at(1);
        out.push_str(first);
        out.push('.');
        out.push_str(if rest.is_empty() { "0" } else { rest });
        let _ = write!(out, "e{}", e - 1);
    }
}
