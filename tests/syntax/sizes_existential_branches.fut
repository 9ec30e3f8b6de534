-- What Futhark accepts around static sizes: branches of `if` and `match`
-- with different sizes (the result's size is existential), a size
-- coercion `:>` (checked at run time), the same size parameter
-- instantiated at different sizes in different calls, and a record field
-- updated with a value of another size.
-- ==
-- input { true [1, 2] [3, 4, 5] } output { [1, 2] [3, 4] 2i64 3i64 [7, 8] }
-- input { false [1, 2] [3, 4, 5] } output { [3, 4, 5] [3, 4] 2i64 3i64 [7, 8] }
-- input { true [1, 2] [3] } error: .

def len [k] (_: [k]i32) : i64 = k

def main [n][m] (b: bool) (xs: [n]i32) (ys: [m]i32) =
  let pick = if b then xs else ys
  let picked = match b case true -> pick case false -> ys
  let coerced = ys[:2] :> [n]i32
  let r = {v = xs} with v = [7, 8]
  in (picked, coerced, len xs, len ys, r.v)
