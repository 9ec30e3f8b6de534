-- Reverse mode through reductions whose operator works on whole rows and
-- is not a scalar operator mapped over them: the generic reduce rule (seed
-- 003 §5.1) with rows as elements (exclusive scans from both ends, then
-- the operator's vjp per row). The expected gradients were checked
-- against central finite differences.

-- The row with the largest first element (the first such row on ties).
def max_row (xs: [4][3]f64) : f64 =
  let r = reduce (\a b -> if a[0] >= b[0] then a else b) (replicate 3 (-1000))
                 (map (map (\x -> x * x + 1)) xs)
  in r[1] * r[2] + r[0]

-- ==
-- entry: grad_max_row
-- input { [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [3.0, 1.0, -2.0], [0.1, 0.2, 0.3]] }
-- output { [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 10.0, -8.0], [0.0, 0.0, 0.0]] }
entry grad_max_row (xs: [4][3]f64) = vjp max_row xs 1

-- The product of 2x2 matrices stored as rows [a, b, c, d] (associative,
-- not commutative).
def chain (ms: [3][4]f64) : f64 =
  let p = reduce (\x y -> [x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3],
                            x[2] * y[0] + x[3] * y[2], x[2] * y[1] + x[3] * y[3]])
                 [1, 0, 0, 1] ms
  in p[0] + 2 * p[1] + 3 * p[2] + 4 * p[3]

-- ==
-- entry: grad_chain
-- input { [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.7]] }
-- output { [[3.1, 9.82, 9.7, 25.04], [44.0, -10.2, 62.0, -14.0], [33.0, 47.0, -5.8, -8.0]] }
entry grad_chain (ms: [3][4]f64) = vjp chain ms 1

-- Forward mode agrees: the tangent along all ones is the sum of
-- grad_chain's entries.
-- ==
-- entry: tangent_chain
-- input { [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.7]] }
-- output { 195.66 }
entry tangent_chain (ms: [3][4]f64) = jvp chain ms (replicate 3 (replicate 4 1))
