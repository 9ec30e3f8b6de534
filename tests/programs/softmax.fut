-- Numerically stable softmax, row-wise on a matrix too.
-- ==
-- input { [1.0, 2.0, 3.0] } output { [0.09003057317, 0.2447284711, 0.6652409558] }
-- input { [0.0, 0.0, 1.0986122886681098] } output { [0.2, 0.2, 0.6] }
-- input { [-1.0, 0.5] } output { [0.1824255238, 0.8175744762] }
-- input { [1000.0, 1000.0] } output { [0.5, 0.5] }

def softmax [n] (xs: [n]f64) : [n]f64 =
  let m = f64.maximum xs
  let es = map (\x -> f64.exp (x - m)) xs
  let s = f64.sum es
  in map (/ s) es

def main [n] (xs: [n]f64) : [n]f64 = softmax xs

-- ==
-- entry: rows
-- input { [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.5]] }
-- output { [[0.09003057317, 0.2447284711, 0.6652409558], [0.1003675647, 0.4498162177, 0.4498162177]] }

entry rows [n] [m] (xss: [n][m]f64) : [n][m]f64 = map softmax xss
