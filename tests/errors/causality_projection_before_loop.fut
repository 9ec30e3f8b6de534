-- A projection section of a tuple whose array the loop makes.
-- ==
-- error: Causality check: .* projection section

def main (n: i64) : []f64 =
  (.1) <| loop (c, ys) = (0i32, replicate n 1f64) for i < 4 do (c + 1, ys ++ [2])
