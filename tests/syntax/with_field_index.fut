-- `r with f[i] = v` updates in place the array in field `f` of a record
-- (a path `f.g` reaches into nested records; tuples use field numbers);
-- the other fields are kept.
-- ==
-- input { [1, 2, 3] } output { [1, 20, 3] 7i64 [0i64, 0i64, 5i64] }

type~ state = {data: []i32, meta: {count: i64, hist: []i64}}

def main (xs: []i32) : ([]i32, i64, []i64) =
  let s : state = {data = copy xs, meta = {count = 7, hist = replicate 3 0}}
  let s = s with data[1] = 20
  let s = s with meta.hist[2] = 5
  in (s.data, s.meta.count, s.meta.hist)

-- ==
-- entry: tup
-- input { 3i64 } output { [9i64, 1i64, 2i64] [0i64, 1i64, 8i64] }

entry tup (n: i64) : ([]i64, []i64) =
  (((iota n, iota n) with 0[0] = 9) with 1[2] = 8)
