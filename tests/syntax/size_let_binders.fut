-- `let [n] p = e` binds the sizes of `e`'s value: `n` is inferred while the
-- pattern is matched (here from an empty array and from a `filter`), and
-- a size naming a `match` case's variable is unknown outside the case.
-- ==
-- input { [3, -1, 4, -1, 5] }
-- output { 0i64 3i64 [3, 4, 5] 2i64 }

def main (xs: []i32) =
  let [k] (_: [k][k]i64) = []
  let [m] (pos: [m]i32) = filter (> 0) xs
  let arr = match m - 1 case j -> iota j
  in (k, m, pos, length arr)
