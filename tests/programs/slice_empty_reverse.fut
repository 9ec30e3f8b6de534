-- Reversing slices of empty arrays: an empty slice may start one past
-- either end in its direction (`xs[::-1]` of an empty array starts at -1),
-- in the interpreter and in compiled code alike.
-- ==
-- input { empty([0]i32) }
-- output { empty([0]i32) empty([0]i32) 0i64 }
-- input { [1, 2, 3] }
-- output { [3, 2, 1] [3, 1] 2i64 }

def main (xs: []i32) =
  let n = length xs
  in (xs[::-1], xs[n - 1::-2], length xs[::2])
