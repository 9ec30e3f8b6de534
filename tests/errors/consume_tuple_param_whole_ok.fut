-- The components of a tuple are separate arrays: a consuming tuple
-- parameter (or a tuple of fresh arrays) may be passed whole to a function
-- that consumes a tuple, which may update each component in place with
-- `t with 0[i] = v`.
-- ==
-- input { [1i64, 2i64, 3i64] } output { [7i64, 2i64, 3i64] [1i64, 8i64, 3i64] 6i64 }

def set_both [n] (t: *([n]i64, [n]i64)) : ([n]i64, [n]i64) =
  (t with 0[0] = 7) with 1[1] = 8

def pass_on [n] (t: *([n]i64, [n]i64)) : ([n]i64, [n]i64) = set_both t

def main [n] (xs: [n]i64) : ([n]i64, [n]i64, i64) =
  let p = (copy xs, copy xs)
  let (a, b) = pass_on p
  in (a, b, i64.sum xs)
