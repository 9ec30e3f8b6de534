-- The rule of `with_vjp` must return the argument's adjoint, of the
-- argument's type: an i64 for an f64 argument is a type error located at
-- the rule.
-- ==
-- error: Cannot apply "with_vjp" to argument #2 \(invalid type\): expected `\(f64\) -> \(f64\) -> f64`, found `\(.*\) -> \(f64\) -> i64`

def main (x: f64) : f64 =
  with_vjp (\(x: f64) -> x * 2) (\_ (g: f64) -> i64.f64 g) x
