-- Single and half precision: arithmetic happens in the stated precision.
-- ==
-- entry: arith32
-- input { 1.5f32 2.0f32 } output { 3.5f32 -0.5f32 3.0f32 0.75f32 6.0f32 }
-- input { -3.0f32 0.5f32 } output { -2.5f32 -3.5f32 -1.5f32 -6.0f32 -0.75f32 }

entry arith32 (a: f32) (b: f32) : (f32, f32, f32, f32, f32) = (a + b, a - b, a * b, a / b, a * b * b)

-- Adding one to 2^24 is lost in f32 (but not in f64).
-- ==
-- entry: prec32
-- input { 16777216.0f32 } output { 0.0f32 1.0 }
-- input { 1.0f32 } output { 1.0f32 1.0 }

entry prec32 (a: f32) : (f32, f64) = ((a + 1) - a, (f64.f32 a + 1) - f64.f32 a)

-- ==
-- entry: math32
-- input { 2.0f32 } output { 1.4142135f32 7.389056f32 0.9092974f32 0.6931472f32 4.0f32 true false }

entry math32 (x: f32) : (f32, f32, f32, f32, f32, bool, bool) =
  (f32.sqrt x, f32.exp x, f32.sin x, f32.log x, x ** 2, f32.isinf (f32.inf), f32.isnan x)

-- ==
-- entry: bits32
-- input { 1.0f32 1073741824u32 } output { 1065353216u32 2.0f32 3223322624u32 }

entry bits32 (x: f32) (b: u32) : (u32, f32, u32) = (f32.to_bits x, f32.from_bits b, f32.to_bits (-2.5))

-- ==
-- entry: arith16
-- input { 1.5f16 0.25f16 } output { 1.75f16 1.25f16 0.375f16 6.0f16 }

entry arith16 (a: f16) (b: f16) : (f16, f16, f16, f16) = (a + b, a - b, a * b, a / b)

-- Adding one to 2048 is lost in f16; 2048 * 32 = 65536 overflows to
-- infinity (the largest finite f16 is 65504).
-- ==
-- entry: prec16
-- input { 2048.0f16 } output { 0.0f16 true 2.0f16 }
-- input { 1.0f16 } output { 1.0f16 false 2.0f16 }

entry prec16 (a: f16) : (f16, bool, f16) =
  ((a + 1) - a, f16.isinf (a * 32), f16.sqrt 4)

-- ==
-- entry: bits16
-- input { 1.0f16 16384u16 } output { 15360u16 2.0f16 47104u16 }

entry bits16 (x: f16) (b: u16) : (u16, f16, u16) = (f16.to_bits x, f16.from_bits b, f16.to_bits (-0.5))
