-- Both components of `twin`'s result alias its argument, so they may not
-- both be returned as unique.
-- ==
-- error: A unique-typed component of the return value is aliased to some other component

def twin 'a (x: a) : (a, a) = (x, x)

def main (xs: []i64) : (*[]i64, *[]i64) = twin (map (+ 1) xs)
