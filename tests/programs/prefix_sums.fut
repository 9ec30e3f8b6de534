-- Inclusive and exclusive prefix sums, and a segmented scan.
-- ==
-- input { [1, 2, 3, 4] } output { [1, 3, 6, 10] [0, 1, 3, 6] }
-- input { [5] } output { [5] [0] }
-- input { empty([0]i32) } output { empty([0]i32) empty([0]i32) }

def exclusive [n] (xs: [n]i32) : [n]i32 =
  let inc = scan (+) 0 xs
  in map (\i -> if i == 0 then 0 else inc[i - 1]) (iota n)

def main (xs: []i32) : ([]i32, []i32) = (scan (+) 0 xs, exclusive xs)

-- ==
-- entry: segscan
-- input { [1, 2, 3, 4, 5, 6] [true, false, false, true, false, true] } output { [1, 3, 6, 4, 9, 6] }
-- input { [1, 1, 1] [false, false, false] } output { [1, 2, 3] }

entry segscan [n] (xs: [n]i32) (flags: [n]bool) : [n]i32 =
  let op (f1: bool, v1: i32) (f2: bool, v2: i32) : (bool, i32) =
    (f1 || f2, if f2 then v2 else v1 + v2)
  let (_, res) = unzip (scan op (false, 0) (zip flags xs))
  in res
