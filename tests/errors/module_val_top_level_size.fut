-- A value of an abstract size-lifted type whose definition has an
-- anonymous size would have a size that nothing determines.
-- ==
-- error: Type substitution in "none" results in a top-level size.

module type set = {
  type~ set
  val none : set
}

module Bits : set = {
  type~ set = []bool
  def none : set = []
}

def main (x: i32) = x
