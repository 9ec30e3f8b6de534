-- A recursive function with a unique parameter and a unique result: the
-- result of its call of itself is fresh, so it may be updated in place.
-- ==
-- input { [0, 0, 0, 0] 3i64 } output { [1, 2, 3, 0] }

def fill (xs: *[]i32) (n: i64) : *[]i32 =
  if n == 0 then xs
  else let ys = fill xs (n - 1)
       in ys with [n - 1] = i32.i64 n

def main (xs: *[]i32) (n: i64) : []i32 = fill xs n
