-- A local function's result is not inferred unique (only top-level
-- functions get that): without `: *[]i32` it aliases the argument.
-- ==
-- error: `a` is used after being consumed

def main (a: *[]i32) : i32 =
  let inc (xs: []i32) = map (+1) xs
  let b = inc a
  let b[0] = 0
  in a[0] + b[0]
