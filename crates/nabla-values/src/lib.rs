//! Run-time values: scalars and arrays stored as flat, typed, row-major
//! buffers with a shape — never trees of boxed values. Arrays of tuples do not
//! exist at this level: the core IR has already split them into one array per
//! component ("tuples of arrays").
//!
//! Also: Futhark's textual and binary value formats (read and write), and the
//! comparison rule that `nabla test` uses.

mod binary;
mod compare;
mod elem;
mod error;
mod text;

pub use binary::{binary_type_tag, write_value_binary, BINARY_VERSION};
pub use compare::{
    compare_value_lists, compare_value_lists_with_tolerance, compare_values,
    compare_values_with_tolerance, Mismatch, MismatchKind, DEFAULT_TOLERANCE,
};
pub use elem::Elem;
pub use error::{Location, ValueError};
pub use text::{read_values, read_values_file, read_values_text, write_value_text, MAX_NESTING};

use elem::{on_buffer, with_elem_type};
use nabla_prim::{PrimType, PrimValue};
use std::rc::Rc;

/// The type of a value as far as the value formats care: an element type and a
/// rank (0 for a scalar). `[][]i32` is `ValueType { elem: I32, rank: 2 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueType {
    pub elem: PrimType,
    pub rank: usize,
}

impl ValueType {
    /// A type of the given element type and rank.
    pub fn new(elem: PrimType, rank: usize) -> ValueType {
        ValueType { elem, rank }
    }
}

impl std::fmt::Display for ValueType {
    /// Futhark's spelling without sizes: `[][]i32`, `f64`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for _ in 0..self.rank {
            f.write_str("[]")?;
        }
        f.write_str(self.elem.name())
    }
}

/// A flat buffer of elements of one primitive type, shared by reference
/// counting. Copy-on-write with [`Rc::make_mut`] gives in-place updates when
/// the buffer is unshared.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    I8(Rc<Vec<i8>>),
    I16(Rc<Vec<i16>>),
    I32(Rc<Vec<i32>>),
    I64(Rc<Vec<i64>>),
    U8(Rc<Vec<u8>>),
    U16(Rc<Vec<u16>>),
    U32(Rc<Vec<u32>>),
    U64(Rc<Vec<u64>>),
    F16(Rc<Vec<nabla_prim::f16>>),
    F32(Rc<Vec<f32>>),
    F64(Rc<Vec<f64>>),
    Bool(Rc<Vec<bool>>),
}

/// An array value of rank ≥ 1: `shape[0] × … × shape[r-1]` elements, row-major,
/// stored in `buffer[offset .. offset + product(shape)]`. The offset lets a row
/// `a[i]` of a larger array share its parent's buffer without copying.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    pub shape: Rc<[i64]>,
    pub offset: usize,
    pub buffer: Buffer,
}

/// A run-time value: a scalar or an array of scalars.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Prim(PrimValue),
    Array(ArrayValue),
}

impl Value {
    /// The element type (the scalar's type for a scalar).
    pub fn elem_type(&self) -> PrimType {
        match self {
            Value::Prim(p) => p.prim_type(),
            Value::Array(a) => a.buffer.elem_type(),
        }
    }
}

impl Buffer {
    /// The element type of the buffer.
    pub fn elem_type(&self) -> PrimType {
        match self {
            Buffer::I8(_) => PrimType::I8,
            Buffer::I16(_) => PrimType::I16,
            Buffer::I32(_) => PrimType::I32,
            Buffer::I64(_) => PrimType::I64,
            Buffer::U8(_) => PrimType::U8,
            Buffer::U16(_) => PrimType::U16,
            Buffer::U32(_) => PrimType::U32,
            Buffer::U64(_) => PrimType::U64,
            Buffer::F16(_) => PrimType::F16,
            Buffer::F32(_) => PrimType::F32,
            Buffer::F64(_) => PrimType::F64,
            Buffer::Bool(_) => PrimType::Bool,
        }
    }
}

/// Product of a shape as an element count; `None` if a dimension is negative
/// or the product overflows `usize`.
pub fn shape_elems(shape: &[i64]) -> Option<usize> {
    if shape.iter().any(|&d| d < 0) {
        return None;
    }
    // A zero dimension makes everything empty, even if other dimensions are huge.
    if shape.contains(&0) {
        return Some(0);
    }
    let mut n: usize = 1;
    for &d in shape {
        n = n.checked_mul(usize::try_from(d).ok()?)?;
    }
    Some(n)
}

impl Buffer {
    /// Number of elements in the whole buffer (not just an array's window).
    pub fn len(&self) -> usize {
        on_buffer!(self, v => v.len())
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` zero elements (`false` for `bool`) of type `t`.
    pub fn zeros(t: PrimType, n: usize) -> Buffer {
        with_elem_type!(t, T => T::into_buffer(vec![<T as Elem>::zero(); n]))
    }

    /// `n` copies of the scalar `x` (the buffer's type is `x`'s type).
    pub fn filled(x: PrimValue, n: usize) -> Buffer {
        with_elem_type!(x.prim_type(), T => {
            let e = T::from_prim(x).expect("type matches by construction");
            T::into_buffer(vec![e; n])
        })
    }

    /// A buffer of type `t` from boxed scalars.
    ///
    /// Errors if some value is not of type `t`.
    pub fn from_prims(t: PrimType, xs: &[PrimValue]) -> Result<Buffer, ValueError> {
        with_elem_type!(t, T => {
            let mut v: Vec<T> = Vec::with_capacity(xs.len());
            for (i, &x) in xs.iter().enumerate() {
                match T::from_prim(x) {
                    Some(e) => v.push(e),
                    None => {
                        return Err(ValueError::new(format!(
                            "element {i} has type {}, expected {t}",
                            x.prim_type()
                        )))
                    }
                }
            }
            Ok(T::into_buffer(v))
        })
    }

    /// A buffer owning `v`.
    pub fn from_vec<T: Elem>(v: Vec<T>) -> Buffer {
        T::into_buffer(v)
    }

    /// Element `i` of the whole buffer, boxed.
    ///
    /// Panics if `i >= self.len()`.
    pub fn get(&self, i: usize) -> PrimValue {
        on_buffer!(self, v => v[i].to_prim())
    }

    /// The whole buffer as a typed slice, if its element type is `T`.
    pub fn as_slice<T: Elem>(&self) -> Option<&[T]> {
        T::buffer_vec(self).map(|v| v.as_slice())
    }

    /// A fresh, unshared buffer holding a copy of elements `start .. start+len`.
    ///
    /// Panics if the range is out of bounds.
    pub fn copy_range(&self, start: usize, len: usize) -> Buffer {
        on_buffer!(self, v => Elem::into_buffer(v[start..start + len].to_vec()))
    }

    /// Whether no other `Buffer` shares this one's storage (so in-place
    /// updates need no copy).
    pub fn is_unique(&self) -> bool {
        on_buffer!(self, v => Rc::strong_count(v) == 1 && Rc::weak_count(v) == 0)
    }
}

macro_rules! typed_accessors {
    ($($t:ty => $slice:ident, $from:ident);* $(;)?) => {
        $(
            #[doc = concat!("The elements as a `&[", stringify!($t), "]` (row-major), if the element type is `", stringify!($t), "`.")]
            pub fn $slice(&self) -> Option<&[$t]> {
                self.as_slice::<$t>()
            }
            #[doc = concat!("An array of shape `shape` owning `data` (`", stringify!($t), "` elements, row-major).\n\nPanics if `data.len()` is not the product of `shape` or a dimension is negative.")]
            pub fn $from(shape: &[i64], data: Vec<$t>) -> ArrayValue {
                ArrayValue::from_vec(shape, data)
            }
        )*
    };
}

impl ArrayValue {
    /// An array of shape `shape` whose elements are the whole of `buffer`
    /// (offset 0).
    ///
    /// Errors if a dimension is negative or the buffer length differs from the
    /// product of the shape.
    pub fn new(shape: &[i64], buffer: Buffer) -> Result<ArrayValue, ValueError> {
        match shape_elems(shape) {
            Some(n) if n == buffer.len() => Ok(ArrayValue {
                shape: shape.into(),
                offset: 0,
                buffer,
            }),
            _ => Err(ValueError::new(format!(
                "shape {:?} does not fit a buffer of {} elements",
                shape,
                buffer.len()
            ))),
        }
    }

    /// An array of shape `shape` owning `data` (row-major).
    ///
    /// Panics if `data.len()` is not the product of `shape` or a dimension is
    /// negative (a bug in the caller, not bad input).
    pub fn from_vec<T: Elem>(shape: &[i64], data: Vec<T>) -> ArrayValue {
        assert_eq!(
            shape_elems(shape),
            Some(data.len()),
            "ArrayValue::from_vec: shape {shape:?} does not match {} elements",
            data.len()
        );
        ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: T::into_buffer(data),
        }
    }

    typed_accessors! {
        i8 => as_i8_slice, from_vec_i8;
        i16 => as_i16_slice, from_vec_i16;
        i32 => as_i32_slice, from_vec_i32;
        i64 => as_i64_slice, from_vec_i64;
        u8 => as_u8_slice, from_vec_u8;
        u16 => as_u16_slice, from_vec_u16;
        u32 => as_u32_slice, from_vec_u32;
        u64 => as_u64_slice, from_vec_u64;
        nabla_prim::f16 => as_f16_slice, from_vec_f16;
        f32 => as_f32_slice, from_vec_f32;
        f64 => as_f64_slice, from_vec_f64;
        bool => as_bool_slice, from_vec_bool;
    }

    /// An array of the given shape with boxed elements of type `t`.
    ///
    /// Errors on a type or count mismatch.
    pub fn from_prims(
        t: PrimType,
        shape: &[i64],
        xs: &[PrimValue],
    ) -> Result<ArrayValue, ValueError> {
        ArrayValue::new(shape, Buffer::from_prims(t, xs)?)
    }

    /// An array of the given shape filled with zeros (`false`) of type `t`.
    ///
    /// Panics if a dimension is negative or the size overflows.
    pub fn zeros(t: PrimType, shape: &[i64]) -> ArrayValue {
        let n = shape_elems(shape).expect("ArrayValue::zeros: invalid shape");
        ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: Buffer::zeros(t, n),
        }
    }

    /// An array of the given shape filled with copies of `x` (`replicate`).
    ///
    /// Panics if a dimension is negative or the size overflows.
    pub fn filled(x: PrimValue, shape: &[i64]) -> ArrayValue {
        let n = shape_elems(shape).expect("ArrayValue::filled: invalid shape");
        ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: Buffer::filled(x, n),
        }
    }

    /// The shape (`[n0, n1, …]`).
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// Number of dimensions (≥ 1 for a well-formed array).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The outer dimension `shape[0]` (number of rows), 0 for a rank-0 array.
    pub fn len(&self) -> usize {
        self.shape.first().map_or(0, |&d| d as usize)
    }

    /// Whether the array has no elements at all (some dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.num_elems() == 0
    }

    /// Total number of elements, the product of the shape.
    pub fn num_elems(&self) -> usize {
        shape_elems(&self.shape).unwrap_or(0)
    }

    /// The element type.
    pub fn elem_type(&self) -> PrimType {
        self.buffer.elem_type()
    }

    /// The type (element type and rank).
    pub fn value_type(&self) -> ValueType {
        ValueType::new(self.elem_type(), self.rank())
    }

    /// Element `i` in row-major order, boxed.
    ///
    /// Panics if `i >= self.num_elems()`.
    #[inline]
    pub fn get_flat(&self, i: usize) -> PrimValue {
        assert!(i < self.num_elems(), "flat index {i} out of bounds");
        self.buffer.get(self.offset + i)
    }

    /// The elements as a typed slice (row-major, exactly `num_elems()` long),
    /// if the element type is `T`.
    #[inline]
    pub fn as_slice<T: Elem>(&self) -> Option<&[T]> {
        let v = T::buffer_vec(&self.buffer)?;
        Some(&v[self.offset..self.offset + self.num_elems()])
    }

    /// The elements as a mutable typed slice, if the element type is `T`.
    /// First makes the buffer exact and unshared (copy-on-write), so writes
    /// never affect other values.
    pub fn as_mut_slice<T: Elem>(&mut self) -> Option<&mut [T]> {
        T::buffer_vec(&self.buffer)?;
        self.materialize();
        let v = T::buffer_vec_mut(&mut self.buffer)?;
        Some(Rc::make_mut(v).as_mut_slice())
    }

    /// Sets element `i` (row-major) to `x`, copy-on-write: the buffer is copied
    /// first if it is shared or if this array is a window (nonzero offset or
    /// shorter than its buffer) of a larger buffer.
    ///
    /// Panics if `i` is out of bounds or `x` has a different type than the
    /// array's elements.
    pub fn set_flat(&mut self, i: usize, x: PrimValue) {
        let n = self.num_elems();
        assert!(i < n, "flat index {i} out of bounds ({n} elements)");
        let t = self.elem_type();
        assert_eq!(
            x.prim_type(),
            t,
            "set_flat: storing a {} into a {} array",
            x.prim_type(),
            t
        );
        if self.offset != 0 || self.buffer.len() != n {
            self.materialize();
        }
        on_buffer!(&mut self.buffer, v => {
            Rc::make_mut(v)[i] = Elem::from_prim(x).expect("type checked above");
        })
    }

    /// Row `i`: for rank > 1 an O(1) sub-array sharing this array's buffer;
    /// for rank 1 the scalar element.
    ///
    /// Panics if `i >= self.len()`.
    pub fn row(&self, i: usize) -> Value {
        assert!(
            i < self.len(),
            "row {i} out of bounds (length {})",
            self.len()
        );
        if self.rank() == 1 {
            Value::Prim(self.buffer.get(self.offset + i))
        } else {
            let inner: Rc<[i64]> = self.shape[1..].into();
            let row_size = shape_elems(&inner).unwrap_or(0);
            Value::Array(ArrayValue {
                shape: inner,
                offset: self.offset + i * row_size,
                buffer: self.buffer.clone(),
            })
        }
    }

    /// Iterates over the rows (see [`ArrayValue::row`]).
    pub fn rows(&self) -> impl Iterator<Item = Value> + '_ {
        (0..self.len()).map(move |i| self.row(i))
    }

    /// Makes the storage exact and unshared: afterwards `offset == 0`, the
    /// buffer holds exactly `num_elems()` elements, and no other value shares
    /// it. Copies only when needed.
    pub fn materialize(&mut self) {
        let n = self.num_elems();
        if self.offset == 0 && self.buffer.len() == n && self.buffer.is_unique() {
            return;
        }
        self.buffer = self.buffer.copy_range(self.offset, n);
        self.offset = 0;
    }

    /// The elements as a buffer of exactly `num_elems()` elements: shares the
    /// storage when the array already covers its whole buffer, else copies.
    pub fn elems_buffer(&self) -> Buffer {
        let n = self.num_elems();
        if self.offset == 0 && self.buffer.len() == n {
            self.buffer.clone()
        } else {
            self.buffer.copy_range(self.offset, n)
        }
    }

    /// The same elements under another shape (O(1), shares the buffer).
    ///
    /// Errors if the element counts differ.
    pub fn reshape(&self, shape: &[i64]) -> Result<ArrayValue, ValueError> {
        match shape_elems(shape) {
            Some(n) if n == self.num_elems() => Ok(ArrayValue {
                shape: shape.into(),
                offset: self.offset,
                buffer: self.buffer.clone(),
            }),
            _ => Err(ValueError::new(format!(
                "cannot reshape an array of shape {:?} to {:?}",
                self.shape(),
                shape
            ))),
        }
    }

    /// Stacks values of identical type and shape into an array whose rank is
    /// one more than theirs (scalars give a rank-1 array).
    ///
    /// Errors on an empty list (the element type would be unknown; use
    /// [`ArrayValue::from_rows_typed`]) or if the rows differ in type or shape.
    pub fn from_rows(rows: Vec<Value>) -> Result<ArrayValue, ValueError> {
        let first = rows.first().ok_or_else(|| {
            ValueError::new("cannot build an array from zero rows without a type")
        })?;
        let t = first.elem_type();
        let row_shape: Vec<i64> = first.shape().to_vec();
        ArrayValue::from_rows_typed(t, &row_shape, rows)
    }

    /// Like [`ArrayValue::from_rows`], with the row type given, so that zero
    /// rows give an empty array of shape `[0] ++ row_shape`.
    pub fn from_rows_typed(
        t: PrimType,
        row_shape: &[i64],
        rows: Vec<Value>,
    ) -> Result<ArrayValue, ValueError> {
        let row_elems = shape_elems(row_shape)
            .ok_or_else(|| ValueError::new(format!("invalid row shape {row_shape:?}")))?;
        let total = row_elems
            .checked_mul(rows.len())
            .ok_or_else(|| ValueError::new("array too large"))?;
        for (i, r) in rows.iter().enumerate() {
            if r.elem_type() != t || r.shape() != row_shape {
                return Err(ValueError::new(format!(
                    "row {i} has type {} and shape {:?}, but the rows must have type {t} and shape {:?}",
                    r.elem_type(),
                    r.shape(),
                    row_shape
                )));
            }
        }
        let buffer = with_elem_type!(t, T => {
            let mut v: Vec<T> = Vec::with_capacity(total);
            for r in &rows {
                match r {
                    Value::Prim(p) => v.push(T::from_prim(*p).expect("type checked above")),
                    Value::Array(a) => {
                        v.extend_from_slice(a.as_slice::<T>().expect("type checked above"))
                    }
                }
            }
            T::into_buffer(v)
        });
        let mut shape = Vec::with_capacity(row_shape.len() + 1);
        shape.push(rows.len() as i64);
        shape.extend_from_slice(row_shape);
        Ok(ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer,
        })
    }

    /// Iterates over the elements in row-major order, boxed as [`PrimValue`]s
    /// (no allocation per element).
    pub fn iter_prims(&self) -> impl Iterator<Item = PrimValue> + '_ {
        let off = self.offset;
        (0..self.num_elems()).map(move |i| self.buffer.get(off + i))
    }
}

impl Value {
    /// The shape: empty for a scalar.
    pub fn shape(&self) -> &[i64] {
        match self {
            Value::Prim(_) => &[],
            Value::Array(a) => a.shape(),
        }
    }

    /// The rank: 0 for a scalar.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// The type (element type and rank).
    pub fn value_type(&self) -> ValueType {
        ValueType::new(self.elem_type(), self.rank())
    }

    /// The scalar, if this is one.
    pub fn as_prim(&self) -> Option<PrimValue> {
        match self {
            Value::Prim(p) => Some(*p),
            Value::Array(_) => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&ArrayValue> {
        match self {
            Value::Prim(_) => None,
            Value::Array(a) => Some(a),
        }
    }

    /// Number of scalar elements (1 for a scalar).
    pub fn num_elems(&self) -> usize {
        match self {
            Value::Prim(_) => 1,
            Value::Array(a) => a.num_elems(),
        }
    }

    /// Element `i` in row-major order (a scalar has the single element 0).
    ///
    /// Panics if out of bounds.
    pub fn get_flat(&self, i: usize) -> PrimValue {
        match self {
            Value::Prim(p) => {
                assert_eq!(i, 0, "flat index {i} out of bounds for a scalar");
                *p
            }
            Value::Array(a) => a.get_flat(i),
        }
    }
}

impl From<PrimValue> for Value {
    fn from(p: PrimValue) -> Value {
        Value::Prim(p)
    }
}

impl From<ArrayValue> for Value {
    fn from(a: ArrayValue) -> Value {
        Value::Array(a)
    }
}

impl std::fmt::Display for Value {
    /// Futhark's textual value format, as [`write_value_text`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&write_value_text(self))
    }
}
