-- Local module opening `m.(e)`: inside `f32.(...)`, `f64` names the
-- conversion function f32.f64 and `sqrt` is f32.sqrt.
-- ==
-- input { 4.0 9.0 } output { 6.0 2.0f32 13.0 }
-- input { 1.0 0.25 } output { 0.5 1.0f32 1.25 }

def main (x: f64) (y: f64) : (f64, f32, f64) =
  (f64.(sqrt (x * y) + pi * 0.0), f32.(sqrt (f64 x)), f64.(x + y))
