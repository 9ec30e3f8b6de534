-- A value of a sum type aliases the arrays in its payload.
-- ==
-- error: Using "v", which aliases variable "xs", but this was consumed

type~ opt = #some ([]i64) | #none

def main (xs: *[]i64) : i64 =
  let v : opt = #some xs
  let xs[0] = 1
  in match v
     case #some ys -> ys[0]
     case #none -> 0
