//! `nabla dataset`, as Futhark's `futhark dataset`: random values of given
//! types (`-g [100][100]f32`), or the values on standard input converted
//! to another format, on standard output.
//!
//! Options take effect in order, as Futhark's do: a format flag (`-b`,
//! `--text`, …) and a bounds option (`--i32-bounds=-9:9`) apply to the
//! `-g` options after them. The `k`-th `-g` (from 0) draws from a
//! generator seeded with `SEED + k` (`-s SEED`, 1 by default), so the
//! output depends only on the command line. Integers are drawn from their
//! type's whole range and floats from `[0, 1]` unless bounds are given;
//! bounds are inclusive.

use nabla_prim::{f16, PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::io::Write;

/// `nabla dataset --help`.
pub const USAGE: &str = "\
Generate random values in Futhark's value formats (like `futhark dataset`)

Usage: nabla dataset [OPTIONS]

Without -g, the values on standard input (text or binary) are written in
the chosen format.

Options (a format or bounds option applies to the -g options after it):
  -g, --generate TYPE     Generate a random value of TYPE: a primitive type
                          (i8 … i64, u8 … u64, f16, f32, f64, bool) or an
                          array of one with constant sizes, e.g. [10][20]f32;
                          a value (e.g. 3i32) is written as it is
  -s, --seed SEED         Seed of the random generator (default 1); the k-th
                          -g uses SEED + k
      --T-bounds=MIN:MAX  Inclusive bounds of generated values of primitive
                          type T, e.g. --i32-bounds=0:9, --f64-bounds=-1:1
                          (default: an integer type's whole range, [0, 1] for
                          floats)
      --text              Write the textual value format (the default)
  -b, --binary            Write Futhark's binary value format
      --binary-no-header  Binary, without the header (the elements only)
      --binary-only-header
                          Binary, the header only (type and shape)
  -t, --type              Write each value's type (with its shape)
  -h, --help              Print this help
";

/// How a value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Binary,
    BinaryNoHeader,
    BinaryOnlyHeader,
    Type,
}

/// What one `-g` asks for.
#[derive(Clone, Debug)]
enum Source {
    /// A random value of this element type and shape.
    Random { elem: PrimType, shape: Vec<i64> },
    /// Values given literally.
    Literal(Vec<Value>),
}

/// One `-g` with the format and bounds in force where it was given.
#[derive(Clone, Debug)]
struct Order {
    source: Source,
    format: Format,
    bounds: Bounds,
}

/// Inclusive bounds per primitive type (those not set are the defaults).
#[derive(Clone, Debug, Default)]
struct Bounds {
    ints: HashMap<PrimType, (i128, i128)>,
    floats: HashMap<PrimType, (f64, f64)>,
}

/// Runs `nabla dataset` with the arguments after `dataset`, writing to
/// `out`; `stdin` gives standard input when there is no `-g`. `--help`
/// writes the usage.
pub fn run(
    args: &[String],
    stdin: impl FnOnce() -> std::io::Result<Vec<u8>>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let mut format = Format::Text;
    let mut bounds = Bounds::default();
    let mut seed: u64 = 1;
    let mut orders = Vec::new();
    let mut i = 0;
    // The value of an option: `--opt=V`, `-oV`, or the next argument.
    let take_value = |i: &mut usize, inline: Option<String>, name: &str| match inline {
        Some(v) => Ok(v),
        None => {
            *i += 1;
            args.get(*i)
                .cloned()
                .ok_or_else(|| format!("option {name} needs a value"))
        }
    };
    while i < args.len() {
        let arg = &args[i];
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ if arg.len() > 2 && (arg.starts_with("-g") || arg.starts_with("-s")) => {
                (arg[..2].to_string(), Some(arg[2..].to_string()))
            }
            _ => (arg.clone(), None),
        };
        match name.as_str() {
            "-h" | "--help" => {
                out.write_all(USAGE.as_bytes()).map_err(write_error)?;
                return Ok(());
            }
            "--text" => format = Format::Text,
            "-b" | "--binary" => format = Format::Binary,
            "--binary-no-header" => format = Format::BinaryNoHeader,
            "--binary-only-header" => format = Format::BinaryOnlyHeader,
            "-t" | "--type" => format = Format::Type,
            "-s" | "--seed" => {
                let v = take_value(&mut i, inline, &name)?;
                seed = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("invalid seed `{v}`: expected a non-negative integer"))?;
            }
            "-g" | "--generate" => {
                let v = take_value(&mut i, inline, &name)?;
                orders.push(Order {
                    source: parse_source(&v)?,
                    format,
                    bounds: bounds.clone(),
                });
            }
            _ => {
                let Some(tname) = name
                    .strip_prefix("--")
                    .and_then(|n| n.strip_suffix("-bounds"))
                else {
                    return Err(format!(
                        "unknown option `{arg}` (see `nabla dataset --help`)"
                    ));
                };
                let Some(t) = PrimType::from_name(tname).filter(|t| *t != PrimType::Bool) else {
                    return Err(format!(
                        "unknown option `{arg}`: `{tname}` is not a numeric type"
                    ));
                };
                let v = take_value(&mut i, inline, &name)?;
                set_bounds(&mut bounds, t, &v)?;
            }
        }
        i += 1;
    }
    if orders.is_empty() {
        let input = stdin().map_err(|e| format!("cannot read standard input: {e}"))?;
        let values = nabla_values::read_values(&input, None)
            .map_err(|e| format!("malformed values on standard input: {e}"))?;
        for v in &values {
            write_value(v, format, out)?;
        }
        return Ok(());
    }
    for (k, order) in orders.iter().enumerate() {
        match &order.source {
            Source::Literal(vs) => {
                for v in vs {
                    write_value(v, order.format, out)?;
                }
            }
            Source::Random { elem, shape } => {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed.wrapping_add(k as u64));
                let v = random_value(*elem, shape, &order.bounds, &mut rng)?;
                write_value(&v, order.format, out)?;
            }
        }
    }
    Ok(())
}

fn write_error(e: std::io::Error) -> String {
    format!("cannot write the output: {e}")
}

/// `-g`'s argument: a type (`[2][3]f32`, `i32`, `*[4]u8`) or values.
fn parse_source(text: &str) -> Result<Source, String> {
    let t = text.trim();
    let ty = t.strip_prefix('*').unwrap_or(t);
    let mut rest = ty;
    let mut dims = Vec::new();
    while let Some((dim, tail)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        dims.push(dim.trim().parse::<i64>().ok().filter(|&n| n >= 0));
        rest = tail;
    }
    if let Some(elem) = PrimType::from_name(rest.trim()) {
        return match dims.into_iter().collect::<Option<Vec<i64>>>() {
            Some(shape) => Ok(Source::Random { elem, shape }),
            None => Err(format!(
                "cannot generate a value of type `{text}`: every array size must be a constant"
            )),
        };
    }
    match nabla_values::read_values(t.as_bytes(), None) {
        Ok(vs) if !vs.is_empty() => Ok(Source::Literal(vs)),
        _ => Err(format!(
            "cannot generate `{text}`: expected a primitive type (i8 … i64, u8 … u64, f16, f32, f64, bool), an array of one with constant sizes (e.g. [10][20]f32), or a value"
        )),
    }
}

/// Parses `MIN:MAX` for type `t` into `bounds`.
fn set_bounds(bounds: &mut Bounds, t: PrimType, text: &str) -> Result<(), String> {
    let bad = |why: &str| format!("invalid bounds for {}: `{text}` ({why})", t.name());
    let (lo, hi) = text
        .split_once(':')
        .ok_or_else(|| bad("expected MIN:MAX"))?;
    if t.is_float() {
        let parse = |s: &str| s.trim().parse::<f64>().map_err(|_| bad("not numbers"));
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if !(lo.is_finite() && hi.is_finite()) || lo > hi {
            return Err(bad("MIN must be at most MAX, both finite"));
        }
        bounds.floats.insert(t, (lo, hi));
    } else {
        let parse = |s: &str| s.trim().parse::<i128>().map_err(|_| bad("not integers"));
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        let (min, max) = int_range(t);
        if lo < min || hi > max {
            return Err(bad(&format!("outside the range {min}:{max} of the type")));
        }
        if lo > hi {
            return Err(bad("MIN must be at most MAX"));
        }
        bounds.ints.insert(t, (lo, hi));
    }
    Ok(())
}

/// The whole range of an integer type.
fn int_range(t: PrimType) -> (i128, i128) {
    match t {
        PrimType::I8 => (i8::MIN.into(), i8::MAX.into()),
        PrimType::I16 => (i16::MIN.into(), i16::MAX.into()),
        PrimType::I32 => (i32::MIN.into(), i32::MAX.into()),
        PrimType::I64 => (i64::MIN.into(), i64::MAX.into()),
        PrimType::U8 => (0, u8::MAX.into()),
        PrimType::U16 => (0, u16::MAX.into()),
        PrimType::U32 => (0, u32::MAX.into()),
        PrimType::U64 => (0, u64::MAX.into()),
        _ => (0, 1),
    }
}

/// A random value of element type `elem` and `shape` (a scalar when empty).
fn random_value(
    elem: PrimType,
    shape: &[i64],
    bounds: &Bounds,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<Value, String> {
    let n = nabla_values::shape_elems(shape)
        .filter(|&n| n <= 1 << 34)
        .ok_or_else(|| "the array is too large".to_string())?;
    let (ilo, ihi) = bounds.ints.get(&elem).copied().unwrap_or(int_range(elem));
    let (flo, fhi) = bounds.floats.get(&elem).copied().unwrap_or((0.0, 1.0));
    // The bounds were checked against the type, so the conversions hold.
    macro_rules! ints {
        ($t:ty) => {{
            let (lo, hi) = (ilo as $t, ihi as $t);
            let v: Vec<$t> = (0..n).map(|_| rng.random_range(lo..=hi)).collect();
            v
        }};
    }
    macro_rules! build {
        ($v:expr, $prim:path) => {{
            let v = $v;
            if shape.is_empty() {
                Value::Prim($prim(v[0]))
            } else {
                Value::Array(ArrayValue::from_vec(shape, v))
            }
        }};
    }
    // A scalar is one element.
    let n = if shape.is_empty() { 1 } else { n };
    Ok(match elem {
        PrimType::I8 => build!(ints!(i8), PrimValue::I8),
        PrimType::I16 => build!(ints!(i16), PrimValue::I16),
        PrimType::I32 => build!(ints!(i32), PrimValue::I32),
        PrimType::I64 => build!(ints!(i64), PrimValue::I64),
        PrimType::U8 => build!(ints!(u8), PrimValue::U8),
        PrimType::U16 => build!(ints!(u16), PrimValue::U16),
        PrimType::U32 => build!(ints!(u32), PrimValue::U32),
        PrimType::U64 => build!(ints!(u64), PrimValue::U64),
        PrimType::Bool => {
            let v: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            build!(v, PrimValue::Bool)
        }
        PrimType::F16 => {
            let v: Vec<f16> = (0..n)
                .map(|_| f16::from_f32(rng.random_range(flo as f32..=fhi as f32)))
                .collect();
            build!(v, PrimValue::F16)
        }
        PrimType::F32 => {
            let v: Vec<f32> = (0..n)
                .map(|_| rng.random_range(flo as f32..=fhi as f32))
                .collect();
            build!(v, PrimValue::F32)
        }
        PrimType::F64 => {
            let v: Vec<f64> = (0..n).map(|_| rng.random_range(flo..=fhi)).collect();
            build!(v, PrimValue::F64)
        }
    })
}

/// Writes `v` in `format` (text and types end in a newline).
fn write_value(v: &Value, format: Format, out: &mut dyn Write) -> Result<(), String> {
    let shape = v.shape();
    let header_len = 7 + 8 * shape.len();
    let bytes = match format {
        Format::Text => {
            let mut s = nabla_values::write_value_text(v);
            s.push('\n');
            s.into_bytes()
        }
        Format::Type => {
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            format!("{dims}{}\n", v.elem_type().name()).into_bytes()
        }
        Format::Binary | Format::BinaryNoHeader | Format::BinaryOnlyHeader => {
            let mut b = Vec::new();
            nabla_values::write_value_binary(v, &mut b);
            match format {
                Format::BinaryNoHeader => b.split_off(header_len),
                Format::BinaryOnlyHeader => {
                    b.truncate(header_len);
                    b
                }
                _ => b,
            }
        }
    };
    out.write_all(&bytes).map_err(write_error)
}
