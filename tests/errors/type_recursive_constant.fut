-- A constant (a definition without parameters) is not in scope in its own
-- definition; only functions may refer to themselves.
-- ==
-- error: not in scope in its own definition

def xs : []i64 = [1] ++ map (+ 1) xs

def main (i: i64) = xs[i]
