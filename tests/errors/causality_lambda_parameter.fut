-- The lambda given as the argument is made before the body of the other
-- lambda filters the array its parameter must have the length of.
-- ==
-- error: Causality check: size .* needed for type of

def main (xs: []i64) =
  (\g -> g (filter (< 10) xs)) (\(_: []i64) -> 1i32)
