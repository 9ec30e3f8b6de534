-- A type parameter may be bound only once in a parameter list.
-- ==
-- error: type parameter `t` is also bound earlier

def swap 't 't (x: t) (y: t) : (t, t) = (y, x)

def main (a: i32) (b: i32) : (i32, i32) = swap a b
