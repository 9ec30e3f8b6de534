-- The rule of `with_vjp_tape` takes one pair (tape, adjoint), not two
-- arguments as the rule of `with_vjp` does.
-- ==
-- error: Cannot apply "with_vjp_tape" to argument #2 \(invalid type\): expected `\(\(f64, f64\)\) -> f64`

def main (x: f64) : f64 =
  with_vjp_tape (\(x: f64) -> (x, x * 2)) (\(t: f64) (g: f64) -> t * g) x
