//! JSON ↔ program values, and GradBench's output comparison rule.

use nabla_prim::PrimValue;
use nabla_values::{ArrayValue, Value};
use serde_json::Value as Json;

/// Field `name` of the JSON object `obj`; an error names the field.
pub fn field<'a>(obj: &'a Json, name: &str) -> Result<&'a Json, String> {
    match obj {
        Json::Object(m) => m
            .get(name)
            .ok_or_else(|| format!("input has no field {name:?}")),
        _ => Err(format!(
            "input must be an object (looking for field {name:?})"
        )),
    }
}

/// A JSON number as an f64 (integers are converted).
pub fn f64_of(j: &Json, what: &str) -> Result<f64, String> {
    j.as_f64()
        .ok_or_else(|| format!("{what} must be a number, got {}", short(j)))
}

/// A JSON integer as an i64 (a float with an integral value is accepted).
pub fn i64_of(j: &Json, what: &str) -> Result<i64, String> {
    if let Some(i) = j.as_i64() {
        return Ok(i);
    }
    match j.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as i64),
        _ => Err(format!("{what} must be an integer, got {}", short(j))),
    }
}

/// A JSON boolean.
pub fn bool_of(j: &Json, what: &str) -> Result<bool, String> {
    j.as_bool()
        .ok_or_else(|| format!("{what} must be a boolean, got {}", short(j)))
}

/// A value's JSON text, cut to a readable length for error messages.
fn short(j: &Json) -> String {
    let s = j.to_string();
    if s.len() > 40 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Nested JSON arrays of depth `rank` (rectangular) as a shape and the
/// row-major leaves, each converted by `leaf`.
fn nested<T>(
    j: &Json,
    rank: usize,
    what: &str,
    leaf: &dyn Fn(&Json, &str) -> Result<T, String>,
) -> Result<(Vec<i64>, Vec<T>), String> {
    // The shape: follow first elements; an empty level makes the rest 0.
    let mut shape = Vec::with_capacity(rank);
    let mut cur = Some(j);
    for _ in 0..rank {
        match cur {
            Some(Json::Array(a)) => {
                shape.push(a.len() as i64);
                cur = a.first();
            }
            Some(other) => {
                return Err(format!(
                    "{what} must be a {rank}-dimensional array, found {}",
                    short(other)
                ))
            }
            None => shape.push(0),
        }
    }
    let mut out = Vec::new();
    fill(j, &shape, what, leaf, &mut out)?;
    Ok((shape, out))
}

fn fill<T>(
    j: &Json,
    shape: &[i64],
    what: &str,
    leaf: &dyn Fn(&Json, &str) -> Result<T, String>,
    out: &mut Vec<T>,
) -> Result<(), String> {
    match shape.split_first() {
        None => {
            out.push(leaf(j, what)?);
            Ok(())
        }
        Some((&n, rest)) => match j {
            Json::Array(a) if a.len() as i64 == n => {
                for x in a {
                    fill(x, rest, what, leaf, out)?;
                }
                Ok(())
            }
            Json::Array(a) => Err(format!(
                "{what} is not rectangular (a row of length {} where {n} was expected)",
                a.len()
            )),
            other => Err(format!("{what}: expected an array, found {}", short(other))),
        },
    }
}

/// Nested JSON arrays of numbers, depth `rank` ≥ 1, as an f64 array value.
pub fn f64_array(j: &Json, rank: usize, what: &str) -> Result<Value, String> {
    let (shape, data) = nested(j, rank, what, &f64_of)?;
    Ok(Value::Array(ArrayValue::from_vec(&shape, data)))
}

/// Nested JSON arrays of integers, depth `rank` ≥ 1, as an i64 array value.
pub fn i64_array(j: &Json, rank: usize, what: &str) -> Result<Value, String> {
    let (shape, data) = nested(j, rank, what, &i64_of)?;
    Ok(Value::Array(ArrayValue::from_vec(&shape, data)))
}

/// Nested JSON arrays of numbers as a shape and flat f64 data.
pub fn f64_flat(j: &Json, rank: usize, what: &str) -> Result<(Vec<i64>, Vec<f64>), String> {
    nested(j, rank, what, &f64_of)
}

/// An f64 scalar value.
pub fn f64_value(x: f64) -> Value {
    Value::Prim(PrimValue::F64(x))
}

/// An i64 scalar value.
pub fn i64_value(x: i64) -> Value {
    Value::Prim(PrimValue::I64(x))
}

/// A scalar as JSON: floats as JSON floats (an error for NaN and
/// infinities, which JSON cannot hold), integers as JSON integers.
pub fn prim_to_json(p: PrimValue) -> Result<Json, String> {
    Ok(match p {
        PrimValue::F64(x) => float(x)?,
        PrimValue::F32(x) => float(x as f64)?,
        PrimValue::F16(x) => float(x.to_f64())?,
        PrimValue::Bool(b) => Json::Bool(b),
        PrimValue::I8(x) => Json::from(x),
        PrimValue::I16(x) => Json::from(x),
        PrimValue::I32(x) => Json::from(x),
        PrimValue::I64(x) => Json::from(x),
        PrimValue::U8(x) => Json::from(x),
        PrimValue::U16(x) => Json::from(x),
        PrimValue::U32(x) => Json::from(x),
        PrimValue::U64(x) => Json::from(x),
    })
}

fn float(x: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(x)
        .map(Json::Number)
        .ok_or_else(|| format!("the result contains the non-finite number {x}"))
}

/// A value as JSON: a scalar, or nested arrays following its shape.
pub fn to_json(v: &Value) -> Result<Json, String> {
    match v {
        Value::Prim(p) => prim_to_json(*p),
        Value::Array(a) => {
            let shape = a.shape().to_vec();
            let mut next = 0usize;
            build(a, &shape, &mut next)
        }
    }
}

fn build(a: &ArrayValue, shape: &[i64], next: &mut usize) -> Result<Json, String> {
    match shape.split_first() {
        None => {
            let p = a.get_flat(*next);
            *next += 1;
            prim_to_json(p)
        }
        Some((&n, rest)) => {
            let mut items = Vec::with_capacity(n.max(0) as usize);
            for _ in 0..n {
                items.push(build(a, rest, next)?);
            }
            Ok(Json::Array(items))
        }
    }
}

/// The flat f64 elements of a value (a scalar gives one element).
pub fn f64s(v: &Value) -> Result<Vec<f64>, String> {
    let n = v.num_elems();
    (0..n)
        .map(|i| match v.get_flat(i) {
            PrimValue::F64(x) => Ok(x),
            p => Err(format!(
                "expected f64 results, got a {}",
                p.prim_type().name()
            )),
        })
        .collect()
}

/// The flat i64 elements of a value.
pub fn i64s(v: &Value) -> Result<Vec<i64>, String> {
    let n = v.num_elems();
    (0..n)
        .map(|i| match v.get_flat(i) {
            PrimValue::I64(x) => Ok(x),
            p => Err(format!(
                "expected i64 results, got a {}",
                p.prim_type().name()
            )),
        })
        .collect()
}

/// The tolerance of GradBench's comparison rule.
pub const TOLERANCE: f64 = 1e-4;

/// GradBench's comparison of a tool's output with the reference output
/// (ported there from ADBench's Jacobian comparison): objects need the same
/// keys, arrays the same lengths, compared element by element; two integers
/// must be equal; otherwise numbers x (reference) and y (tool) match when
/// |x − y| / max(1, |x| + |y|) ≤ `tol`; strings and booleans must be equal;
/// any other combination of types is a mismatch. The error names the first
/// mismatch's path (`$.mu[3][1]`).
pub fn compare(reference: &Json, tool: &Json, tol: f64) -> Result<(), String> {
    compare_at(reference, tool, tol, &mut String::from("$"))
}

fn compare_at(x: &Json, y: &Json, tol: f64, path: &mut String) -> Result<(), String> {
    match (x, y) {
        (Json::Object(a), Json::Object(b)) => {
            for k in a.keys() {
                if !b.contains_key(k) {
                    return Err(format!("{path}: missing key {k:?}"));
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    return Err(format!("{path}: extra key {k:?}"));
                }
            }
            for (k, va) in a {
                let len = path.len();
                path.push_str(&format!(".{k}"));
                compare_at(va, &b[k], tol, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        (Json::Array(a), Json::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "{path}: length {} where {} was expected",
                    b.len(),
                    a.len()
                ));
            }
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                compare_at(va, vb, tol, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        (Json::Number(a), Json::Number(b)) => {
            let int = |n: &serde_json::Number| n.is_i64() || n.is_u64();
            if int(a) && int(b) {
                if a == b {
                    Ok(())
                } else {
                    Err(format!("{path}: integer {b} where {a} was expected"))
                }
            } else {
                let (xa, xb) = (
                    a.as_f64().unwrap_or(f64::NAN),
                    b.as_f64().unwrap_or(f64::NAN),
                );
                let err = (xa - xb).abs() / f64::max(1.0, xa.abs() + xb.abs());
                if err <= tol {
                    Ok(())
                } else {
                    Err(format!(
                        "{path}: {xb} where {xa} was expected (error {err:.3e})"
                    ))
                }
            }
        }
        (Json::String(a), Json::String(b)) if a == b => Ok(()),
        (Json::Bool(a), Json::Bool(b)) if a == b => Ok(()),
        (Json::Null, Json::Null) => Ok(()),
        _ => Err(format!(
            "{path}: {} where {} was expected",
            short(y),
            short(x)
        )),
    }
}
