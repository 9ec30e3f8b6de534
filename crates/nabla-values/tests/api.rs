//! Tests of the value API: construction, views, copy-on-write.

use nabla_prim::{f16, PrimType, PrimValue};
use nabla_values::{ArrayValue, Buffer, Value};

#[test]
fn from_vec_and_basic_queries() {
    let a = ArrayValue::from_vec_f64(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(a.rank(), 2);
    assert_eq!(a.len(), 2);
    assert_eq!(a.num_elems(), 6);
    assert_eq!(a.elem_type(), PrimType::F64);
    assert_eq!(a.get_flat(4), PrimValue::F64(5.0));
    assert_eq!(a.as_f64_slice(), Some(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0][..]));
    assert_eq!(a.as_f32_slice(), None);
    assert_eq!(a.as_i32_slice(), None);
}

#[test]
#[should_panic(expected = "does not match")]
fn from_vec_wrong_length_panics() {
    let _ = ArrayValue::from_vec_i32(&[2, 2], vec![1, 2, 3]);
}

#[test]
fn new_checks_length() {
    assert!(ArrayValue::new(&[3], Buffer::from_vec(vec![1i8, 2])).is_err());
    assert!(ArrayValue::new(&[-1], Buffer::from_vec(Vec::<i8>::new())).is_err());
    let a = ArrayValue::new(&[2], Buffer::from_vec(vec![1i8, 2])).unwrap();
    assert_eq!(a.as_i8_slice(), Some(&[1i8, 2][..]));
}

#[test]
fn buffer_helpers() {
    let b = Buffer::zeros(PrimType::Bool, 3);
    assert_eq!(b.len(), 3);
    assert_eq!(b.get(2), PrimValue::Bool(false));
    let b = Buffer::zeros(PrimType::F16, 2);
    assert_eq!(b.get(1), PrimValue::F16(f16::from_f32(0.0)));
    let b = Buffer::from_prims(PrimType::U16, &[PrimValue::U16(7), PrimValue::U16(9)]).unwrap();
    assert_eq!(b.as_slice::<u16>(), Some(&[7u16, 9][..]));
    let e = Buffer::from_prims(PrimType::U16, &[PrimValue::U16(7), PrimValue::I32(9)]).unwrap_err();
    assert!(e.message.contains("element 1"), "{e}");
    assert!(Buffer::zeros(PrimType::I64, 0).is_empty());
}

#[test]
fn row_shares_buffer_and_scalar_rows() {
    let a = ArrayValue::from_vec_i32(&[3, 2], vec![1, 2, 3, 4, 5, 6]);
    let r = a.row(1);
    match &r {
        Value::Array(ra) => {
            assert_eq!(ra.shape(), &[2]);
            assert_eq!(ra.offset, 2);
            assert_eq!(ra.as_i32_slice(), Some(&[3, 4][..]));
            // Shared: two strong references to the same buffer.
            assert!(!ra.buffer.is_unique());
            assert_eq!(ra.row(1), Value::Prim(PrimValue::I32(4)));
        }
        _ => panic!("expected an array row"),
    }
    let v = ArrayValue::from_vec_bool(&[2], vec![true, false]);
    assert_eq!(v.row(1), Value::Prim(PrimValue::Bool(false)));
    let rows: Vec<Value> = a.rows().collect();
    assert_eq!(rows.len(), 3);
}

#[test]
fn set_flat_is_copy_on_write() {
    let a = ArrayValue::from_vec_i64(&[2, 2], vec![1, 2, 3, 4]);
    let mut r = match a.row(1) {
        Value::Array(r) => r,
        _ => unreachable!(),
    };
    r.set_flat(0, PrimValue::I64(30));
    assert_eq!(r.as_i64_slice(), Some(&[30, 4][..]));
    assert_eq!(r.offset, 0);
    // The parent is unchanged.
    assert_eq!(a.as_i64_slice(), Some(&[1, 2, 3, 4][..]));

    // A unique, exact array is updated in place (no copy: the pointer stays).
    let mut b = ArrayValue::from_vec_f32(&[3], vec![1.0, 2.0, 3.0]);
    let p = b.as_f32_slice().unwrap().as_ptr();
    b.set_flat(2, PrimValue::F32(9.0));
    assert_eq!(b.as_f32_slice().unwrap().as_ptr(), p);
    assert_eq!(b.as_f32_slice(), Some(&[1.0, 2.0, 9.0][..]));

    // A shared array copies on write.
    let c = b.clone();
    b.set_flat(0, PrimValue::F32(-1.0));
    assert_eq!(c.as_f32_slice(), Some(&[1.0, 2.0, 9.0][..]));
    assert_eq!(b.as_f32_slice(), Some(&[-1.0, 2.0, 9.0][..]));
}

#[test]
#[should_panic(expected = "set_flat")]
fn set_flat_wrong_type_panics() {
    let mut b = ArrayValue::from_vec_f32(&[1], vec![1.0]);
    b.set_flat(0, PrimValue::F64(1.0));
}

#[test]
fn materialize_and_mut_slice() {
    let a = ArrayValue::from_vec_u8(&[2, 3], vec![1, 2, 3, 4, 5, 6]);
    let mut r = match a.row(1) {
        Value::Array(r) => r,
        _ => unreachable!(),
    };
    r.materialize();
    assert_eq!(r.offset, 0);
    assert_eq!(r.buffer.len(), 3);
    assert!(r.buffer.is_unique());
    assert_eq!(r.as_u8_slice(), Some(&[4, 5, 6][..]));
    let mut s = a.clone();
    s.as_mut_slice::<u8>().unwrap()[0] = 100;
    assert_eq!(a.get_flat(0), PrimValue::U8(1));
    assert_eq!(s.get_flat(0), PrimValue::U8(100));
    assert!(s.as_mut_slice::<i8>().is_none());
}

#[test]
fn from_rows_stacks_and_checks() {
    let rows = vec![
        Value::Array(ArrayValue::from_vec_i32(&[2], vec![1, 2])),
        Value::Array(ArrayValue::from_vec_i32(&[2], vec![3, 4])),
    ];
    let a = ArrayValue::from_rows(rows).unwrap();
    assert_eq!(a.shape(), &[2, 2]);
    assert_eq!(a.as_i32_slice(), Some(&[1, 2, 3, 4][..]));

    // Rows that are views (nonzero offset) are copied correctly.
    let big = ArrayValue::from_vec_i32(&[3, 2], vec![1, 2, 3, 4, 5, 6]);
    let b = ArrayValue::from_rows(vec![big.row(2), big.row(0)]).unwrap();
    assert_eq!(b.as_i32_slice(), Some(&[5, 6, 1, 2][..]));

    let s = ArrayValue::from_rows(vec![PrimValue::F64(1.5).into(), PrimValue::F64(2.5).into()])
        .unwrap();
    assert_eq!(s.shape(), &[2]);
    assert_eq!(s.as_f64_slice(), Some(&[1.5, 2.5][..]));

    let bad = ArrayValue::from_rows(vec![
        Value::Array(ArrayValue::from_vec_i32(&[2], vec![1, 2])),
        Value::Array(ArrayValue::from_vec_i32(&[3], vec![3, 4, 5])),
    ]);
    assert!(bad.is_err());
    let bad = ArrayValue::from_rows(vec![PrimValue::I32(1).into(), PrimValue::I64(2).into()]);
    assert!(bad.is_err());
    assert!(ArrayValue::from_rows(vec![]).is_err());
    let e = ArrayValue::from_rows_typed(PrimType::F32, &[3], vec![]).unwrap();
    assert_eq!(e.shape(), &[0, 3]);
}

#[test]
fn iter_prims_and_reshape() {
    let a = ArrayValue::from_vec_i16(&[2, 2], vec![1, 2, 3, 4]);
    let r = match a.row(1) {
        Value::Array(r) => r,
        _ => unreachable!(),
    };
    let xs: Vec<PrimValue> = r.iter_prims().collect();
    assert_eq!(xs, vec![PrimValue::I16(3), PrimValue::I16(4)]);
    let f = a.reshape(&[4]).unwrap();
    assert_eq!(f.get_flat(3), PrimValue::I16(4));
    assert!(a.reshape(&[3]).is_err());
    assert_eq!(r.elems_buffer().len(), 2);
}

#[test]
fn empty_arrays_with_huge_other_dims() {
    let a = ArrayValue::zeros(PrimType::I32, &[0, i64::MAX]);
    assert_eq!(a.num_elems(), 0);
    assert!(a.is_empty());
    let b = ArrayValue::zeros(PrimType::I32, &[i64::MAX, 0]);
    assert_eq!(b.len(), i64::MAX as usize);
    assert_eq!(b.row(5).shape(), &[0]);
}
