-- An argument that is not a variable is named by its position.
-- ==
-- error: Cannot apply "pick" to argument #1 \(invalid type\)

def pick (xs: []i32) (i: i64) : i32 = xs[i]

def main (n: i64) : i32 = pick (iota n) 0
