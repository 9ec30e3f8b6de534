-- Two consuming loop parameters may not get the same array as their new
-- values: the next iteration would update it twice.
-- ==
-- error: Return value for loop parameter "b" aliases other consumed loop parameter

def main (n: i64) : ([]i64, []i64) =
  loop (a, b) = (iota n, iota n) for i < n do
    let a[i] = i
    let b[i] = i
    in (a, a)
