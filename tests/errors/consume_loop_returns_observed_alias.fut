-- The value returned for a consuming loop parameter may not alias the value
-- returned for another parameter: `rows[0]` is part of `rows`.
-- ==
-- error: Return value for consuming loop parameter "rows" aliases previously returned value

def main (n: i64) : ([]i64, [][]i64) =
  loop (first, rows) = (iota n, replicate n (iota n)) for i < n do
    let rows[i, 0] = first[0]
    in (rows[0], rows)
