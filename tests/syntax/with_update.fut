-- Functional array update `a with [i] = v`.
-- ==
-- input { [1, 2, 3] 2i64 } output { [1, 2, 30] [1, 2, 3] }
-- input { [5, 6] 0i64 } output { [50, 6] [5, 6] }

def main (xs: []i32) (i: i64) : ([]i32, []i32) =
  let ys = copy xs
  in (ys with [i] = ys[i] * 10, xs)

-- ==
-- entry: upd2
-- input { [[0, 0], [0, 0]] } output { [[0, 9], [0, 0]] }

entry upd2 (m: [][]i32) : [][]i32 =
  let m2 = copy m
  in m2 with [0, 1] = 9
