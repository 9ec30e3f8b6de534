-- A lambda with a unique parameter consumes its argument: using the array
-- afterwards is an error.
-- ==
-- error: Using variable "xs", but this was consumed

def main (xs: *[]i32) : i32 =
  let bump = \(ys: *[]i32) -> ys with [0] = ys[0] + 1
  let zs = bump xs
  in zs[0] + xs[0]
