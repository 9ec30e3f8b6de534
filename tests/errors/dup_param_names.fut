-- The parameters of a function must have distinct names.
-- ==
-- error: `x` is also bound earlier

def add (x: i32) (x: i32) : i32 = x + x

def main (a: i32) : i32 = add a a
