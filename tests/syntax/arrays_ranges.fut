-- Array literals (multi-dimensional) and the range forms
-- a..<b, a...b, a..b...c, a..>b and a..b..>c.
-- ==
-- entry: ranges
-- input { 5 } output { [0, 1, 2, 3, 4] [1, 2, 3, 4, 5] [0, 2, 4] [5, 4, 3, 2, 1] [5, 3, 1] }
-- input { 1 } output { [0] [1] [0] [1] [1] }
-- input { 6 } output { [0, 1, 2, 3, 4, 5] [1, 2, 3, 4, 5, 6] [0, 2, 4, 6] [6, 5, 4, 3, 2, 1] [6, 4, 2] }

entry ranges (n: i32) : ([]i32, []i32, []i32, []i32, []i32) =
  (0..<n, 1...n, 0..2...n, n..>0, n..(n - 2)..>0)

-- ==
-- entry: ranges64
-- input { 4i64 } output { [0i64, 1i64, 2i64, 3i64] [4i64, 7i64, 10i64] }

entry ranges64 (n: i64) : ([]i64, []i64) = (0..<n, n..(n + 3)...(n * 3))

-- ==
-- entry: lits
-- input { 2 } output { [[2, 2], [3, 8]] [1.5, 2.0] [[true], [false]] }

entry lits (x: i32) : ([][]i32, []f64, [][]bool) =
  ([[x, 2], [3, x * 4]], [1.5, 2.0], [[true], [false]])
