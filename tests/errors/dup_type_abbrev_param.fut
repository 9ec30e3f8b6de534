-- The parameters of a type abbreviation must have distinct names.
-- ==
-- error: Type parameter "a" previously defined

type pair 'a 'a = (a, a)

def main (x: i32) : i32 = x
