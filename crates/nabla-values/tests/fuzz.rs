//! Property tests: the readers never panic, and values round-trip.

use nabla_prim::PrimValue;
use nabla_values::{
    read_values, read_values_text, write_value_binary, write_value_text, ArrayValue, Value,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = read_values(&bytes, None);
    }

    #[test]
    fn binary_header_then_random_bytes_never_panic(
        rank in 0u8..4,
        tag in prop::sample::select(vec!["  i8", " i16", " i32", " i64", "  u8", " f16", " f64", "bool", "xxxx"]),
        rest in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let mut bytes = vec![b'b', 2, rank];
        bytes.extend_from_slice(tag.as_bytes());
        bytes.extend_from_slice(&rest);
        let _ = read_values(&bytes, None);
    }

    #[test]
    fn value_like_text_never_panics(s in "[\\[\\], 0-9a-z._+\\-()\n]{0,60}") {
        let _ = read_values_text(&s, None);
        let _ = read_values(s.as_bytes(), None);
    }

    #[test]
    fn f64_text_round_trip(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        let v: Value = PrimValue::F64(x).into();
        let back = read_values_text(&write_value_text(&v), None).unwrap();
        match back[0] {
            Value::Prim(PrimValue::F64(y)) => prop_assert!(y.to_bits() == x.to_bits() || (x.is_nan() && y.is_nan())),
            ref other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn f32_text_round_trip(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        let v: Value = PrimValue::F32(x).into();
        let back = read_values_text(&write_value_text(&v), None).unwrap();
        match back[0] {
            Value::Prim(PrimValue::F32(y)) => prop_assert!(y.to_bits() == x.to_bits() || (x.is_nan() && y.is_nan())),
            ref other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn f16_text_round_trip(bits in any::<u16>()) {
        let x = nabla_prim::f16::from_bits(bits);
        let v: Value = PrimValue::F16(x).into();
        let back = read_values_text(&write_value_text(&v), None).unwrap();
        match back[0] {
            Value::Prim(PrimValue::F16(y)) => prop_assert!(y.to_bits() == x.to_bits() || (x.is_nan() && y.is_nan())),
            ref other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn i64_arrays_round_trip(xs in proptest::collection::vec(any::<i64>(), 1..20), rows in 1usize..4) {
        let n = xs.len() / rows * rows;
        prop_assume!(n > 0);
        let a: Value = ArrayValue::from_vec_i64(&[rows as i64, (n / rows) as i64], xs[..n].to_vec()).into();
        let t = read_values_text(&write_value_text(&a), None).unwrap();
        prop_assert_eq!(&t[0], &a);
        let mut b = Vec::new();
        write_value_binary(&a, &mut b);
        let back = read_values(&b, None).unwrap();
        prop_assert_eq!(&back[0], &a);
    }
}
