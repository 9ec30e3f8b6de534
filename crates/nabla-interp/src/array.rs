//! Array primitives on flat typed buffers: typed builders, indexing regions,
//! gathers and in-place writes. No element is boxed on these paths except
//! where a single scalar is read or written.

use nabla_prim::{PrimType, PrimValue};
use nabla_values::{shape_elems, ArrayValue, Buffer, Elem, Value};
use std::rc::Rc;

/// Runs `$body` with `$v` bound to the `Rc<Vec<T>>` inside a buffer.
macro_rules! on_buf {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            Buffer::I8($v) => $body,
            Buffer::I16($v) => $body,
            Buffer::I32($v) => $body,
            Buffer::I64($v) => $body,
            Buffer::U8($v) => $body,
            Buffer::U16($v) => $body,
            Buffer::U32($v) => $body,
            Buffer::U64($v) => $body,
            Buffer::F16($v) => $body,
            Buffer::F32($v) => $body,
            Buffer::F64($v) => $body,
            Buffer::Bool($v) => $body,
        }
    };
}

/// Runs `$body` with the type alias `$T` naming the Rust element type of `$t`.
macro_rules! with_ty {
    ($t:expr, $T:ident => $body:expr) => {
        match $t {
            PrimType::I8 => {
                type $T = i8;
                $body
            }
            PrimType::I16 => {
                type $T = i16;
                $body
            }
            PrimType::I32 => {
                type $T = i32;
                $body
            }
            PrimType::I64 => {
                type $T = i64;
                $body
            }
            PrimType::U8 => {
                type $T = u8;
                $body
            }
            PrimType::U16 => {
                type $T = u16;
                $body
            }
            PrimType::U32 => {
                type $T = u32;
                $body
            }
            PrimType::U64 => {
                type $T = u64;
                $body
            }
            PrimType::F16 => {
                type $T = nabla_prim::f16;
                $body
            }
            PrimType::F32 => {
                type $T = f32;
                $body
            }
            PrimType::F64 => {
                type $T = f64;
                $body
            }
            PrimType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}

/// Element `i` of a whole buffer, boxed (inlined: the hot path of SOAC rows).
///
/// Panics if `i` is out of bounds (callers check their indices).
#[inline(always)]
pub(crate) fn get_prim(b: &Buffer, i: usize) -> PrimValue {
    match b {
        Buffer::F64(v) => PrimValue::F64(v[i]),
        Buffer::F32(v) => PrimValue::F32(v[i]),
        Buffer::I64(v) => PrimValue::I64(v[i]),
        Buffer::I32(v) => PrimValue::I32(v[i]),
        Buffer::Bool(v) => PrimValue::Bool(v[i]),
        Buffer::I8(v) => PrimValue::I8(v[i]),
        Buffer::I16(v) => PrimValue::I16(v[i]),
        Buffer::U8(v) => PrimValue::U8(v[i]),
        Buffer::U16(v) => PrimValue::U16(v[i]),
        Buffer::U32(v) => PrimValue::U32(v[i]),
        Buffer::U64(v) => PrimValue::U64(v[i]),
        Buffer::F16(v) => PrimValue::F16(v[i]),
    }
}

/// A growable typed buffer (one vector per element type).
pub(crate) enum Builder {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<nabla_prim::f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
}

macro_rules! on_builder {
    ($b:expr, $v:ident => $body:expr) => {
        match $b {
            Builder::I8($v) => $body,
            Builder::I16($v) => $body,
            Builder::I32($v) => $body,
            Builder::I64($v) => $body,
            Builder::U8($v) => $body,
            Builder::U16($v) => $body,
            Builder::U32($v) => $body,
            Builder::U64($v) => $body,
            Builder::F16($v) => $body,
            Builder::F32($v) => $body,
            Builder::F64($v) => $body,
            Builder::Bool($v) => $body,
        }
    };
}

impl Builder {
    /// An empty builder of element type `t` with room for exactly `cap`
    /// elements, or the out-of-memory message (`what` names the array).
    pub(crate) fn try_new(t: PrimType, cap: usize, what: &str) -> Result<Builder, String> {
        use crate::alloc::try_with_capacity as v;
        Ok(match t {
            PrimType::I8 => Builder::I8(v(cap, what)?),
            PrimType::I16 => Builder::I16(v(cap, what)?),
            PrimType::I32 => Builder::I32(v(cap, what)?),
            PrimType::I64 => Builder::I64(v(cap, what)?),
            PrimType::U8 => Builder::U8(v(cap, what)?),
            PrimType::U16 => Builder::U16(v(cap, what)?),
            PrimType::U32 => Builder::U32(v(cap, what)?),
            PrimType::U64 => Builder::U64(v(cap, what)?),
            PrimType::F16 => Builder::F16(v(cap, what)?),
            PrimType::F32 => Builder::F32(v(cap, what)?),
            PrimType::F64 => Builder::F64(v(cap, what)?),
            PrimType::Bool => Builder::Bool(v(cap, what)?),
        })
    }

    /// Makes room for `additional` more elements (exactly), or the
    /// out-of-memory message.
    pub(crate) fn try_reserve(&mut self, additional: usize, what: &str) -> Result<(), String> {
        on_builder!(self, v => crate::alloc::try_reserve(v, additional, what))
    }

    /// Appends a scalar; false on a type mismatch.
    #[inline]
    pub(crate) fn push(&mut self, p: PrimValue) -> bool {
        match (self, p) {
            (Builder::F64(v), PrimValue::F64(x)) => v.push(x),
            (Builder::F32(v), PrimValue::F32(x)) => v.push(x),
            (Builder::I64(v), PrimValue::I64(x)) => v.push(x),
            (Builder::I32(v), PrimValue::I32(x)) => v.push(x),
            (Builder::Bool(v), PrimValue::Bool(x)) => v.push(x),
            (Builder::I8(v), PrimValue::I8(x)) => v.push(x),
            (Builder::I16(v), PrimValue::I16(x)) => v.push(x),
            (Builder::U8(v), PrimValue::U8(x)) => v.push(x),
            (Builder::U16(v), PrimValue::U16(x)) => v.push(x),
            (Builder::U32(v), PrimValue::U32(x)) => v.push(x),
            (Builder::U64(v), PrimValue::U64(x)) => v.push(x),
            (Builder::F16(v), PrimValue::F16(x)) => v.push(x),
            _ => return false,
        }
        true
    }

    /// Appends all elements of an array (row-major); false on a type mismatch.
    pub(crate) fn extend(&mut self, a: &ArrayValue) -> bool {
        on_builder!(self, v => match a.as_slice() {
            Some(s) => {
                v.extend_from_slice(s);
                true
            }
            None => false,
        })
    }

    /// Appends a scalar or all elements of an array; false on a type mismatch.
    pub(crate) fn push_value(&mut self, x: &Value) -> bool {
        match x {
            Value::Prim(p) => self.push(*p),
            Value::Array(a) => self.extend(a),
        }
    }

    pub(crate) fn finish(self) -> Buffer {
        on_builder!(self, v => Elem::into_buffer(v))
    }
}

/// One resolved index: a fixed position or a slice `start, start+stride, …` of `len` elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ix {
    Fix(i64),
    Slice { start: i64, len: i64, stride: i64 },
}

/// Renders indices as Futhark writes them in error messages: `[5]`, `[1:4]`, `[0:6:2]`.
pub(crate) fn show_indices(ix: &[Ix]) -> String {
    let parts: Vec<String> = ix
        .iter()
        .map(|i| match *i {
            Ix::Fix(i) => i.to_string(),
            Ix::Slice { start, len, stride } => {
                let end = start.saturating_add(len.saturating_mul(stride));
                if stride == 1 {
                    format!("{start}:{end}")
                } else {
                    format!("{start}:{end}:{stride}")
                }
            }
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// A shape as Futhark writes it in error messages: `[3][4]`.
pub(crate) fn show_shape(shape: &[i64]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// The part of an array that indices select, as element positions relative to
/// the array's own start (row-major order of the result).
pub(crate) enum Region {
    /// `len` consecutive elements starting at `start`.
    Contiguous { start: usize, len: usize },
    /// Arbitrary positions.
    Positions(Vec<usize>),
}

/// Row-major strides of a shape (in elements).
fn strides(shape: &[i64]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        st[k] = st[k + 1] * shape[k + 1] as usize;
    }
    st
}

/// Checks `ix` against `shape` (Futhark's bounds rules) and computes the result
/// shape and the selected region. Errors with the out-of-bounds message.
pub(crate) fn region(shape: &[i64], ix: &[Ix]) -> Result<(Vec<i64>, Region), String> {
    let oob = || {
        format!(
            "Index {} out of bounds for array of shape {}.",
            show_indices(ix),
            show_shape(shape)
        )
    };
    if ix.len() > shape.len() {
        return Err(format!(
            "{} indices given for an array of rank {} (index {})",
            ix.len(),
            shape.len(),
            show_indices(ix)
        ));
    }
    for (k, i) in ix.iter().enumerate() {
        let d = shape[k];
        match *i {
            Ix::Fix(i) => {
                if i < 0 || i >= d {
                    return Err(oob());
                }
            }
            Ix::Slice { start, len, stride } => {
                if len < 0 {
                    return Err(oob());
                }
                if len > 0 {
                    let last = (start as i128) + (len as i128 - 1) * stride as i128;
                    if start < 0 || start >= d || last < 0 || last >= d as i128 {
                        return Err(oob());
                    }
                } else if start < -1 || start > d || (start == -1 && stride >= 0) {
                    // An empty slice may start one past either end in its
                    // direction (`xs[::-1]` of an empty array starts at -1).
                    return Err(oob());
                }
            }
        }
    }
    let st = strides(shape);
    let mut out_shape = Vec::new();
    for i in ix {
        if let Ix::Slice { len, .. } = i {
            out_shape.push(*len);
        }
    }
    out_shape.extend_from_slice(&shape[ix.len()..]);
    // Contiguous: a prefix of fixed indices, optionally followed by one
    // stride-1 slice as the last index.
    let nfix = ix.iter().take_while(|i| matches!(i, Ix::Fix(_))).count();
    let base: usize = ix[..nfix]
        .iter()
        .zip(&st)
        .map(|(i, s)| match i {
            Ix::Fix(i) => *i as usize * s,
            _ => 0,
        })
        .sum();
    let tail = |k: usize| -> usize {
        if k == 0 {
            shape_elems(shape).unwrap_or(0)
        } else {
            st[k - 1]
        }
    };
    if nfix == ix.len() {
        return Ok((
            out_shape,
            Region::Contiguous {
                start: base,
                len: tail(nfix),
            },
        ));
    }
    if nfix + 1 == ix.len() {
        if let Ix::Slice {
            start,
            len,
            stride: 1,
        } = ix[nfix]
        {
            return Ok((
                out_shape,
                Region::Contiguous {
                    start: base + start as usize * st[nfix],
                    len: len as usize * st[nfix],
                },
            ));
        }
    }
    // General case: enumerate positions.
    let total = shape_elems(&out_shape).unwrap_or(0);
    let mut pos = Vec::with_capacity(total);
    if total > 0 {
        enumerate(shape, &st, ix, 0, 0, &mut pos);
    }
    Ok((out_shape, Region::Positions(pos)))
}

fn enumerate(shape: &[i64], st: &[usize], ix: &[Ix], k: usize, acc: usize, out: &mut Vec<usize>) {
    if k == shape.len() {
        out.push(acc);
        return;
    }
    if k >= ix.len() {
        // Remaining dimensions are taken whole: one contiguous block.
        let n = st[k] * shape[k] as usize;
        out.extend(acc..acc + n);
        return;
    }
    match ix[k] {
        Ix::Fix(i) => enumerate(shape, st, ix, k + 1, acc + i as usize * st[k], out),
        Ix::Slice { start, len, stride } => {
            for j in 0..len {
                let p = (start + j * stride) as usize;
                enumerate(shape, st, ix, k + 1, acc + p * st[k], out);
            }
        }
    }
}

/// A fresh buffer holding `a`'s elements at the given positions.
pub(crate) fn gather(a: &ArrayValue, pos: &[usize]) -> Buffer {
    let off = a.offset;
    on_buf!(&a.buffer, v => Elem::into_buffer(pos.iter().map(|&p| v[off + p]).collect::<Vec<_>>()))
}

/// An array of shape `shape` made of `a`'s elements at `region` (a view when contiguous).
pub(crate) fn select(a: &ArrayValue, shape: Vec<i64>, reg: Region) -> Value {
    match reg {
        Region::Contiguous { start, len } => {
            if shape.is_empty() {
                return Value::Prim(a.buffer.get(a.offset + start));
            }
            debug_assert_eq!(shape_elems(&shape), Some(len));
            Value::Array(ArrayValue {
                shape: shape.into(),
                offset: a.offset + start,
                buffer: a.buffer.clone(),
            })
        }
        Region::Positions(pos) => Value::Array(ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: gather(a, &pos),
        }),
    }
}

fn write_typed<T: Elem>(dst: &mut ArrayValue, reg: &Region, src: &Value) -> bool {
    // Read the source first: it may share the destination's buffer, in which
    // case `materialize` below copies the destination.
    let single;
    let src_slice: &[T] = match src {
        Value::Prim(p) => match T::from_prim(*p) {
            Some(x) => {
                single = [x];
                &single
            }
            None => return false,
        },
        Value::Array(a) => match a.as_slice::<T>() {
            Some(s) => s,
            None => return false,
        },
    };
    dst.materialize();
    let Some(v) = T::buffer_vec_mut(&mut dst.buffer) else {
        return false;
    };
    let v = Rc::make_mut(v);
    match reg {
        Region::Contiguous { start, len } => {
            if src_slice.len() != *len {
                return false;
            }
            v[*start..*start + *len].copy_from_slice(src_slice);
        }
        Region::Positions(pos) => {
            if src_slice.len() != pos.len() {
                return false;
            }
            for (&p, &x) in pos.iter().zip(src_slice) {
                v[p] = x;
            }
        }
    }
    true
}

/// Writes `src` (a scalar or an array with exactly the region's element count,
/// of the same element type) into `dst` at `reg`, in place when `dst` is
/// unshared (copy-on-write otherwise). False on a type or count mismatch.
pub(crate) fn write_region(dst: &mut ArrayValue, reg: &Region, src: &Value) -> bool {
    if src.elem_type() != dst.elem_type() {
        return false;
    }
    with_ty!(dst.elem_type(), T => write_typed::<T>(dst, reg, src))
}

/// Concatenation of the elements of several arrays of one element type.
/// `Ok(None)` on a type mismatch; `Err` with the out-of-memory message.
pub(crate) fn concat_buffers(t: PrimType, parts: &[&ArrayValue]) -> Result<Option<Buffer>, String> {
    let total = parts
        .iter()
        .try_fold(0usize, |n, a| n.checked_add(a.num_elems()))
        .unwrap_or(usize::MAX);
    let mut b = Builder::try_new(t, total, "the result of a concatenation")?;
    for a in parts {
        if !b.extend(a) {
            return Ok(None);
        }
    }
    Ok(Some(b.finish()))
}

/// Reorders the rows of `a` (outer dimension): row `k` of the result is row `src_row(k)` of `a`.
pub(crate) fn permute_rows(a: &ArrayValue, src_row: impl Fn(usize) -> usize) -> ArrayValue {
    let n = a.len();
    let row = a.num_elems().checked_div(n).unwrap_or(0);
    let off = a.offset;
    let buffer = on_buf!(&a.buffer, v => {
        let mut out = Vec::with_capacity(a.num_elems());
        for k in 0..n {
            let s = off + src_row(k) * row;
            out.extend_from_slice(&v[s..s + row]);
        }
        Elem::into_buffer(out)
    });
    ArrayValue {
        shape: a.shape.clone(),
        offset: 0,
        buffer,
    }
}

/// The result shape of permuting dimensions and, in row-major order of the
/// result, the flat input position of each result element.
pub(crate) fn rearrange_positions(shape: &[i64], perm: &[usize]) -> (Vec<i64>, Vec<usize>) {
    let st = strides(shape);
    let out_shape: Vec<i64> = perm.iter().map(|&p| shape[p]).collect();
    let total = shape_elems(shape).unwrap_or(0);
    let mut pos = Vec::with_capacity(total);
    if total > 0 {
        let r = perm.len();
        let mut idx = vec![0i64; r];
        for _ in 0..total {
            pos.push((0..r).map(|k| idx[k] as usize * st[perm[k]]).sum());
            // Next multi-index, row-major over the output shape.
            for k in (0..r).rev() {
                idx[k] += 1;
                if idx[k] < out_shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    }
    (out_shape, pos)
}

/// Permutes dimensions: result dimension k is input dimension `perm[k]`.
pub(crate) fn rearrange(a: &ArrayValue, perm: &[usize]) -> ArrayValue {
    let (out_shape, pos) = rearrange_positions(a.shape(), perm);
    ArrayValue {
        shape: out_shape.into(),
        offset: 0,
        buffer: gather(a, &pos),
    }
}

/// Integer value of a scalar (any integer type), for sizes and indices.
#[inline]
pub(crate) fn int_of(p: PrimValue) -> Option<i128> {
    Some(match p {
        PrimValue::I64(x) => x as i128,
        PrimValue::I32(x) => x as i128,
        PrimValue::I8(x) => x as i128,
        PrimValue::I16(x) => x as i128,
        PrimValue::U8(x) => x as i128,
        PrimValue::U16(x) => x as i128,
        PrimValue::U32(x) => x as i128,
        PrimValue::U64(x) => x as i128,
        _ => return None,
    })
}

/// The integer `x` as a value of integer type `t`, wrapping.
#[inline]
pub(crate) fn int_to(t: PrimType, x: i128) -> Option<PrimValue> {
    Some(match t {
        PrimType::I64 => PrimValue::I64(x as i64),
        PrimType::I32 => PrimValue::I32(x as i32),
        PrimType::I8 => PrimValue::I8(x as i8),
        PrimType::I16 => PrimValue::I16(x as i16),
        PrimType::U8 => PrimValue::U8(x as u8),
        PrimType::U16 => PrimValue::U16(x as u16),
        PrimType::U32 => PrimValue::U32(x as u32),
        PrimType::U64 => PrimValue::U64(x as u64),
        _ => return None,
    })
}

/// `iota`: `n` integers of type `t`: `start, start+step, …` (wrapping).
/// `Ok(None)` for a non-integer type; `Err` with the out-of-memory message.
pub(crate) fn iota(
    t: PrimType,
    n: usize,
    start: i128,
    step: i128,
) -> Result<Option<Buffer>, String> {
    macro_rules! gen {
        ($T:ty) => {{
            let (s, d) = (start as $T, step as $T);
            let mut v: Vec<$T> = crate::alloc::try_with_capacity(n, "the result of iota")?;
            let mut x = s;
            for _ in 0..n {
                v.push(x);
                x = x.wrapping_add(d);
            }
            Elem::into_buffer(v)
        }};
    }
    Ok(Some(match t {
        PrimType::I8 => gen!(i8),
        PrimType::I16 => gen!(i16),
        PrimType::I32 => gen!(i32),
        PrimType::I64 => gen!(i64),
        PrimType::U8 => gen!(u8),
        PrimType::U16 => gen!(u16),
        PrimType::U32 => gen!(u32),
        PrimType::U64 => gen!(u64),
        _ => return Ok(None),
    }))
}

/// `n` copies of the elements of `v` (scalar or array), as a flat buffer,
/// or the out-of-memory message.
pub(crate) fn replicate_buffer(n: usize, v: &Value) -> Result<Buffer, String> {
    const WHAT: &str = "the result of replicate";
    match v {
        Value::Prim(p) => with_ty!(p.prim_type(), T => {
            let x = T::from_prim(*p).ok_or("internal error: replicate of a mistyped scalar")?;
            let mut out: Vec<T> = crate::alloc::try_with_capacity(n, WHAT)?;
            out.resize(n, x);
            Ok(Elem::into_buffer(out))
        }),
        Value::Array(a) => {
            let t = a.elem_type();
            with_ty!(t, T => {
                let s = a.as_slice::<T>().unwrap_or(&[]);
                if s.is_empty() {
                    // No per-copy work for empty rows.
                    return Ok(Elem::into_buffer(Vec::<T>::new()));
                }
                let total = s.len().checked_mul(n).ok_or_else(|| {
                    crate::alloc::out_of_memory(
                        s.len() as u128 * n as u128 * std::mem::size_of::<T>() as u128,
                        WHAT,
                    )
                })?;
                let mut out: Vec<T> = crate::alloc::try_with_capacity(total, WHAT)?;
                for _ in 0..n {
                    out.extend_from_slice(s);
                }
                Ok(Elem::into_buffer(out))
            })
        }
    }
}

/// An exact, unshared copy of an array (`copy`).
/// `Err` with the out-of-memory message.
pub(crate) fn copy_array(a: &ArrayValue) -> Result<ArrayValue, String> {
    let (start, len) = (a.offset, a.num_elems());
    let buffer = on_buf!(&a.buffer, v => {
        let mut out = crate::alloc::try_with_capacity(len, "a copy of an array")?;
        out.extend_from_slice(&v[start..start + len]);
        Elem::into_buffer(out)
    });
    Ok(ArrayValue {
        shape: a.shape.clone(),
        offset: 0,
        buffer,
    })
}
