-- Conversions between numeric types (module function T.s converts from
-- type s to type T).  Integer-to-integer conversions wrap (truncate or
-- extend the bit pattern); float-to-integer conversions truncate towards
-- zero; any nonzero value converts to bool true.
-- ==
-- entry: int_to_float
-- input { -7 255u8 18446744073709551615u64 -3i64 } output { -7.0 255.0 1.8446744073709552e19 -3.0f32 }

entry int_to_float (a: i32) (b: u8) (c: u64) (d: i64) : (f64, f64, f64, f32) =
  (f64.i32 a, f64.u8 b, f64.u64 c, f32.i64 d)

-- ==
-- entry: float_to_int
-- input { -7.9 7.9 200.7 -100.5f32 } output { -7 7 200u8 -100i8 -7i64 7i64 }
-- input { 0.5 -0.5 0.0 3.0f32 } output { 0 0 0u8 3i8 0i64 0i64 }

entry float_to_int (a: f64) (b: f64) (c: f64) (d: f32) : (i32, i32, u8, i8, i64, i64) =
  (i32.f64 a, i32.f64 b, u8.f64 c, i8.f32 d, i64.f64 a, f64.to_i64 b)

-- ==
-- entry: narrowing
-- input { 300 } output { 44i8 44u8 300i16 300u16 }
-- input { 200 } output { -56i8 200u8 200i16 200u16 }
-- input { -129 } output { 127i8 127u8 -129i16 65407u16 }
-- input { -1 } output { -1i8 255u8 -1i16 65535u16 }
-- input { 65536 } output { 0i8 0u8 0i16 0u16 }

entry narrowing (x: i32) : (i8, u8, i16, u16) = (i8.i32 x, u8.i32 x, i16.i32 x, u16.i32 x)

-- ==
-- entry: widening
-- input { -5i8 4294967295u32 -1i64 4294967297i64 } output { -5 -5i64 4294967295i64 4294967295u64 18446744073709551615u64 1 -1 }

entry widening (a: i8) (b: u32) (c: i64) (d: i64) : (i32, i64, i64, u64, u64, i32, i32) =
  (i32.i8 a, i64.i8 a, i64.u32 b, u64.u32 b, u64.i64 c, i32.i64 d, i32.u32 b)

-- ==
-- entry: same_width
-- input { 65535u16 -1i16 200u8 } output { -1i16 65535u16 -56i8 }

entry same_width (a: u16) (b: i16) (c: u8) : (i16, u16, i8) = (i16.u16 a, u16.i16 b, i8.u8 c)

-- ==
-- entry: bools
-- input { 5 0.0 true } output { true false 1 1.0f32 0.0 1u8 0i64 true }
-- input { 0 -0.5 false } output { false true 0 0.0f32 0.0 0u8 0i64 false }

entry bools (x: i32) (y: f64) (b: bool) : (bool, bool, i32, f32, f64, u8, i64, bool) =
  (bool.i32 x, bool.f64 y, i32.bool b, f32.bool b, f64.bool false, u8.bool b, i64.bool false, bool.bool b)

-- ==
-- entry: floats
-- input { 0.1 0.5 1.5f16 } output { false true 0.5f16 1.5f32 1.5 }

entry floats (a: f64) (b: f64) (h: f16) : (bool, bool, f16, f32, f64) =
  (f64.f32 (f32.f64 a) == a, f64.f32 (f32.f64 b) == b, f16.f64 b, f32.f16 h, f64.f16 h)
