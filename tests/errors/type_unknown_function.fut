-- Calling an undefined function is a compile-time error.
-- ==
-- error: [Uu]nknown|not in scope|[Uu]ndefined|[Uu]nbound|[Nn]ot defined

def main (xs: []i32) : []i32 = mapp (+ 1) xs
