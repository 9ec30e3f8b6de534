-- A functor that includes its (built-in) argument module: the result has
-- all of `f64`'s members, operators included, plus its own; `open` of a
-- built-in module inside a module leaves the operators overloaded.
-- ==
-- input { 1.5 } output { 3.0 2.5 4.0 2.25 3i32 }

module extend (R: real) = {
  include R
  def twice (x: t) : t = x + x
}

module E = extend f64

module UsesOpen = {
  open f64
  def sq (x: f64) = x * x
  def small (i: i32) = i + 1
}

entry main (x: f64) : (f64, f64, f64, f64, i32) =
  (E.twice x, x E.+ 1.0, E.sqrt 16.0, UsesOpen.sq x, UsesOpen.small 2)
