-- Accumulators in the source language (Futhark's `intrinsics` module):
-- `scatter_stream dest f xs` and `hist_stream dest op ne f xs` run `f` on
-- an accumulator over `dest` for every element of `xs`; `acc_write acc i v`
-- writes `v` at `i` (a scatter overwrites the cell, a histogram combines
-- it with `op`); indices out of bounds are ignored. Expected values by
-- hand.

type~ acc 't = intrinsics.acc t

def put [n] 't (a: *acc ([n]t)) (i: i64) (v: t) : *acc ([n]t) =
  intrinsics.acc_write a i v

-- Each element writes two cells; the last element's second write (index
-- 2n-1) is out of bounds for the 2n-1 cells.
-- ==
-- entry: pairs
-- input { [10, 20, 30] }
-- output { [10, 11, 20, 21, 30] }
-- input { empty([0]i32) }
-- output { empty([0]i32) }
entry pairs [n] (xs: [n]i32) : []i32 =
  let dest = replicate (i64.max 0 (2 * n - 1)) (-1)
  in intrinsics.scatter_stream dest
                               (\(a: *acc ([]i32)) (i, x) ->
                                  let a = put a (2 * i) x
                                  in put a (2 * i + 1) (x + 1))
                               (zip (iota n) xs)

-- A histogram with `+`, a loop writing several cells per element, and
-- negative indices (ignored).
-- ==
-- entry: counts
-- input { [2i64, 0i64, -1i64, 3i64] }
-- output { [4, 5, 3, 1] }
entry counts (ks: []i64) : [4]i32 =
  intrinsics.hist_stream (replicate 4 0)
                         (+)
                         0
                         (\(a: *acc ([4]i32)) k ->
                            loop a for j < 3 do put a (k - j) (i32.i64 (j + 1)))
                         ks

-- A maximum per bucket (an operator other than `+`), into a destination
-- that already holds values.
-- ==
-- entry: maxima
-- input { [3.0, -1.0, 7.5, 2.0, 0.5] [1i64, 0i64, 1i64, 0i64, 2i64] }
-- output { [2.0, 7.5, 1.0] }
entry maxima [n] (xs: [n]f64) (bs: [n]i64) : [3]f64 =
  intrinsics.hist_stream [-10, 0, 1]
                         f64.max
                         (-f64.inf)
                         (\(a: *acc ([3]f64)) (b, x) -> put a b x)
                         (zip bs xs)

-- Pairs of values: an accumulator of tuples, with an operator that adds
-- the first components and multiplies the second ones.
-- ==
-- entry: sums_products
-- input { [1, 2, 3, 4] [0i64, 1i64, 0i64, 1i64] }
-- output { [4, 6] [3, 8] }
entry sums_products [n] (xs: [n]i32) (bs: [n]i64) : ([2]i32, [2]i32) =
  let r =
    intrinsics.hist_stream (replicate 2 (0, 1))
                           (\(a, b) (c, d) -> (a + c, b * d))
                           (0, 1)
                           (\(a: *acc ([2](i32, i32))) (k, x) -> put a k (x, x))
                           (zip bs xs)
  in unzip r

-- Whole rows: rows added elementwise into a matrix (`map2 (+)`), their
-- elementwise maxima (`map2 i32.max`, a scalar operator applied per
-- element), and rows scattered into another matrix (the last one out of
-- bounds).
-- ==
-- entry: rows
-- input { [[1, 2], [3, -4], [5, 6]] [1i64, 0i64, 1i64] }
-- output { [[3, -4], [6, 8]] [[3, 0], [5, 6]] [[0, 0], [1, 2], [3, -4]] }
entry rows [n] (xss: [n][2]i32) (bs: [n]i64) : ([2][2]i32, [2][2]i32, [3][2]i32) =
  let added =
    intrinsics.hist_stream (replicate 2 (replicate 2 0))
                           (map2 (+))
                           (replicate 2 0)
                           (\(a: *acc ([2][2]i32)) (k, r) -> put a k r)
                           (zip bs xss)
  let maxima =
    intrinsics.hist_stream (replicate 2 (replicate 2 0))
                           (map2 i32.max)
                           (replicate 2 i32.lowest)
                           (\(a: *acc ([2][2]i32)) (k, r) -> put a k r)
                           (zip bs xss)
  let moved =
    intrinsics.scatter_stream (replicate 3 (replicate 2 0))
                              (\(a: *acc ([3][2]i32)) (k, r) -> put a (k + 1) r)
                              (zip (iota n) xss)
  in (added, maxima, moved)

-- Streams nested in a map, and an accumulator threaded through a
-- conditional.
-- ==
-- entry: nested
-- input { 3i64 }
-- output { [[0, 7, 7], [1, 7, 7], [2, 2, 7]] }
entry nested (n: i64) : [n][3]i32 =
  map (\i ->
         intrinsics.scatter_stream (replicate 3 7)
                                   (\(a: *acc ([3]i32)) j ->
                                      if j <= i / 2 then put a j (i32.i64 i) else a)
                                   (iota 2))
      (iota n)

-- The flat views: `flat_index_2d as offset n1 s1 n2 s2` reads
-- `as[offset + i*s1 + j*s2]` for `i < n1`, `j < n2`; `flat_update_2d`
-- writes such a view in place. A 3x3 matrix stored row by row: its
-- transpose, its anti-diagonal blocks, and the middle column replaced.
-- ==
-- entry: views
-- input { [1, 2, 3, 4, 5, 6, 7, 8, 9] }
-- output { [[1, 4, 7], [2, 5, 8], [3, 6, 9]]
--          [[[3, 5], [6, 8]], [[2, 4], [5, 7]]]
--          [1, -1, 3, 4, -2, 6, 7, -3, 9] }
entry views (xs: [9]i32) : ([3][3]i32, [2][2][2]i32, [9]i32) =
  let t = intrinsics.flat_index_2d xs 0 3 1 3 3 :> [3][3]i32
  let blocks = intrinsics.flat_index_3d xs 2 2 (-1) 2 3 2 2 :> [2][2][2]i32
  let col = intrinsics.flat_update_2d (copy xs) 1 3 1 [[-1], [-2], [-3]]
  in (t, blocks, col)

-- A view of rows; a 4-D view of the flattened matrix (element [0][j][0][l]
-- at 4j + 2l) and a 4-D update of rows 0 and 2.
-- ==
-- entry: views_of_rows
-- input { [[1, 2], [3, 4], [5, 6], [7, 8]] }
-- output { [[[7, 8], [3, 4]], [[5, 6], [1, 2]]]
--          [[[[1, 3]], [[5, 7]]]]
--          [[0, 0], [3, 4], [0, 0], [7, 8]] }
entry views_of_rows (xss: [4][2]i32) : ([2][2][2]i32, [1][2][1][2]i32, [4][2]i32) =
  let v = intrinsics.flat_index_2d xss 3 2 (-1) 2 (-2) :> [2][2][2]i32
  let w = intrinsics.flat_index_4d (flatten xss) 0 1 0 2 4 1 0 2 2 :> [1][2][1][2]i32
  let u = intrinsics.flat_update_4d (copy xss) 0 0 2 0 0 [[[[[0, 0]]], [[[0, 0]]]]]
  in (v, w, u)

-- An operator that mixes the components of its elements (the largest value
-- and its position, ties to the smaller position) cannot be split into
-- one accumulator per component: the stream runs as a loop over the
-- elements. The function writes each value at its position modulo 2 and
-- at an index out of bounds, and itself runs a stream over its own small
-- array (a scatter inside the loop).
-- ==
-- entry: argmax
-- input { [3.0, 7.5, -1.0, 7.5, 2.0] }
-- output { [3.0, 7.5] [0i64, 1i64] [2, 2, 2] }
-- input { empty([0]f64) }
-- output { [-f64.inf, -f64.inf] [-1i64, -1i64] [2, 2, 2] }
entry argmax [n] (xs: [n]f64) : ([2]f64, [2]i64, [3]i32) =
  let best (a: f64, i: i64) (b: f64, j: i64) =
    if a < b || (a == b && j < i) then (b, j) else (a, i)
  let r =
    intrinsics.hist_stream (replicate 2 (-f64.inf, -1))
                           best
                           (-f64.inf, -1)
                           (\(a: *acc ([2](f64, i64))) (i, x) ->
                              let marks =
                                intrinsics.scatter_stream (replicate 3 0i32)
                                                          (\(m: *acc ([3]i32)) k -> put m k 2)
                                                          (iota 3)
                              let a = put a (i % 2) (x, i)
                              in put a (i + 2 + i64.i32 marks[0]) (f64.inf, i))
                           (zip (iota n) xs)
  let (v, p) = unzip r
  let marks = intrinsics.scatter_stream (replicate 3 0) (\(m: *acc ([3]i32)) k -> put m k 2) (iota 3)
  in (v, p, marks)
