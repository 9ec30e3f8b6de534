-- flatmap f xs: the lengths of f's arrays, flags marking the first element
-- of each non-empty segment, the segments' offsets, the concatenated
-- arrays, and f's values. flatmap' for a function giving only arrays.
-- ==
-- entry: counts
-- input { [2i64, 0i64, 3i64] }
-- output { [2i64, 0i64, 3i64] [true, false, true, false, false] [0i64, 2i64, 2i64]
--          [0i64, 1i64, 0i64, 1i64, 2i64] [20i64, 0i64, 30i64] }
-- input { [0i64, 0i64] }
-- output { [0i64, 0i64] empty([0]bool) [0i64, 0i64] empty([0]i64) [0i64, 0i64] }
-- input { empty([0]i64) }
-- output { empty([0]i64) empty([0]bool) empty([0]i64) empty([0]i64) empty([0]i64) }

entry counts (ks: []i64) =
  flatmap (\k -> (iota k, k * 10)) ks

-- ==
-- entry: rows
-- input { [1, 2] [1i64, 2i64] }
-- output { [[1, -1], [2, -2], [2, -2]] [true, true, false] [0i64, 1i64] }

-- The elements are rows; the lengths come from the data.
entry rows (xs: []i32) (ks: []i64) : ([][2]i32, []bool, []i64) =
  let (_, flags, offsets, data, _) =
    flatmap (\(x, k) -> (replicate k [x, -x], x)) (zip xs ks)
  in (data, flags, offsets)

-- ==
-- entry: only_arrays
-- input { [1i64, 2i64, 0i64] }
-- output { [1i64, 2i64, 0i64] [true, true, false] [0i64, 1i64, 3i64] [0i64, 0i64, 1i64] }

entry only_arrays (ks: []i64) =
  flatmap' (\k -> iota k) ks

-- ==
-- entry: derivatives
-- input { [3.0, 4.0] }
-- output { [6.0, 6.0, 0.0, 0.0] [12.0, 16.0] [1.0, 0.0] }

-- Each x gives two copies of x*x and the value x: forward mode with a
-- tangent on x_0 moves its two copies by 2*x_0; reverse mode with all
-- adjoints 1 on the data gives 2*2*x_j, and on the values 1 for x_0.
def squares [n] (xs: [n]f64) : ([]f64, [n]f64) =
  let (_, _, _, data, vals) = flatmap (\x -> (replicate 2 (x * x), x)) xs
  in (data, vals)

entry derivatives [n] (xs: [n]f64) : ([]f64, [n]f64, [n]f64) =
  let e0 = tabulate n (\i -> if i == 0 then 1 else 0)
  let (d, _) = jvp squares xs e0
  let m = 2 * n
  let f (ys: [n]f64) : ([m]f64, [n]f64) = let (a, b) = squares ys in (a :> [m]f64, b)
  in (d, vjp f xs (replicate m 1, replicate n 0), vjp f xs (replicate m 0, e0))
