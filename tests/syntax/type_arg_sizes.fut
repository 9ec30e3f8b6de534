-- A type parameter instantiated with an array type carries the caller's
-- sizes into the function: they must neither be confused with the
-- function's own size parameters of the same name (`n` below, `k` in the
-- prelude's `jmp`), nor be those of another call instantiating the same
-- function (here with rows of 3 and of 4 elements).
-- ==
-- entry: last_rows
-- input { [[1, 2, 3], [4, 5, 6]] [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]] }
-- output { [4, 5, 6] [9, 10, 11, 12] }

def final [n] 't (xs: [n]t) : t = xs[n - 1]

entry last_rows [m] [n] (xs: [m][3]i32) (ys: [n][4]i32) : ([3]i32, [4]i32) =
  (final xs, final ys)

-- ==
-- entry: inline_last
-- input { [[1, 2, 3], [4, 5, 6]] } output { [4, 5, 6] }

-- A higher-order function is elaborated inline at its call; its own `n`
-- must not capture the caller's `n` either.
def final_by [n] 't (f: t -> t) (xs: [n]t) : t = f xs[n - 1]

entry inline_last [m] [n] (xs: [m][n]i32) : [n]i32 = final_by id xs

-- ==
-- entry: empty_rows
-- input { 2i64 } output { empty([0][2]i32) }
-- input { 3i64 } output { empty([0][3]i32) }

-- The sizes of a type argument are known inside the function: an empty
-- array of `t` has rows of the caller's size.
def none 't (_: i64) : [0]t = []

entry empty_rows (k: i64) : [0][k]i32 = none k

-- ==
-- entry: jacobian_columns
-- input { [[1f32, 2f32], [3f32, 4f32], [5f32, 6f32]] }
-- output { [[[2f32, 0f32], [0f32, 0f32], [0f32, 0f32]],
--           [[0f32, 0f32], [6f32, 0f32], [0f32, 0f32]],
--           [[0f32, 0f32], [0f32, 0f32], [10f32, 0f32]]] }

-- `jmp`'s size parameter is called `k`, like the rows here.
def square_first [n] [k] (a: [n][k]f32) : [n][k]f32 =
  map (\r -> map2 (\j x -> if j == 0 then x * x else 0) (iota k) r) a

entry jacobian_columns [n] [k] (a: [n][k]f32) : [n][n][k]f32 =
  jmp square_first a (tabulate n (\i -> tabulate n (\j -> if i == j then map (\c -> if c == 0 then 1 else 0) (iota k) else replicate k 0)))

-- ==
-- entry: unique_arg
-- input { [[1, 2], [3, 4]] } output { [[1, 3], [2, 4]] 1 }

-- A type argument carries no uniqueness: instantiated with the type of
-- transpose's (unique) result, `keep`'s parameter of type `t` still does
-- not consume its argument (the IR validator checks this), and `xss` may
-- be used afterwards.
def keep 't (x: t) : t = x

entry unique_arg (xss: [][]i32) : ([][]i32, i32) = (keep (transpose xss), xss[0, 0])
