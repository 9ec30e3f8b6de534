-- Sizes that are expressions: a dependent function's result size is its
-- argument (`iota (n * m)` has size `n * m`), a `let`-bound size is
-- replaced by its definition in the body's type, and a function whose
-- parameter size is `a * b` gets `a` and `b` from an argument of size
-- `n * m` (unification part by part).
-- ==
-- input { 2i64 3i64 }
-- output { 2i64 3i64 5i64 [0i64, 1i64, 2i64, 3i64] }

def f (n: i64) (m: i64) : [n * m]i64 = iota (n * m)

def g [a] [b] (xs: [a * b]i64) : (i64, i64, i64) = (a, b, xs[a * b - 1])

def succ_iota (n: i64) : [n + 1]i64 =
  let k = n + 1
  in iota k

def main (n: i64) (m: i64) =
  let (a, b, last) = g (f n m)
  in (a, b, last, succ_iota m)
