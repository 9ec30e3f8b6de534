-- Sizes in parameter and result types may be expressions of earlier value
-- parameters, as in Futhark: `(n: i64) (m: i64) (xs: [n*m]t) : [n][m]t`.
-- ==
-- input { 3i64 2i64 [1, 2, 3, 4, 5, 6] }
-- output { [[1, 2], [3, 4], [5, 6]] [3, 7, 11] }
-- input { 2i64 2i64 [1, 2, 3] } error: size

def rows (n: i64) (m: i64) (xs: [n*m]i32) : [n][m]i32 = unflatten xs

def row_sums (n: i64) (xs: [n][]i32) : [n]i32 = map i32.sum xs

def main (n: i64) (m: i64) (xs: [n*m]i32) : ([n][m]i32, [n]i32) =
  let r = rows n m xs
  in (r, row_sums n r)
