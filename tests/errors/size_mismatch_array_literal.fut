-- The rows of an array literal must have the same size.
-- ==
-- error: Sizes "n" and "m" do not match

def main [n][m] (xs: [n]f64) (ys: [m]f64) : [][]f64 = [xs, ys]
