-- Ascription is opaque: outside the module, an abstract type of its module
-- type is not its definition, so an `i32` is not a `Counter.t`.
-- ==
-- error: expected `Counter.t`, found `i32`

module type counter = {
  type t
  val zero: t
  val incr: t -> t
  val get: t -> i32
}

module Counter : counter = {
  type t = i32
  def zero = 0i32
  def incr (x: t) = x + 1
  def get (x: t) = x
}

def main (n: i32) : i32 = Counter.get (Counter.incr n)
