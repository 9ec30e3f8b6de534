-- In a `match`, a constructor pattern must belong to the scrutinee's type.
-- ==
-- error: has no constructor #hexagon

type shape = #circle f64 | #square f64

def area (s: shape) : f64 =
  match s
  case #circle r -> r * r
  case #square a -> a * a
  case #hexagon a -> a

def main (r: f64) : f64 = area (#circle r)
