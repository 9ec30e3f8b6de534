-- The parameters of a type abbreviation must have distinct names.
-- ==
-- error: type parameter `a` is bound twice

type pair 'a 'a = (a, a)

def main (x: i32) : i32 = x
