-- GradBench `lse`: log-sum-exp, computed stably from the maximum and a sum
-- (no built-in LSE), and its gradient by reverse-mode AD.
--
-- LSE(x) = a + log (sum_i exp (x_i - a)),  a = max_i x_i.

def logsumexp [n] (x: [n]f64) : f64 =
  let a = f64.maximum x
  in a + f64.log (f64.sum (map (\xi -> f64.exp (xi - a)) x))

entry primal [n] (x: [n]f64) : f64 = logsumexp x

entry gradient [n] (x: [n]f64) : [n]f64 = vjp logsumexp x 1.0
