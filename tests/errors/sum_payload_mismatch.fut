-- A constructor's payload must have the declared type.
-- ==
-- error: [Tt]ype|mismatch|bool

type shape = #circle f64 | #square f64

def area (s: shape) : f64 =
  match s
  case #circle r -> r * r
  case #square a -> a * a

def main (b: bool) : f64 = area (#circle b)
