-- The rule of `with_vjp_tape` takes one pair (tape, adjoint), not two
-- arguments as the rule of `with_vjp` does.
-- ==
-- error: mismatched types in argument 2 of `with_vjp_tape`: expected `\(\(f64, f64\)\) -> f64`

def main (x: f64) : f64 =
  with_vjp_tape (\(x: f64) -> (x, x * 2)) (\(t: f64) (g: f64) -> t * g) x
