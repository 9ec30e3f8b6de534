-- The same array may not be consumed twice, even in one tuple.
-- ==
-- error: consum

def main (n: i64) =
  let a = iota n
  in (a with [0] = 1, a with [1] = 2)
