-- A function of type `a -> a` must keep its argument's size; appending
-- to the array would make the size contain itself.
-- ==
-- error: Occurs check

def twice 'a (f: a -> a) (x: a) : a = f (f x)

def main (xs: []i64) = twice (\ys -> ys ++ [1]) xs
