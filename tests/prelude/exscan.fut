-- exscan: element i combines the neutral element and the elements before
-- i, in order (the operator need not be commutative).
-- ==
-- entry: sums
-- input { [1, 2, 3, 4] } output { [0, 1, 3, 6] }
-- input { [5] } output { [0] }
-- input { empty([0]i32) } output { empty([0]i32) }

entry sums (xs: []i32) : []i32 = exscan (+) 0 xs

-- ==
-- entry: compose
-- input { [2, 3, 1] [1, 0, 5] } output { [1, 2, 6] [0, 1, 3] }

-- Affine maps x -> a*x + b composed left to right: not commutative.
entry compose [n] (as: [n]i32) (bs: [n]i32) : ([n]i32, [n]i32) =
  let op (a1, b1) (a2, b2) = (a1 * a2, b1 * a2 + b2)
  in unzip (exscan op (1, 0) (zip as bs))

-- ==
-- entry: maxima
-- input { [3, 1, 4, 1, 5] } output { [-2147483648, 3, 3, 4, 4] }

entry maxima (xs: []i32) : []i32 = exscan i32.max i32.lowest xs

-- ==
-- entry: grad
-- input { [1.0, 2.0, 3.0, 4.0] } output { [3.0, 2.0, 1.0, 0.0] [0.0, 1.0, 1.0, 1.0] }

-- Result i sums the elements before i: each x_j reaches the n-1-j results
-- after it (reverse mode, all adjoints 1); forward mode with a tangent on
-- x_0 moves every result but the first.
entry grad [n] (xs: [n]f64) : ([n]f64, [n]f64) =
  (vjp (exscan (+) 0) xs (replicate n 1),
   jvp (exscan (+) 0) xs (tabulate n (\i -> if i == 0 then 1 else 0)))
