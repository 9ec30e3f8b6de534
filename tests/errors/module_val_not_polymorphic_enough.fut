-- A member must be at least as polymorphic as its specification.
-- ==
-- error: Module type specifies\s+val swap 'a 'b : \(a, b\) -> \(b, a\)

module Swap : { val swap 'a 'b : (a, b) -> (b, a) } = {
  def swap 'a ((x, y): (a, a)) = (y, x)
}

def main (x: i32) = x
