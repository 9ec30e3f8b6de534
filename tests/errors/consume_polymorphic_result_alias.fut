-- A result of a type-parameter type may be the argument itself (here
-- `assert` returns its second argument): updating it consumes `xs`.
-- ==
-- error: Using variable "xs", but this was consumed

def main (xs: *[]i32) : i32 =
  let ys = assert (length xs > 0) xs
  let ys[0] = 1
  in xs[0] + ys[0]
