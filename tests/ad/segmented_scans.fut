-- Reverse mode through scans of tuples that mix floats with booleans or
-- integers: the generic scan rule (Bruun & Larsen 2022, linear-function composition)
-- linearises the float components only; flags and indices are constants
-- of the linearisation. The expected gradients were checked against
-- central finite differences.

-- A segmented sum of squares (a segment starts at each true flag).
def segmented_sum (flags: [6]bool) (xs: [6]f64) : f64 =
  let (_, s) = unzip (scan (\(f1, x1) (f2, x2) -> (f1 || f2, if f2 then x2 else x1 + x2))
                           (false, 0) (zip flags (map (\x -> x * x) xs)))
  in f64.sum (map2 (*) s (map f64.i64 (iota 6)))

-- ==
-- entry: grad_segmented_sum
-- input { [true, false, false, true, false, false] [0.5, 1.5, -0.3, 2.0, 0.7, 1.1] }
-- output { [3.0, 9.0, -1.2, 48.0, 12.6, 11.0] }
entry grad_segmented_sum (flags: [6]bool) (xs: [6]f64) = vjp (segmented_sum flags) xs 1

-- A segmented product of two components, with the flags in the middle.
def segmented_products (flags: [5]bool) (xs: [5]f64) : f64 =
  let (a, _, c) = unzip3 (scan (\(a1, f1, c1) (a2, f2, c2) ->
                                  (if f2 then a2 else a1 * a2, f1 || f2, if f2 then c2 else c1 + a1 * c2))
                               (1, false, 0)
                               (zip3 (map (\x -> 1 + x) xs) flags (map (\x -> x * x) xs)))
  in f64.sum (map2 (+) a c)

-- ==
-- entry: grad_segmented_products
-- input { [true, false, true, false, false] [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [7.75, 6.0, 16.77, 7.833, 5.04] }
entry grad_segmented_products (flags: [5]bool) (xs: [5]f64) = vjp (segmented_products flags) xs 1

-- A running maximum that also carries its position.
def running_max (xs: [6]f64) : f64 =
  let (m, _) = unzip (scan (\(a, i) (b, j) -> if a > b then (a, i) else (b, j)) (-f64.inf, -1)
                           (zip xs (iota 6)))
  in f64.sum (map2 (*) m xs)

-- ==
-- entry: grad_running_max
-- input { [0.5, 1.5, -0.3, 2.0, 0.7, 1.1] }
-- output { [1.0, 2.7, 1.5, 5.8, 2.0, 2.0] }
entry grad_running_max (xs: [6]f64) = vjp running_max xs 1

-- Forward mode agrees: the tangent along all ones is the sum of
-- grad_segmented_sum's entries.
-- ==
-- entry: tangent_segmented_sum
-- input { [true, false, false, true, false, false] [0.5, 1.5, -0.3, 2.0, 0.7, 1.1] }
-- output { 82.4 }
entry tangent_segmented_sum (flags: [6]bool) (xs: [6]f64) =
  jvp (segmented_sum flags) xs (replicate 6 1)
