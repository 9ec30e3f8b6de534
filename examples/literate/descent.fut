-- # Fitting a line by gradient descent
--
-- A literate program: the command
--
--     nabla literate --backend=interp examples/literate/descent.fut
--
-- runs the directives below (the lines that start with `-- >`) and
-- writes `descent.md` beside this file, with the plots in
-- `descent-img/`.
--
-- We fit a line `y = a*x + b` to points that lie near `y = 3x + 1`,
-- minimising the mean squared error. The gradient of the loss comes from
-- reverse-mode automatic differentiation (`vjp`).

def xs (n: i64) : [n]f64 =
  map (\i -> f64.i64 i / f64.i64 n) (iota n)

def ys (n: i64) : [n]f64 =
  map (\x -> 3 * x + 1 + 0.2 * f64.sin (25 * x)) (xs n)

def loss [n] (x: [n]f64) (y: [n]f64) ((a, b): (f64, f64)) : f64 =
  let r = map2 (\xi yi -> a * xi + b - yi) x y
  in f64.sum (map (\e -> e * e) r) / f64.i64 n

-- The gradient of the loss with respect to the parameters: `vjp` seeded
-- with 1 gives the whole gradient in one backward pass.
def grad [n] (x: [n]f64) (y: [n]f64) (p: (f64, f64)) : (f64, f64) =
  vjp (loss x y) p 1

-- `steps` steps of plain gradient descent from `(0, 0)` with learning
-- rate `rate`, keeping the loss before each step.
def descend (n: i64) (steps: i64) (rate: f64) : ((f64, f64), [steps]f64) =
  let x = xs n
  let y = ys n
  in loop (p, losses) = ((0, 0), replicate steps 0) for i < steps do
       let (ga, gb) = grad x y p
       in ((p.0 - rate * ga, p.1 - rate * gb), losses with [i] = loss x y p)

entry fit (n: i64) (steps: i64) (rate: f64) : (f64, f64) =
  (descend n steps rate).0

entry log_loss_curve (n: i64) (steps: i64) (rate: f64) : ([]f64, []f64) =
  (map f64.i64 (iota steps), map f64.log10 (descend n steps rate).1)

entry points (n: i64) : ([]f64, []f64) =
  (xs n, ys n)

entry fitted (n: i64) (steps: i64) (rate: f64) : ([]f64, []f64) =
  let (a, b) = (descend n steps rate).0
  in (xs n, map (\x -> a * x + b) (xs n))

-- After 300 steps with rate 0.5 on 50 points, the parameters are near
-- `(3, 1)`:

-- > fit 50i64 300i64 0.5

-- The loss (in a logarithmic scale: its `log10`) falls quickly, then
-- slowly, and levels off where the line fits as well as a line can:

-- > :plot2d log_loss_curve 50 300 0.5

-- The points (blue) and the fitted line (red):

-- > :plot2d {data = points 50, fit = fitted 50 300 0.5}
