-- Where a type annotation fixes the sum type, a constructor must be one of
-- its constructors.
-- ==
-- error: has no constructor #triangle

type shape = #circle f64 | #square f64

def main (r: f64) : f64 =
  let s : shape = #triangle r
  in match s
     case #circle x -> x
     case #square x -> x
