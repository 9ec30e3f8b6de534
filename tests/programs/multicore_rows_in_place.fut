-- A map whose rows are of two kinds: one written in place into the
-- map's result (a rank-1 row made by an inner map), one allocated at the
-- first row (a rank-2 row, whose shape the first row gives). Multicore C
-- runs the first row alone and the others in parallel; every row of both
-- results must be written (issue 31: the in-place rows after the first
-- were left unwritten, which gave ht's complicated Jacobian wrong
-- columns with 2 threads). Expected values by hand.
-- ==
-- entry: doubled_and_shifted
-- input { [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
--         [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]],
--          [[3.0, -3.0], [-3.0, 3.0]], [[0.5, 0.5], [0.5, 0.5]]] }
-- output { [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0], [14.0, 16.0]]
--          [[[2.0, 1.0], [1.0, 2.0]], [[3.0, 3.0], [3.0, 3.0]],
--           [[4.0, -2.0], [-2.0, 4.0]], [[1.5, 1.5], [1.5, 1.5]]] }
entry doubled_and_shifted [n] [m] (xss: [n][m]f64) (yss: [n][m][2]f64) : ([n][m]f64, [n][m][2]f64) =
  unzip (map2 (\xs ys -> (map (\x -> x * 2.0) xs, map (\y -> map (+ 1.0) y) ys)) xss yss)
