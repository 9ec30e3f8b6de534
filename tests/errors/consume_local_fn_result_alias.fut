-- A local function's result aliases what its body returns: `pick` returns
-- its argument, so updating its result consumes `a`.
-- ==
-- error: Using variable "a", but this was consumed

def main (a: *[]i32) : i32 =
  let pick (xs: []i32) = xs
  let b = pick a
  let b[0] = 0
  in a[0] + b[0]
