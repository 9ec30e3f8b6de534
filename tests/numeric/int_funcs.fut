-- Integer module functions: abs, sgn, neg, sum, product, maximum,
-- minimum, highest, lowest, num_bits, to_i64.
-- ==
-- entry: funcs_i32
-- input { -5 } output { 5 -1 5 -5 }
-- input { 0 } output { 0 0 0 0 }
-- input { 9 } output { 9 1 -9 9 }

entry funcs_i32 (x: i32) : (i32, i32, i32, i32) = (i32.abs x, i32.sgn x, i32.neg x, i32.min x (i32.abs x))

-- ==
-- entry: reds_i32
-- input { [3, 9, 2] } output { 14 54 9 2 }
-- input { empty([0]i32) } output { 0 1 -2147483648 2147483647 }

entry reds_i32 (xs: []i32) : (i32, i32, i32, i32) =
  (i32.sum xs, i32.product xs, i32.maximum xs, i32.minimum xs)

-- ==
-- entry: reds_u8
-- input { [200u8, 100u8, 1u8] } output { 45u8 32u8 200u8 1u8 }
-- input { empty([0]u8) } output { 0u8 1u8 0u8 255u8 }

entry reds_u8 (xs: []u8) : (u8, u8, u8, u8) =
  (u8.sum xs, u8.product xs, u8.maximum xs, u8.minimum xs)

-- ==
-- entry: reds_i64
-- input { [-4i64, 10i64] } output { 6i64 -40i64 10i64 -4i64 }

entry reds_i64 (xs: []i64) : (i64, i64, i64, i64) =
  (i64.sum xs, i64.product xs, i64.maximum xs, i64.minimum xs)

-- ==
-- entry: limits
-- input { 0 } output { 127i8 -128i8 32767i16 -32768i16 2147483647 -2147483648 9223372036854775807i64 -9223372036854775808i64 255u8 0u8 65535u16 0u16 4294967295u32 0u32 18446744073709551615u64 0u64 }

entry limits (u: i32) : (i8, i8, i16, i16, i32, i32, i64, i64, u8, u8, u16, u16, u32, u32, u64, u64) =
  ( i8.highest, i8.lowest, i16.highest, i16.lowest
  , i32.highest, i32.lowest, i64.highest, i64.lowest
  , u8.highest, u8.lowest, u16.highest, u16.lowest
  , u32.highest, u32.lowest, u64.highest, u64.lowest )

-- ==
-- entry: misc
-- input { -3i8 200u8 } output { 3i8 -1i8 1u8 200u8 8 8 32 64 -3i64 200i64 }

entry misc (a: i8) (b: u8) : (i8, i8, u8, u8, i32, i32, i32, i32, i64, i64) =
  ( i8.abs a, i8.sgn a, u8.sgn b, u8.abs b
  , i8.num_bits, u8.num_bits, i32.num_bits, u64.num_bits
  , i8.to_i64 a, u8.to_i64 b )
