//! Tests of the `futhark test` comparison rule.

use nabla_prim::{f16, PrimType, PrimValue};
use nabla_values::{
    compare_value_lists, compare_values, compare_values_with_tolerance, ArrayValue, MismatchKind,
    Value, ValueType,
};

fn f64s(xs: &[f64]) -> Value {
    ArrayValue::from_vec_f64(&[xs.len() as i64], xs.to_vec()).into()
}

fn f32s(xs: &[f32]) -> Value {
    ArrayValue::from_vec_f32(&[xs.len() as i64], xs.to_vec()).into()
}

#[test]
fn equal_values_match() {
    let a: Value = ArrayValue::from_vec_i32(&[2, 2], vec![1, 2, 3, 4]).into();
    assert_eq!(compare_values(&a, &a.clone()), Ok(()));
    let b: Value = PrimValue::Bool(true).into();
    assert_eq!(compare_values(&b, &b), Ok(()));
    let e: Value = ArrayValue::from_vec_f64(&[0, 3], vec![]).into();
    assert_eq!(compare_values(&e, &e), Ok(()));
}

#[test]
fn integers_and_bools_are_exact() {
    let e: Value = ArrayValue::from_vec_i64(&[2, 2], vec![1, 2, 3, 4]).into();
    let a: Value = ArrayValue::from_vec_i64(&[2, 2], vec![1, 2, 5, 4]).into();
    let m = compare_values(&e, &a).unwrap_err();
    match &m.kind {
        MismatchKind::Element {
            flat_index,
            index,
            expected,
            actual,
            ..
        } => {
            assert_eq!(*flat_index, 2);
            assert_eq!(index, &vec![1, 0]);
            assert_eq!(*expected, PrimValue::I64(3));
            assert_eq!(*actual, PrimValue::I64(5));
        }
        k => panic!("{k:?}"),
    }
    let msg = m.to_string();
    assert!(
        msg.contains("[1,0]") && msg.contains("3i64") && msg.contains("5i64"),
        "{msg}"
    );
    assert!(compare_values(
        &PrimValue::Bool(true).into(),
        &PrimValue::Bool(false).into()
    )
    .is_err());
    assert!(compare_values(&PrimValue::U8(1).into(), &PrimValue::U8(2).into()).is_err());
}

#[test]
fn types_and_shapes_must_match() {
    let m = compare_values(&PrimValue::I32(1).into(), &PrimValue::I64(1).into()).unwrap_err();
    assert_eq!(
        m.kind,
        MismatchKind::Type {
            expected: ValueType::new(PrimType::I32, 0),
            actual: ValueType::new(PrimType::I64, 0)
        }
    );
    let m = compare_values(&f64s(&[1.0]), &PrimValue::F64(1.0).into()).unwrap_err();
    assert!(matches!(m.kind, MismatchKind::Type { .. }));
    let m = compare_values(&f64s(&[1.0, 2.0]), &f64s(&[1.0])).unwrap_err();
    assert_eq!(
        m.kind,
        MismatchKind::Shape {
            expected: vec![2],
            actual: vec![1]
        }
    );
    assert!(m.to_string().contains("shape"));
}

#[test]
fn float_tolerance_is_relative_to_largest_expected() {
    // tol_abs = max(0.002, 0.002 * 1000) = 2.0
    assert!(compare_values(&f64s(&[1000.0, 1.0]), &f64s(&[1001.9, 1.0])).is_ok());
    assert!(compare_values(&f64s(&[1000.0, 1.0]), &f64s(&[1002.1, 1.0])).is_err());
    // The tolerance applies to every element of the value, even small ones.
    assert!(compare_values(&f64s(&[1000.0, 1.0]), &f64s(&[1000.0, 2.9])).is_ok());
    assert!(compare_values(&f64s(&[1000.0, 1.0]), &f64s(&[1000.0, 3.1])).is_err());
    // Near zero the tolerance is absolute: 0.002.
    assert!(compare_values(&f64s(&[0.0]), &f64s(&[0.0019])).is_ok());
    assert!(compare_values(&f64s(&[0.0]), &f64s(&[0.0021])).is_err());
    assert!(compare_values(&f64s(&[1e-9]), &f64s(&[-1e-3])).is_ok());
    // Futhark scales by e, not |e|: negative expected values do not widen it.
    assert!(compare_values(&f64s(&[-1000.0]), &f64s(&[-1000.0019])).is_ok());
    assert!(compare_values(&f64s(&[-1000.0]), &f64s(&[-1000.5])).is_err());
    // Scalars too.
    assert!(compare_values(
        &PrimValue::F64(500.0).into(),
        &PrimValue::F64(500.99).into()
    )
    .is_ok());
    assert!(compare_values(
        &PrimValue::F64(500.0).into(),
        &PrimValue::F64(501.01).into()
    )
    .is_err());
    // Infinite/NaN expected elements do not count towards the tolerance.
    assert!(compare_values(&f64s(&[f64::INFINITY, 1.0]), &f64s(&[f64::INFINITY, 1.5])).is_err());
    // Custom tolerance.
    assert!(compare_values_with_tolerance(&f64s(&[1.0]), &f64s(&[1.05]), 0.1).is_ok());
    assert!(compare_values_with_tolerance(&f64s(&[1.0]), &f64s(&[1.05]), 0.01).is_err());
    // f32 and f16.
    assert!(compare_values(&f32s(&[100.0]), &f32s(&[100.19])).is_ok());
    assert!(compare_values(&f32s(&[100.0]), &f32s(&[100.21])).is_err());
    let h = |x: f32| -> Value { PrimValue::F16(f16::from_f32(x)).into() };
    assert!(compare_values(&h(1000.0), &h(1001.0)).is_ok());
    assert!(compare_values(&h(1000.0), &h(1008.0)).is_err());
}

#[test]
fn nan_and_infinities() {
    assert!(compare_values(&f64s(&[f64::NAN]), &f64s(&[f64::NAN])).is_ok());
    assert!(compare_values(&f64s(&[f64::NAN]), &f64s(&[1.0])).is_err());
    assert!(compare_values(&f64s(&[1.0]), &f64s(&[f64::NAN])).is_err());
    assert!(compare_values(&f64s(&[f64::INFINITY]), &f64s(&[f64::INFINITY])).is_ok());
    assert!(compare_values(&f64s(&[f64::NEG_INFINITY]), &f64s(&[f64::NEG_INFINITY])).is_ok());
    assert!(compare_values(&f64s(&[f64::INFINITY]), &f64s(&[f64::NEG_INFINITY])).is_err());
    assert!(compare_values(&f64s(&[f64::INFINITY]), &f64s(&[f64::MAX])).is_err());
    assert!(compare_values(&f64s(&[f64::MAX]), &f64s(&[f64::INFINITY])).is_err());
    assert!(compare_values(&f32s(&[f32::NAN]), &f32s(&[f32::NAN])).is_ok());
    // Huge differences that overflow are mismatches, not matches.
    assert!(compare_values(&f64s(&[f64::MAX]), &f64s(&[-f64::MAX])).is_err());
}

#[test]
fn value_lists() {
    let a: Vec<Value> = vec![PrimValue::I32(1).into(), f64s(&[1.0])];
    assert!(compare_value_lists(&a, &a).is_ok());
    let m = compare_value_lists(&a, &a[..1]).unwrap_err();
    assert_eq!(
        m.kind,
        MismatchKind::Count {
            expected: 2,
            actual: 1
        }
    );
    let b: Vec<Value> = vec![PrimValue::I32(1).into(), f64s(&[2.0])];
    let m = compare_value_lists(&a, &b).unwrap_err();
    assert_eq!(m.value_index, 1);
    assert!(m.to_string().starts_with("value #1 at index [0]"), "{m}");
}
