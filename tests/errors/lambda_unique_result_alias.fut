-- A lambda whose result is declared unique may not return (an alias of) a
-- non-unique parameter.
-- ==
-- error: Unique-typed return value is aliased to "x", which is not consumable

def main (xs: []i32) : []i32 =
  let fresh = \(x: []i32) : *[]i32 -> x
  in fresh xs
