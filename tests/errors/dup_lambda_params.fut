-- The parameters of a lambda must have distinct names.
-- ==
-- error: `a` is also bound earlier

def main (xs: []i32) : i32 = reduce (\a a -> a + a) 0 xs
