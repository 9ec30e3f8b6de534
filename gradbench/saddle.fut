-- GradBench `saddle` (Pearlmutter & Siskind 2008): the saddle point of
-- f(p, q) = |p|^2 - |q|^2 by nested gradient descent.  R(p) = max_q f(p, q)
-- is itself an optimisation (with grad_q f by AD, inner), and the minimum
-- of R needs grad R, by AD through that inner optimisation (outer).  ff,
-- fr, rf, rr name the (outer, inner) modes: f = jvp, r = vjp.

import "argmin"

def fsad (p: [2]f64) (q: [2]f64) : f64 =
  (p[0] * p[0] + p[1] * p[1]) - (q[0] * q[0] + q[1] * q[1])

-- Gradient of a function of two variables by forward mode (a jvp per
-- coordinate) or by reverse mode (one vjp).
def grad_fwd (f: [2]f64 -> f64) (x: [2]f64) : [2]f64 =
  [jvp f x [1.0, 0.0], jvp f x [0.0, 1.0]]

def grad_rev (f: [2]f64 -> f64) (x: [2]f64) : [2]f64 = vjp f x 1.0

def saddle (outer: ([2]f64 -> f64) -> [2]f64 -> [2]f64)
           (inner: ([2]f64 -> f64) -> [2]f64 -> [2]f64)
           (start: [2]f64) : [4]f64 =
  let inner_max (p: [2]f64) : [2]f64 = argmax (fsad p) (inner (fsad p)) start
  let r (p: [2]f64) : f64 = fsad p (inner_max p)
  let pstar = argmin r (outer r) start
  let qstar = inner_max pstar
  in [pstar[0], pstar[1], qstar[0], qstar[1]]

entry ff (start: [2]f64) : [4]f64 = saddle grad_fwd grad_fwd start
entry fr (start: [2]f64) : [4]f64 = saddle grad_fwd grad_rev start
entry rf (start: [2]f64) : [4]f64 = saddle grad_rev grad_fwd start
entry rr (start: [2]f64) : [4]f64 = saddle grad_rev grad_rev start
