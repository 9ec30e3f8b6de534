//! Tests of the textual and binary value formats.

use nabla_prim::{f16, PrimType, PrimValue};
use nabla_values::{
    read_values, read_values_file, read_values_text, write_value_binary, write_value_text,
    ArrayValue, Location, Value, ValueType,
};

fn one(text: &str) -> Value {
    let vs = read_values_text(text, None).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(vs.len(), 1, "{text:?}");
    vs.into_iter().next().unwrap()
}

fn prim(text: &str) -> PrimValue {
    one(text)
        .as_prim()
        .unwrap_or_else(|| panic!("{text:?} is not a scalar"))
}

fn err(text: &str) -> String {
    match read_values_text(text, None) {
        Ok(v) => panic!("{text:?} parsed as {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn typed(text: &str, ts: &[ValueType]) -> Result<Vec<Value>, String> {
    read_values_text(text, Some(ts)).map_err(|e| e.to_string())
}

// ------------------------------------------------------------ text reading

#[test]
fn scalar_literals() {
    assert_eq!(prim("1i32"), PrimValue::I32(1));
    assert_eq!(prim("3"), PrimValue::I32(3));
    assert_eq!(prim("-7"), PrimValue::I32(-7));
    assert_eq!(prim("+7i8"), PrimValue::I8(7));
    assert_eq!(prim("-1.0"), PrimValue::F64(-1.0));
    assert_eq!(prim("2.5f32"), PrimValue::F32(2.5));
    assert_eq!(prim("1f32"), PrimValue::F32(1.0));
    assert_eq!(prim("1e3"), PrimValue::F64(1000.0));
    assert_eq!(prim("1.5E-2f64"), PrimValue::F64(0.015));
    assert_eq!(prim("2e+2"), PrimValue::F64(200.0));
    assert_eq!(prim("true"), PrimValue::Bool(true));
    assert_eq!(prim("false"), PrimValue::Bool(false));
    assert_eq!(prim("0xFF"), PrimValue::I32(255));
    assert_eq!(prim("0xff_u8"), PrimValue::U8(255));
    assert_eq!(prim("-0x10i64"), PrimValue::I64(-16));
    assert_eq!(prim("0b101u16"), PrimValue::U16(5));
    assert_eq!(prim("1_000_000i64"), PrimValue::I64(1_000_000));
    assert_eq!(prim("1_0.2_5"), PrimValue::F64(10.25));
    assert_eq!(prim("18446744073709551615u64"), PrimValue::U64(u64::MAX));
    assert_eq!(prim("-9223372036854775808i64"), PrimValue::I64(i64::MIN));
    assert_eq!(prim("0.5f16"), PrimValue::F16(f16::from_f32(0.5)));
    assert_eq!(prim("f32.inf"), PrimValue::F32(f32::INFINITY));
    assert_eq!(prim("-f64.inf"), PrimValue::F64(f64::NEG_INFINITY));
    assert_eq!(
        prim("f16.inf"),
        PrimValue::F16(f16::from_f32(f32::INFINITY))
    );
    match prim("f64.nan") {
        PrimValue::F64(x) => assert!(x.is_nan()),
        p => panic!("{p:?}"),
    }
    match prim("f32.nan") {
        PrimValue::F32(x) => assert!(x.is_nan()),
        p => panic!("{p:?}"),
    }
}

#[test]
fn integer_wrapping_and_range() {
    // Two's complement wrapping to the bit width.
    assert_eq!(prim("-1u8"), PrimValue::U8(255));
    assert_eq!(prim("255i8"), PrimValue::I8(-1));
    assert_eq!(prim("-128i8"), PrimValue::I8(-128));
    // A literal with its type written wraps whatever its value, as
    // Futhark's own test suite relies on (`32767i8` is -1).
    assert_eq!(prim("256u8"), PrimValue::U8(0));
    assert_eq!(prim("-129i8"), PrimValue::I8(127));
    assert_eq!(prim("32767i8"), PrimValue::I8(-1));
    assert!(err("99999999999999999999999").contains("too large"));
    // An untyped literal defaults to i32 and must fit there.
    assert!(err("5000000000").contains("does not fit"));
    assert_eq!(prim("5000000000i64"), PrimValue::I64(5_000_000_000));
}

#[test]
fn bad_scalars() {
    for bad in [
        "1.",
        ".5",
        "1.5i32",
        "1i33",
        "1x",
        "tru",
        "f64.foo",
        "0x",
        "1e",
        "--only a comment\n)",
        "1..2",
        "-",
        "1i32.5",
        "0b2",
    ] {
        assert!(
            read_values_text(bad, None).is_err(),
            "{bad:?} should not parse"
        );
    }
    // "1e" is rejected because 'e' is not a valid suffix.
    assert!(err("1e").contains("suffix"));
}

#[test]
fn arrays_and_types() {
    let v = one("[1, 2, 3]");
    assert_eq!(v.as_array().unwrap().as_i32_slice(), Some(&[1, 2, 3][..]));
    let v = one("[[1,2],[3,4]]");
    assert_eq!(v.shape(), &[2, 2]);
    assert_eq!(
        v.as_array().unwrap().as_i32_slice(),
        Some(&[1, 2, 3, 4][..])
    );
    // The first typed element decides the element type.
    let v = one("[1i64, 2, 3]");
    assert_eq!(v.as_array().unwrap().as_i64_slice(), Some(&[1, 2, 3][..]));
    let v = one("[1, 2, 3u8]");
    assert_eq!(v.as_array().unwrap().as_u8_slice(), Some(&[1, 2, 3][..]));
    // A decimal anywhere makes an untyped array f64.
    let v = one("[1, 2.5]");
    assert_eq!(v.as_array().unwrap().as_f64_slice(), Some(&[1.0, 2.5][..]));
    let v = one("[1f32, 2.5, f32.nan]");
    let xs = v.as_array().unwrap().as_f32_slice().unwrap();
    assert_eq!(&xs[..2], &[1.0, 2.5]);
    assert!(xs[2].is_nan());
    let v = one("[true, false,]");
    assert_eq!(
        v.as_array().unwrap().as_bool_slice(),
        Some(&[true, false][..])
    );
    let v = one("[ [ [1] ] , [ [2] ] ]");
    assert_eq!(v.shape(), &[2, 1, 1]);
    assert!(err("[1i32, 2i64]").contains("i64"));
    assert!(err("[1.5, 2i32]").contains("floating-point"));
    assert!(read_values_text("0x_ff", None).is_err());
    assert!(err("[true, 1]").contains("boolean"));
}

#[test]
fn empty_arrays() {
    let v = one("empty([0]i32)");
    assert_eq!(v.shape(), &[0]);
    assert_eq!(v.elem_type(), PrimType::I32);
    let v = one("empty([0][3]f64)");
    assert_eq!(v.shape(), &[0, 3]);
    assert_eq!(v.elem_type(), PrimType::F64);
    let v = one("empty([2][0]i32)");
    assert_eq!(v.shape(), &[2, 0]);
    let v = one("[empty([0]bool), empty([0]bool)]");
    assert_eq!(v.shape(), &[2, 0]);
    assert_eq!(v.elem_type(), PrimType::Bool);
    assert!(err("empty([2]i32)").contains("size 0"));
    assert!(err("empty(i32)").contains("dimension"));
    assert!(err("empty([0]foo)").contains("primitive type"));
    assert!(
        err("[empty([0]i32), empty([1]i32)]").contains("irregular")
            || err("[empty([0]i32), empty([1]i32)]").contains("size 0")
    );
    assert!(err("[empty([0]i32), empty([0]i64)]").contains("differs"));
    assert!(err("empty([-1][0]i32)").contains("size"));
    // Untyped [] is ambiguous without an expected type...
    assert!(err("[]").contains("empty("));
    // ...but fine with one.
    let vs = typed(
        "[] [[]]",
        &[
            ValueType::new(PrimType::F32, 1),
            ValueType::new(PrimType::I8, 2),
        ],
    )
    .unwrap();
    assert_eq!(vs[0].shape(), &[0]);
    assert_eq!(vs[0].elem_type(), PrimType::F32);
    assert_eq!(vs[1].shape(), &[1, 0]);
}

#[test]
fn irregular_arrays_error_with_position() {
    let e = read_values_text("[1, 2]\n  [[1, 2], [3]]", None).unwrap_err();
    assert!(e.message.contains("irregular"), "{e}");
    assert_eq!(
        e.location,
        Location::Text {
            line: 2,
            column: 12
        }
    );
    let e = read_values_text("[[1], 2]", None).unwrap_err();
    assert!(e.message.contains("irregular"), "{e}");
    assert_eq!(e.location, Location::Text { line: 1, column: 7 });
    let e = read_values_text("[1, [2]]", None).unwrap_err();
    assert!(e.message.contains("irregular"), "{e}");
    let e = read_values_text("[[], [1]]", None).unwrap_err();
    assert!(e.message.contains("irregular"), "{e}");
    let e = read_values_text("[1 2]", None).unwrap_err();
    assert!(e.message.contains("expected ','"), "{e}");
    assert_eq!(e.location, Location::Text { line: 1, column: 4 });
    let e = read_values_text("[1, 2", None).unwrap_err();
    assert!(e.message.contains("unclosed"), "{e}");
    let e = read_values_text("-- comment\n1 2 ) 3", None).unwrap_err();
    assert_eq!(e.location, Location::Text { line: 2, column: 5 });
    assert!(e.to_string().starts_with("2:5: "), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = "[".repeat(100_000);
    let e = read_values_text(&deep, None).unwrap_err();
    assert!(e.message.contains("nested"), "{e}");
    let ok = format!("{}1{}", "[".repeat(50), "]".repeat(50));
    assert_eq!(one(&ok).rank(), 50);
}

#[test]
fn several_values_and_comments() {
    let vs = read_values_text(
        "-- leading comment\n1i32 -- trailing\n  [1.0, 2.0]--no space\n\ttrue\r\nempty([0]u8)",
        None,
    )
    .unwrap();
    assert_eq!(vs.len(), 4);
    assert_eq!(vs[0], Value::Prim(PrimValue::I32(1)));
    assert_eq!(vs[1].elem_type(), PrimType::F64);
    assert_eq!(vs[2], Value::Prim(PrimValue::Bool(true)));
    assert_eq!(vs[3].shape(), &[0]);
    assert!(read_values_text("", None).unwrap().is_empty());
    assert!(read_values_text("  -- nothing\n", None).unwrap().is_empty());
}

#[test]
fn expected_types_direct_untyped_literals() {
    let f64_1 = ValueType::new(PrimType::F64, 0);
    let f32_arr = ValueType::new(PrimType::F32, 1);
    let i64_2 = ValueType::new(PrimType::I64, 2);
    let vs = typed("1 [1, 2.5] [[1,2]]", &[f64_1, f32_arr, i64_2]).unwrap();
    assert_eq!(vs[0], Value::Prim(PrimValue::F64(1.0)));
    assert_eq!(
        vs[1].as_array().unwrap().as_f32_slice(),
        Some(&[1.0, 2.5][..])
    );
    assert_eq!(vs[2].as_array().unwrap().as_i64_slice(), Some(&[1, 2][..]));
    // u8 from an untyped literal takes the expected type.
    let vs = typed("200", &[ValueType::new(PrimType::U8, 0)]).unwrap();
    assert_eq!(vs[0], Value::Prim(PrimValue::U8(200)));

    let e = typed("1.5", &[ValueType::new(PrimType::I32, 0)]).unwrap_err();
    assert!(e.contains("i32"), "{e}");
    let e = typed("1i64", &[ValueType::new(PrimType::I32, 0)]).unwrap_err();
    assert!(e.contains("i64"), "{e}");
    let e = typed("[1]", &[ValueType::new(PrimType::I32, 0)]).unwrap_err();
    assert!(e.contains("rank"), "{e}");
    let e = typed("1 2", &[ValueType::new(PrimType::I32, 0)]).unwrap_err();
    assert!(e.contains("more"), "{e}");
    let e = typed("1", &[ValueType::new(PrimType::I32, 0); 2]).unwrap_err();
    assert!(e.contains("only 1"), "{e}");
    let e = typed("empty([0]i32)", &[ValueType::new(PrimType::F32, 1)]).unwrap_err();
    assert!(e.contains("i32"), "{e}");
    let e = typed("true", &[ValueType::new(PrimType::I32, 0)]).unwrap_err();
    assert!(e.contains("bool"), "{e}");
    let e = typed("1", &[ValueType::new(PrimType::Bool, 0)]).unwrap_err();
    assert!(e.contains("boolean"), "{e}");
}

// ------------------------------------------------------------ text writing

fn show(v: Value) -> String {
    write_value_text(&v)
}

#[test]
fn writer_format() {
    assert_eq!(
        show(ArrayValue::from_vec_i32(&[2], vec![1, 2]).into()),
        "[1i32, 2i32]"
    );
    assert_eq!(
        show(ArrayValue::from_vec_f64(&[2], vec![1.0, 2.5]).into()),
        "[1.0f64, 2.5f64]"
    );
    assert_eq!(
        show(ArrayValue::from_vec_i32(&[2, 2], vec![1, 2, 3, 4]).into()),
        "[[1i32, 2i32], [3i32, 4i32]]"
    );
    assert_eq!(show(PrimValue::Bool(true).into()), "true");
    assert_eq!(show(PrimValue::I8(-5).into()), "-5i8");
    assert_eq!(
        show(PrimValue::U64(u64::MAX).into()),
        "18446744073709551615u64"
    );
    assert_eq!(
        show(ArrayValue::from_vec_i32(&[0], vec![]).into()),
        "empty([0]i32)"
    );
    assert_eq!(
        show(ArrayValue::from_vec_f64(&[2, 0], vec![]).into()),
        "empty([2][0]f64)"
    );
    assert_eq!(show(PrimValue::F64(f64::NAN).into()), "f64.nan");
    assert_eq!(show(PrimValue::F64(f64::INFINITY).into()), "f64.inf");
    assert_eq!(show(PrimValue::F64(f64::NEG_INFINITY).into()), "-f64.inf");
    assert_eq!(show(PrimValue::F32(f32::NEG_INFINITY).into()), "-f32.inf");
    assert_eq!(
        show(PrimValue::F16(f16::from_f32(f32::NAN)).into()),
        "f16.nan"
    );
    // Haskell `show` layout, which futhark-data uses.
    assert_eq!(show(PrimValue::F64(0.1).into()), "0.1f64");
    assert_eq!(show(PrimValue::F64(0.01).into()), "1.0e-2f64");
    assert_eq!(show(PrimValue::F64(0.0123).into()), "1.23e-2f64");
    assert_eq!(show(PrimValue::F64(1234567.0).into()), "1234567.0f64");
    assert_eq!(show(PrimValue::F64(1e7).into()), "1.0e7f64");
    assert_eq!(show(PrimValue::F64(12345678.9).into()), "1.23456789e7f64");
    assert_eq!(show(PrimValue::F64(100.0).into()), "100.0f64");
    assert_eq!(show(PrimValue::F64(0.0).into()), "0.0f64");
    assert_eq!(show(PrimValue::F64(-0.0).into()), "-0.0f64");
    assert_eq!(show(PrimValue::F64(-2.5).into()), "-2.5f64");
    assert_eq!(show(PrimValue::F32(0.1).into()), "0.1f32");
    assert_eq!(show(PrimValue::F16(f16::from_f32(0.5)).into()), "0.5f16");
    // A row view prints only its own elements.
    let a = ArrayValue::from_vec_i32(&[2, 2], vec![1, 2, 3, 4]);
    assert_eq!(show(a.row(1)), "[3i32, 4i32]");
    assert_eq!(format!("{}", Value::from(PrimValue::U16(3))), "3u16");
}

fn text_round_trip(v: &Value) {
    let s = write_value_text(v);
    let back = read_values_text(&s, None).unwrap_or_else(|e| panic!("{s}: {e}"));
    assert_eq!(back.len(), 1, "{s}");
    assert!(same(&back[0], v), "{s} read back as {:?}", back[0]);
    // Also with the expected type given.
    let back = read_values_text(&s, Some(&[v.value_type()])).unwrap();
    assert!(same(&back[0], v), "{s}");
}

/// Bitwise equality (so NaN equals NaN and -0.0 differs from 0.0).
fn same(a: &Value, b: &Value) -> bool {
    if a.value_type() != b.value_type() || a.shape() != b.shape() {
        return false;
    }
    (0..a.num_elems()).all(|i| bits(a.get_flat(i)) == bits(b.get_flat(i)))
}

fn bits(p: PrimValue) -> (PrimType, u64) {
    let b = match p {
        PrimValue::I8(x) => x as u64,
        PrimValue::I16(x) => x as u64,
        PrimValue::I32(x) => x as u64,
        PrimValue::I64(x) => x as u64,
        PrimValue::U8(x) => x as u64,
        PrimValue::U16(x) => x as u64,
        PrimValue::U32(x) => x as u64,
        PrimValue::U64(x) => x,
        PrimValue::F16(x) => {
            if x.is_nan() {
                u64::MAX
            } else {
                x.to_bits() as u64
            }
        }
        PrimValue::F32(x) => {
            if x.is_nan() {
                u64::MAX
            } else {
                x.to_bits() as u64
            }
        }
        PrimValue::F64(x) => {
            if x.is_nan() {
                u64::MAX
            } else {
                x.to_bits()
            }
        }
        PrimValue::Bool(x) => x as u64,
    };
    (p.prim_type(), b)
}

fn sample_values() -> Vec<Value> {
    let mut vs: Vec<Value> = vec![
        ArrayValue::from_vec_i8(&[4], vec![i8::MIN, -1, 0, i8::MAX]).into(),
        ArrayValue::from_vec_i16(&[2, 2], vec![i16::MIN, -1, 0, i16::MAX]).into(),
        ArrayValue::from_vec_i32(&[3], vec![i32::MIN, 0, i32::MAX]).into(),
        ArrayValue::from_vec_i64(&[3], vec![i64::MIN, 0, i64::MAX]).into(),
        ArrayValue::from_vec_u8(&[3], vec![0, 1, u8::MAX]).into(),
        ArrayValue::from_vec_u16(&[3], vec![0, 1, u16::MAX]).into(),
        ArrayValue::from_vec_u32(&[3], vec![0, 1, u32::MAX]).into(),
        ArrayValue::from_vec_u64(&[3], vec![0, 1, u64::MAX]).into(),
        ArrayValue::from_vec_f16(
            &[6],
            vec![
                f16::from_f32(0.1),
                f16::from_f32(-65504.0),
                f16::from_bits(1),
                f16::from_f32(f32::INFINITY),
                f16::from_f32(f32::NAN),
                f16::from_f32(-0.0),
            ],
        )
        .into(),
        ArrayValue::from_vec_f32(
            &[2, 3],
            vec![
                0.1,
                f32::MAX,
                f32::MIN_POSITIVE,
                1e-45,
                f32::NEG_INFINITY,
                16777217.0,
            ],
        )
        .into(),
        ArrayValue::from_vec_f64(
            &[7],
            vec![
                0.1,
                1.0 / 3.0,
                f64::MAX,
                5e-324,
                -0.0,
                f64::NAN,
                123456789.123,
            ],
        )
        .into(),
        ArrayValue::from_vec_bool(&[1, 2], vec![true, false]).into(),
        ArrayValue::from_vec_i32(&[0], vec![]).into(),
        ArrayValue::from_vec_f64(&[0, 5], vec![]).into(),
        ArrayValue::from_vec_bool(&[3, 0], vec![]).into(),
    ];
    for t in PrimType::ALL {
        vs.push(Value::Prim(ArrayValue::zeros(t, &[1]).get_flat(0)));
    }
    vs.push(PrimValue::F64(-1.5e300).into());
    vs.push(PrimValue::F32(-3.25e-20).into());
    vs
}

#[test]
fn text_round_trips_all_types() {
    for v in sample_values() {
        text_round_trip(&v);
    }
}

// ------------------------------------------------------------ binary

#[test]
fn binary_layout() {
    let mut out = Vec::new();
    write_value_binary(
        &ArrayValue::from_vec_i32(&[2], vec![1, -1]).into(),
        &mut out,
    );
    let mut want = vec![b'b', 2, 1];
    want.extend_from_slice(b" i32");
    want.extend_from_slice(&2u64.to_le_bytes());
    want.extend_from_slice(&1i32.to_le_bytes());
    want.extend_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(out, want);

    let mut out = Vec::new();
    write_value_binary(&PrimValue::I8(-2).into(), &mut out);
    assert_eq!(out, vec![b'b', 2, 0, b' ', b' ', b'i', b'8', 0xfe]);
    let mut out = Vec::new();
    write_value_binary(&PrimValue::Bool(true).into(), &mut out);
    assert_eq!(out, b"b\x02\x00bool\x01".to_vec());
    let mut out = Vec::new();
    write_value_binary(&PrimValue::U8(7).into(), &mut out);
    assert_eq!(&out[3..7], b"  u8");
}

#[test]
fn binary_round_trips_all_types() {
    let vals = sample_values();
    let mut stream = Vec::new();
    for v in &vals {
        write_value_binary(v, &mut stream);
    }
    let back = read_values(&stream, None).unwrap();
    assert_eq!(back.len(), vals.len());
    for (a, b) in back.iter().zip(&vals) {
        assert!(same(a, b), "{a:?} vs {b:?}");
    }
    // A row view (nonzero offset) is written as just its elements.
    let big = ArrayValue::from_vec_u16(&[2, 2], vec![1, 2, 3, 4]);
    let mut out = Vec::new();
    write_value_binary(&big.row(1), &mut out);
    let back = read_values(&out, None).unwrap();
    assert_eq!(
        back[0].as_array().unwrap().as_u16_slice(),
        Some(&[3, 4][..])
    );
}

#[test]
fn mixed_text_and_binary_stream() {
    let mut s = b"  1i32\n".to_vec();
    write_value_binary(
        &ArrayValue::from_vec_f64(&[2], vec![0.5, 1.5]).into(),
        &mut s,
    );
    s.extend_from_slice(b" -- comment\n [true]\n");
    write_value_binary(&PrimValue::U64(9).into(), &mut s);
    let vs = read_values(&s, None).unwrap();
    assert_eq!(vs.len(), 4);
    assert_eq!(vs[0], Value::Prim(PrimValue::I32(1)));
    assert_eq!(
        vs[1].as_array().unwrap().as_f64_slice(),
        Some(&[0.5, 1.5][..])
    );
    assert_eq!(vs[2].as_array().unwrap().as_bool_slice(), Some(&[true][..]));
    assert_eq!(vs[3], Value::Prim(PrimValue::U64(9)));
    // Text-only reading refuses binary data.
    assert!(read_values_text(std::str::from_utf8(b"b").unwrap(), None).is_err());
    // Typed reading of binary values checks the type exactly.
    let ts = [
        ValueType::new(PrimType::I32, 0),
        ValueType::new(PrimType::F32, 1),
        ValueType::new(PrimType::Bool, 1),
        ValueType::new(PrimType::U64, 0),
    ];
    let e = read_values(&s, Some(&ts)).unwrap_err();
    assert!(e.message.contains("[]f32"), "{e}");
}

#[test]
fn bad_binary_input() {
    let mut good = Vec::new();
    write_value_binary(
        &ArrayValue::from_vec_i64(&[3], vec![1, 2, 3]).into(),
        &mut good,
    );
    // Every truncation is an error, never a panic.
    for n in 1..good.len() {
        assert!(read_values(&good[..n], None).is_err(), "truncated at {n}");
    }
    let mut bad_version = good.clone();
    bad_version[1] = 1;
    assert!(read_values(&bad_version, None)
        .unwrap_err()
        .message
        .contains("version"));
    let mut bad_tag = good.clone();
    bad_tag[3..7].copy_from_slice(b"i64 ");
    assert!(read_values(&bad_tag, None)
        .unwrap_err()
        .message
        .contains("type tag"));
    // Huge dimensions do not allocate.
    let mut huge = b"b\x02\x02 f64".to_vec();
    huge.extend_from_slice(&(1u64 << 40).to_le_bytes());
    huge.extend_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(read_values(&huge, None).is_err());
    let mut huge = b"b\x02\x01 f64".to_vec();
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(read_values(&huge, None).is_err());
    // Zero dims with a huge other dim: empty and fine.
    let mut empty = b"b\x02\x02 f64".to_vec();
    empty.extend_from_slice(&0u64.to_le_bytes());
    empty.extend_from_slice(&(1u64 << 62).to_le_bytes());
    let v = read_values(&empty, None).unwrap();
    assert_eq!(v[0].shape(), &[0, 1 << 62]);
    // Bool bytes must be 0 or 1.
    let e = read_values(b"b\x02\x00bool\x02", None).unwrap_err();
    assert!(e.message.contains("bool"), "{e}");
    assert_eq!(e.location, Location::Byte(7));
}

// ------------------------------------------------------------ files and gzip

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-values-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn files_plain_and_gzip() {
    use flate2::write::GzEncoder;
    use std::io::Write;

    let mut data = b"[1, 2, 3] ".to_vec();
    write_value_binary(&PrimValue::F32(2.5).into(), &mut data);

    let plain = temp_path("plain.in");
    std::fs::write(&plain, &data).unwrap();
    let vs = read_values_file(&plain, None).unwrap();
    assert_eq!(vs.len(), 2);

    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&data).unwrap();
    let gz = enc.finish().unwrap();
    // Detected by magic bytes even without the extension...
    let by_magic = temp_path("data.in");
    std::fs::write(&by_magic, &gz).unwrap();
    let vs = read_values_file(&by_magic, None).unwrap();
    assert_eq!(
        vs[0].as_array().unwrap().as_i32_slice(),
        Some(&[1, 2, 3][..])
    );
    assert_eq!(vs[1], Value::Prim(PrimValue::F32(2.5)));
    // ...and by extension.
    let by_ext = temp_path("data.in.gz");
    std::fs::write(&by_ext, &gz).unwrap();
    assert_eq!(read_values_file(&by_ext, None).unwrap().len(), 2);
    // A .gz file that is not gzip data is an error naming the file.
    let fake = temp_path("fake.gz");
    std::fs::write(&fake, b"1 2 3").unwrap();
    let e = read_values_file(&fake, None).unwrap_err();
    assert!(e.to_string().contains("fake.gz"), "{e}");
    // Parse errors name the file too.
    let badf = temp_path("bad.in");
    std::fs::write(&badf, b"[1,\n 2 3]").unwrap();
    let e = read_values_file(&badf, None).unwrap_err();
    assert!(e.to_string().contains("bad.in:2:4:"), "{e}");
    // A missing file.
    assert!(read_values_file(&temp_path("missing.in"), None).is_err());
}

#[test]
fn string_literals_are_arrays_of_utf8_bytes() {
    let v = one("\"12\"");
    assert_eq!(v.shape(), &[2]);
    assert_eq!(v.elem_type(), PrimType::U8);
    assert_eq!(write_value_text(&v), "[49u8, 50u8]");
    let v = one("\"a\\n\\\"\\x41é\"");
    assert_eq!(
        write_value_text(&v),
        "[97u8, 10u8, 34u8, 65u8, 195u8, 169u8]"
    );
    let v = one("[\"ab\", \"cd\"]");
    assert_eq!(v.shape(), &[2, 2]);
    assert_eq!(one("\"\"").shape(), &[0]);
    assert!(err("[\"ab\", \"c\"]").contains("irregular"));
    assert!(err("\"ab").contains("unclosed"));
    assert!(err("[1u8, \"a\"]").contains("irregular"));
}
