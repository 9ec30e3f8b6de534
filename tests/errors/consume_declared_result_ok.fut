-- The same update is fine when the result is declared unique, or when the
-- return type is left to inference (which finds it fresh).
-- ==
-- input { [1, 2] } output { 1 2 }

def inc_unique (xs: []i32) : *[]i32 = map (+1) xs

def inc_inferred (xs: []i32) = map (+1) xs

def main (a: *[]i32) : (i32, i32) =
  let b = inc_unique a
  let b[0] = 0
  let c = inc_inferred a
  let c[1] = 0
  in (a[0] + b[0] + c[1], a[1])
