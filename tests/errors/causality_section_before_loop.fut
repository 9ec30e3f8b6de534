-- The operator section is evaluated before the loop that computes the
-- length its argument must have.
-- ==
-- error: Causality check: size .* needed for type of operator section

def main (k: i64) : []i64 =
  ([0, 1] ++) <| loop acc = iota k for j < 3 do acc ++ acc
