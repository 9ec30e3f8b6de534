-- Existential sizes: results of filter, and functions returning arrays
-- of unknown size.
-- ==
-- input { [1, 3, 6, 7, 9, -3] } output { [3, 6, 9, -3] 4i64 }
-- input { [1, 2] } output { empty([0]i32) 0i64 }

def main (xs: []i32) : ([]i32, i64) =
  let ys = filter (\x -> x % 3 == 0) xs
  in (ys, length ys)

-- ==
-- entry: evens
-- input { 7i64 } output { [0i64, 2i64, 4i64, 6i64] }
-- input { 0i64 } output { empty([0]i64) }

def evens_upto (n: i64) : []i64 = filter (\i -> i % 2 == 0) (iota n)

entry evens (n: i64) : []i64 = evens_upto n
