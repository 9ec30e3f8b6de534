-- The hole in the `else` branch would need the length of the filtered
-- array, which only the `then` branch computes.
-- ==
-- error: Causality check: size .* needed for type of "\?\?\?"

def main (keep: bool) (xs: []f32) =
  if keep then filter (> 1) xs else ???
