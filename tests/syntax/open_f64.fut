-- A top-level `open f64` brings the f64 module's names (sqrt, max,
-- floor, pi, and its operators) into scope.
-- ==
-- input { 3.0 4.0 } output { 5.0 6.0 0.0 }
-- input { -6.0 8.0 } output { 10.0 10.0 0.0 }

open f64

def hyp (a: f64) (b: f64) : f64 = sqrt (a * a + b * b)

def main (a: f64) (b: f64) : (f64, f64, f64) =
  (hyp a b, max a b + floor 2.5, sin (pi * 0.0))
