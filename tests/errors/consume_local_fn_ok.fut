-- Local functions and closures that return fresh arrays, declared unique,
-- may have their results updated while the arguments stay in use.
-- ==
-- input { [1, 2] } output { 1 3 }

def main (a: *[]i32) : (i32, i32) =
  let inc (xs: []i32) : *[]i32 = map (+1) xs
  let twice = \(xs: []i32) : *[]i32 -> map (* 2) xs
  let b = inc a
  let b[0] = 0
  let c = twice a
  let c[0] = 1
  in (a[0] + b[0] + c[0] - 1, a[1] + c[0])
