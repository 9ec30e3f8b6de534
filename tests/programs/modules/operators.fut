-- Operators from modules: defined in a module, used qualified (`x V.+ y`),
-- as a function (`V.(+)`, `(V.+)`), through a local open `V.(x + y)`,
-- and unqualified after `open`; the built-in modules' operators too.
-- ==
-- input { 1.0 2.0 } output { 4.0 8.0 3.0 6.0 4.0 3.0 }

module V = {
  type vec = {x: f64, y: f64}
  def (+) (a: vec) (b: vec) : vec = {x = a.x f64.+ b.x, y = a.y f64.+ b.y}
  def (*^) (k: f64) (a: vec) : vec = {x = k * a.x, y = k * a.y}
  def mk (x: f64) (y: f64) : vec = {x, y}
}

def total (v: V.vec) = v.x + v.y

entry main (a: f64) (b: f64) : (f64, f64, f64, f64, f64, f64) =
  let u = V.mk a b
  let w = V.mk b a
  in (total (u V.+ V.mk 0.5 0.5),
      total (V.(2.0 *^ (u + w)) V.+ V.mk 0.0 (-4.0)),
      total (V.(+) u (V.mk 0.0 0.0)),
      total ((V.+) u w),
      a f64.+ b f64.+ 1.0,
      f64.(a + b))

module Opened = {
  open V
  def sum3 (a: vec) (b: vec) (c: vec) = a + b + c
}
