-- jmp / jmp2 / mjp / mjp2 (prelude): jvp/vjp for an array of seeds.
-- f (x, y) = (x*y, x + 2y, sin x) at (2, 3): the Jacobian is
-- [[3, 2], [1, 2], [cos 2, 0]].
-- ==
-- entry: jacobian
-- input { 2.0 3.0 } output { [[3.0, 1.0, -0.4161468365471424], [2.0, 2.0, 0.0]] [[3.0, 2.0], [1.0, 2.0], [-0.4161468365471424, 0.0]] 6.0 8.0 0.9092974268256817 6.0 }

def f (x: f64, y: f64) = (x * y, x + 2 * y, f64.sin x)

entry jacobian (x: f64) (y: f64) =
  let cols = jmp f (x, y) [(1, 0), (0, 1)]
  let rows = mjp f (x, y) [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
  let ((a, b, c), _) = jmp2 f (x, y) [(1, 0)]
  let ((d, _, _), _) = mjp2 f (x, y) [(1, 0, 0)]
  in (map (\(u, v, w) -> [u, v, w]) cols, map (\(u, v) -> [u, v]) rows, a, b, c, d)

-- With array values: the gradient of the squared norm, one row per seed.
-- ==
-- entry: norm_rows
-- input { [1.0, -2.0, 0.5] } output { [[2.0, -4.0, 1.0], [4.0, -8.0, 2.0]] [2.0, 0.0] }

entry norm_rows (xs: []f64) =
  let g = mjp (\v -> reduce (+) 0 (map (\x -> x * x) v)) xs [1, 2]
  let t = jmp (\v -> reduce (+) 0 (map (\x -> x * x) v)) xs [map (\_ -> 0) xs with [0] = 1, map (\_ -> 0) xs]
  in (g, t)
