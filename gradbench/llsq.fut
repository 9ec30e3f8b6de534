-- GradBench `llsq` (from cmpad's `llsq_obj`): a linear least-squares
-- objective and its gradient by reverse-mode AD.
--
-- t_i = -1 + 2 i / (n - 1), s_i = sign t_i,
-- y(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2.

def llsq_objective [m] (n: i64) (x: [m]f64) : f64 =
  let residual (i: i64) : f64 =
    let t = -1.0 + 2.0 * f64.i64 i / f64.i64 (n - 1)
    let s = f64.sgn t
    -- Horner's rule for sum_j x_j t^j.
    let poly = foldr (\xj acc -> xj + t * acc) 0.0 x
    in s - poly
  in 0.5 * f64.sum (map (\i -> let r = residual i in r * r) (iota n))

entry primal [m] (x: [m]f64) (n: i64) : f64 = llsq_objective n x

entry gradient [m] (x: [m]f64) (n: i64) : [m]f64 = vjp (llsq_objective n) x 1.0
