-- `scatter` consumes its destination array (its parameter type is unique).
-- ==
-- error: consum

def main (n: i64) : []i64 =
  let dest = replicate n 0i64
  let out = scatter dest [0, 1] [5, 6]
  in map2 (+) dest out
