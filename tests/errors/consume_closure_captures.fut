-- A lambda aliases the arrays it refers to: once `xs` is updated in place,
-- calling `at` would read the updated array, so it may not be used.
-- ==
-- error: Using "at", which aliases variable "xs", but this was consumed

def main (xs: *[]i64) : i64 =
  let at = \(i: i64) -> xs[i]
  let xs[0] = 7
  in at 0 + xs[1]
