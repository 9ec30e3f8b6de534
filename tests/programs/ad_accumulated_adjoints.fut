-- Reverse-mode derivatives whose adjoints many rows add into at once: a
-- map reads a free array at computed indices (a gather), so its vjp
-- updates the adjoint of that array through an accumulator, from every
-- row. Multicore C runs such a map's rows on several threads, each
-- adding into a private copy of the adjoint, and adds the copies up
-- afterwards (nabla-opt's lower.rs). Expected values by hand.

def gather_sum_squares (xs: []f64) (is: []i64) : f64 =
  f64.sum (map (\i -> xs[i] * xs[i]) is)

-- d/dxs[k] is 2 xs[k] times the number of picks of k.
-- ==
-- entry: gather_grad
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [0i64, 1i64, 4i64, 1i64, 3i64, 0i64, 2i64, 4i64] }
-- output { [4.0, 8.0, 6.0, 8.0, 20.0] }
-- input { [1.0, -2.0] empty([0]i64) }
-- output { [0.0, 0.0] }
entry gather_grad (xs: []f64) (is: []i64) : []f64 =
  vjp (\ys -> gather_sum_squares ys is) xs 1.0

def picked_rows [n][m] (a: [n][m]f64) (b: [m][3]f64) (is: []i64) : f64 =
  f64.sum (map (\i -> f64.sum a[i] + 0.0 * b[0, 0]) is)

-- Whole rows picked by index and summed: the adjoint of the matrix gets
-- a row of ones per pick; the second input's adjoint is zero except
-- where `0.0 * b[0, 0]` reads it.
-- ==
-- entry: rows_grad
-- input { [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [2i64, 0i64, 2i64, 1i64, 2i64] }
-- output { [[1.0, 1.0], [1.0, 1.0], [3.0, 3.0]] [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]] }
entry rows_grad [n][m] (a: [n][m]f64) (is: []i64) : ([n][m]f64, [m][3]f64) =
  let b = replicate m (replicate 3 1.0)
  in vjp (\(a, b) -> picked_rows a b is) (a, b) 1.0
