-- A failing assert is a run-time error, reported with Futhark's wording:
-- `Assertion is false: ` and the condition.
-- ==
-- input { [1, 2, 3] } output { 6 }
-- input { [1, -2, 3] } error: Assertion is false: \(all \(> 0\) xs\)
-- input { empty([0]i32) } error: Assertion is false: \(length xs > 0\)

def main (xs: []i32) : i32 =
  let s = reduce (+) 0 xs
  in assert (length xs > 0) (assert (all (> 0) xs) s)
