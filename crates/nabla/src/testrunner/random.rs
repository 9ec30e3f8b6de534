//! `random input { … }` datasets: parsing the type list and generating
//! values deterministically.
//!
//! Following futhark-test(1), the braces hold Futhark types with sizes
//! (`[100]i32`, `[10][10]f64`, `bool`) and constants: integers with or
//! without a type suffix (`10`, `10i64`) and floats with a suffix (`1.5f32`).
//! Values are drawn as `futhark dataset` does by default: integers uniformly
//! over their whole range, floats uniformly in `[0, 1)`, booleans fair coins.
//! The generator is SplitMix64 seeded from the dataset's text and position,
//! so a test run is reproducible.

use nabla_prim::{f16, PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};

/// Largest number of elements one random value may have.
pub const MAX_RANDOM_ELEMS: u64 = 1 << 28;

/// One item of a random-input spec.
#[derive(Clone, Debug, PartialEq)]
pub enum RandomItem {
    /// A type with its shape (empty shape = scalar).
    Gen { shape: Vec<i64>, elem: PrimType },
    /// A constant, written as a literal.
    Const(Value),
}

/// Parses the text between `random input {` and `}`.
pub fn parse_random_spec(text: &str) -> Result<Vec<RandomItem>, String> {
    let mut items = Vec::new();
    for tok in text.split_whitespace() {
        items.push(parse_item(tok)?);
    }
    Ok(items)
}

fn parse_item(tok: &str) -> Result<RandomItem, String> {
    let mut shape = Vec::new();
    let mut rest = tok;
    while let Some(r) = rest.strip_prefix('[') {
        let end = r
            .find(']')
            .ok_or_else(|| format!("bad type `{tok}`: missing `]`"))?;
        let n: i64 = r[..end].replace('_', "").parse().map_err(|_| {
            format!(
                "bad size `{}` in `{tok}` (random input needs constant sizes)",
                &r[..end]
            )
        })?;
        if n < 0 {
            return Err(format!("negative size in `{tok}`"));
        }
        shape.push(n);
        rest = &r[end + 1..];
    }
    if let Some(elem) = PrimType::from_name(rest) {
        let total = shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        match total {
            Some(t) if t <= MAX_RANDOM_ELEMS => {}
            _ => return Err(format!("random value `{tok}` is too large")),
        }
        return Ok(RandomItem::Gen { shape, elem });
    }
    if !shape.is_empty() {
        return Err(format!("unknown element type in `{tok}`"));
    }
    let vs = nabla_values::read_values_text(tok, None)
        .map_err(|e| format!("bad constant `{tok}`: {e}"))?;
    match <[Value; 1]>::try_from(vs) {
        Ok([v]) => Ok(RandomItem::Const(v)),
        Err(_) => Err(format!("bad constant `{tok}`")),
    }
}

/// SplitMix64: small, fast, good enough for test data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from arbitrary bytes (FNV-1a of them).
    pub fn from_seed_bytes(bytes: &[u8]) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// One random scalar of type `t`.
    pub fn prim(&mut self, t: PrimType) -> PrimValue {
        let x = self.next_u64();
        match t {
            PrimType::I8 => PrimValue::I8(x as i8),
            PrimType::I16 => PrimValue::I16(x as i16),
            PrimType::I32 => PrimValue::I32(x as i32),
            PrimType::I64 => PrimValue::I64(x as i64),
            PrimType::U8 => PrimValue::U8(x as u8),
            PrimType::U16 => PrimValue::U16(x as u16),
            PrimType::U32 => PrimValue::U32(x as u32),
            PrimType::U64 => PrimValue::U64(x),
            PrimType::Bool => PrimValue::Bool(x & 1 == 1),
            PrimType::F16 => PrimValue::F16(f16::from_f64((x >> 11) as f64 / (1u64 << 53) as f64)),
            PrimType::F32 => PrimValue::F32(((x >> 40) as f32) / (1u32 << 24) as f32),
            PrimType::F64 => PrimValue::F64((x >> 11) as f64 / (1u64 << 53) as f64),
        }
    }
}

/// Generates the values of a random-input spec.
pub fn generate(items: &[RandomItem], rng: &mut Rng) -> Result<Vec<Value>, String> {
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        match it {
            RandomItem::Const(v) => out.push(v.clone()),
            RandomItem::Gen { shape, elem } if shape.is_empty() => {
                out.push(Value::Prim(rng.prim(*elem)))
            }
            RandomItem::Gen { shape, elem } => {
                let n: i64 = shape.iter().product();
                let xs: Vec<PrimValue> = (0..n).map(|_| rng.prim(*elem)).collect();
                let a = ArrayValue::from_prims(*elem, shape, &xs).map_err(|e| e.to_string())?;
                out.push(Value::Array(a));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types_and_constants() {
        let items = parse_random_spec(" [100]i32 [10][10]f64 bool 10i64 ").unwrap();
        assert_eq!(items.len(), 4);
        assert_eq!(
            items[0],
            RandomItem::Gen {
                shape: vec![100],
                elem: PrimType::I32
            }
        );
        assert_eq!(
            items[1],
            RandomItem::Gen {
                shape: vec![10, 10],
                elem: PrimType::F64
            }
        );
        assert_eq!(
            items[2],
            RandomItem::Gen {
                shape: vec![],
                elem: PrimType::Bool
            }
        );
        assert_eq!(items[3], RandomItem::Const(Value::Prim(PrimValue::I64(10))));
        assert!(parse_random_spec("[n]i32").is_err());
        assert!(parse_random_spec("[3]foo").is_err());
        assert!(parse_random_spec("[100000][100000][100000]f64").is_err());
    }

    #[test]
    fn generation_is_deterministic_and_shaped() {
        let items = parse_random_spec("[5]f64 [2][3]u8 i32").unwrap();
        let a = generate(&items, &mut Rng::from_seed_bytes(b"x")).unwrap();
        let b = generate(&items, &mut Rng::from_seed_bytes(b"x")).unwrap();
        let c = generate(&items, &mut Rng::from_seed_bytes(b"y")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a[0].shape(), &[5]);
        assert_eq!(a[1].shape(), &[2, 3]);
        assert_eq!(a[2].elem_type(), PrimType::I32);
        for i in 0..5 {
            match a[0].get_flat(i) {
                PrimValue::F64(x) => assert!((0.0..1.0).contains(&x)),
                other => panic!("{other:?}"),
            }
        }
    }
}
