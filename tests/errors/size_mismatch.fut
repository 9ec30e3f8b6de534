-- Size mismatches found at run time: a failing size coercion `:>`,
-- including one feeding zip and map2, and unflatten with wrong sizes.
-- ==
-- input { [1, 2, 3] 3i64 } output { [1, 2, 3] }
-- input { [1, 2, 3] 2i64 } error: [Ss]ize|[Ss]hape|[Cc]oerc|match
-- input { [1, 2, 3] 4i64 } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

def main (xs: []i32) (n: i64) : [n]i32 = xs :> [n]i32

-- ==
-- entry: zip_mismatch
-- input { [1, 2] [3, 4] } output { [4, 6] }
-- input { [1, 2] [3, 4, 5] } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

entry zip_mismatch [n] [m] (xs: [n]i32) (ys: [m]i32) : [n]i32 =
  map (\(a, b) -> a + b) (zip xs (ys :> [n]i32))

-- ==
-- entry: map2_mismatch
-- input { [1, 2] [3, 4] } output { [3, 8] }
-- input { [1, 2, 3] [3, 4] } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

entry map2_mismatch [n] [m] (xs: [n]i32) (ys: [m]i32) : [m]i32 =
  map2 (*) (xs :> [m]i32) ys

-- ==
-- entry: unflatten_mismatch
-- input { [1, 2, 3, 4] 2i64 2i64 } output { [[1, 2], [3, 4]] }
-- input { [1, 2, 3] 2i64 2i64 } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

entry unflatten_mismatch (xs: []i32) (n: i64) (m: i64) : [n][m]i32 =
  unflatten (xs :> [n * m]i32)
