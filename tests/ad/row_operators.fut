-- Reverse mode through reductions, scans and histograms whose operator
-- works on whole rows and is not a scalar operator mapped over them: the
-- generic reduce rule (Schenck et al., SC22, §5.1) with rows as elements (exclusive
-- scans from both ends, then the operator's vjp per row), the sequential
-- scan rule, and the generic reduce_by_index rule with rows as bucket
-- values. The expected gradients of max_row and chain were checked against
-- central finite differences; those of affine_prefixes, bucket_affine and
-- mixed_precision come from the complex-step method (a transcription to
-- Python over complex numbers, exact to rounding).

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

-- Affine maps x -> a*x + b stored as rows [a, b]; `and_then f g` is f followed
-- by g (associative, neutral [1, 0], not commutative).
def and_then (f: [2]f64) (g: [2]f64) : [2]f64 = [f[0] * g[0], f[1] * g[0] + g[1]]

-- Every prefix composition of the squared maps, by a scan of rows.
def affine_prefixes (ms: [4][2]f64) : f64 =
  let ps = scan and_then [1, 0] (map (map (\x -> x * x)) ms)
  in f64.sum (map (\p -> p[0] * p[1]) ps)

-- ==
-- entry: grad_affine_prefixes
-- input { [[1.0, 2.0], [0.5, -1.0], [1.5, 0.25], [-0.75, 3.0]] }
-- output { [[21.452178955078125, 5.916076660156249], [34.56866455078125, -3.8321533203125],
--           [12.74432373046875, 0.3702392578125], [-11.924560546875, 1.8984375]] }
entry grad_affine_prefixes (ms: [4][2]f64) = vjp affine_prefixes ms 1

-- The tangent along all ones is the sum of the gradient's entries.
-- ==
-- entry: tangent_affine_prefixes
-- input { [[1.0, 2.0], [0.5, -1.0], [1.5, 0.25], [-0.75, 3.0]] }
-- output { 61.193206787109375 }
entry tangent_affine_prefixes (ms: [4][2]f64) =
  jvp affine_prefixes ms (replicate 4 (replicate 2 1))

-- A histogram of affine maps: each bucket starts from its (shifted)
-- destination row and composes the maps sent to it in order; index 7 is
-- out of bounds and ignored.
def bucket_affine (d: [3][2]f64) (vs: [5][2]f64) : f64 =
  let h = reduce_by_index (map (map (\x -> x + 1)) d) and_then [1, 0] [0, 2, 0, 7, 2] vs
  in f64.sum (map (\r -> r[0] * r[1] + r[1]) h)

-- ==
-- entry: grad_bucket_affine
-- input { [[1.0, 2.0], [0.5, -1.0], [2.0, 0.5]]
--         [[0.5, 1.0], [2.0, 3.0], [0.25, -1.0], [1.5, 2.0], [1.0, -2.0]] }
-- output { [[-0.046875, 0.15625], [0.0, 2.5], [8.0, 14.0]]
--          [[0.75, 0.3125], [22.5, 7.0], [2.75, 1.25], [0.0, 0.0], [66.0, 7.0]] }
entry grad_bucket_affine (d: [3][2]f64) (vs: [5][2]f64) =
  vjp (\(d, vs) -> bucket_affine d vs) (d, vs) 1

-- A scan of pairs of floats of different types (one Jacobian would need
-- one type: the sequential scan rule). The inputs are exact in f32.
def mixed_precision (xs: [4]f64) : f64 =
  let (a, b) = unzip (scan (\(a1: f32, b1: f64) (a2: f32, b2: f64) -> (a1 * a2, b1 * f64.f32 a2 + b2))
                           (1f32, 0f64) (map (\x -> (f32.f64 x, x * x)) xs))
  in f64.f32 (f32.sum a) + f64.sum b

-- ==
-- entry: grad_mixed_precision
-- input { [0.5, 2.0, 0.25, 1.5] }
-- output { [8.5, 7.718749999999999, 15.0, 4.4375] }
entry grad_mixed_precision (xs: [4]f64) = vjp mixed_precision xs 1

-- Mapped operators on blocks (rows of rank 2): `map2 (map2 op)` is not a
-- scalar operator mapped over rank-1 rows, so the reduction takes the
-- generic rule and the scan the sequential one, with blocks as elements.
def blocks [k] (vs: [k][2][3]f64) : f64 =
  let r = reduce (map2 (map2 (*))) (replicate 2 (replicate 3 1)) vs
  let s = scan (map2 (map2 (+))) (replicate 2 (replicate 3 0)) (map (map (map f64.sin)) vs)
  in f64.sum (flatten r) + f64.sum (flatten (flatten s))

-- ==
-- entry: grad_blocks
-- input { [[[0.5, 1.0, 2.0], [2.0, 3.0, 1.0]], [[0.25, -1.0, 1.0], [1.5, 2.0, 3.0]],
--          [[1.0, 1.5, 0.5], [2.0, -0.5, 1.0]]] }
-- output { [[[2.882747685671118, 0.12090691760441943, -0.7484405096414272],
--            [1.7515594903585734, -3.969977489801337, 4.620906917604419]],
--           [[2.4378248434212892, 2.5806046117362795, 2.0806046117362795],
--            [4.141474403335406, -2.3322936730942843, -0.9799849932008909]],
--           [[0.6653023058681398, -0.9292627983322971, 2.8775825618903728],
--            [2.583853163452858, 6.877582561890373, 3.5403023058681393]]] }
entry grad_blocks [k] (vs: [k][2][3]f64) = vjp blocks vs 1
