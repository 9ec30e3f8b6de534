-- The result of a call through a function parameter aliases its argument,
-- so it may not be returned as unique when the argument is not unique.
-- ==
-- error: declared unique .* may alias the parameter `xs`

def twice (g: []i32 -> []i32) (xs: []i32) : *[]i32 = g xs

def main (xs: []i32) : []i32 = twice (map (+1)) xs
