-- An argument of the wrong type is reported in Futhark's words, naming
-- the function and the argument.
-- ==
-- error: Cannot apply "pick" to "flag" \(invalid type\)

def pick 't (a: t) (b: t) = (b, a)

def main (n: i32) (flag: bool) = pick n flag
