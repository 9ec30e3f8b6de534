-- Two unique components of a result may not alias each other.
-- ==
-- error: two unique .* components of the result may alias each other

def twice (xs: *[]i32) : (*[]i32, *[]i32) = (xs, xs)

def main (xs: *[]i32) : []i32 = (twice xs).0
