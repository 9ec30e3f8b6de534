-- An index whose type is still being inferred may become any signed integer
-- type through a later use, as in Futhark: the parameter of a lambda used as
-- an index is an i32 or an i8 once `map` is given the index array, and a
-- function whose index parameter stays open gets i32, the integer default.
-- ==
-- entry: gather_
-- input { [10.0, 20.0, 30.0] [2, 0, 1] } output { [30.0, 10.0, 20.0] }
-- input { [10.0, 20.0, 30.0] [3, 0, 1] } error: out of bounds|[Ii]ndex

-- ==
-- entry: small_indices
-- input { [[1, 2], [3, 4]] [1i8, 0i8] } output { [3, 2] }

-- ==
-- entry: default_index
-- input { [[1, 2], [3, 4]] 1 } output { [3, 4] }

-- ==
-- entry: sum_at
-- input { [5i64, 6i64, 7i64] [2i16, 2i16, 0i16] } output { 19i64 }

def gather [n] (xs: [n]f64) (is: [n]i32) = map (\i -> xs[i]) is

-- `i` is an index before the type of `is` fixes it to i8.
entry small_indices (xss: [][]i32) (is: []i8) = map (\i -> xss[i, 1 - i]) is

-- No use fixes the type of `i`: it defaults to i32 (Futhark's default for
-- an integer), so an i32 argument is accepted.
def index xs i = xs[i]

entry default_index (xss: [][]i32) (i: i32) = index xss i

-- The index flows through a local binding before its type is known.
entry sum_at (xs: []i64) (is: []i16) =
  let at = \i -> let j = i in xs[j]
  in i64.sum (map at is)

entry gather_ [n] (xs: [n]f64) (is: [n]i32) = gather xs is
