-- A constructor must be given as many payload values as declared.
-- ==
-- error: [Tt]ype|argument|payload|arity

type shape = #circle f64 | #rect f64 f64

def area (s: shape) : f64 =
  match s
  case #circle r -> r * r
  case #rect a b -> a * b

def main (x: f64) : f64 = area (#rect x)
