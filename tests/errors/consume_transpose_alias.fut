-- As in Futhark's prelude, `transpose` returns an array that aliases its
-- argument.
-- ==
-- error: Using "t", which aliases variable "m", but this was consumed

def main (n: i64) : i64 =
  let m = replicate n (iota n)
  let t = transpose m
  let m[0, 0] = 5
  in t[0, 0]
