-- A module's member must have the type its `val` specification gives
-- (the abstract type `t` standing for the module's own `t`).
-- ==
-- error: Module type specifies\s+val area : t -> f64\s+but module provides\s+val area : f64 -> i32

module type shape = {
  type t
  val area: t -> f64
}

module Square : shape = {
  type t = f64
  def area (side: t) : i32 = i32.f64 (side * side)
}

def main (x: f64) : i32 = Square.area x
