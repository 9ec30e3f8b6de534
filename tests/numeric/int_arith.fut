-- Integer arithmetic for every integer type: + - * wrap around; / and %
-- round towards negative infinity (for signed types); // and %% round
-- towards zero.  Outputs: (a+b, a-b, a*b, a/b, a%b, a//b, a%%b).

-- ==
-- entry: arith_i8
-- input { 100i8 50i8 } output { -106i8 50i8 -120i8 2i8 0i8 2i8 0i8 }
-- input { -7i8 2i8 } output { -5i8 -9i8 -14i8 -4i8 1i8 -3i8 -1i8 }
-- input { 7i8 -2i8 } output { 5i8 9i8 -14i8 -4i8 -1i8 -3i8 1i8 }
-- input { -128i8 3i8 } output { -125i8 125i8 -128i8 -43i8 1i8 -42i8 -2i8 }
-- input { 127i8 127i8 } output { -2i8 0i8 1i8 1i8 0i8 1i8 0i8 }

entry arith_i8 (a: i8) (b: i8) : (i8, i8, i8, i8, i8, i8, i8) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_i16
-- input { 30000i16 10000i16 } output { -25536i16 20000i16 -23808i16 3i16 0i16 3i16 0i16 }
-- input { -7i16 2i16 } output { -5i16 -9i16 -14i16 -4i16 1i16 -3i16 -1i16 }
-- input { 300i16 300i16 } output { 600i16 0i16 24464i16 1i16 0i16 1i16 0i16 }
-- input { -32768i16 7i16 } output { -32761i16 32761i16 -32768i16 -4682i16 6i16 -4681i16 -1i16 }

entry arith_i16 (a: i16) (b: i16) : (i16, i16, i16, i16, i16, i16, i16) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_i32
-- input { 2147483647i32 1i32 } output { -2147483648i32 2147483646i32 2147483647i32 2147483647i32 0i32 2147483647i32 0i32 }
-- input { -7i32 2i32 } output { -5i32 -9i32 -14i32 -4i32 1i32 -3i32 -1i32 }
-- input { 7i32 -2i32 } output { 5i32 9i32 -14i32 -4i32 -1i32 -3i32 1i32 }
-- input { -7i32 -2i32 } output { -9i32 -5i32 14i32 3i32 -1i32 3i32 -1i32 }
-- input { 65536i32 65536i32 } output { 131072i32 0i32 0i32 1i32 0i32 1i32 0i32 }

entry arith_i32 (a: i32) (b: i32) : (i32, i32, i32, i32, i32, i32, i32) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_i64
-- input { 9223372036854775807i64 1i64 } output { -9223372036854775808i64 9223372036854775806i64 9223372036854775807i64 9223372036854775807i64 0i64 9223372036854775807i64 0i64 }
-- input { -7i64 2i64 } output { -5i64 -9i64 -14i64 -4i64 1i64 -3i64 -1i64 }
-- input { 7i64 -2i64 } output { 5i64 9i64 -14i64 -4i64 -1i64 -3i64 1i64 }
-- input { 4294967296i64 4294967296i64 } output { 8589934592i64 0i64 0i64 1i64 0i64 1i64 0i64 }
-- input { -9i64 -4i64 } output { -13i64 -5i64 36i64 2i64 -1i64 2i64 -1i64 }

entry arith_i64 (a: i64) (b: i64) : (i64, i64, i64, i64, i64, i64, i64) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_u8
-- input { 200u8 100u8 } output { 44u8 100u8 32u8 2u8 0u8 2u8 0u8 }
-- input { 10u8 20u8 } output { 30u8 246u8 200u8 0u8 10u8 0u8 10u8 }
-- input { 16u8 20u8 } output { 36u8 252u8 64u8 0u8 16u8 0u8 16u8 }
-- input { 255u8 255u8 } output { 254u8 0u8 1u8 1u8 0u8 1u8 0u8 }

entry arith_u8 (a: u8) (b: u8) : (u8, u8, u8, u8, u8, u8, u8) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_u16
-- input { 65535u16 1u16 } output { 0u16 65534u16 65535u16 65535u16 0u16 65535u16 0u16 }
-- input { 10u16 20u16 } output { 30u16 65526u16 200u16 0u16 10u16 0u16 10u16 }
-- input { 300u16 300u16 } output { 600u16 0u16 24464u16 1u16 0u16 1u16 0u16 }

entry arith_u16 (a: u16) (b: u16) : (u16, u16, u16, u16, u16, u16, u16) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_u32
-- input { 4294967295u32 1u32 } output { 0u32 4294967294u32 4294967295u32 4294967295u32 0u32 4294967295u32 0u32 }
-- input { 10u32 20u32 } output { 30u32 4294967286u32 200u32 0u32 10u32 0u32 10u32 }
-- input { 65536u32 65536u32 } output { 131072u32 0u32 0u32 1u32 0u32 1u32 0u32 }
-- input { 100u32 7u32 } output { 107u32 93u32 700u32 14u32 2u32 14u32 2u32 }

entry arith_u32 (a: u32) (b: u32) : (u32, u32, u32, u32, u32, u32, u32) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)

-- ==
-- entry: arith_u64
-- input { 18446744073709551615u64 1u64 } output { 0u64 18446744073709551614u64 18446744073709551615u64 18446744073709551615u64 0u64 18446744073709551615u64 0u64 }
-- input { 10u64 20u64 } output { 30u64 18446744073709551606u64 200u64 0u64 10u64 0u64 10u64 }
-- input { 4294967296u64 4294967296u64 } output { 8589934592u64 0u64 0u64 1u64 0u64 1u64 0u64 }
-- input { 100u64 7u64 } output { 107u64 93u64 700u64 14u64 2u64 14u64 2u64 }

entry arith_u64 (a: u64) (b: u64) : (u64, u64, u64, u64, u64, u64, u64) =
  (a + b, a - b, a * b, a / b, a % b, a // b, a %% b)
