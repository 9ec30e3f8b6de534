-- A size parameter is not a constant: passing a `[3]` array where the
-- function's parameters say both arrays have size `n` is a type error.
-- ==
-- error: Sizes "n" and "3" do not match

def dot [n] (xs: [n]f64) (ys: [n]f64) : f64 = f64.sum (map2 (*) xs ys)

def main [n] (xs: [n]f64) : f64 = dot xs [1.0, 2.0, 3.0]
