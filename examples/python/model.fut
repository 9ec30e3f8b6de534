-- A one-hidden-layer network with tanh units, y ≈ Σ_j w2[j] tanh(w1[j] x + b1[j]) + b2,
-- and its mean squared error on (xs, ys). The entry point returns the loss
-- and its gradient with respect to every parameter (reverse mode, vjp).

def predict [h] (w1: [h]f64) (b1: [h]f64) (w2: [h]f64) (b2: f64) (x: f64) : f64 =
  f64.sum (map3 (\a b c -> c * f64.tanh (a * x + b)) w1 b1 w2) + b2

def loss [h] [n] (w1: [h]f64) (b1: [h]f64) (w2: [h]f64) (b2: f64)
                 (xs: [n]f64) (ys: [n]f64) : f64 =
  let err = map2 (\x y -> predict w1 b1 w2 b2 x - y) xs ys
  in f64.sum (map (\e -> e * e) err) / f64.i64 n

entry mse [h] [n] (w1: [h]f64) (b1: [h]f64) (w2: [h]f64) (b2: f64)
                  (xs: [n]f64) (ys: [n]f64) : f64 =
  loss w1 b1 w2 b2 xs ys

entry loss_and_grad [h] [n] (w1: [h]f64) (b1: [h]f64) (w2: [h]f64) (b2: f64)
                            (xs: [n]f64) (ys: [n]f64)
                          : (f64, [h]f64, [h]f64, [h]f64, f64) =
  let (g1, gb1, g2, gb2) =
    vjp (\(w1, b1, w2, b2) -> loss w1 b1 w2 b2 xs ys) (w1, b1, w2, b2) 1.0
  in (loss w1 b1 w2 b2 xs ys, g1, gb1, g2, gb2)
