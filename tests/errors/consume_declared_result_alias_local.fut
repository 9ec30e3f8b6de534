-- The same holds for a local function with a declared non-unique result:
-- its result aliases its argument.
-- ==
-- error: `a` is used after being consumed

def main (a: *[]i32) : i32 =
  let inc (xs: []i32) : []i32 = map (+1) xs
  let b = inc a
  let b[0] = 0
  in a[0] + b[0]
