-- Reverse mode through reduce_by_index (hist) with operators on rows and
-- on tuples (Bruun & Larsen 2022): a histogram of rows with a mapped scalar operator
-- is differentiated as a map of scalar histograms over the columns (the
-- `+`, `max` and generic rules per column); a tuple operator that works on
-- each component apart becomes one histogram per component; any other
-- tuple operator takes the generic rule on all components at once. The
-- expected gradients were checked against central finite differences.

-- Rows, `map2 (+)`; index 7 is out of bounds and its row gets zeros.
def rows_plus (vs: [5][3]f64) : f64 =
  let h = hist (map2 (+)) (replicate 3 0) 2 [1, 0, 1, 7, 0] vs
  in f64.sum (map2 (\r k -> f64.sum (map (\x -> x * x * f64.i64 (k + 1)) r)) h (iota 2))

-- ==
-- entry: grad_rows_plus
-- input { [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [3.0, 1.0, -2.0], [0.1, 0.2, 0.3], [2.0, 0.5, 1.0]] }
-- output { [[16.0, 12.0, 4.0], [5.0, -1.0, 6.0], [16.0, 12.0, 4.0], [0.0, 0.0, 0.0], [5.0, -1.0, 6.0]] }
entry grad_rows_plus (vs: [5][3]f64) = vjp rows_plus vs 1

-- Rows, `map2 f64.max`, into a destination that is differentiated too.
def rows_max (d: [2][3]f64) (vs: [5][3]f64) : f64 =
  let h = reduce_by_index (copy d) (map2 f64.max) (replicate 3 (-f64.inf)) [1, 0, 1, 1, 0] vs
  in f64.sum (map2 (\r k -> f64.sum (map (\x -> x * f64.i64 (k + 2)) r)) h (iota 2))

-- ==
-- entry: grad_rows_max
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
--         [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [3.0, 1.0, -2.0], [0.1, 0.2, 0.3], [2.0, 0.5, 1.0]] }
-- output { [[0.0, 2.0, 2.0], [3.0, 3.0, 3.0]]
--          [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]] }
entry grad_rows_max (d: [2][3]f64) (vs: [5][3]f64) = vjp (\(d, vs) -> rows_max d vs) (d, vs) 1

-- Rows, a mapped operator without a special rule (`a + b + ab` is
-- associative and commutative).
def rows_generic (vs: [5][3]f64) : f64 =
  let h = reduce_by_index (replicate 2 (replicate 3 0)) (map2 (\a b -> a + b + a * b))
                          (replicate 3 0) [1, 0, 1, 1, 0] vs
  in f64.sum (map f64.sum h)

-- ==
-- entry: grad_rows_generic
-- input { [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [3.0, 1.0, -2.0], [0.1, 0.2, 0.3], [2.0, 0.5, 1.0]] }
-- output { [[4.4, 2.4, -1.3], [3.0, 1.5, 2.0], [2.2, 3.6, 5.2], [8.0, 6.0, -4.0], [1.5, 0.0, 3.0]] }
entry grad_rows_generic (vs: [5][3]f64) = vjp rows_generic vs 1

-- A sum and a product per bucket in one histogram of pairs.
def sum_and_product (xs: [5]f64) : f64 =
  let (s, p) = unzip (reduce_by_index (replicate 2 (0, 1)) (\(a, b) (c, d) -> (a + c, b * d)) (0, 1)
                                      [0, 1, 1, 0, 1] (map (\x -> (x * x, x + 2)) xs))
  in s[0] * p[1] + s[1] * p[0]

-- ==
-- entry: grad_sum_and_product
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [27.385, 49.5075, 34.1625, 71.335, 39.2875] }
entry grad_sum_and_product (xs: [5]f64) = vjp sum_and_product xs 1

-- The largest square per bucket and its position (ties to the smaller
-- position): the position is an integer and gets no adjoint.
def argmax (xs: [5]f64) : f64 =
  let (m, i) = unzip (reduce_by_index (replicate 2 (-f64.inf, -1))
                                      (\(a, i) (b, j) -> if a > b || (a == b && i < j) then (a, i) else (b, j))
                                      (-f64.inf, -1)
                                      [0, 1, 1, 0, 1] (zip (map (\x -> x * x) xs) (iota 5)))
  in m[0] * f64.i64 i[1] + m[1]

-- ==
-- entry: grad_argmax
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [0.0, 3.0, 0.0, 4.0, 0.0] }
entry grad_argmax (xs: [5]f64) = vjp argmax xs 1

-- Complex multiplication, component by component: neither component of
-- the product depends on one component of the factors alone.
def complex_products (d: [2](f64, f64)) (xs: [5]f64) : f64 =
  let vs = map (\x -> (f64.cos x, x * 0.5)) xs
  let h = reduce_by_index (copy d) (\(a, b) (c, e) -> (a * c - b * e, a * e + b * c)) (1, 0)
                          [1, 0, 1, 1, 0] vs
  in f64.sum (map (\(re, im) -> re * im + re) h)

-- ==
-- entry: grad_complex_products
-- input { [0.5, 1.0] [0.2, -0.3] [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [-0.39602809455776067, -1.1153534780654466]
--          [-0.7058289640682328, -1.5350683361107245]
--          [-1.0218347402600436, -0.5598342245124589, -1.188796103155356,
--           -1.6078262314111695, -0.08285846910145986] }
entry grad_complex_products (re: [2]f64) (im: [2]f64) (xs: [5]f64) =
  vjp (\(re, im, xs) -> complex_products (zip re im) xs) (re, im, xs) 1

-- Forward mode agrees: the tangent along all ones is the sum of the
-- gradient's entries.
-- ==
-- entry: tangent_complex_products
-- input { [0.5, 1.0] [0.2, -0.3] [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { -8.213428641242652 }
entry tangent_complex_products (re: [2]f64) (im: [2]f64) (xs: [5]f64) =
  jvp (\(re, im, xs) -> complex_products (zip re im) xs) (re, im, xs) (replicate 2 1, replicate 2 1, replicate 5 1)
