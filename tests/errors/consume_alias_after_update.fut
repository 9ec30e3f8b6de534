-- Consuming an array also consumes its aliases: `b` is `a` under another
-- name, so it may not be used after `let a[1] = 0`.
-- ==
-- error: consum

def main (n: i64) : i64 =
  let a = iota n
  let b = a
  let a[1] = 0
  in b[1] + a[1]
