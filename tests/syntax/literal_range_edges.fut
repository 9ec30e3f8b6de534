-- Literals at the edges of their types' ranges are accepted: the most
-- negative signed values as negated literals, the unsigned maxima, the
-- largest finite floats.
-- ==
-- input { } output { -128i8 127i8 -32768i16 65535u16 4294967295u32 -9223372036854775808i64 255u8 }

-- ==
-- entry: floats
-- input { } output { true true }

def main : (i8, i8, i16, u16, u32, i64, u8) =
  (-128, 127, -32768, 65535, 0xffffffff, -9223372036854775808, 0xff)

entry floats : (bool, bool) =
  let big32 : f32 = 3.4e38
  let big64 : f64 = -1.79e308
  in (big32 > 3e38, big64 < -1e308)
