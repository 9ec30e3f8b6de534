-- Trigonometry in half-turns (sinpi x = sin (pi * x), asinpi x = asin x / pi,
-- atan2pi y x = atan2 y x / pi) and frexp (x = m * 2^e, 0.5 <= |m| < 1;
-- zeros, infinities and NaN come back with exponent 0). Expected values
-- from Python's math module.
-- ==
-- entry: half_turns
-- input { 0.25 } output { 0.7071067811865475 0.7071067811865476 0.9999999999999999 0.08043062325516624 0.4195693767448338 0.07797913037736932 0.25 }

-- ==
-- entry: frexp64
-- input { 1.5 } output { 0.75 1 }
-- input { -1024.0 } output { -0.5 11 }
-- input { 5e-310 } output { 0.7190772539449242 -1027 }
-- input { 0.0 } output { 0.0 0 }
-- input { f64.inf } output { f64.inf 0 }

-- ==
-- entry: frexp32
-- input { 0.1f32 } output { 0.8f32 -3 }
-- input { 1e-40f32 } output { 0.54444885f32 -132 }

entry half_turns (x: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  ( f64.sinpi x
  , f64.cospi x
  , f64.tanpi x
  , f64.asinpi x
  , f64.acospi x
  , f64.atanpi x
  , f64.atan2pi 1.0 1.0
  )

entry frexp64 (x: f64) : (f64, i32) = f64.frexp x

entry frexp32 (x: f32) : (f32, i32) = f32.frexp x
