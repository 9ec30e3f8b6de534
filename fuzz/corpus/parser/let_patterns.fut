-- let bindings with tuple and record patterns, wildcards, nested
-- patterns and type ascriptions.
-- ==
-- input { 2 3 } output { 15 19 3 }
-- input { 0 0 } output { 1 1 1 }
-- input { -5 4 } output { -44 -31 -4 }

def main (x: i32) (y: i32) : (i32, i32, i32) =
  let (a, b) = (x + 1, y * 2)
  let {p, q = r} = {p = a * b, q = a - b}
  let (c: i32, (d, _)) = (p, (r, 99))
  let e : i64 = i64.i32 c + 1
  in (c + d, i32.i64 e, a)
