-- Numeric literals: type suffixes, hexadecimal, binary, underscores,
-- exponents, and the defaulting of unsuffixed literals.
-- ==
-- entry: ints
-- input { 0 } output { 127i8 -32000i16 1000000 9000000000i64 255u8 65535u16 4294967295u32 18446744073709551615u64 }
-- input { 5 } output { 127i8 -32000i16 1000005 9000000000i64 255u8 65535u16 4294967295u32 18446744073709551615u64 }

entry ints (x: i32) : (i8, i16, i32, i64, u8, u16, u32, u64) =
  ( 127i8
  , -32000i16
  , 1_000_000 + x
  , 9_000_000_000i64
  , 0xffu8
  , 0xFFFFu16
  , 0xffff_ffffu32
  , 18446744073709551615u64
  )

-- ==
-- entry: bases
-- input { 1 } output { 255 5 240u8 4096i64 1000 }
-- input { 2 } output { 510 10 240u8 8192i64 2000 }

entry bases (k: i32) : (i32, i32, u8, i64, i32) =
  (0xff * k, 0b101 * k, 0b1111_0000u8, 0x1000i64 * i64.i32 k, 1_000 * k)

-- ==
-- entry: floats
-- input { 1.0 } output { 2.5f32 1000.0 0.0015f32 0.125f16 133700.0 300.0 }
-- input { 2.0 } output { 2.5f32 2000.0 0.0015f32 0.125f16 267400.0 300.0 }

entry floats (s: f64) : (f32, f64, f32, f16, f64, f64) =
  (2.5f32, 1e3 * s, 1.5e-3f32, 0.125f16, 1337e2f64 * s, 3.0E2)

-- Unsuffixed integer literals default to i32 and decimal literals to
-- f64 when nothing constrains them; a literal takes the type of the
-- value it is combined with otherwise.
-- ==
-- entry: defaulting
-- input { 3i64 2.0f32 } output { 7 4i64 2.5 2.5f32 }

entry defaulting (n: i64) (y: f32) : (i32, i64, f64, f32) =
  let a = 3 + 4
  let b = n + 1
  let c = 1.5 + 1.0
  let d = y + 0.5
  in (a, b, c, d)
