-- GradBench `ode` (from cmpad's `an_ode`): s classical Runge-Kutta steps
-- for y' = F(y), F(y)_0 = x_0, F(y)_i = x_i * y_{i-1}, from y(0) = 0 to
-- t = 2; the gradient of the last component by reverse-mode AD.

def rhs [n] (x: [n]f64) (y: [n]f64) : [n]f64 =
  map (\i -> if i == 0 then x[0] else x[i] * y[i - 1]) (iota n)

def runge_kutta [n] (s: i64) (x: [n]f64) : [n]f64 =
  let h = 2.0 / f64.i64 s
  let axpy (a: f64) (u: [n]f64) (v: [n]f64) = map2 (\ui vi -> ui + a * vi) u v
  in loop y = replicate n 0.0 for _i < s do
       let k1 = rhs x y
       let k2 = rhs x (axpy (h / 2.0) y k1)
       let k3 = rhs x (axpy (h / 2.0) y k2)
       let k4 = rhs x (axpy h y k3)
       in map5 (\yi a b c d -> yi + h * (a + 2.0 * b + 2.0 * c + d) / 6.0) y k1 k2 k3 k4

entry primal [n] (x: [n]f64) (s: i64) : [n]f64 = runge_kutta s x

entry gradient [n] (x: [n]f64) (s: i64) : [n]f64 =
  vjp (\x' -> last (runge_kutta s x')) x 1.0
