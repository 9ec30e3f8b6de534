-- An index out of bounds is reported with Futhark's wording (a capital
-- `Index`, the indices and the shape), after `Error:`, and the report names
-- the source location; an expectation may span the report's lines.
-- ==
-- input { [10, 20, 30] 1i64 } output { 21 }
-- input { [10, 20, 30] 3i64 } error: ^Error: Index \[3\] out of bounds for array of shape \[3\]
-- input { [10, 20, 30] -1i64 } error: Index \[-1\] out of bounds.*index_oob_futhark_wording.fut:10

def pick (xs: []i32) (i: i64) : i32 =
  xs[i]

def main (xs: []i32) (i: i64) : i32 =
  pick xs i + 1
