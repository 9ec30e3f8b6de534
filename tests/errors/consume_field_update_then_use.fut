-- After `p with 0[i] = v` the tuple `p` is consumed, also its other
-- component: only the result may be used.
-- ==
-- error: Using variable "p", but this was consumed

def main (n: i64) : i64 =
  let p = (iota n, iota n)
  let q = p with 0[0] = 5
  in q.0[0] + p.1[0]
