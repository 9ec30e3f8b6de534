-- Existential sizes used as array sizes (also next to a function on arrays
-- of that size) are fine.
-- ==
-- input { 3i64 } output { [0i64, 0i64, 0i64, 1i64] 2i64 }

def evens (n: i64) : ?[m].[m]i64 = filter (\i -> i % 2 == 0) (iota n)

def with_len (n: i64) : ?[m].([m]i64, [m]i64 -> i64) =
  let ws = evens n
  in (ws, \xs -> length xs)

def main (n: i64) : ([]i64, i64) =
  let xs = evens n
  let (w, f) = with_len n
  in (map (% 2) (xs ++ iota 2), f w)
