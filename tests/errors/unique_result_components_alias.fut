-- Two unique components of a result may not alias each other.
-- ==
-- error: unique-typed component of the return value is aliased to some other component

def twice (xs: *[]i32) : (*[]i32, *[]i32) = (xs, xs)

def main (xs: *[]i32) : []i32 = (twice xs).0
