-- Nested and mixed jvp/vjp: perturbation confusion, Hessians, depth 3,
-- gradients inside loops.  Expected values worked out by hand and checked
-- with Python (tests/ad/README.md).

-- Jensen 2024, §3.3, Example 5: the inner derivative of x + y with respect to y
-- is 1 whatever x is (a confused implementation gives 2), so the outer
-- derivative is 0.  `jvp2` shows both: (inner value, outer derivative).
-- ==
-- entry: confusion_jvp
-- input { 2.0 } output { 1.0 0.0 }
-- input { -5.0 } output { 1.0 0.0 }

entry confusion_jvp (x0: f64) = jvp2 (\x -> jvp (\y -> x + y) 3 1) x0 1

-- The same with every mix of the two modes.
-- ==
-- entry: confusion_mixed
-- input { 2.0 } output { 0.0 0.0 0.0 1.0 1.0 1.0 }

entry confusion_mixed (x0: f64) =
  ( vjp (\x -> vjp (\y -> x + y) 3 1) x0 1
  , jvp (\x -> vjp (\y -> x + y) 3 1) x0 1
  , vjp (\x -> jvp (\y -> x + y) 3 1) x0 1
  , vjp2 (\x -> vjp (\y -> x + y) 3 1) x0 1 |> (.0)
  , jvp2 (\x -> vjp (\y -> x + y) 3 1) x0 1 |> (.0)
  , vjp2 (\x -> jvp (\y -> x + y) 3 1) x0 1 |> (.0) )

-- Shaikhha et al., ICFP19, §4.3, Example 4: d/dx (x * d/dy (x + y)) = 1 at every point,
-- in all four combinations of modes.
-- ==
-- entry: example4
-- input { 0.5 4.0 } output { 1.0 1.0 1.0 1.0 }
-- input { -3.0 7.0 } output { 1.0 1.0 1.0 1.0 }

entry example4 (x0: f64) (y0: f64) =
  ( jvp (\x -> x * jvp (\y -> x + y) y0 1) x0 1
  , vjp (\x -> x * jvp (\y -> x + y) y0 1) x0 1
  , jvp (\x -> x * vjp (\y -> x + y) y0 1) x0 1
  , vjp (\x -> x * vjp (\y -> x + y) y0 1) x0 1 )

-- The Hessian of f (x, y) = x²y + sin x · y³ at (0.7, 1.3): by jvp over
-- vjp (columns), by vjp over vjp (rows), by jvp over jvp (entries).
-- H = [[2y - sin x·y³, 2x + 3cos x·y²], [2x + 3cos x·y², 6 sin x·y]].
-- ==
-- entry: hessian_fwd_rev hessian_rev_rev hessian_fwd_fwd
-- input { 0.7 1.3 } output { [[1.184653741138793, 5.277749889532357], [5.277749889532357, 5.02489796045399]] }

def f (x: f64, y: f64) = x * x * y + f64.sin x * y * y * y
def grad (p: (f64, f64)) = vjp f p 1

entry hessian_fwd_rev (x: f64) (y: f64) : [2][2]f64 =
  map (\d -> let (a, b) = jvp grad (x, y) d in [a, b]) [(1, 0), (0, 1)]

entry hessian_rev_rev (x: f64) (y: f64) : [2][2]f64 =
  [ let (a, b) = vjp (\p -> (grad p).0) (x, y) 1 in [a, b]
  , let (a, b) = vjp (\p -> (grad p).1) (x, y) 1 in [a, b] ]

entry hessian_fwd_fwd (x: f64) (y: f64) : [2][2]f64 =
  let dd u v = jvp (\p -> jvp f p v) (x, y) u
  in [[dd (1, 0) (1, 0), dd (1, 0) (0, 1)], [dd (0, 1) (1, 0), dd (0, 1) (0, 1)]]

-- Depth 3: d³/dx³ (x⁴ sin x) = 24x sin x + 36x² cos x - 12x³ sin x - x⁴ cos x,
-- with the eight combinations of modes.
-- ==
-- entry: third
-- input { 0.9 } output { [27.785625817122607, 27.785625817122607, 27.785625817122607, 27.785625817122607, 27.785625817122607, 27.785625817122607, 27.785625817122607, 27.785625817122607] }

def q (x: f64) = x * x * x * x * f64.sin x
def dj (g: f64 -> f64) (x: f64) = jvp g x 1
def dv (g: f64 -> f64) (x: f64) = vjp g x 1

entry third (x: f64) : []f64 =
  [ dj (dj (dj q)) x, dj (dj (dv q)) x, dj (dv (dj q)) x, dj (dv (dv q)) x
  , dv (dj (dj q)) x, dv (dj (dv q)) x, dv (dv (dj q)) x, dv (dv (dv q)) x ]

-- Gradient descent on (x - 3)² with a vjp inside the loop: x_k+1 = x_k -
-- 0.1·2(x_k - 3), so x_10 = 3 + (x_0 - 3)·0.8^10; and the derivative of the
-- whole descent with respect to x_0, 0.8^10, by an outer jvp and an outer vjp.
-- ==
-- entry: descent
-- input { 1.0 } output { 2.7852516352000003 0.10737418240000006 0.10737418240000006 }

def descend (x0: f64) =
  loop x = x0 for _i < 10 do x - 0.1 * vjp (\z -> (z - 3) * (z - 3)) x 1

entry descent (x0: f64) = (descend x0, jvp descend x0 1, vjp descend x0 1)

-- Newton's method for x² = a with a jvp inside a while loop; the derivative
-- of the root with respect to a is 1/(2√a) (0.25 at a = 4).
-- ==
-- entry: newton
-- input { 4.0 } output { 2.0 0.25 0.25 }

def sqrt_newton (a: f64) =
  let (x, _) = loop (x, k) = (a, 0i32) while k < 40 do
    (x - (x * x - a) / jvp (\z -> z * z - a) x 1, k + 1)
  in x

entry newton (a: f64) = (sqrt_newton a, jvp sqrt_newton a 1, vjp sqrt_newton a 1)

-- Reverse over reverse through maps that read a free array: the inner
-- vjp's map sends the adjoints of the array's elements to an accumulator,
-- which the outer vjp differentiates. `cubic` is homogeneous of degree 3,
-- so euler x = <∇cubic x, x> = 3 cubic x and its gradient is 3 ∇cubic x,
-- with ∂cubic/∂y_k = 2 y_k y_(k+1) + y_(k-1)² (indices cyclic).
-- ==
-- entry: grad_euler
-- input { [1.0, 2.0, 3.0] } output { [39.0, 39.0, 30.0] }

def cubic [n] (y: [n]f64) : f64 = f64.sum (map (\i -> y[i] * y[(i + 1) % n] * y[i]) (iota n))
def euler [n] (x: [n]f64) : f64 = f64.sum (map2 (*) (vjp cubic x 1) x)
entry grad_euler [n] (x: [n]f64) = vjp euler x 1

-- The same with rows: ∇bilinear ys holds ys[k+1][1] and ys[k-1][0] at
-- [k][0] and [k][1], so the gradient of the sum of their sines is cos
-- of each element.
-- ==
-- entry: grad_sines_of_gradient
-- input { [[1.0, 2.0], [0.5, 1.5], [2.0, -1.0]] }
-- output { [[0.5403023058681398, -0.4161468365471424], [0.8775825618903728, 0.0707372016677029],
--           [-0.4161468365471424, 0.5403023058681398]] }

def bilinear (ys: [][2]f64) : f64 =
  f64.sum (map (\i -> ys[i][0] * ys[(i + 1) % length ys][1]) (indices ys))
entry grad_sines_of_gradient (x: [][2]f64) =
  vjp (\x -> f64.sum (map f64.sin (flatten (vjp bilinear x 1)))) x 1
