-- A loop parameter that the body updates in place consumes the loop's
-- initial value, which may then not be used after the loop.
-- ==
-- error: consum

def main (n: i64) : i64 =
  let xs = iota n
  let ys = loop acc = xs for i < n do acc with [i] = acc[i] * 2
  in xs[0] + ys[0]
