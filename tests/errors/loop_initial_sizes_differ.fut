-- The loop body multiplies its matrix by a slice of itself, which needs
-- the parameter's rows and columns to be one size; the initial matrix has
-- `r` rows and `c` columns, so it does not have the parameter's type.
-- ==
-- error: Initial loop values do not have expected type

def matmul [a] [b] [d] (x: [a][b]f64) (y: [b][d]f64) : [a][d]f64 =
  map (\row -> map (\col -> f64.sum (map2 (*) row col)) (transpose y)) x

def main [r] [c] (m: [r][c]f64) =
  loop m for _i < 2 do matmul m[1:, :] m[:, 1:]
