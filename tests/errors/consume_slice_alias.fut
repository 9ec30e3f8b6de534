-- A slice aliases the array it is taken from: after the array is passed
-- for a unique parameter, the slice may not be used.
-- ==
-- error: consum

def set_first (xs: *[]f64) : *[]f64 = xs with [0] = 1.0

def main (n: i64) : f64 =
  let xs = map f64.i64 (iota n)
  let tail_part = xs[1:]
  let ys = set_first xs
  in ys[0] + tail_part[0]
