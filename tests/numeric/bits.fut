-- Bitwise operators (& | ^ !), shifts (<< >> >>>), and clz, ctz, popc,
-- get_bit, set_bit.
-- ==
-- entry: bitops
-- input { 12 10 } output { 8 14 6 -13 }
-- input { -1 5 } output { 5 -1 -6 0 }

entry bitops (a: i32) (b: i32) : (i32, i32, i32, i32) = (a & b, a | b, a ^ b, !a)

-- ==
-- entry: shifts
-- input { 1 4 } output { 16 0 0 }
-- input { -16 2 } output { -64 -4 1073741820 }
-- input { 96 5 } output { 3072 3 3 }

entry shifts (a: i32) (n: i32) : (i32, i32, i32) = (a << n, a >> n, a >>> n)

-- ==
-- entry: shifts_u8
-- input { 3u8 6u8 } output { 192u8 0u8 0u8 }
-- input { 100u8 2u8 } output { 144u8 25u8 25u8 }

entry shifts_u8 (a: u8) (n: u8) : (u8, u8, u8) = (a << n, a >> n, a >>> n)

-- ==
-- entry: bitops_u16
-- input { 65280u16 4080u16 } output { 3840u16 65520u16 61680u16 255u16 }

entry bitops_u16 (a: u16) (b: u16) : (u16, u16, u16, u16) = (a & b, a | b, a ^ b, !a)

-- ==
-- entry: counts_i32
-- input { 1 } output { 31 0 1 }
-- input { 0 } output { 32 32 0 }
-- input { -1 } output { 0 0 32 }
-- input { 8 } output { 28 3 1 }
-- input { 255 } output { 24 0 8 }

entry counts_i32 (x: i32) : (i32, i32, i32) = (i32.clz x, i32.ctz x, i32.popc x)

-- ==
-- entry: counts_other
-- input { 1u8 128u8 -1i64 1i64 240i16 } output { 7 7 0 64 63 0 8 4 4 }

entry counts_other (a: u8) (b: u8) (c: i64) (d: i64) (e: i16) : (i32, i32, i32, i32, i32, i32, i32, i32, i32) =
  ( u8.clz a, u8.ctz b, i64.clz c, i64.popc c, i64.clz d, i64.ctz d
  , i16.clz e, i16.ctz e, i16.popc e )

-- ==
-- entry: getset
-- input { 10 } output { 1 0 11 8 10 }

entry getset (x: i32) : (i32, i32, i32, i32, i32) =
  (i32.get_bit 3 x, i32.get_bit 0 x, i32.set_bit 0 x 1, i32.set_bit 1 x 0, i32.set_bit 3 x 1)

-- Logical negation on bool and bitwise negation on unsigned types.
-- ==
-- entry: nots
-- input { true 0u8 } output { false 255u8 }

entry nots (b: bool) (x: u8) : (bool, u8) = (!b, !x)
