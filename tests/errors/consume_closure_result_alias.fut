-- The result of a closure aliases the free variables its body returns:
-- updating `ys` consumes `z` too.
-- ==
-- error: "z", which aliases variable "ys", but this was consumed

def main (ys: *[]i32) : i32 =
  let g = \(_k: i32) -> ys
  let z = g 1
  let ys[0] = 5
  in z[0]
