-- A function value passed beside a consumed argument may capture other
-- arrays (and a copy of the consumed one).
-- ==
-- input { [1, 2, 3] } output { [3, 2, 3] }

def set_first (xs: *[]i32) (f: i64 -> i32) : []i32 = xs with [0] = f 1

def main (xs: *[]i32) : []i32 =
  let ys = copy xs
  in set_first xs (\i -> ys[i] + 1)
