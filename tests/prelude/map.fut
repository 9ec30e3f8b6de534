-- map, map1 ... map5, and nested map.
-- ==
-- entry: m
-- input { [1, 2, 3] } output { [2, 5, 8] }
-- input { empty([0]i32) } output { empty([0]i32) }

entry m (xs: []i32) : []i32 = map (\x -> x * 3 - 1) xs

-- ==
-- entry: m1
-- input { [1, 2, 3, 4] } output { [false, false, true, true] }

entry m1 (xs: []i32) : []bool = map1 (> 2) xs

-- ==
-- entry: m2
-- input { [5, 3] [1, 7] } output { [4, -4] }
-- input { empty([0]i32) empty([0]i32) } output { empty([0]i32) }

entry m2 [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map2 (-) xs ys

-- ==
-- entry: m3
-- input { [1, 2] [3, 4] [5, 6] } output { [8, 14] }

entry m3 [n] (xs: [n]i32) (ys: [n]i32) (zs: [n]i32) : [n]i32 =
  map3 (\a b c -> a * b + c) xs ys zs

-- ==
-- entry: m4
-- input { [1] [2] [3] [4] } output { [4321] }
-- input { [0, 1] [0, 1] [0, 1] [1, 0] } output { [1000, 111] }

entry m4 [n] (a: [n]i32) (b: [n]i32) (c: [n]i32) (d: [n]i32) : [n]i32 =
  map4 (\w x y z -> w + 10 * x + 100 * y + 1000 * z) a b c d

-- ==
-- entry: m5
-- input { [1.0, 0.5] [2.0, 0.5] [3.0, 0.5] [4.0, 0.5] [5.0, 0.5] } output { [15.0, 2.5] }

entry m5 [n] (a: [n]f64) (b: [n]f64) (c: [n]f64) (d: [n]f64) (e: [n]f64) : [n]f64 =
  map5 (\p q r s t -> p + q + r + s + t) a b c d e

-- ==
-- entry: nested
-- input { [[1, 2], [3, 4]] } output { [[2, 4], [6, 8]] }

entry nested (m: [][]i32) : [][]i32 = map (map (* 2)) m

-- A map whose function returns a tuple, giving a pair of arrays.
-- ==
-- entry: pairs
-- input { [1, 2, 3] } output { [2, 3, 4] [1, 4, 9] }

entry pairs (xs: []i32) : ([]i32, []i32) = unzip (map (\x -> (x + 1, x * x)) xs)
