-- A failing assert is a run-time error.
-- ==
-- input { [1, 2, 3] } output { 6 }
-- input { [1, -2, 3] } error: [Aa]ssert
-- input { empty([0]i32) } error: [Aa]ssert

def main (xs: []i32) : i32 =
  let s = reduce (+) 0 xs
  in assert (length xs > 0) (assert (all (> 0) xs) s)
