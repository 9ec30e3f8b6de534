-- A derivative rule whose adjoint has another shape than the argument is
-- a run-time error of the with_vjp (static AD: a size check; dynamic AD:
-- the sweep checks), not a wrong gradient. (The rule's result size is
-- left anonymous: `g ++ g` has the static size `n + n`, not `n`.)
-- ==
-- input { [1.0, 2.0] } error: with_vjp: the derivative rule

def twice (xs: []f64) : []f64 = with_vjp (\xs -> map (* 2) xs) (\_ g : []f64 -> g ++ g) xs

def main (xs: []f64) = vjp (\xs -> f64.sum (twice xs)) xs 1
