-- Anonymous sizes of parameters are inferred from the body (`zip` makes
-- the two one size); an existential result is one unknown size wherever
-- a type abbreviation repeats it; a definition without parameters keeps
-- the sizes it does not fix general (`add` is `[n]i32 -> [n]i32 -> [n]i32`
-- at each use); `tail`/`init` have size `n - 1`.
-- ==
-- input { [1, 2, 3] [10, 20, 30] }
-- output { [11, 22, 33] [2, 3] [1, 2] 3i64 }

type pair_of [n] = ([n]i32, [n]i32)

def pairs (k: i64) : pair_of [] =
  let m = k + 1
  in (replicate m 0, replicate m 1)

def add = map2 (+)

def both (xs: []i32) (ys: []i32) = map (\(x, y) -> x + y) (zip xs ys)

def main (xs: []i32) (ys: []i32) =
  let (a, b) = pairs 2
  in (add (both xs ys) (map (* 0) xs), tail xs, init xs, length (zip a b))
