-- Each call of a function whose result size is existential gives an
-- unknown size of its own: two `evens` results need not have one length.
-- ==
-- error: do not match

def evens (v: []i64) : []i64 = filter (\x -> x % 2 == 0) v

def main (v: []i64) = map2 (+) (evens v) (evens (reverse v))
