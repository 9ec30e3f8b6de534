-- Members of the built-in numeric modules not covered elsewhere: the high
-- half of products (mul_hi, mad_hi; signed and unsigned), the bitwise
-- complement `not`, `//` and `%%` of an unsigned module, operators of a
-- module used as function values, bits of unsigned integers and floats,
-- exp2 and expm1, float-to-integer conversions of NaN and infinity (zero,
-- as the `float` module type documents), epsilon, and round's halfway
-- cases (to even).
-- ==
-- entry: high_halves
-- input { 4000000000u32 -7 }
-- output { 2u32 -1 156u8 -40i8 9u32 1u64 0i64 }

entry high_halves (u: u32) (i: i32) : (u32, i32, u8, i8, u32, u64, i64) =
  (u32.mul_hi u 3, i32.mul_hi i 3, u8.mul_hi 200 200, i8.mul_hi (-100) 100,
   u32.mad_hi u 3 7, u64.mul_hi 18446744073709551615 2, i64.mul_hi (-1) (-1))

-- ==
-- entry: complements
-- input { 5u8 0i16 7u16 2u16 }
-- output { 250u8 -1i16 3u16 1u16 }

entry complements (a: u8) (b: i16) (x: u16) (y: u16) : (u8, i16, u16, u16) =
  (u8.not a, i16.not b, x u16.// y, x u16.%% y)

-- ==
-- entry: operator_values
-- input { [2u8, 3u8, 50u8] [1i16, 2i16] }
-- output { 44u8 [0i16, 0i16] 50u8 [-1.0f32, 2.0f32] }

entry operator_values (xs: []u8) (ys: []i16) : (u8, []i16, u8, []f32) =
  (reduce (u8.*) 1 xs, map2 (i16.-) ys ys, reduce u8.max 0 xs, map f32.neg [1, -2])

-- ==
-- entry: bits
-- input { -1.5f32 200u8 2.0 }
-- output { 1 0 1.5f32 1 201u8 72u8 9223372036854775808u64 1099511627776i64 1 0 -1f16 }

entry bits (x: f32) (b: u8) (y: f64) =
  (f32.get_bit 31 x, f32.get_bit 30 x, f32.set_bit 31 x 0,
   u8.get_bit 7 b, u8.set_bit 0 b 1, u8.set_bit 7 b 0,
   u64.set_bit 63 0 1, i64.set_bit 40 0 1,
   f64.get_bit 62 y, f64.get_bit 52 y, f16.set_bit 15 1 1)

-- ==
-- entry: float_functions
-- input { 3.0 1e-10 }
-- output { 8.0 0.5f32 1.00000000005e-10 -3i64 0i64 0i32 0i64 0.25f32 0.0009765625f16 1.1920929e-7f32 }

entry float_functions (x: f64) (tiny: f64) =
  (f64.exp2 x, f32.exp2 (-1), f64.expm1 tiny, f32.to_i64 (-3.7),
   f64.to_i64 f64.nan, i32.f64 f64.inf, i64.f32 (-f32.inf),
   f32.from_fraction 1 4, f16.epsilon, f32.epsilon)

-- ==
-- entry: halfway
-- input { [2.5, -2.5, 0.5, 1.5] } output { [2.0, -2.0, 0.0, 2.0] [4f32, -4f32] }

entry halfway (xs: []f64) : ([]f64, []f32) =
  (map f64.round xs, map f32.round [3.5, -3.5])
