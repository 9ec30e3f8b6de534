-- Run-time errors show the values involved, in Futhark's words: an invalid
-- range with its bounds, iota of a negative size as the range 0..1..<n, a
-- coercion with the value's shape and the type's, a negative exponent.
-- ==
-- entry: upto
-- input { 7 3 } error: Range 7\.\.\.3 is invalid
-- input { 2 9 } output { [2, 3, 4, 5, 6, 7, 8, 9] }

-- ==
-- entry: stepped
-- input { 1 1 6 } error: Range 1\.\.1\.\.\.6 is invalid
-- input { 10 7 1 } output { [10, 7, 4, 1] }

-- ==
-- entry: down
-- input { 2i64 5i64 } error: Range 2\.\.>5 is invalid

-- ==
-- entry: indices_of
-- input { -3i64 } error: Range 0\.\.1\.\.<-3 is invalid

-- ==
-- entry: as_matrix
-- input { [1, 2, 3, 4, 5, 6] 4i64 } error: value of shape \[6\] cannot match shape of type "\[8\]i32"
-- input { [1, 2, 3, 4, 5, 6] 3i64 } output { [[1, 2, 3], [4, 5, 6]] }

-- ==
-- entry: power
-- input { 3 -2 } error: Negative exponent -2
-- input { 3 4 } output { 81 }

entry upto (a: i32) (b: i32) = a...b

entry stepped (a: i32) (b: i32) (c: i32) = a..b...c

entry down (a: i64) (b: i64) = a..>b

entry indices_of (n: i64) = iota n

entry as_matrix (xs: []i32) (cols: i64) : [][]i32 =
  unflatten (xs :> [2 * cols]i32)

entry power (x: i32) (e: i32) = x ** e
