-- transpose, flatten, flatten_3d, unflatten, unflatten_3d.  In the
-- current prelude, unflatten/unflatten_3d take no size arguments: the
-- sizes come from the argument's type [n*m]t, so callers coerce.
-- ==
-- entry: tr
-- input { [[1, 2, 3], [4, 5, 6]] } output { [[1, 4], [2, 5], [3, 6]] }
-- input { [[7]] } output { [[7]] }

entry tr (m: [][]i32) : [][]i32 = transpose m

-- ==
-- entry: fl
-- input { [[1, 2, 3], [4, 5, 6]] } output { [1, 2, 3, 4, 5, 6] }

entry fl (m: [][]i32) : []i32 = flatten m

-- ==
-- entry: fl3
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] } output { [1, 2, 3, 4, 5, 6, 7, 8] }

entry fl3 (m: [][][]i32) : []i32 = flatten_3d m

-- ==
-- entry: unfl
-- input { [1, 2, 3, 4, 5, 6] 2i64 3i64 } output { [[1, 2, 3], [4, 5, 6]] }
-- input { [1, 2, 3, 4, 5, 6] 3i64 2i64 } output { [[1, 2], [3, 4], [5, 6]] }

entry unfl (xs: []i32) (n: i64) (m: i64) : [n][m]i32 = unflatten (xs :> [n * m]i32)

-- ==
-- entry: unfl3
-- input { [1, 2, 3, 4, 5, 6, 7, 8] 2i64 2i64 2i64 } output { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] }
-- input { [1, 2, 3, 4, 5, 6] 1i64 3i64 2i64 } output { [[[1, 2], [3, 4], [5, 6]]] }

entry unfl3 (xs: []i32) (n: i64) (m: i64) (l: i64) : [n][m][l]i32 =
  unflatten_3d (xs :> [n * m * l]i32)

-- ==
-- entry: roundtrip
-- input { [[1, 2], [3, 4], [5, 6]] } output { [[1, 2], [3, 4], [5, 6]] [[1, 3, 5], [2, 4, 6]] }

entry roundtrip [n] [m] (xss: [n][m]i32) : ([n][m]i32, [m][n]i32) =
  (unflatten (flatten xss), transpose (unflatten (flatten xss)))
