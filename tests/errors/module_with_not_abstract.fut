-- `with` refines an abstract type; a type already refined is not one.
-- ==
-- error: "t" is not an abstract type in the module type.

module type has_t = { type t }
module type has_i32 = has_t with t = i32
module type twice = has_i32 with t = i32

def main (x: i32) = x
