-- Referring to an unbound variable is a compile-time error.
-- ==
-- error: [Uu]nknown|not in scope|[Uu]ndefined|[Uu]nbound|[Nn]ot defined

def main (x: i32) : i32 = x + y
