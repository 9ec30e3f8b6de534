-- Plain modules: members, nested modules, qualified names and types,
-- members that use earlier members, a module-level type used outside.
-- ==
-- input { 3 } output { 9 10 [3.0, 3.0] 12 }
-- input { -1 } output { 1 2 [-1.0, -1.0] 12 }

module Geometry = {
  type point = (f64, f64)
  def origin : point = (0.0, 0.0)
  def square (x: i32) = x * x
  module Inner = {
    def add_one (x: i32) = square x + 1
    type pair = [2]f64
  }
  def diag (x: f64) : Inner.pair = [x, x]
}

-- An outer name that a module member shadows stays available outside.
def square (x: i32) = x + 9

entry main (x: i32) : (i32, i32, [2]f64, i32) =
  let p : Geometry.point = Geometry.origin
  in (Geometry.square x + i32.f64 p.0,
      Geometry.Inner.add_one x,
      (Geometry.diag (f64.i32 x) : Geometry.Inner.pair),
      square 3 + i32.f64 p.1)
