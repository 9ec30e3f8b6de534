-- AD of recursive functions. Forward mode is static: the derivative of a
-- recursive function calls itself (`pow_jvp`). Reverse mode inlines the
-- calls of the function it differentiates, which a recursion does not
-- allow: those `vjp`s are left to the interpreter's dynamic AD (and the C
-- backend leaves their entry points out). Values by hand: d/dx x^n =
-- n x^(n-1); d/dxs sum xs[i]^2 = 2 xs; the specialisation of a recursive
-- higher-order function to a closure over x gives x^n too.
-- ==
-- entry: pow_jvp pow_vjp pow_hof_jvp
-- input { 2.0 3i64 } output { 12.0 }
-- input { -1.5 4i64 } output { -13.5 }
-- input { 5.0 0i64 } output { 0.0 }

-- ==
-- entry: sumsq_vjp sumsq_jvp
-- input { [1.0, 2.0, 3.0] } output { [2.0, 4.0, 6.0] }

def pow (x: f64) (n: i64) : f64 = if n == 0 then 1 else x * pow x (n - 1)

entry pow_jvp (x: f64) (n: i64) = jvp (\x -> pow x n) x 1

entry pow_vjp (x: f64) (n: i64) = vjp (\x -> pow x n) x 1

def iter (n: i64) (g: f64 -> f64) (y: f64) : f64 = if n == 0 then y else iter (n - 1) g (g y)

entry pow_hof_jvp (x: f64) (n: i64) = jvp (\x -> iter n (\y -> y * x) 1) x 1

def sumsq [n] (xs: [n]f64) : f64 = if n == 0 then 0 else xs[0] * xs[0] + sumsq (drop 1 xs)

entry sumsq_vjp (xs: []f64) = vjp sumsq xs 1

-- The gradient by one jvp per unit vector.
entry sumsq_jvp (xs: []f64) =
  map (\i -> jvp sumsq xs (map (\j -> f64.bool (i == j)) (indices xs))) (indices xs)
