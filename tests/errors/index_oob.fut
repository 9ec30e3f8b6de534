-- Indexing outside an array is a run-time error.
-- ==
-- input { [1, 2, 3] 2i64 } output { 3 }
-- input { [1, 2, 3] 3i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex
-- input { [1, 2, 3] -1i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex
-- input { empty([0]i32) 0i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

def main (xs: []i32) (i: i64) : i32 = xs[i]

-- ==
-- entry: idx2d
-- input { [[1, 2], [3, 4]] 1i64 1i64 } output { 4 }
-- input { [[1, 2], [3, 4]] 1i64 2i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

entry idx2d (m: [][]i32) (i: i64) (j: i64) : i32 = m[i, j]

-- ==
-- entry: update
-- input { [1, 2, 3] 5i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

entry update (xs: []i32) (i: i64) : []i32 =
  let ys = copy xs
  in ys with [i] = 0

-- ==
-- entry: head_empty
-- input { [4] } output { 4 }
-- input { empty([0]i32) } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex

entry head_empty (xs: []i32) : i32 = head xs

-- ==
-- entry: bad_slice
-- input { [1, 2, 3] 1i64 4i64 } error: [Oo]ut of bounds|[Bb]ounds|[Ii]ndex|[Ss]lice

entry bad_slice (xs: []i32) (i: i64) (j: i64) : []i32 = xs[i:j]
