-- A `match` must have a case for every constructor of its sum type.
-- ==
-- error: Unmatched cases.*no case matches `#blue`

type colour = #red | #green | #blue

def code (c: colour) : i32 =
  match c
  case #red -> 1
  case #green -> 2

def main (x: i32) : i32 = code (if x > 0 then #red else #blue)
