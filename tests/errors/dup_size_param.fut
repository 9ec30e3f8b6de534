-- A size parameter may be bound only once in a parameter list.
-- ==
-- error: size parameter `n` is also bound earlier

def pairwise [n] [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map2 (+) xs ys

def main (xs: []i32) : []i32 = pairwise xs xs
