-- A size bound by `let [n]` must be the size of an array value in the
-- pattern, not only of a function's parameter or result.
-- ==
-- error: Cannot bind \[n\] as it is never used as the size of a concrete

def main (xs: []f32) =
  let [n] (total: [n]f32 -> f32) = f32.sum
  in total xs
