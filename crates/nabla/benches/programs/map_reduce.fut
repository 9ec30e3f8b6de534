-- Benchmark (a) of the spine issue: reduce (+) 0 (map f xs).
def f (x: f64): f64 = x * x + 1.0

entry main [n] (xs: [n]f64): f64 = reduce (+) 0 (map f xs)
