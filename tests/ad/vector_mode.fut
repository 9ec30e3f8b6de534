-- Vector-mode forward AD: a `map` of `jvp` whose primal point is the same
-- for every seed (the shape of `jmp`, and of a Jacobian built one column
-- per seed) is differentiated for all seeds at once: the primal once,
-- every tangent with the seeds as an innermost dimension.

-- Scalars: f (x, y) = (x*y, exp x + y^2); the seeds are the unit vectors
-- and (1, 1); also the primal result once per seed.
-- ==
-- entry: scalars
-- input { 0.5 2.0 }
-- output { [2.0, 0.5, 2.5] [1.6487212707001282, 4.0, 5.648721270700128] [1.0, 1.0, 1.0] }

def f (x: f64, y: f64) = (x * y, f64.exp x + y * y)

entry scalars (x: f64) (y: f64) =
  let seeds = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
  let (ps, ts) = unzip (map (\s -> let (p, t) = jvp2 f (x, y) s in (p, t)) seeds)
  in (map (.0) ts, map (.1) ts, map (.0) ps)

-- Arrays through maps, reductions, scans, loops, branches and in-place
-- updates; the seeds are built from the map's element (one column of the
-- Jacobian each).
-- ==
-- entry: jacobian
-- input { [1.0, 2.0, -3.0] }
-- output { [[67.6167236527817, 74.74379414605454, 13.854080677028845], [19.512361665773724, 182.4162315566655, 13.854080677028845], [-10.097651817694757, -65.46941473144908, 13.854080677028845]] }

def g (x: [3]f64) : [3]f64 =
  let s = reduce (+) 0 (map (\a -> a * a) x)
  let y = map (\a -> f64.sin a * s) x
  let z = loop acc = copy y for i < 3 do acc with [i] = acc[i] * x[i] + 1
  let w = scan (+) 0 x
  let m = reduce f64.max f64.lowest x
  in map2 (\a b -> if a > 0 then a * b * m else a - b) z w

entry jacobian (x: [3]f64) =
  map (\i -> jvp g x (map (\j -> if i == j then 1.0 else 0.0) (iota 3))) (iota 3)

-- Array operations on tangents: transpose, flatten, reverse, indexing,
-- replicate, concatenation, rotation; the seeds are an array of arrays.
-- ==
-- entry: shapes
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]]] }
-- output { [[1.0, 0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 2.0, 0.0, 0.0, 0.0]] [[0.0, 0.0], [0.0, 2.0]] [0.0, 2.0] [[0.0, 1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0, 0.0, 1.0]] }

def h (m: [2][3]f64) =
  let t = transpose m
  in (flatten t, reverse t[1], m[0, 1], rotate 1 (m[1] ++ m[0]))

entry shapes (m: [2][3]f64) (dms: [2][2][3]f64) =
  let rs = jmp h m dms
  in (map (.0) rs, map (.1) rs, map (.2) rs, map (.3) rs)

-- A histogram and a scatter of values that depend on x; the first seed is
-- zero, the second is the same array for every seed.
-- ==
-- entry: hist_scatter
-- input { [1.0, 2.0, 3.0, 4.0] }
-- output { [[0.0, 0.0, 0.0], [30.0, 60.0, 0.0]] [[0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 6.0, 0.0]] }

def k (x: [4]f64) =
  let sq = map (\a -> a * a) x
  let hs = hist (+) 0 3 [0, 1, 0, 1] (map2 (*) sq x)
  let sc = scatter (replicate 4 0) [2, 0] [sq[2], sq[0]]
  in (hs, sc)

entry hist_scatter (x: [4]f64) =
  let seed = map (\_ -> 1.0) x
  let rs = map (\c -> jvp k x (map (\s -> s * c) seed)) [0.0, 1.0]
  in (map (.0) rs, map (.1) rs)
