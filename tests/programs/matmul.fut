-- Matrix multiplication with map/reduce/transpose.
-- ==
-- input { [[1, 2], [3, 4]] [[5, 6], [7, 8]] } output { [[19, 22], [43, 50]] }
-- input { [[1, 2, 3]] [[1], [2], [3]] } output { [[14]] }
-- input { [[1, 2, 3], [4, 5, 6]] [[7, 8], [9, 10], [11, 12]] } output { [[58, 64], [139, 154]] }

def matmul [n] [m] [p] 'a (add: a -> a -> a) (mul: a -> a -> a) (zero: a)
                         (x: [n][m]a) (y: [m][p]a) : [n][p]a =
  map (\row -> map (\col -> reduce add zero (map2 mul row col)) (transpose y)) x

def main [n] [m] [p] (x: [n][m]i32) (y: [m][p]i32) : [n][p]i32 =
  matmul (+) (*) 0 x y

-- Multiplying by the identity matrix gives back the input.
-- ==
-- entry: identity
-- random input { [8][8]f64 } output { true }
-- input { [[1.5, -2.0], [0.0, 3.25]] } output { true }

entry identity [n] (a: [n][n]f64) : bool =
  let i = tabulate_2d n n (\r c -> if r == c then 1.0 else 0.0)
  let b = matmul (+) (*) 0.0 a i
  in and (map2 (\x y -> and (map2 (==) x y)) b a)
