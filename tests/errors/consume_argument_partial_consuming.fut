-- A partial application that consumes an array may not be passed to a
-- higher-order function, which may apply it many times.
-- ==
-- error: Argument of functional type contains consumption, which is not allowed: evaluating it consumes variable "buf"

def put (dst: *[]i64) (i: i64) : *[]i64 = dst with [i] = i

def main (buf: *[]i64) (is: []i64) : [][]i64 =
  map (put buf) is
