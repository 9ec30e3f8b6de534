-- A function whose result size depends on its argument cannot be mapped:
-- the rows of the result would have different sizes.
-- ==
-- error: Cannot apply

def row (k: i64) : [k]f64 = replicate k 1.0

def main (n: i64) = map row (iota n)
