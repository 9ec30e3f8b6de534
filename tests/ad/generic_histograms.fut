-- Reverse mode through reduce_by_index with operators that are neither +
-- nor min/max (the generic rule), on enough values for the chunked form
-- that `nabla multicore` uses (issue 31: chunks of 4096 values, from two
-- chunks and up to 128 buckets on), and on fewer values or more buckets,
-- where every target uses the sequential form. The values, indices
-- (some out of bounds) and directions are made from `n` inside each
-- entry, and each entry returns whether its gradient agrees with a
-- closed form or with forward mode, to a relative tolerance.

def close (a: f64) (b: f64) : bool =
  f64.abs (a - b) <= 1e-9 * (1 + f64.max (f64.abs a) (f64.abs b))

def all_close [k] (xs: [k]f64) (ys: [k]f64) : bool =
  reduce (&&) true (map2 close xs ys)

-- Bucket i of k values into b buckets; every 97th value is out of bounds
-- (below or above).
def bucket (b: i64) (i: i64) : i64 =
  if i % 97 == 5 then -1 else if i % 97 == 50 then b else (i * 7919) % b

-- log (exp a + exp b), associative and commutative, neutral -inf.
def log_add_exp (a: f64) (b: f64) : f64 =
  let m = f64.max a b
  in if m == -f64.inf then m else m + f64.log (f64.exp (a - m) + f64.exp (b - m))

-- The weighted sum of the log-sum-exp of each bucket, the destination
-- included.
def log_sum_exp_buckets [b] [k] (weights: [b]f64) (is: [k]i64) (dest: [b]f64, vs: [k]f64) : f64 =
  let h = reduce_by_index (copy dest) log_add_exp (-f64.inf) is vs
  in f64.sum (map2 (*) weights h)

-- The gradient by vjp against its closed form: value i gets
-- weights[b] * exp (vs[i] - h[b]) for its bucket b (zero out of bounds),
-- the destination weights[b] * exp (dest[b] - h[b]).
entry log_sum_exp_gradient (n: i64) (b: i64) : bool =
  let is = tabulate n (bucket b)
  let vs = tabulate n (\i -> f64.sin (f64.i64 i * 0.37))
  let dest = tabulate b (\j -> 0.1 * f64.i64 j)
  let weights = tabulate b (\j -> 1 + f64.cos (f64.i64 j))
  let h = reduce_by_index (copy dest) log_add_exp (-f64.inf) is vs
  let (dest_adj, vs_adj) = vjp (log_sum_exp_buckets weights is) (dest, vs) 1
  let expected_vs = map2 (\i v -> if i >= 0 && i < b then weights[i] * f64.exp (v - h[i]) else 0) is vs
  let expected_dest = map3 (\w d x -> w * f64.exp (d - x)) weights dest h
  in all_close vs_adj expected_vs && all_close dest_adj expected_dest

-- ==
-- entry: log_sum_exp_gradient
-- input { 20000i64 37i64 }
-- output { true }
-- input { 9000i64 127i64 }
-- output { true }
-- input { 20000i64 300i64 }
-- output { true }
-- input { 7i64 3i64 }
-- output { true }
-- input { 0i64 3i64 }
-- output { true }

-- Affine maps x -> a*x + c composed in order (associative, not
-- commutative): a pair per value, a pair per bucket.
def and_then (a1: f64, c1: f64) (a2: f64, c2: f64) : (f64, f64) =
  (a1 * a2, c1 * a2 + c2)

def compositions [b] [k] (is: [k]i64) (dest: [b]f64, xs: [k]f64) : f64 =
  let maps = map (\x -> (0.5 + 0.4 * f64.sin x, f64.cos x)) xs
  let (as, cs) = unzip (reduce_by_index (zip (copy dest) (map (* 2) dest)) and_then (1, 0) is maps)
  in f64.sum (map2 (\a c -> a * 3 + c * c) as cs)

-- vjp and jvp agree: <vjp f x 1, dx> = jvp f x dx.
entry compositions_duality (n: i64) (b: i64) : bool =
  let is = tabulate n (bucket b)
  let xs = tabulate n (\i -> f64.i64 i * 0.61)
  let dest = tabulate b (\j -> 0.9 + 0.01 * f64.i64 j)
  let dxs = tabulate n (\i -> f64.cos (f64.i64 i * 1.3))
  let ddest = tabulate b (\j -> f64.sin (f64.i64 j + 0.5))
  let (dest_adj, xs_adj) = vjp (compositions is) (dest, xs) 1
  let forward = jvp (compositions is) (dest, xs) (ddest, dxs)
  let reverse = f64.sum (map2 (*) dest_adj ddest) + f64.sum (map2 (*) xs_adj dxs)
  in close forward reverse

-- ==
-- entry: compositions_duality
-- input { 20000i64 37i64 }
-- output { true }
-- input { 12000i64 5i64 }
-- output { true }
-- input { 20000i64 300i64 }
-- output { true }
-- input { 7i64 3i64 }
-- output { true }

-- Complex numbers as rows [re, im] multiplied (a histogram of rows whose
-- operator is not a scalar operator mapped over them), near the unit
-- circle.
def complex_mul (x: [2]f64) (y: [2]f64) : [2]f64 =
  [x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]]

def complex_products [k] (b: i64) (is: [k]i64) (ts: [k]f64) : f64 =
  let zs = map (\t -> [(1 + 1e-4 * f64.sin (3 * t)) * f64.cos t, f64.sin t]) ts
  let h = reduce_by_index (replicate b [1, 0]) complex_mul [1, 0] is zs
  in f64.sum (map (\z -> z[0] + 2 * z[1]) h)

entry complex_products_duality (n: i64) (b: i64) : bool =
  let is = tabulate n (bucket b)
  let ts = tabulate n (\i -> f64.i64 i * 0.013)
  let dts = tabulate n (\i -> f64.cos (f64.i64 i * 0.7))
  let adj = vjp (complex_products b is) ts 1
  let forward = jvp (complex_products b is) ts dts
  in close forward (f64.sum (map2 (*) adj dts))

-- ==
-- entry: complex_products_duality
-- input { 10000i64 11i64 }
-- output { true }
-- input { 7i64 3i64 }
-- output { true }
