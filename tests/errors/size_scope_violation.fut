-- The size of a parameter cannot be inferred to be a value bound inside
-- the function (it would be unknown to the caller): Futhark reports a
-- scope violation, naming the inner value.
-- ==
-- error: "half".*scope-violation

def main xs =
  let half = length xs / 2
  in map2 (+) (replicate half 1f64) xs
