-- The uniqueness of a local function's result is inferred from its body,
-- also when a non-unique result type is declared (as Futhark does for
-- local functions and lambdas): `inc` returns a fresh array, so its result
-- may be updated while the argument stays in use.
-- ==
-- input { [1, 2] } output { 1 }

def main (a: *[]i32) : i32 =
  let inc (xs: []i32) : []i32 = map (+1) xs
  let b = inc a
  let b[0] = 0
  in a[0] + b[0]
