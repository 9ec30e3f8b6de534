//! Parsing of Futhark numeric literals, for the lexer and for the value reader.
//!
//! Syntax accepted (Futhark's lexer, `Language.Futhark.Parser.Lexer`), with
//! `_` allowed anywhere after the first digit as a separator:
//!
//! * integers: decimal `123`, hexadecimal `0x7f`/`0X7F`, binary `0b1010`, and
//!   Futhark's Roman-numeral literals `0rXIV`;
//! * floats: decimal `1.5`, `3`, `1e10`, `2.5E-3`, `1.` and hexadecimal
//!   floats `0x1.8p3` (= 12.0; the `.` part and the `p` exponent may each be
//!   left out here, Futhark's lexer requires both);
//! * an optional leading `-` on both (the value reader's negative numbers; in
//!   source code the parser folds `-` into literals).
//!
//! Type suffixes (`i32`, `f64`, …) are *not* part of the text given to
//! [`parse_int_literal`] and [`parse_float_literal`]; [`parse_prim_literal`]
//! handles a whole suffixed token as written in Futhark's value format.

use crate::{PrimError, PrimType, PrimValue};
use half::f16;

fn invalid(text: &str, what: &str) -> PrimError {
    PrimError::InvalidLiteral(format!("`{text}` is not a valid {what} literal"))
}

/// Splits off a leading `-`.
fn split_sign(text: &str) -> (bool, &str) {
    match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// Removes `_` separators, rejecting a leading `_` and empty input.
fn strip_underscores(body: &str) -> Option<String> {
    if body.is_empty() || body.starts_with('_') {
        return None;
    }
    Some(body.chars().filter(|&c| c != '_').collect())
}

/// The value of a Roman numeral, matched greedily as Futhark's lexer does.
fn roman_value(s: &str) -> Option<u128> {
    const NUMERALS: [(&str, u128); 13] = [
        ("M", 1000),
        ("CM", 900),
        ("D", 500),
        ("CD", 400),
        ("C", 100),
        ("XC", 90),
        ("L", 50),
        ("XL", 40),
        ("X", 10),
        ("IX", 9),
        ("V", 5),
        ("IV", 4),
        ("I", 1),
    ];
    if s.is_empty() {
        return None;
    }
    let mut rest = s;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let &(text, value) = NUMERALS.iter().find(|(t, _)| rest.starts_with(t))?;
        total = total.checked_add(value)?;
        rest = &rest[text.len()..];
    }
    Some(total)
}

/// Parses digits in `radix` into a `u128`; `None` on a bad digit, `Some(None)`
/// on overflow.
fn digits_value(s: &str, radix: u32) -> Option<Option<u128>> {
    if s.is_empty() {
        return None;
    }
    let mut acc: Option<u128> = Some(0);
    for c in s.chars() {
        let d = c.to_digit(radix)? as u128;
        acc = acc.and_then(|a| a.checked_mul(radix as u128)?.checked_add(d));
    }
    Some(acc)
}

/// Magnitude of an (unsigned, separator-free) integer literal body, and
/// whether it was written in a bit-pattern notation (hex or binary).
fn int_magnitude(text: &str, body: &str) -> Result<(u128, bool), PrimError> {
    let (digits, radix) = if let Some(r) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (r, 16)
    } else if let Some(r) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (r, 2)
    } else if let Some(r) = body.strip_prefix("0r").or(body.strip_prefix("0R")) {
        let cleaned = strip_underscores(r).ok_or_else(|| invalid(text, "integer"))?;
        let v = roman_value(&cleaned).ok_or_else(|| invalid(text, "integer"))?;
        return Ok((v, false));
    } else {
        (body, 10)
    };
    let cleaned = strip_underscores(digits).ok_or_else(|| invalid(text, "integer"))?;
    match digits_value(&cleaned, radix) {
        None => Err(invalid(text, "integer")),
        Some(None) => Err(PrimError::LiteralOutOfRange(format!(
            "`{text}` is too large for any integer type"
        ))),
        Some(Some(v)) => Ok((v, radix != 10)),
    }
}

/// Parses an integer literal (decimal, `0x` hex, `0b` binary, `0r` Roman,
/// `_` separators, optional leading `-`, no type suffix) as a value of type
/// `ty`.
///
/// Range rules: decimal literals must lie in the type's range (`-128..=127`
/// for `i8`, `0..=255` for `u8`). Hex and binary literals are bit patterns:
/// any value below `2^bits` is accepted and reinterpreted, so `0xffi8` is
/// `-1i8` (as Futhark's lexer does, which wraps); with a `-` they must lie in
/// the type's range. If `ty` is a float type the integer is converted to the
/// nearest float (Futhark allows `3f64`). Errors: [`PrimError::InvalidLiteral`]
/// for malformed text or `ty == bool`, [`PrimError::LiteralOutOfRange`] when
/// the value does not fit.
pub fn parse_int_literal(text: &str, ty: PrimType) -> Result<PrimValue, PrimError> {
    let (neg, body) = split_sign(text);
    let (mag, bit_pattern) = int_magnitude(text, body)?;
    if ty == PrimType::Bool {
        return Err(PrimError::InvalidLiteral(format!(
            "integer literal `{text}` cannot have type bool"
        )));
    }
    if ty.is_float() {
        let v = mag as f64;
        return Ok(PrimValue::from_f64(ty, if neg { -v } else { v }));
    }
    let bits = ty.bits();
    let out_of_range =
        || PrimError::LiteralOutOfRange(format!("literal `{text}` is out of range for type {ty}"));
    let signed = ty.is_signed_int();
    let value: i128 = if neg {
        let limit: u128 = if signed { 1u128 << (bits - 1) } else { 0 };
        if mag > limit {
            return Err(out_of_range());
        }
        -(mag as i128)
    } else {
        let limit: u128 = if signed && !bit_pattern {
            (1u128 << (bits - 1)) - 1
        } else {
            (1u128 << bits) - 1
        };
        if mag > limit {
            return Err(out_of_range());
        }
        mag as i128
    };
    Ok(PrimValue::from_bits(ty, value as u64))
}

/// `x · 2^e` without intermediate overflow or underflow for large `|e|`.
fn scale_by_pow2(mut x: f64, mut e: i64) -> f64 {
    let big = 2f64.powi(1000);
    let small = 2f64.powi(-1000);
    while e > 1000 {
        x *= big;
        e -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while e < -1000 {
        x *= small;
        e += 1000;
        if x == 0.0 {
            return x;
        }
    }
    x * 2f64.powi(e as i32)
}

/// Value of a hexadecimal float body (after `0x`, separators removed):
/// `HEX[.HEX][p[+-]DEC]`.
fn hex_float_value(s: &str) -> Option<f64> {
    let (mant, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() {
        return None;
    }
    let mut m: u64 = 0;
    let mut e2: i64 = 0;
    let mut sticky = false;
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = c.to_digit(16)? as u64;
        let in_frac = i >= int_part.len();
        if m >> 60 == 0 {
            m = m * 16 + d;
            if in_frac {
                e2 -= 4;
            }
        } else {
            // No room: drop the digit, remembering whether it was nonzero.
            sticky |= d != 0;
            if !in_frac {
                e2 += 4;
            }
        }
    }
    if sticky {
        m |= 1; // enough to break ties correctly in the conversion below
    }
    let e: i64 = match exp {
        None => 0,
        Some(t) => {
            let (eneg, digits) = match t.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, t.strip_prefix('+').unwrap_or(t)),
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Clamp absurd exponents; the result is 0 or inf anyway.
            let v: i64 = digits.parse::<i64>().unwrap_or(100_000).min(100_000);
            if eneg {
                -v
            } else {
                v
            }
        }
    };
    Some(scale_by_pow2(m as f64, e + e2))
}

/// Checks the decimal float syntax `DIGITS[.[DIGITS]][(e|E)[+|-]DIGITS]`.
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        digits(&mut i);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Parses a float literal (decimal with optional fraction and exponent, or a
/// hexadecimal float `0x1.8p3`; `_` separators; optional leading `-`; no type
/// suffix) as a value of float type `ty`.
///
/// Decimal text is correctly rounded to `f32`/`f64`; `f16` rounds via `f64`
/// (a double rounding that can differ from the exact result only for decimal
/// strings extremely close to an `f16` tie). Values too large become ±inf.
/// Errors: [`PrimError::InvalidLiteral`] for malformed text or a non-float
/// `ty`.
pub fn parse_float_literal(text: &str, ty: PrimType) -> Result<PrimValue, PrimError> {
    if !ty.is_float() {
        return Err(PrimError::InvalidLiteral(format!(
            "float literal `{text}` cannot have type {ty}"
        )));
    }
    let (neg, body) = split_sign(text);
    let hex = body.strip_prefix("0x").or(body.strip_prefix("0X"));
    let v = if let Some(h) = hex {
        let cleaned = strip_underscores(h).ok_or_else(|| invalid(text, "float"))?;
        let v = hex_float_value(&cleaned).ok_or_else(|| invalid(text, "float"))?;
        if neg {
            -v
        } else {
            v
        }
    } else {
        let cleaned = strip_underscores(body).ok_or_else(|| invalid(text, "float"))?;
        if !is_decimal_float(&cleaned) {
            return Err(invalid(text, "float"));
        }
        let signed = if neg { format!("-{cleaned}") } else { cleaned };
        if ty == PrimType::F32 {
            let v: f32 = signed.parse().map_err(|_| invalid(text, "float"))?;
            return Ok(PrimValue::F32(v));
        }
        signed.parse::<f64>().map_err(|_| invalid(text, "float"))?
    };
    Ok(match ty {
        PrimType::F16 => PrimValue::F16(f16::from_f64(v)),
        PrimType::F32 => PrimValue::F32(v as f32),
        _ => PrimValue::F64(v),
    })
}

const INT_SUFFIXES: [(&str, PrimType); 8] = [
    ("i8", PrimType::I8),
    ("i16", PrimType::I16),
    ("i32", PrimType::I32),
    ("i64", PrimType::I64),
    ("u8", PrimType::U8),
    ("u16", PrimType::U16),
    ("u32", PrimType::U32),
    ("u64", PrimType::U64),
];
const FLOAT_SUFFIXES: [(&str, PrimType); 3] = [
    ("f16", PrimType::F16),
    ("f32", PrimType::F32),
    ("f64", PrimType::F64),
];

/// Parses one scalar as written in Futhark's textual value format: `true`,
/// `false`, a number with an optional type suffix (`3i8`, `0xffu8`, `1.5f32`,
/// `1e-3`, `0x1.8p3f64`), or `f64.nan`, `f32.inf`, `-f16.inf`. Unsuffixed
/// integers are `i32` and unsuffixed floats `f64`, as in Futhark's value
/// reader. This is the inverse of `PrimValue`'s `Display`.
///
/// Errors: [`PrimError::InvalidLiteral`] / [`PrimError::LiteralOutOfRange`].
pub fn parse_prim_literal(text: &str) -> Result<PrimValue, PrimError> {
    match text {
        "true" => return Ok(PrimValue::Bool(true)),
        "false" => return Ok(PrimValue::Bool(false)),
        _ => {}
    }
    let (neg, body) = split_sign(text);
    for (name, ty) in FLOAT_SUFFIXES {
        if let Some(rest) = body.strip_prefix(name) {
            return match rest {
                ".nan" => Ok(PrimValue::from_f64(ty, f64::NAN)),
                ".inf" => Ok(PrimValue::from_f64(
                    ty,
                    if neg {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    },
                )),
                _ => Err(invalid(text, "value")),
            };
        }
    }
    let is_hex = body.starts_with("0x") || body.starts_with("0X");
    for (suffix, ty) in INT_SUFFIXES {
        if let Some(num) = text.strip_suffix(suffix) {
            if !num.is_empty() && !num.ends_with('_') {
                return parse_int_literal(num, ty);
            }
        }
    }
    // Float suffixes; on hex literals only after a `p` exponent (otherwise
    // `f` is a hex digit).
    if !is_hex || body.contains(['p', 'P']) {
        for (suffix, ty) in FLOAT_SUFFIXES {
            if let Some(num) = text.strip_suffix(suffix) {
                if num.is_empty() {
                    break;
                }
                return if is_hex || num.contains(['.', 'e', 'E']) {
                    parse_float_literal(num, ty)
                } else {
                    // `3f64`: an integer written as a float; keep full syntax.
                    parse_int_literal(num, ty).or_else(|_| parse_float_literal(num, ty))
                };
            }
        }
    }
    if (is_hex && body.contains(['.', 'p', 'P'])) || (!is_hex && body.contains(['.', 'e', 'E'])) {
        parse_float_literal(text, PrimType::F64)
    } else {
        parse_int_literal(text, PrimType::I32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimType as T;
    use PrimValue as V;

    #[test]
    fn ints() {
        assert_eq!(parse_int_literal("42", T::I32), Ok(V::I32(42)));
        assert_eq!(parse_int_literal("1_000_000", T::I64), Ok(V::I64(1000000)));
        assert_eq!(parse_int_literal("0xff", T::U8), Ok(V::U8(255)));
        assert_eq!(parse_int_literal("0xFF", T::I8), Ok(V::I8(-1)));
        assert_eq!(parse_int_literal("0b1010_1010", T::U8), Ok(V::U8(170)));
        assert_eq!(parse_int_literal("0rXIV", T::I32), Ok(V::I32(14)));
        assert_eq!(parse_int_literal("0rMCMXCIV", T::I32), Ok(V::I32(1994)));
        assert_eq!(parse_int_literal("-128", T::I8), Ok(V::I8(-128)));
        assert_eq!(parse_int_literal("127", T::I8), Ok(V::I8(127)));
        assert_eq!(
            parse_int_literal("18446744073709551615", T::U64),
            Ok(V::U64(u64::MAX))
        );
        assert_eq!(
            parse_int_literal("-9223372036854775808", T::I64),
            Ok(V::I64(i64::MIN))
        );
        assert_eq!(parse_int_literal("3", T::F64), Ok(V::F64(3.0)));
    }

    #[test]
    fn int_errors() {
        assert!(matches!(
            parse_int_literal("128", T::I8),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        assert!(matches!(
            parse_int_literal("-129", T::I8),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        assert!(matches!(
            parse_int_literal("256", T::U8),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        assert!(matches!(
            parse_int_literal("0x100", T::U8),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        assert!(matches!(
            parse_int_literal("-1", T::U32),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        assert!(matches!(
            parse_int_literal("999999999999999999999999999999999999999999", T::I64),
            Err(PrimError::LiteralOutOfRange(_))
        ));
        for bad in [
            "", "-", "_1", "0x", "12a", "1.5", "0b102", "0rABC", " 1", "--1",
        ] {
            assert!(
                matches!(
                    parse_int_literal(bad, T::I32),
                    Err(PrimError::InvalidLiteral(_))
                ),
                "{bad:?}"
            );
        }
        assert!(parse_int_literal("1", T::Bool).is_err());
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float_literal("1.5", T::F64), Ok(V::F64(1.5)));
        assert_eq!(parse_float_literal("-2.5e-3", T::F64), Ok(V::F64(-2.5e-3)));
        assert_eq!(parse_float_literal("1E10", T::F64), Ok(V::F64(1e10)));
        assert_eq!(parse_float_literal("3", T::F32), Ok(V::F32(3.0)));
        assert_eq!(parse_float_literal("0.1", T::F32), Ok(V::F32(0.1)));
        assert_eq!(parse_float_literal("1_000.5", T::F64), Ok(V::F64(1000.5)));
        assert_eq!(parse_float_literal("1.", T::F64), Ok(V::F64(1.0)));
        assert_eq!(parse_float_literal("0x1.8p3", T::F64), Ok(V::F64(12.0)));
        assert_eq!(parse_float_literal("0x1p-2", T::F32), Ok(V::F32(0.25)));
        assert_eq!(parse_float_literal("-0xA.8p0", T::F64), Ok(V::F64(-10.5)));
        assert_eq!(
            parse_float_literal("0x1.fffffffffffffp1023", T::F64),
            Ok(V::F64(f64::MAX))
        );
        assert_eq!(parse_float_literal("0x1p-1074", T::F64), Ok(V::F64(5e-324)));
        assert_eq!(
            parse_float_literal("1e400", T::F64),
            Ok(V::F64(f64::INFINITY))
        );
        assert_eq!(
            parse_float_literal("0.1", T::F16),
            Ok(V::F16(f16::from_f64(0.1)))
        );
        for bad in [
            "", ".5", "1e", "e5", "1.5.2", "nan", "inf", "1f", "0x", "0x.8p1", "0x1p",
        ] {
            assert!(
                matches!(
                    parse_float_literal(bad, T::F64),
                    Err(PrimError::InvalidLiteral(_))
                ),
                "{bad:?}"
            );
        }
        assert!(parse_float_literal("1.0", T::I32).is_err());
    }

    #[test]
    fn prim_literals() {
        assert_eq!(parse_prim_literal("true"), Ok(V::Bool(true)));
        assert_eq!(parse_prim_literal("3"), Ok(V::I32(3)));
        assert_eq!(parse_prim_literal("-2i8"), Ok(V::I8(-2)));
        assert_eq!(parse_prim_literal("255u8"), Ok(V::U8(255)));
        assert_eq!(parse_prim_literal("0x1f32"), Ok(V::I32(0x1f32)));
        assert_eq!(parse_prim_literal("0x10u16"), Ok(V::U16(16)));
        assert_eq!(parse_prim_literal("1.5"), Ok(V::F64(1.5)));
        assert_eq!(parse_prim_literal("1e-300f64"), Ok(V::F64(1e-300)));
        assert_eq!(parse_prim_literal("2f32"), Ok(V::F32(2.0)));
        assert_eq!(parse_prim_literal("0x1.8p1f32"), Ok(V::F32(3.0)));
        assert_eq!(
            parse_prim_literal("-f64.inf"),
            Ok(V::F64(f64::NEG_INFINITY))
        );
        assert_eq!(parse_prim_literal("f32.inf"), Ok(V::F32(f32::INFINITY)));
        assert!(matches!(parse_prim_literal("f16.nan"), Ok(V::F16(h)) if h.is_nan()));
        for bad in ["", "i32", "f64", "f64.foo", "tru", "1.5i32", "3q"] {
            assert!(parse_prim_literal(bad).is_err(), "{bad:?}");
        }
    }
}
