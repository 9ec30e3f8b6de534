-- An argument of the wrong type is reported in Futhark's words, naming the
-- function and the argument (a variable by its name, another expression by
-- its position).
-- ==
-- error: Cannot apply "pick" to "flag" \(invalid type\): expected `i64`, found `bool`

def pick (xs: []i32) (i: i64) : i32 = xs[i]

def main (xs: []i32) (flag: bool) : i32 = pick xs flag
