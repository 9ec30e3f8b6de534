-- A derivative rule whose adjoint has another shape than the argument is
-- a run-time error of the with_vjp (static AD: a size check; dynamic AD:
-- the sweep checks), not a wrong gradient. (The rule is a function whose
-- result size is existential, so that the program type-checks: a lambda
-- `\_ g -> g ++ g` has the static size `n + n` and is rejected.)
-- ==
-- input { [1.0, 2.0] } error: with_vjp: the derivative rule

def doubled (g: []f64) : []f64 = g ++ g

def twice (xs: []f64) : []f64 = with_vjp (\xs -> map (* 2) xs) (\_ -> doubled) xs

def main (xs: []f64) = vjp (\xs -> f64.sum (twice xs)) xs 1
