-- The same sum values with the whole type given by an annotation (on the
-- return type, a `let`, or a parameter) are fine.
-- ==
-- input { true } output { true 1 }

type opt = #none | #some bool

def wrap (x: bool) : opt = #some x

def main (x: bool) : (bool, i32) =
  let o : #one | #two = if x then #one else #two
  let n = match o
          case #one -> 1
          case #two -> 2
  in (match wrap x
      case #some y -> y
      case #none -> false, n)
