-- The parts of a function's non-unique result all alias the result of the
-- application: updating one part in place consumes it, and the other part
-- may not be used afterwards.
-- ==
-- error: Using "right", which aliases the result of applying "halves", but this was consumed

def halves (n: i64) : ([]i64, []i64) =
  let xs = iota (2 * n)
  in (xs[:n], xs[n:])

def main (n: i64) : i64 =
  let (left, right) = halves n
  let left[0] = 1
  in right[0]
