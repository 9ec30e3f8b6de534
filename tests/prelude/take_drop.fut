-- take, drop, split, head, tail, last, init, length, copy.
-- split has the current type [n][m] (xs: [n+m]t) : ([n]t, [m]t), so the
-- split point comes from a size coercion.
-- ==
-- entry: tk
-- input { 2i64 [1, 2, 3] } output { [1, 2] }
-- input { 0i64 [1, 2, 3] } output { empty([0]i32) }

entry tk (n: i64) (xs: []i32) : []i32 = take n xs

-- ==
-- entry: dr
-- input { 1i64 [1, 2, 3] } output { [2, 3] }
-- input { 3i64 [1, 2, 3] } output { empty([0]i32) }

entry dr (n: i64) (xs: []i32) : []i32 = drop n xs

-- ==
-- entry: sp
-- input { 1i64 [1, 2, 3] } output { [1] [2, 3] }
-- input { 0i64 [4, 5] } output { empty([0]i32) [4, 5] }

entry sp [l] (k: i64) (xs: [l]i32) : ([k]i32, [l - k]i32) = split (xs :> [k + (l - k)]i32)

-- ==
-- entry: ends
-- input { [1, 2, 3] } output { 1 [2, 3] 3 [1, 2] }
-- input { [7] } output { 7 empty([0]i32) 7 empty([0]i32) }

entry ends (xs: []i32) : (i32, []i32, i32, []i32) = (head xs, tail xs, last xs, init xs)

-- ==
-- entry: len
-- input { [[1], [2], [3]] } output { 3i64 }
-- input { empty([0][2]i32) } output { 0i64 }

entry len (xs: [][]i32) : i64 = length xs

-- ==
-- entry: cp
-- input { [1, 2] } output { [1, 2] [99, 2] }

entry cp (xs: []i32) : ([]i32, []i32) =
  let ys = copy xs
  in (xs, ys with [0] = 99)
