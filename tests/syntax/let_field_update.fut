-- `let r.f.g = v` rebinds `r` to `r with f.g = v`; `let r.f[i] = v`
-- updates the array in a field in place; `let a[i][j] = v` is
-- `let a[i, j] = v`.
-- ==
-- input { 5 } output { 5 2 [0, 5, 0] [[1, 2], [5, 4]] }

def main (x: i32) : (i32, i32, []i32, [][]i32) =
  let r = {a = 1, b = {c = 2, d = [0, 0, 0]}}
  let r.a = x
  let r.b.d[1] = x
  let m = [[1, 2], [3, 4]]
  let m[1][0] = x
  in (r.a, r.b.c, r.b.d, m)
