-- A functor argument must define the types of the parameter's module type.
-- ==
-- error: does not define the type `elem`

module type has_elem = { type elem  val zero: elem }

module mk (E: has_elem) = { def z = E.zero }

module NoElem = { def zero = 0i32 }

module Bad = mk NoElem

def main (x: i32) : i32 = x + Bad.z
