-- Reverse mode through loops whose arrays change size from one iteration
-- to the next (a pairwise tree reduction halves its array). No
-- rectangular checkpoint array holds such states, so the return sweep
-- gets the state at an iteration's entry by running the loop again from
-- its initial values (quadratic in the trip count, which is logarithmic
-- here). The expected gradients were checked against central finite
-- differences.

def halving (xs: [8]f64) : f64 =
  let (ys, _) = loop (ys, n) = (xs :> []f64, 8) for _i < 3 do
                  let half = n / 2
                  in (map (\j -> ys[2 * j] * ys[2 * j + 1]) (iota half), half)
  in ys[0]

-- ==
-- entry: grad_halving
-- input { [1.0, 2.0, 3.0, 4.0, 0.5, 0.25, 2.0, 1.5] }
-- output { [9.0, 4.5, 3.0, 2.25, 18.0, 36.0, 4.5, 6.0] }
entry grad_halving (xs: [8]f64) = vjp halving xs 1

-- A while loop: the trip count comes from the array's length.
def tree (xs: []f64) : f64 =
  let ys = loop ys = copy xs while length ys > 1 do
             map (\j -> ys[2 * j] * ys[2 * j + 1] + 0.5 * ys[2 * j]) (iota (length ys / 2))
  in ys[0]

-- ==
-- entry: grad_tree
-- input { [1.0, 2.0, 3.0, 4.0, 0.5, 0.25, 2.0, 1.5] }
-- output { [76.5625, 30.625, 24.609375, 16.40625, 118.125, 78.75, 26.25, 26.25] }
entry grad_tree (xs: []f64) = vjp tree xs 1

-- Inside a map, with a free array read after the loop.
def rows (x: [3][4]f64) : f64 =
  f64.sum (map (\row -> let ys = loop ys = copy row while length ys > 1 do
                                   map (\j -> ys[2 * j] * ys[2 * j + 1]) (iota (length ys / 2))
                        in ys[0] * x[0, 0])
               x)

-- ==
-- entry: grad_rows
-- input { [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.7]] }
-- output { [[43.5, 12.0, 8.0, 6.0], [-0.6, 0.3, -0.15, -1.0], [-1.4, -4.2, 2.1, -6.0]] }
entry grad_rows (x: [3][4]f64) = vjp rows x 1

-- Forward mode along all ones: the sum of grad_tree's entries.
-- ==
-- entry: tangent_tree
-- input { [1.0, 2.0, 3.0, 4.0, 0.5, 0.25, 2.0, 1.5] }
-- output { 397.578125 }
entry tangent_tree (xs: []f64) = jvp tree xs (map (\_ -> 1) xs)
