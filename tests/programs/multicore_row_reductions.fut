-- Reductions whose operator combines rows element by element, which
-- multicore C runs in parallel (issue 31): each thread combines its rows
-- into a row of its own, and the threads' rows are combined in thread
-- order. Column sums (`map2 (+)`), the column maxima of rows made by a
-- map fused with the reduction, and a pair of a count and a row sum.
-- Expected values by hand; the corpus runs them with every level
-- parallel from 2 rows on, on 1, 2 and 3 threads.
-- ==
-- entry: column_sums
-- input { [[1i64, 2i64, 3i64], [4i64, 5i64, 6i64], [-2i64, 0i64, 7i64],
--          [10i64, -10i64, 1i64], [0i64, 1i64, 0i64]] }
-- output { [13i64, -2i64, 17i64] }
-- input { empty([0][2]i64) }
-- output { [0i64, 0i64] }

-- ==
-- entry: column_maxima
-- input { [3i64, -1i64, 7i64, 2i64] }
-- output { [7i64, 14i64, 21i64, 1i64] }

-- ==
-- entry: count_and_sum
-- input { [[1.0, 0.5], [2.0, -1.0], [0.25, 4.0]] }
-- output { 3i64 [6.5, 7.0] }

entry column_sums [n] [m] (xss: [n][m]i64) : [m]i64 =
  reduce (map2 (+)) (replicate m 0) xss

-- Row k of element x is [x, 2x, 3x, -x] (k = 0..3).
entry column_maxima [n] (xs: [n]i64) : [4]i64 =
  reduce (map2 i64.max) (replicate 4 i64.lowest)
         (map (\x -> map (\k -> if k == 3 then -x else x * (k + 1)) (iota 4)) xs)

entry count_and_sum [n] [m] (xss: [n][m]f64) : (i64, [m]f64) =
  reduce (\(c1, r1) (c2, r2) -> (c1 + c2, map2 (+) r1 r2)) (0, replicate m 0.0)
         (map (\xs -> (1, map (* 2.0) xs)) xss)
