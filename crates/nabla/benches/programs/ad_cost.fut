-- The cost of reverse mode relative to the primal (the cheap-gradient
-- principle), one function per construct: each `pK` is a primal, `gK` its
-- gradient by `vjp`. Used by benches/ad_cost.rs.

def f0 (xs: []f64) = reduce (+) 0 (map (\x -> x * x) xs)
def f1 (xs: []f64) = reduce (*) 1 (map (\x -> 1 + 1e-7 * x) xs)
def f2 (xs: []f64) = reduce f64.max (-f64.inf) (map f64.sin xs)
def f3 (xs: []f64) = reduce (\a b -> a + b + a * b) 0 (map (\x -> 1e-7 * x) xs)
def f4 (xs: []f64) = reduce (+) 0 (scan (+) 0 (map f64.sin xs))
def f5 (xs: []f64) = reduce (+) 0 (scan (*) 1 (map (\x -> 1 + 1e-7 * x) xs))
def f6 (xs: []f64) =
  let (ms, cs) = unzip (scan (\(m1, c1) (m2, c2) -> (m1 * m2, c1 * m2 + c2)) (1, 0)
                             (zip (map (\x -> 0.5 * f64.sin x) xs) xs))
  in reduce (+) 0 (map2 (+) ms cs)
def buckets (n: i64) = map (\i -> (i * 7919) % 100) (iota n)
def f7 [n] (xs: [n]f64) = reduce (+) 0 (map f64.sin (hist (+) 0 100 (buckets n) xs))
def f8 [n] (xs: [n]f64) = reduce (+) 0 (hist f64.max (-f64.inf) 100 (buckets n) (map f64.cos xs))
def f9 [n] (xs: [n]f64) = reduce (+) 0 (hist (\a b -> a + b + a * b) 0 100 (buckets n) (map (\x -> 1e-7 * x) xs))
def f10 (xs: []f64) =
  let n = length xs
  let ys = scatter (copy xs) (map (\i -> (i * 13) % n) (iota (n / 2))) (map f64.sin (take (n / 2) xs))
  in reduce (+) 0 (map2 (*) ys xs)
def f11 (xs: []f64) =
  let n = length xs
  in reduce (+) 0 (map (\i -> xs[i] * xs[(i + 1) % n]) (iota n))
def f12 (xs: []f64) =
  loop acc = 0.5 for x in xs do f64.sin (acc * x) + acc * 0.9
-- Affine maps as rows [a, b], composed: an operator on whole rows.
def and_then (f: [2]f64) (g: [2]f64) : [2]f64 = [f[0] * g[0], f[1] * g[0] + g[1]]
def rows (xs: []f64) = map (\x -> [0.5 * f64.sin x, x]) xs
def f13 (xs: []f64) = reduce (+) 0 (map (\p -> p[0] + p[1]) (scan and_then [1, 0] (rows xs)))
def f14 [n] (xs: [n]f64) =
  reduce (+) 0 (map (\p -> p[0] + p[1])
                    (hist and_then [1, 0] 100 (buckets n) (rows xs)))

entry primal (k: i32) (xs: []f64) : f64 =
  match k
  case 0 -> f0 xs case 1 -> f1 xs case 2 -> f2 xs case 3 -> f3 xs case 4 -> f4 xs
  case 5 -> f5 xs case 6 -> f6 xs case 7 -> f7 xs case 8 -> f8 xs case 9 -> f9 xs
  case 10 -> f10 xs case 11 -> f11 xs case 12 -> f12 xs case 13 -> f13 xs case _ -> f14 xs

entry grad (k: i32) (xs: []f64) : []f64 =
  match k
  case 0 -> vjp f0 xs 1 case 1 -> vjp f1 xs 1 case 2 -> vjp f2 xs 1 case 3 -> vjp f3 xs 1
  case 4 -> vjp f4 xs 1 case 5 -> vjp f5 xs 1 case 6 -> vjp f6 xs 1 case 7 -> vjp f7 xs 1
  case 8 -> vjp f8 xs 1 case 9 -> vjp f9 xs 1 case 10 -> vjp f10 xs 1 case 11 -> vjp f11 xs 1
  case 12 -> vjp f12 xs 1 case 13 -> vjp f13 xs 1 case _ -> vjp f14 xs 1
