-- Size parameters used as i64 values inside functions.
-- ==
-- input { [1.0, 2.0, 3.0] } output { [0.0, 2.0, 6.0] 3i64 6i64 [3.0, 2.0, 1.0] }
-- input { [4.5] } output { [0.0] 1i64 2i64 [4.5] }

def tab [n] (xs: [n]f64) : [n]f64 = tabulate n (\i -> xs[i] * f64.i64 i)

def len [n] 't (_: [n]t) : i64 = n

def rev [n] (xs: [n]f64) : [n]f64 = tabulate n (\i -> xs[n - 1 - i])

def main [n] (xs: [n]f64) : ([n]f64, i64, i64, [n]f64) =
  (tab xs, len xs, n * 2, rev xs)
