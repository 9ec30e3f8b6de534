-- Less common members of the float modules: recip, rsqrt, copysign,
-- ldexp, nextafter, epsilon, from_fraction, to_f64.
-- ==
-- input { 4.0 } output { 0.25 0.5 -4.0 32.0 0.75 0.5 true true true }

def main (x: f64) : (f64, f64, f64, f64, f64, f64, bool, bool, bool) =
  ( f64.recip x
  , f64.rsqrt x
  , f64.copysign x (-1.0)
  , f64.ldexp x 3
  , f64.from_fraction 3 4
  , f32.to_f64 0.5f32
  , 1.0 + f64.epsilon > 1.0
  , 1.0 + f64.epsilon / 4.0 == 1.0
  , f64.nextafter 1.0 2.0 - 1.0 == f64.epsilon
  )
