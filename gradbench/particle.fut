-- GradBench `particle` (Pearlmutter & Siskind 2008): a charged particle
-- steered by a control w; the optimal w is found by gradient descent, with
-- d/dw by AD (outer) through a simulation whose acceleration is itself a
-- gradient taken by AD (inner).  ff, fr, rf, rr name the (outer, inner)
-- modes: f = forward (jvp), r = reverse (vjp).

import "argmin"

type vec = (f64, f64)

def dist ((x0, x1): vec) ((y0, y1): vec) : f64 =
  f64.sqrt ((x0 - y0) * (x0 - y0) + (x1 - y1) * (x1 - y1))

-- Potential at x of unit charges at (10, 10 - w) and (10, 0).
def potential (w: f64) (x: vec) : f64 =
  1.0 / dist x (10.0, 10.0 - w) + 1.0 / dist x (10.0, 0.0)

-- The acceleration -grad_x p(x), by forward mode (one jvp per coordinate)…
def accel_fwd (w: f64) (x: vec) : vec =
  (-(jvp (potential w) x (1.0, 0.0)), -(jvp (potential w) x (0.0, 1.0)))

-- …or by reverse mode (one vjp).
def accel_rev (w: f64) (x: vec) : vec =
  let (g0, g1) = vjp (potential w) x 1.0
  in (-g0, -g1)

-- Euler steps until the particle crosses y = 0; the squared x coordinate
-- of the crossing point.
def naive_euler (accel: f64 -> vec -> vec) (w: f64) : f64 =
  let dt = 0.1
  let (_, _, result, _) =
    loop ((x0, x1), (v0, v1), _result, done) = ((0.0, 8.0), (0.75, 0.0), 0.0, false)
    while !done do
      let (a0, a1) = accel w (x0, x1)
      let (n0, n1) = (x0 + dt * v0, x1 + dt * v1)
      in if n1 <= 0.0 then
           let tf = -n1 / v1
           let xf = n0 + tf * v0
           in ((x0, x1), (v0, v1), xf * xf, true)
         else ((n0, n1), (v0 + dt * a0, v1 + dt * a1), 0.0, false)
  in result

def grad_fwd (f: f64 -> f64) (w: f64) : f64 = jvp f w 1.0
def grad_rev (f: f64 -> f64) (w: f64) : f64 = vjp f w 1.0

def optimise (outer: (f64 -> f64) -> f64 -> f64) (accel: f64 -> vec -> vec) (w0: f64) : f64 =
  let f = naive_euler accel
  let ws = argmin (\v -> f v[0]) (\v -> [outer f v[0]]) [w0]
  in ws[0]

entry ff (w0: f64) : f64 = optimise grad_fwd accel_fwd w0
entry fr (w0: f64) : f64 = optimise grad_fwd accel_rev w0
entry rf (w0: f64) : f64 = optimise grad_rev accel_fwd w0
entry rr (w0: f64) : f64 = optimise grad_rev accel_rev w0

-- The objective alone (no outer derivative), for checking the primal.
entry primal (w: f64) : f64 = naive_euler accel_rev w
