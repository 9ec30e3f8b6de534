-- A sum type's payload aliases the value matched: updating it consumes a
-- non-unique parameter.
-- ==
-- error: Consuming variable "o", which is not consumable

type~ buffer = #empty | #full ([]i32)

def fill (o: buffer) : []i32 =
  match o
  case #full xs -> xs with [0] = 1
  case #empty -> []

def main (xs: []i32) : []i32 = fill (#full xs)
