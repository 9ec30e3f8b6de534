//! Comparison of expected and actual results, as `futhark test` does it.
//!
//! The rule is the one in `futhark-data`'s `Futhark.Data.Compare` module, used
//! by `futhark test` with its default tolerance 0.002 ("The maximum relative
//! tolerance used for comparing floating-point results. 0.002 (0.2%) is a fine
//! default"):
//!
//! * the two values must have the same element type and the same shape;
//! * integers and booleans must be equal;
//! * floats: NaN matches NaN, an infinity matches an infinity of the same
//!   sign, and otherwise `|actual - expected| <= tol_abs`, where for each
//!   value (a whole array at once)
//!   `tol_abs = max(tol, max { tol * e | e a finite element of expected })`
//!   — i.e. the tolerance is relative to the largest (positive) finite
//!   expected element, and never below `tol` itself (so it is absolute near
//!   zero). Note `tol * e`, not `tol * |e|`, exactly as Futhark computes it.
//!   The arithmetic is done in the element type's precision (`f16` in `f32`).

use crate::elem::Elem;
use crate::{Value, ValueType};
use nabla_prim::{f16, PrimType, PrimValue};
use std::fmt;

/// `futhark test`'s default relative tolerance for floating-point results.
pub const DEFAULT_TOLERANCE: f64 = 0.002;

/// Why expected and actual results differ, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which value (0-based) in the list of results.
    pub value_index: usize,
    pub kind: MismatchKind,
}

/// The ways two results can differ.
#[derive(Clone, Debug, PartialEq)]
pub enum MismatchKind {
    /// Different numbers of values.
    Count { expected: usize, actual: usize },
    /// Different element types or ranks.
    Type {
        expected: ValueType,
        actual: ValueType,
    },
    /// Same type, different shapes.
    Shape {
        expected: Vec<i64>,
        actual: Vec<i64>,
    },
    /// An element differs. `index` is the multi-dimensional index (empty for
    /// a scalar); `flat_index` the row-major position.
    Element {
        flat_index: usize,
        index: Vec<i64>,
        expected: PrimValue,
        actual: PrimValue,
        reason: String,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.value_index;
        match &self.kind {
            MismatchKind::Count { expected, actual } => {
                write!(f, "expected {expected} value(s), got {actual}")
            }
            MismatchKind::Type { expected, actual } => {
                write!(
                    f,
                    "value #{i}: expected a value of type {expected}, got {actual}"
                )
            }
            MismatchKind::Shape { expected, actual } => {
                write!(
                    f,
                    "value #{i}: expected an array of shape {expected:?}, got shape {actual:?}"
                )
            }
            MismatchKind::Element {
                index,
                expected,
                actual,
                reason,
                ..
            } => {
                write!(f, "value #{i}")?;
                if !index.is_empty() {
                    let idx: Vec<String> = index.iter().map(|x| x.to_string()).collect();
                    write!(f, " at index [{}]", idx.join(","))?;
                }
                write!(
                    f,
                    ": expected {}, got {} ({reason})",
                    crate::write_value_text(&Value::Prim(*expected)),
                    crate::write_value_text(&Value::Prim(*actual))
                )
            }
        }
    }
}

impl std::error::Error for Mismatch {}

/// Compares one expected and one actual value with `futhark test`'s rule and
/// default tolerance ([`DEFAULT_TOLERANCE`]); see the module documentation.
/// Returns the first difference (in row-major order).
pub fn compare_values(expected: &Value, actual: &Value) -> Result<(), Mismatch> {
    compare_values_with_tolerance(expected, actual, DEFAULT_TOLERANCE)
}

/// [`compare_values`] with a chosen relative tolerance.
pub fn compare_values_with_tolerance(
    expected: &Value,
    actual: &Value,
    tol: f64,
) -> Result<(), Mismatch> {
    compare_one(0, expected, actual, tol)
}

/// Compares lists of results (the components of an entry point's result);
/// the counts must agree. Returns the first difference.
pub fn compare_value_lists(expected: &[Value], actual: &[Value]) -> Result<(), Mismatch> {
    compare_value_lists_with_tolerance(expected, actual, DEFAULT_TOLERANCE)
}

/// [`compare_value_lists`] with a chosen relative tolerance.
pub fn compare_value_lists_with_tolerance(
    expected: &[Value],
    actual: &[Value],
    tol: f64,
) -> Result<(), Mismatch> {
    if expected.len() != actual.len() {
        return Err(Mismatch {
            value_index: 0,
            kind: MismatchKind::Count {
                expected: expected.len(),
                actual: actual.len(),
            },
        });
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        compare_one(i, e, a, tol)?;
    }
    Ok(())
}

fn unflatten(shape: &[i64], mut i: usize) -> Vec<i64> {
    let mut idx = vec![0i64; shape.len()];
    for k in (0..shape.len()).rev() {
        let d = shape[k].max(1) as usize;
        idx[k] = (i % d) as i64;
        i /= d;
    }
    idx
}

/// A float type's arithmetic for the comparison.
trait CmpFloat: Copy {
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_pos(self) -> bool;
    /// `|a - b|` and `t * x` and `max`, done in the type's precision, returned as f64.
    fn abs_diff(a: Self, b: Self) -> f64;
    fn scale(t: f64, x: Self) -> f64;
    fn round_tol(t: f64) -> f64;
}

impl CmpFloat for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn is_infinite(self) -> bool {
        f64::is_infinite(self)
    }
    fn is_pos(self) -> bool {
        self > 0.0
    }
    fn abs_diff(a: Self, b: Self) -> f64 {
        (a - b).abs()
    }
    fn scale(t: f64, x: Self) -> f64 {
        t * x
    }
    fn round_tol(t: f64) -> f64 {
        t
    }
}

impl CmpFloat for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn is_infinite(self) -> bool {
        f32::is_infinite(self)
    }
    fn is_pos(self) -> bool {
        self > 0.0
    }
    fn abs_diff(a: Self, b: Self) -> f64 {
        (a - b).abs() as f64
    }
    fn scale(t: f64, x: Self) -> f64 {
        (t as f32 * x) as f64
    }
    fn round_tol(t: f64) -> f64 {
        t as f32 as f64
    }
}

impl CmpFloat for f16 {
    fn is_nan(self) -> bool {
        self.to_f32().is_nan()
    }
    fn is_infinite(self) -> bool {
        self.to_f32().is_infinite()
    }
    fn is_pos(self) -> bool {
        self.to_f32() > 0.0
    }
    fn abs_diff(a: Self, b: Self) -> f64 {
        <f32 as CmpFloat>::abs_diff(a.to_f32(), b.to_f32())
    }
    fn scale(t: f64, x: Self) -> f64 {
        <f32 as CmpFloat>::scale(t, x.to_f32())
    }
    fn round_tol(t: f64) -> f64 {
        t as f32 as f64
    }
}

fn compare_one(vi: usize, expected: &Value, actual: &Value, tol: f64) -> Result<(), Mismatch> {
    let (et, at) = (expected.value_type(), actual.value_type());
    if et != at {
        return Err(Mismatch {
            value_index: vi,
            kind: MismatchKind::Type {
                expected: et,
                actual: at,
            },
        });
    }
    if expected.shape() != actual.shape() {
        return Err(Mismatch {
            value_index: vi,
            kind: MismatchKind::Shape {
                expected: expected.shape().to_vec(),
                actual: actual.shape().to_vec(),
            },
        });
    }
    let shape = expected.shape();
    let elem_mismatch = |j: usize, reason: String| Mismatch {
        value_index: vi,
        kind: MismatchKind::Element {
            flat_index: j,
            index: unflatten(shape, j),
            expected: expected.get_flat(j),
            actual: actual.get_flat(j),
            reason,
        },
    };
    match et.elem {
        PrimType::F16 => {
            cmp_floats::<f16>(expected, actual, tol).map_err(|(j, r)| elem_mismatch(j, r))
        }
        PrimType::F32 => {
            cmp_floats::<f32>(expected, actual, tol).map_err(|(j, r)| elem_mismatch(j, r))
        }
        PrimType::F64 => {
            cmp_floats::<f64>(expected, actual, tol).map_err(|(j, r)| elem_mismatch(j, r))
        }
        _ => {
            let n = expected.num_elems();
            for j in 0..n {
                if expected.get_flat(j) != actual.get_flat(j) {
                    return Err(elem_mismatch(j, "values differ".into()));
                }
            }
            Ok(())
        }
    }
}

/// The elements of a value of element type `T`, as a slice.
fn elems<T: Elem>(v: &Value) -> Vec<T> {
    match v {
        Value::Prim(p) => vec![T::from_prim(*p).expect("type checked")],
        Value::Array(a) => a.as_slice::<T>().expect("type checked").to_vec(),
    }
}

fn cmp_floats<T: Elem + CmpFloat>(
    expected: &Value,
    actual: &Value,
    tol: f64,
) -> Result<(), (usize, String)> {
    let (e, a) = (elems::<T>(expected), elems::<T>(actual));
    // tol_abs = max(tol, max over finite expected e of tol * e)
    let mut abstol = T::round_tol(tol);
    for &x in &e {
        if !x.is_nan() && !x.is_infinite() {
            abstol = abstol.max(T::scale(tol, x));
        }
    }
    for (j, (&x, &y)) in e.iter().zip(&a).enumerate() {
        if x.is_nan() && y.is_nan() {
            continue;
        }
        if x.is_infinite() && y.is_infinite() && x.is_pos() == y.is_pos() {
            continue;
        }
        if x.is_nan() || y.is_nan() {
            return Err((j, "exactly one of them is NaN".into()));
        }
        if x.is_infinite() || y.is_infinite() {
            return Err((j, "infinities differ".into()));
        }
        let d = T::abs_diff(y, x);
        if d > abstol {
            return Err((j, format!("difference {d} exceeds the tolerance {abstol}")));
        }
    }
    Ok(())
}
