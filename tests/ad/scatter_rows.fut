-- Reverse mode through `scatter` of rows (values that are arrays): each
-- written row gets the adjoint of the row it wrote (only the last write to
-- a row counts; out-of-bounds writes get zeros), and the destination's
-- adjoint is the result's with the written rows zeroed.
--
-- f xs vs = Σ_k k · Σ r[k], r = scatter (xs²) [2, 0, 2, 9] (sin vs):
-- rows 1 and 3 of xs survive (d/dxs = 2k·x there); r[0] = sin vs[1] has
-- weight 0, r[2] = sin vs[2] (the last write) weight 2, vs[0] is
-- overwritten and vs[3] is out of bounds.
-- ==
-- entry: grad
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5]]
--         [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [1.0, 1.0, 1.0]] }
-- output { [[0.0, 0.0, 0.0], [8.0, 10.0, 12.0], [0.0, 0.0, 0.0], [9.0, 15.0, 21.0]]
--          [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
--           [1.529684374568977, 1.3934134186943308, 1.2432199365413288],
--           [0.0, 0.0, 0.0]] }

def f (xs: [4][3]f64) (vs: [4][3]f64) =
  let d = map (map (\x -> x * x)) xs
  let r = scatter d [2, 0, 2, 9] (map (map f64.sin) vs)
  in reduce (+) 0 (map2 (\row k -> reduce (+) 0 (map (\x -> x * f64.i64 k) row)) r (iota 4))

entry grad (xs: [4][3]f64) (vs: [4][3]f64) = vjp (\(a, b) -> f a b) (xs, vs) 1.0

-- The same derivative by forward mode, along one direction: the sum of
-- the gradient's entries (all ones as the tangent).
-- ==
-- entry: tangent
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5]]
--         [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [1.0, 1.0, 1.0]] }
-- output { 79.16631772980463 }

entry tangent (xs: [4][3]f64) (vs: [4][3]f64) =
  jvp (\(a, b) -> f a b) (xs, vs) (map (map (\_ -> 1.0)) xs, map (map (\_ -> 1.0)) vs)
