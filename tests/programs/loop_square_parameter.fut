-- A loop whose body needs its matrix square, started from a square
-- matrix: the parameter's one size is the initial value's.
-- ==
-- input { [[1f64, 2f64], [0f64, 1f64]] }
-- output { [[1f64, 8f64], [0f64, 1f64]] }

def matmul [a] [b] [d] (x: [a][b]f64) (y: [b][d]f64) : [a][d]f64 =
  map (\row -> map (\col -> f64.sum (map2 (*) row col)) (transpose y)) x

def main [n] (m: [n][n]f64) =
  loop p = m for _i < 2 do matmul p (copy p)
