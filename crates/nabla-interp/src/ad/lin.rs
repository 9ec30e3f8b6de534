//! Linear structural array operations and their transposes.
//!
//! Every array operation of the IR that only moves, copies, sums or zeroes
//! elements (indexing and slicing, in-place updates, scatter, array literals,
//! SOAC result collection, concatenation, replicate, reshape, transpose,
//! rotate, reverse, copy) is linear in its array arguments, so one description
//! serves all AD modes (Jensen 2024, §3 treats only scalars; this is its
//! extension to flat arrays): the plain operation applies [`Lin`] to plain
//! values; forward mode applies the same [`Lin`] to the primals and to the
//! tangents; reverse mode records **one** tape entry per application whose
//! sweep adds the transposed map of the output adjoint into the inputs'
//! adjoints (see `tape.rs`). Element positions are flat, row-major offsets
//! relative to each array's own start.

use nabla_prim::{PrimType, PrimValue};
use nabla_values::{shape_elems, ArrayValue, Buffer, Elem, Value};
use std::rc::Rc;

/// A set of flat element positions, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reg {
    /// `start, start+1, …, start+len-1`.
    Contig { start: usize, len: usize },
    /// Arbitrary positions.
    Pos(Rc<[usize]>),
}

impl Reg {
    /// All `n` positions of an array of `n` elements.
    pub fn whole(n: usize) -> Reg {
        Reg::Contig { start: 0, len: n }
    }
    pub fn len(&self) -> usize {
        match self {
            Reg::Contig { len, .. } => *len,
            Reg::Pos(p) => p.len(),
        }
    }
    /// Whether every position is below `n`.
    pub fn fits(&self, n: usize) -> bool {
        match self {
            Reg::Contig { start, len } => start + len <= n,
            Reg::Pos(p) => p.iter().all(|&i| i < n),
        }
    }
    #[inline]
    pub fn get(&self, k: usize) -> usize {
        match self {
            Reg::Contig { start, .. } => start + k,
            Reg::Pos(p) => p[k],
        }
    }
    /// Converts the evaluator's region of an index.
    pub fn from_region(r: crate::array::Region) -> Reg {
        match r {
            crate::array::Region::Contiguous { start, len } => Reg::Contig { start, len },
            crate::array::Region::Positions(p) => Reg::Pos(p.into()),
        }
    }
}

/// A linear map from one or more arrays (or scalars) to one array (or scalar).
#[derive(Clone, Debug)]
pub(crate) enum Lin {
    /// One input: `out = zeros(shape); out[to[k]] += in[from[k]]`. With `to`
    /// the whole output this is a gather (index, slice, transpose, rotate,
    /// reverse); with `from` the whole input an embedding (transposed gather).
    Move {
        from: Reg,
        to: Reg,
        shape: Rc<[i64]>,
        elem: PrimType,
    },
    /// `n` inputs of shape `row`: the array of those rows (array literals,
    /// SOAC results).
    Stack {
        n: usize,
        row: Rc<[i64]>,
        elem: PrimType,
    },
    /// Inputs `k`: `out = zeros(shape); out[parts[k].0] += in_k` (all of
    /// `in_k`, whose shape is `parts[k].1`): concatenation, sums.
    Embed {
        shape: Rc<[i64]>,
        elem: PrimType,
        parts: Rc<[(Reg, Rc<[i64]>)]>,
    },
    /// Two inputs `(arr, x)`: `out = arr; out[dst[k]] = x[src[k]]` (in-place
    /// update, scatter).
    Update { dst: Reg, src: Reg },
    /// `out = arr; out[reg] = 0`.
    Zero { reg: Reg },
    /// `n` copies of the input (`replicate`).
    Replicate { n: usize },
    /// The sum of the `n` rows of the input (transpose of `Replicate`).
    SumRows { n: usize, row: Rc<[i64]> },
    /// The same elements under shape `shape` (input shape `in_shape`); a
    /// fresh copy when `copy`.
    Reshape {
        shape: Rc<[i64]>,
        in_shape: Rc<[i64]>,
        copy: bool,
    },
}

/// Addition used to accumulate adjoints: wrapping on integers, IEEE on
/// floats, `or` on `bool` (bool adjoints are always `false`).
pub(crate) trait Acc: Elem {
    fn acc(self, o: Self) -> Self;
}
macro_rules! acc_int {
    ($($t:ty),*) => {$(impl Acc for $t { #[inline] fn acc(self, o: Self) -> Self { self.wrapping_add(o) } })*};
}
acc_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Acc for f32 {
    #[inline]
    fn acc(self, o: Self) -> Self {
        self + o
    }
}
impl Acc for f64 {
    #[inline]
    fn acc(self, o: Self) -> Self {
        self + o
    }
}
impl Acc for nabla_prim::f16 {
    #[inline]
    fn acc(self, o: Self) -> Self {
        nabla_prim::f16::from_f32(self.to_f32() + o.to_f32())
    }
}
impl Acc for bool {
    #[inline]
    fn acc(self, o: Self) -> Self {
        self || o
    }
}

fn shape_len(s: &[i64]) -> usize {
    shape_elems(s).unwrap_or(0)
}

/// The elements of a plain value as a slice of `T` (a scalar as one element).
fn elems<'a, T: Elem>(v: &'a Value, one: &'a mut [T; 1]) -> Option<&'a [T]> {
    match v {
        Value::Prim(p) => {
            one[0] = T::from_prim(*p)?;
            Some(&one[..])
        }
        Value::Array(a) => a.as_slice::<T>(),
    }
}

/// The mutable elements of an array, made unshared first (copy-on-write).
fn elems_mut<T: Elem>(a: &mut ArrayValue) -> Option<&mut [T]> {
    a.materialize();
    let v = T::buffer_vec_mut(&mut a.buffer)?;
    Some(Rc::make_mut(v).as_mut_slice())
}

/// Turns an array of shape `[]` into a scalar; other values unchanged.
fn scalar_if_empty_shape(a: ArrayValue) -> Value {
    if a.rank() == 0 {
        Value::Prim(a.buffer.get(a.offset))
    } else {
        Value::Array(a)
    }
}

fn as_array(v: Value, shape: &[i64]) -> ArrayValue {
    match v {
        Value::Array(a) => a,
        Value::Prim(p) => ArrayValue {
            shape: shape.into(),
            offset: 0,
            buffer: Buffer::filled(p, 1),
        },
    }
}

/// `dst[dreg[k]] (+)= src[sreg[k]]` on plain values: `add` accumulates,
/// otherwise assigns. `dst` is an array or a scalar (one element). False on a
/// type or length mismatch.
pub(crate) fn move_into(dst: &mut Value, dreg: &Reg, src: &Value, sreg: &Reg, add: bool) -> bool {
    if dreg.len() != sreg.len() || dst.elem_type() != src.elem_type() {
        return false;
    }
    with_ty!(dst.elem_type(), T => {
        let mut one = [<T as Elem>::zero()];
        // `src` and `dst` are distinct values; if they share a buffer,
        // `elems_mut` below copies the destination first (copy-on-write).
        let Some(sv) = elems::<T>(src, &mut one) else { return false };
        if !sreg.fits(sv.len()) || !dreg.fits(dst.num_elems()) { return false; }
        match dst {
            Value::Prim(p) => {
                let Some(d0) = T::from_prim(*p) else { return false };
                if dreg.len() != 1 || dreg.get(0) != 0 { return false; }
                let x = sv[sreg.get(0)];
                *p = (if add { d0.acc(x) } else { x }).to_prim();
                true
            }
            Value::Array(a) => {
                let Some(d) = elems_mut::<T>(a) else { return false };
                match (dreg, sreg) {
                    (Reg::Contig { start: ds, len }, Reg::Contig { start: ss, .. }) => {
                        let (dd, xs) = (&mut d[*ds..*ds + *len], &sv[*ss..*ss + *len]);
                        if add {
                            for (a, b) in dd.iter_mut().zip(xs) { *a = a.acc(*b); }
                        } else {
                            dd.copy_from_slice(xs);
                        }
                    }
                    _ => {
                        for k in 0..dreg.len() {
                            let (i, j) = (dreg.get(k), sreg.get(k));
                            d[i] = if add { d[i].acc(sv[j]) } else { sv[j] };
                        }
                    }
                }
                true
            }
        }
    })
}

/// Sets `a[reg]` to zero (in place when unshared).
pub(crate) fn zero_region(v: &mut Value, reg: &Reg) {
    match v {
        Value::Prim(p) => *p = PrimValue::zero(p.prim_type()),
        Value::Array(a) => with_ty!(a.elem_type(), T => {
            if let Some(d) = elems_mut::<T>(a) {
                for k in 0..reg.len() {
                    d[reg.get(k)] = <T as Elem>::zero();
                }
            }
        }),
    }
}

/// `a + b` elementwise on plain values of one shape (in place in `a` when unshared).
pub(crate) fn add_plain(mut a: Value, b: &Value) -> Result<Value, String> {
    let n = a.num_elems();
    if a.shape() != b.shape() {
        return Err(format!(
            "internal error: adding adjoints of shapes {:?} and {:?}",
            a.shape(),
            b.shape()
        ));
    }
    if !move_into(&mut a, &Reg::whole(n), b, &Reg::whole(n), true) {
        return Err("internal error: adding adjoints of different types".into());
    }
    Ok(a)
}

/// Applies a linear operation to plain values.
pub(crate) fn apply_plain(op: &Lin, mut ins: Vec<Value>) -> Result<Value, String> {
    let bad = || {
        "internal error: linear array operation on values of the wrong shape or type".to_string()
    };
    match op {
        Lin::Move {
            from,
            to,
            shape,
            elem,
            ..
        } => {
            let x = ins.pop().ok_or_else(bad)?;
            let n = shape_len(shape);
            if let (Reg::Contig { start, len }, true) = (from, *to == Reg::whole(n)) {
                if *len == n {
                    if let Value::Array(a) = &x {
                        if shape.is_empty() {
                            return Ok(Value::Prim(a.buffer.get(a.offset + start)));
                        }
                        return Ok(Value::Array(ArrayValue {
                            shape: shape.clone(),
                            offset: a.offset + start,
                            buffer: a.buffer.clone(),
                        }));
                    }
                }
            }
            let mut out = if shape.is_empty() {
                Value::Prim(PrimValue::zero(*elem))
            } else {
                Value::Array(ArrayValue::zeros(*elem, shape))
            };
            if !move_into(&mut out, to, &x, from, true) {
                return Err(bad());
            }
            Ok(out)
        }
        Lin::Stack { n, row, elem } => {
            if ins.len() != *n {
                return Err(bad());
            }
            let rs = shape_len(row);
            let mut b = crate::array::Builder::try_new(*elem, n * rs, "an AD array")?;
            // Shapes compared inline: most rows are scalars or short, and
            // a `memcmp` call per row showed up in profiles.
            let same =
                |a: &[i64], b: &[i64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y);
            for x in &ins {
                if !same(x.shape(), row) || !b.push_value(x) {
                    return Err(format!(
                        "size error: irregular array: rows of shapes {} and {}",
                        crate::array::show_shape(row),
                        crate::array::show_shape(x.shape())
                    ));
                }
            }
            let mut shape = vec![*n as i64];
            shape.extend_from_slice(row);
            Ok(Value::Array(ArrayValue {
                shape: shape.into(),
                offset: 0,
                buffer: b.finish(),
            }))
        }
        Lin::Embed { shape, elem, parts } => {
            let mut out = if shape.is_empty() {
                Value::Prim(PrimValue::zero(*elem))
            } else {
                Value::Array(ArrayValue::zeros(*elem, shape))
            };
            if ins.len() != parts.len() {
                return Err(bad());
            }
            for (x, (reg, _)) in ins.iter().zip(parts.iter()) {
                if !move_into(&mut out, reg, x, &Reg::whole(x.num_elems()), true) {
                    return Err(bad());
                }
            }
            Ok(out)
        }
        Lin::Update { dst, src, .. } => {
            let x = ins.pop().ok_or_else(bad)?;
            let mut arr = ins.pop().ok_or_else(bad)?;
            if !move_into(&mut arr, dst, &x, src, false) {
                return Err(bad());
            }
            Ok(arr)
        }
        Lin::Zero { reg } => {
            let mut arr = ins.pop().ok_or_else(bad)?;
            zero_region(&mut arr, reg);
            Ok(arr)
        }
        Lin::Replicate { n } => {
            let x = ins.pop().ok_or_else(bad)?;
            let mut shape = vec![*n as i64];
            shape.extend_from_slice(x.shape());
            Ok(Value::Array(ArrayValue {
                shape: shape.into(),
                offset: 0,
                buffer: crate::array::replicate_buffer(*n, &x)?,
            }))
        }
        Lin::SumRows { n, row } => {
            let x = ins.pop().ok_or_else(bad)?;
            let rs = shape_len(row);
            let elem = x.elem_type();
            let mut out = if row.is_empty() {
                Value::Prim(PrimValue::zero(elem))
            } else {
                Value::Array(ArrayValue::zeros(elem, row))
            };
            for j in 0..*n {
                if !move_into(
                    &mut out,
                    &Reg::whole(rs),
                    &x,
                    &Reg::Contig {
                        start: j * rs,
                        len: rs,
                    },
                    true,
                ) {
                    return Err(bad());
                }
            }
            Ok(out)
        }
        Lin::Reshape { shape, copy, .. } => {
            let x = ins.pop().ok_or_else(bad)?;
            match x {
                Value::Prim(p) if shape.is_empty() => Ok(Value::Prim(p)),
                x => {
                    let a = as_array(x, &[1]);
                    if a.num_elems() != shape_len(shape) {
                        return Err(bad());
                    }
                    let a = if *copy {
                        crate::array::copy_array(&a)?
                    } else {
                        a
                    };
                    Ok(scalar_if_empty_shape(ArrayValue {
                        shape: shape.clone(),
                        offset: a.offset,
                        buffer: a.buffer,
                    }))
                }
            }
        }
    }
}
