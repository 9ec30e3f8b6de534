-- The types in a module type must be known where it is written.
-- ==
-- error: Unknown type "elem"

module type stack = { type t  val push : elem -> t -> t }

def main (x: i32) = x
