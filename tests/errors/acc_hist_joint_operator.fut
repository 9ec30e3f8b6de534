-- An operator on pairs whose result components depend on both components
-- (the maximum with its position) cannot be combined one accumulator at a
-- time; nabla rejects it with a clear error.
-- ==
-- error: hist_stream: the operator must combine each component

def argmax (a: f64, i: i64) (b: f64, j: i64) = if a < b || (a == b && j < i) then (b, j) else (a, i)

def main (xs: []f64) : ([2]f64, [2]i64) =
  intrinsics.hist_stream (replicate 2 (-f64.inf, -1))
                         argmax
                         (-f64.inf, -1)
                         (\(a: *intrinsics.acc ([2](f64, i64))) (i, x) -> intrinsics.acc_write a (i % 2) (x, i))
                         (zip (indices xs) xs)
  |> unzip
