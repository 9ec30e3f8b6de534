-- A lambda may not consume a variable bound outside it.
-- ==
-- error: consum

def main (n: i64) : [][]i64 =
  let acc = replicate n 0i64
  in map (\i -> acc with [i] = i) (iota n)
