-- The dot product of two vectors, and the sum of squares of their
-- element-wise differences.
--
-- Run it with:  nabla run examples/dotprod.fut < examples/dotprod.in

def dot [n] (xs: [n]f64) (ys: [n]f64): f64 =
  reduce (+) 0 (map2 (*) xs ys)

entry main [n] (xs: [n]f64) (ys: [n]f64): (f64, f64) =
  let d = map2 (-) xs ys
  in (dot xs ys, dot d d)
