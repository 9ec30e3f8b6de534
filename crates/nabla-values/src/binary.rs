//! Futhark's binary data format (see "Binary Data Format" in the Futhark
//! documentation):
//!
//! ```text
//! 'b'  version:u8 (= 2)  rank:u8  type:[u8; 4]  dims: rank × u64 (LE)  payload (LE, row-major)
//! ```
//!
//! The type is four ASCII characters, right-aligned with spaces: `"  i8"`,
//! `" i16"`, `" i32"`, `" i64"`, `"  u8"`, `" u16"`, `" u32"`, `" u64"`,
//! `" f16"`, `" f32"`, `" f64"`, `"bool"`. A scalar is a rank-0 value. Booleans
//! take one byte each (0 or 1; any other byte is rejected here).

use crate::elem::{on_buffer, with_elem_type, Elem};
use crate::{ArrayValue, Value, ValueError};
use nabla_prim::{PrimType, PrimValue};

/// The binary format version this crate reads and writes.
pub const BINARY_VERSION: u8 = 2;

/// The 4-byte type tag of `t` in the binary format.
pub fn binary_type_tag(t: PrimType) -> &'static [u8; 4] {
    match t {
        PrimType::I8 => b"  i8",
        PrimType::I16 => b" i16",
        PrimType::I32 => b" i32",
        PrimType::I64 => b" i64",
        PrimType::U8 => b"  u8",
        PrimType::U16 => b" u16",
        PrimType::U32 => b" u32",
        PrimType::U64 => b" u64",
        PrimType::F16 => b" f16",
        PrimType::F32 => b" f32",
        PrimType::F64 => b" f64",
        PrimType::Bool => b"bool",
    }
}

fn type_of_tag(tag: &[u8]) -> Option<PrimType> {
    PrimType::ALL
        .into_iter()
        .find(|&t| binary_type_tag(t) == tag)
}

/// Appends `v` in Futhark's binary data format (version 2) to `out`.
///
/// Panics if the rank exceeds 255, which the format cannot express.
pub fn write_value_binary(v: &Value, out: &mut Vec<u8>) {
    let t = v.elem_type();
    let shape = v.shape();
    let rank = u8::try_from(shape.len()).expect("binary data format: rank above 255");
    out.push(b'b');
    out.push(BINARY_VERSION);
    out.push(rank);
    out.extend_from_slice(binary_type_tag(t));
    for &d in shape {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
    match v {
        Value::Prim(p) => write_prim(*p, out),
        Value::Array(a) => write_elems(a, out),
    }
}

fn write_prim(p: PrimValue, out: &mut Vec<u8>) {
    with_elem_type!(p.prim_type(), T => {
        T::from_prim(p).expect("type matches").write_le(out)
    })
}

fn write_elems(a: &ArrayValue, out: &mut Vec<u8>) {
    on_buffer!(&a.buffer, v => {
        let elems = &v[a.offset..a.offset + a.num_elems()];
        out.reserve(std::mem::size_of_val(elems));
        for &x in elems {
            x.write_le(out);
        }
    })
}

/// Reads one binary value starting at `src[start]` (which is `b`). Returns the
/// value and the offset just after it. Never allocates more than the input
/// can fill: sizes are checked against the remaining bytes first.
pub(crate) fn read_binary_value(src: &[u8], start: usize) -> Result<(Value, usize), ValueError> {
    let err = |at: usize, m: String| ValueError::at(src, at, false, m);
    let header_end = start + 7;
    if src.len() < header_end {
        return Err(err(start, "truncated binary value header".into()));
    }
    let version = src[start + 1];
    if version != BINARY_VERSION {
        return Err(err(
            start + 1,
            format!("unsupported binary data format version {version} (expected {BINARY_VERSION})"),
        ));
    }
    let rank = src[start + 2] as usize;
    let tag = &src[start + 3..start + 7];
    let t = type_of_tag(tag).ok_or_else(|| {
        err(
            start + 3,
            format!("unknown binary type tag {:?}", String::from_utf8_lossy(tag)),
        )
    })?;
    let mut pos = header_end;
    let dims_end = pos
        .checked_add(rank * 8)
        .filter(|&e| e <= src.len())
        .ok_or_else(|| {
            err(
                pos,
                format!("truncated binary value: missing {rank} dimension(s)"),
            )
        })?;
    let mut shape = Vec::with_capacity(rank);
    while pos < dims_end {
        let mut b = [0u8; 8];
        b.copy_from_slice(&src[pos..pos + 8]);
        let d = u64::from_le_bytes(b);
        let d = i64::try_from(d).map_err(|_| err(pos, format!("dimension {d} too large")))?;
        shape.push(d);
        pos += 8;
    }
    let n =
        crate::shape_elems(&shape).ok_or_else(|| err(header_end, "array size overflows".into()))?;
    let size = t.bits() as usize / 8;
    let bytes = n
        .checked_mul(size)
        .filter(|&b| b <= src.len() - pos)
        .ok_or_else(|| {
            err(
                pos,
                format!(
                    "truncated binary value: shape {shape:?} of {t} needs {} bytes, only {} left",
                    n.saturating_mul(size),
                    src.len() - pos
                ),
            )
        })?;
    let payload = &src[pos..pos + bytes];
    let buffer = with_elem_type!(t, T => {
        let mut v: Vec<T> = Vec::with_capacity(n);
        for (i, chunk) in payload.chunks_exact(size).enumerate() {
            match T::read_le(chunk) {
                Some(x) => v.push(x),
                None => return Err(err(pos + i * size, "boolean byte is neither 0 nor 1".into())),
            }
        }
        T::into_buffer(v)
    });
    let next = pos + bytes;
    let value = if rank == 0 {
        Value::Prim(buffer.get(0))
    } else {
        Value::Array(ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer,
        })
    };
    Ok((value, next))
}
