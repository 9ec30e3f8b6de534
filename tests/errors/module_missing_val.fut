-- A module ascribed to a module type must define every value the type
-- specifies.
-- ==
-- error: does not define the value `inverse`

module type group = {
  type t
  val op: t -> t -> t
  val inverse: t -> t
}

module Ints : group = {
  type t = i32
  def op (a: t) (b: t) = a + b
}

def main (x: i32) : i32 = Ints.op x x
