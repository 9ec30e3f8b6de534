-- A member may not consume a parameter that its specification does not.
-- ==
-- error: Module type specifies\s+val zero : \[3\]i32 -> \[3\]i32\s+but module provides\s+val zero : \*\[3\]i32 -> \*\[3\]i32

module Reset : { val zero : [3]i32 -> [3]i32 } = {
  def zero (xs: *[3]i32) : *[3]i32 = xs with [0] = 0
}

def main (x: i32) = x
