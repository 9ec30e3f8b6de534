-- `zip` returns a unique array (`*[n](a, b)` in Futhark's prelude): a
-- program may consume it while the arrays zipped stay in use, or where
-- they are parameters that may not be consumed; those arrays keep their
-- values. Expected values by hand.

-- ==
-- entry: update_zipped
-- input { [1, 2, 3, 4] }
-- output { [7, 2, 3, 4] [8, 2, 3, 4] [1, 2, 3, 4] }
entry update_zipped (xs: []i32) =
  let ys = zip xs xs
  let ys[0] = (7, 8)
  let (a, b) = unzip ys
  in (a, b, xs)

-- ==
-- entry: histogram_into_zipped
-- input { [10.0, 20.0, 30.0, 40.0] }
-- output { [11.0, 22.0, 33.0, 40.0] [20.0, 40.0, 60.0, 40.0] [10.0, 20.0, 30.0, 40.0] }
entry histogram_into_zipped [n] (dest: [n]f64) =
  let (h, k) = unzip (reduce_by_index (zip dest dest) (\(a, b) (c, d) -> (a + c, b + d)) (0, 0)
                                      [0, 1, 2] (zip [1, 2, 3] [10, 20, 30]))
  in (h, k, dest)

-- ==
-- entry: scatter_into_zipped
-- input { 4i64 }
-- output { [5i64, 1i64, 9i64, 3i64] [0i64, 1i64, 2i64, 3i64] }
entry scatter_into_zipped (n: i64) =
  let xs = iota n
  let (ys, _) = unzip (scatter (zip xs xs) [0, 2] [(5, 6), (9, 10)])
  in (ys, xs)

-- ==
-- entry: loop_over_zipped
-- input { [1.0, 2.0, 3.0] }
-- output { [1.0, 2.0, 3.0] [3.0, 2.0, 3.0] [1.0, 2.0, 3.0] }
entry loop_over_zipped (xs: []f64) =
  let ps = loop ps = zip xs xs for i < 2 do ps with [0] = (ps[0].0, ps[0].1 + 1)
  let (a, b) = unzip ps
  in (a, b, xs)
