-- reduce and reduce_comm, including an associative but non-commutative
-- operator (composition of affine maps), tuple accumulators, and a
-- vectorised (array-valued) operator.
-- ==
-- entry: sum
-- input { [1, 2, 3, 4] } output { 10 }
-- input { empty([0]i32) } output { 0 }
-- input { [2147483647, 1] } output { -2147483648 }

entry sum (xs: []i32) : i32 = reduce (+) 0 xs

-- ==
-- entry: prod
-- input { [2, 3, -4] } output { -24 }
-- input { empty([0]i32) } output { 1 }

entry prod (xs: []i32) : i32 = reduce (*) 1 xs

-- ==
-- entry: maxr
-- input { [3, -1, 7, 2] } output { 7 }
-- input { empty([0]i32) } output { -2147483648 }

entry maxr (xs: []i32) : i32 = reduce i32.max i32.lowest xs

-- ==
-- entry: comm
-- input { [5, 6, 7] } output { 18 }
-- input { empty([0]i32) } output { 0 }

entry comm (xs: []i32) : i32 = reduce_comm (+) 0 xs

-- ==
-- entry: comm_max
-- input { [1.5, -2.0, 0.25] } output { 1.5 }

entry comm_max (xs: []f64) : f64 = reduce_comm f64.max (-1000.0) xs

-- ==
-- entry: tuple_red
-- input { [1, 2, 3] [5, 9, 2] } output { 6 9 }

entry tuple_red [n] (xs: [n]i32) (ys: [n]i32) : (i32, i32) =
  reduce (\(a, b) (c, d) -> (a + c, i32.max b d)) (0, i32.lowest) (zip xs ys)

-- ==
-- entry: affine
-- input { [2, 3, 1] [1, 4, 5] } output { 6 12 }
-- input { [2, 3] [1, 4] } output { 6 7 }
-- input { [3, 2] [4, 1] } output { 6 9 }
-- input { empty([0]i32) empty([0]i32) } output { 1 0 }

entry affine [n] (as: [n]i32) (bs: [n]i32) : (i32, i32) =
  reduce (\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs)

-- ==
-- entry: colsums
-- input { [[1, 2], [3, 4], [5, 6]] } output { [9, 12] }

entry colsums [n] [m] (xss: [n][m]i32) : [m]i32 =
  reduce (map2 (+)) (replicate m 0) xss

-- ==
-- entry: fsum
-- input { [0.5f32, 0.25f32, 0.125f32] } output { 0.875f32 }

entry fsum (xs: []f32) : f32 = reduce (+) 0 xs
