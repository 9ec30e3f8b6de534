-- null, manifest, flatten_4d/unflatten_4d and reduce_by_index_2d/_3d
-- (index tuples outside the destination are ignored).
-- ==
-- entry: null_manifest
-- input { [1, 2] } output { false true [1, 2] }
-- input { empty([0]i32) } output { true true empty([0]i32) }

-- ==
-- entry: four_d
-- input { 2i64 3i64 } output { 22i64 [0i64, 1i64, 2i64, 3i64, 4i64, 5i64, 6i64, 7i64, 8i64, 9i64, 10i64, 11i64, 12i64, 13i64, 14i64, 15i64, 16i64, 17i64, 18i64, 19i64, 20i64, 21i64, 22i64, 23i64] }

-- ==
-- entry: hist_2d
-- input { [1, 2, 3, 4, 5] } output { [[1, 0, 0], [0, 0, 5]] }

-- ==
-- entry: hist_3d
-- input { [7, 8, 9] } output { [[[0, 7], [0, 0]], [[0, 0], [0, 8]]] }

entry null_manifest (xs: []i32) : (bool, bool, []i32) =
  (null xs, null (iota 0), manifest xs)

entry four_d (a: i64) (b: i64) : (i64, []i64) =
  let m = unflatten_4d (iota (a * b * 2 * 2) :> [a * b * 2 * 2]i64)
  in (m[1, 2, 1, 0], flatten_4d m)

entry hist_2d (vs: [5]i32) : [2][3]i32 =
  reduce_by_index_2d (replicate 2 (replicate 3 0)) (+) 0
                     [(0, 0), (1, 2), (1, 2), (5, 0), (-1, 1)] vs

entry hist_3d (vs: [3]i32) : [2][2][2]i32 =
  reduce_by_index_3d (replicate 2 (replicate 2 (replicate 2 0))) (+) 0
                     [(0, 0, 1), (1, 1, 1), (2, 0, 0)] vs

-- ==
-- entry: manifest_values
-- input { [[1, 2], [3, 4]] 5 } output { [[1, 3], [2, 4]] 5 [1, 2] }

-- manifest copies a value of any type (here a transposed array and a
-- tuple holding an array); the copy can be updated in place.
entry manifest_values (xss: [][]i32) (k: i32) : ([][]i32, i32, []i32) =
  let (n, row) = manifest (k, xss[0])
  let row' = row with [0] = 1
  in (manifest (transpose xss), n, row')
