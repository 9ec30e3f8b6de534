-- A size parameter of an abstract type must be the size of some array in
-- the type's definition (a value of the type then carries it).
-- ==
-- error: type joined \[n\] \[m\] = \[n \* m\]f32\s+cannot be made abstract because size parameter\s+n\s+is not used constructively

module Joined : { type joined [n] [m] } = {
  type joined [n] [m] = [n * m]f32
}

def main (x: i32) = x
