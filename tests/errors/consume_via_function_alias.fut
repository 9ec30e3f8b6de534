-- Calling a consuming function through another name still consumes the
-- argument, which here is a non-unique parameter.
-- ==
-- error: Consuming variable "xs", which is not consumable

def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0

def main (xs: []i32) : []i32 =
  let g = reset
  in g xs
