-- The parameters of a lambda must have distinct names.
-- ==
-- error: `a` is bound twice

def main (xs: []i32) : i32 = reduce (\a a -> a + a) 0 xs
