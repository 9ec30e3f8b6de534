-- The in-place update sugar `let a[i] = v`.
-- ==
-- input { [1, 2, 3] 1i64 7 } output { [101, 7, 3] }
-- input { [5] 0i64 9 } output { [109] }
-- input { [0, 0, 0, 0] 3i64 -2 } output { [100, 0, 0, -2] }

def main (xs: []i32) (i: i64) (v: i32) : []i32 =
  let ys = copy xs
  let ys[i] = v
  let ys[0] = ys[0] + 100
  in ys

-- ==
-- entry: upd2d
-- input { [[1, 2], [3, 4]] } output { [[1, 2], [42, 4]] }
-- input { [[0, 0, 0], [0, 0, 0], [9, 9, 9]] } output { [[0, 0, 0], [42, 0, 0], [9, 9, 9]] }

entry upd2d (m: [][]i32) : [][]i32 =
  let m2 = copy m
  let m2[1, 0] = 42
  in m2
