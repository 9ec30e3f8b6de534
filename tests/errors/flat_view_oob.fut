-- Every position of a flat view is bounds-checked, on reads and writes.
-- ==
-- entry: read
-- input { [1, 2, 3, 4] 0i64 1i64 } output { [[1, 2], [3, 4]] }
-- input { [1, 2, 3, 4] 1i64 1i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex
-- input { [1, 2, 3, 4] 3i64 -1i64 } output { [[4, 3], [2, 1]] }
-- input { [1, 2, 3, 4] 2i64 -1i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

entry read (xs: []i32) (offset: i64) (s: i64) : [][]i32 =
  intrinsics.flat_index_2d xs offset 2 (2 * s) 2 s

-- ==
-- entry: write
-- input { [1, 2, 3, 4] 1i64 } output { [1, 0, 0, 4] }
-- input { [1, 2, 3, 4] 3i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

entry write (xs: *[]i32) (offset: i64) : []i32 =
  intrinsics.flat_update_2d xs offset 1 1 [[0, 0]]
