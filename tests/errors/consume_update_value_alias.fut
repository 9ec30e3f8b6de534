-- In `a with [i] = v`, the value written may not alias the array being
-- updated: a row of `m` is still part of `m`. (Futhark requires
-- `copy m[1]` here.)
-- ==
-- error: Source array for in-place update might alias the update value

def main (n: i64) : [][]i64 =
  let m = replicate n (iota n)
  let r = m[1]
  let m[0] = r
  in m
