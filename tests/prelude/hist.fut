-- reduce_by_index (dest f ne is vs) and hist (op ne k is vs).  Indices
-- out of bounds are ignored.
-- ==
-- entry: rbi
-- input { [0, 0, 0, 0] [0i64, 1i64, 1i64, 3i64, 0i64] [1, 2, 3, 4, 5] } output { [6, 5, 0, 4] }
-- input { [10, 20] [0i64, 5i64, -1i64, 1i64] [1, 1, 1, 1] } output { [11, 21] }
-- input { [7, 8] empty([0]i64) empty([0]i32) } output { [7, 8] }

entry rbi [m] [n] (dest: [m]i32) (is: [n]i64) (vs: [n]i32) : [m]i32 =
  reduce_by_index (copy dest) (+) 0 is vs

-- ==
-- entry: rbimax
-- input { [0, 0, 0] [0i64, 2i64, 0i64, 2i64] [5, -3, 2, -1] } output { [5, 0, 0] }

entry rbimax [m] [n] (dest: [m]i32) (is: [n]i64) (vs: [n]i32) : [m]i32 =
  reduce_by_index (copy dest) i32.max i32.lowest is vs

-- ==
-- entry: h
-- input { 4i64 [0i64, 1i64, 1i64, 3i64, 0i64, 7i64] [1, 2, 3, 4, 5, 6] } output { [6, 5, 0, 4] }
-- input { 2i64 empty([0]i64) empty([0]i32) } output { [0, 0] }

entry h [n] (k: i64) (is: [n]i64) (vs: [n]i32) : [k]i32 = hist (+) 0 k is vs

-- ==
-- entry: hmax
-- input { 3i64 [2i64, 2i64, 0i64] [1.5, 2.5, -1.0] } output { [-1.0, -100.0, 2.5] }

entry hmax [n] (k: i64) (is: [n]i64) (vs: [n]f64) : [k]f64 =
  hist f64.max (-100.0) k is vs
