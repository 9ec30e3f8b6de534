-- The result of a call through a function parameter aliases the function
-- (and its arguments), so it may not be returned as unique: a function
-- parameter is never consumable.
-- ==
-- error: Unique-typed return value is aliased to "g", which is not consumable

def twice (g: []i32 -> []i32) (xs: []i32) : *[]i32 = g xs

def main (xs: []i32) : []i32 = twice (map (+1)) xs
