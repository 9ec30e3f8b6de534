-- Integer power (**) with wrap-around, and comparisons (signed and
-- unsigned orderings), min and max.

-- ==
-- entry: pow_i8
-- input { 2i8 7i8 } output { -128i8 }
-- input { 3i8 4i8 } output { 81i8 }
-- input { -2i8 3i8 } output { -8i8 }
-- input { 5i8 0i8 } output { 1i8 }

entry pow_i8 (a: i8) (b: i8) : i8 = a ** b

-- ==
-- entry: pow_i16
-- input { 2i16 15i16 } output { -32768i16 }
-- input { 7i16 5i16 } output { 16807i16 }

entry pow_i16 (a: i16) (b: i16) : i16 = a ** b

-- ==
-- entry: pow_i32
-- input { 2i32 31i32 } output { -2147483648i32 }
-- input { 10i32 9i32 } output { 1000000000i32 }
-- input { -3i32 3i32 } output { -27i32 }
-- input { 3i32 21i32 } output { 1870418611i32 }

entry pow_i32 (a: i32) (b: i32) : i32 = a ** b

-- ==
-- entry: pow_i64
-- input { 2i64 63i64 } output { -9223372036854775808i64 }
-- input { 3i64 40i64 } output { -6289078614652622815i64 }
-- input { -1i64 7i64 } output { -1i64 }

entry pow_i64 (a: i64) (b: i64) : i64 = a ** b

-- ==
-- entry: pow_u8
-- input { 2u8 8u8 } output { 0u8 }
-- input { 3u8 5u8 } output { 243u8 }

entry pow_u8 (a: u8) (b: u8) : u8 = a ** b

-- ==
-- entry: pow_u16
-- input { 2u16 16u16 } output { 0u16 }
-- input { 3u16 10u16 } output { 59049u16 }

entry pow_u16 (a: u16) (b: u16) : u16 = a ** b

-- ==
-- entry: pow_u32
-- input { 2u32 32u32 } output { 0u32 }
-- input { 3u32 20u32 } output { 3486784401u32 }

entry pow_u32 (a: u32) (b: u32) : u32 = a ** b

-- ==
-- entry: pow_u64
-- input { 2u64 64u64 } output { 0u64 }
-- input { 3u64 41u64 } output { 18026252303461234787u64 }

entry pow_u64 (a: u64) (b: u64) : u64 = a ** b

-- ==
-- entry: cmp_i8
-- input { -1i8 1i8 } output { true true false false false true -1i8 1i8 }
-- input { 5i8 5i8 } output { false true false true true false 5i8 5i8 }
-- input { 127i8 -128i8 } output { false false true true false true -128i8 127i8 }

entry cmp_i8 (a: i8) (b: i8) : (bool, bool, bool, bool, bool, bool, i8, i8) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, i8.min a b, i8.max a b)

-- ==
-- entry: cmp_i16
-- input { -300i16 300i16 } output { true true false false false true -300i16 300i16 }

entry cmp_i16 (a: i16) (b: i16) : (bool, bool, bool, bool, bool, bool, i16, i16) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, i16.min a b, i16.max a b)

-- ==
-- entry: cmp_i32
-- input { -1i32 1i32 } output { true true false false false true -1i32 1i32 }
-- input { 3i32 3i32 } output { false true false true true false 3i32 3i32 }
-- input { 7i32 -7i32 } output { false false true true false true -7i32 7i32 }

entry cmp_i32 (a: i32) (b: i32) : (bool, bool, bool, bool, bool, bool, i32, i32) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, i32.min a b, i32.max a b)

-- ==
-- entry: cmp_i64
-- input { -10i64 -20i64 } output { false false true true false true -20i64 -10i64 }
-- input { 0i64 0i64 } output { false true false true true false 0i64 0i64 }

entry cmp_i64 (a: i64) (b: i64) : (bool, bool, bool, bool, bool, bool, i64, i64) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, i64.min a b, i64.max a b)

-- ==
-- entry: cmp_u8
-- input { 255u8 1u8 } output { false false true true false true 1u8 255u8 }
-- input { 0u8 1u8 } output { true true false false false true 0u8 1u8 }
-- input { 9u8 9u8 } output { false true false true true false 9u8 9u8 }

entry cmp_u8 (a: u8) (b: u8) : (bool, bool, bool, bool, bool, bool, u8, u8) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, u8.min a b, u8.max a b)

-- ==
-- entry: cmp_u16
-- input { 65535u16 65534u16 } output { false false true true false true 65534u16 65535u16 }

entry cmp_u16 (a: u16) (b: u16) : (bool, bool, bool, bool, bool, bool, u16, u16) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, u16.min a b, u16.max a b)

-- ==
-- entry: cmp_u32
-- input { 4294967295u32 0u32 } output { false false true true false true 0u32 4294967295u32 }
-- input { 2u32 3u32 } output { true true false false false true 2u32 3u32 }

entry cmp_u32 (a: u32) (b: u32) : (bool, bool, bool, bool, bool, bool, u32, u32) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, u32.min a b, u32.max a b)

-- ==
-- entry: cmp_u64
-- input { 18446744073709551615u64 1u64 } output { false false true true false true 1u64 18446744073709551615u64 }

entry cmp_u64 (a: u64) (b: u64) : (bool, bool, bool, bool, bool, bool, u64, u64) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b, u64.min a b, u64.max a b)
