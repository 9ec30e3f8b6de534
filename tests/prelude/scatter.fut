-- scatter (dest is vs), scatter_2d, scatter_3d and spread (k x is vs).
-- Out-of-bounds indices are ignored.
-- ==
-- entry: sc
-- input { [0, 0, 0, 0, 0] [1i64, 3i64, -1i64, 9i64] [10, 30, 99, 99] } output { [0, 10, 0, 30, 0] }
-- input { [1, 2, 3] empty([0]i64) empty([0]i32) } output { [1, 2, 3] }

entry sc [m] [n] (dest: [m]i32) (is: [n]i64) (vs: [n]i32) : [m]i32 =
  scatter (copy dest) is vs

-- ==
-- entry: sc2d
-- input { [[0, 0], [0, 0]] [0i64, 1i64, 5i64] [1i64, 0i64, 0i64] [7, 8, 9] } output { [[0, 7], [8, 0]] }

entry sc2d [a] [b] [n] (dest: [a][b]i32) (is: [n]i64) (js: [n]i64) (vs: [n]i32) : [a][b]i32 =
  scatter_2d (copy dest) (zip is js) vs

-- ==
-- entry: sc3d
-- input { [[[0, 0], [0, 0]], [[0, 0], [0, 0]]] [1i64, 0i64] [0i64, 1i64] [1i64, 0i64] [5, 6] }
-- output { [[[0, 0], [6, 0]], [[0, 5], [0, 0]]] }

entry sc3d [a] [b] [c] [n] (dest: [a][b][c]i32) (is: [n]i64) (js: [n]i64) (ks: [n]i64) (vs: [n]i32) : [a][b][c]i32 =
  scatter_3d (copy dest) (zip3 is js ks) vs

-- ==
-- entry: spr
-- input { 5i64 -1 [0i64, 4i64, 2i64, 7i64] [10, 40, 20, 70] } output { [10, -1, 20, -1, 40] }
-- input { 2i64 3 empty([0]i64) empty([0]i32) } output { [3, 3] }

entry spr [n] (k: i64) (x: i32) (is: [n]i64) (vs: [n]i32) : [k]i32 = spread k x is vs
