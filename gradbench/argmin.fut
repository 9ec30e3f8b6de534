-- The gradient-descent solver shared by GradBench's `particle` and
-- `saddle` evals (GradBench's definition, with its exact constants and
-- control flow): minimise f from x0 given its gradient g.

def norm [n] (v: [n]f64) : f64 = f64.sqrt (f64.sum (map (\x -> x * x) v))

def argmin [n] (f: [n]f64 -> f64) (g: [n]f64 -> [n]f64) (x0: [n]f64) : [n]f64 =
  let (x, _, _, _, _, _) =
    loop (x, fx, gx, eta, i, done) = (x0, f x0, g x0, 1e-5, 0i64, false)
    while !done do
      if norm gx <= 1e-5 then (x, fx, gx, eta, i, true)
      else if i == 10 then (x, fx, gx, eta * 2.0, 0, false)
      else
        let x' = map2 (\xi gi -> xi - eta * gi) x gx
        in if norm (map2 (-) x x') <= 1e-5 then (x, fx, gx, eta, i, true)
           else
             let fx' = f x'
             in if fx' < fx then (x', fx', g x', eta, i + 1, false)
                else (x, fx, gx, eta / 2.0, 0, false)
  in x

-- Maximise f (the minimum of -f).
def argmax [n] (f: [n]f64 -> f64) (g: [n]f64 -> [n]f64) (x0: [n]f64) : [n]f64 =
  argmin (\x -> -(f x)) (\x -> map f64.neg (g x)) x0
