-- GradBench `gmm` (ADBench GMM): the log-posterior of a Gaussian mixture
-- with a Wishart prior, and its gradient with respect to (alpha, mu, q, l)
-- by reverse-mode AD.
--
-- Component k has the lower-triangular factor Q_k = diag(exp q_k) + L_k,
-- L_k strictly lower triangular, filled column by column from l_k.

def logsumexp [n] (v: [n]f64) : f64 =
  let a = f64.maximum v
  in a + f64.log (f64.sum (map (\x -> f64.exp (x - a)) v))

-- Position in l_k of the entry (row j, column i) of L_k, j > i.
def tri_index (d: i64) (i: i64) (j: i64) : i64 =
  i * (d - 1) - i * (i - 1) / 2 + (j - i - 1)

-- Q_k y, given exp q_k: the diagonal part, plus for each row j the strictly
-- lower part (the columns i < j only).
-- offs[i] + j is tri_index d i j, so the innermost loop adds instead of
-- evaluating the quadratic index.
def qtimes [d] [lt] (offs: [d]i64) (exp_qk: [d]f64) (lk: [lt]f64) (y: [d]f64) : [d]f64 =
  map (\j ->
         let below = f64.sum (map (\i -> lk[offs[i] + j] * y[i]) (iota j))
         in exp_qk[j] * y[j] + below)
      (iota d)

def sqnorm [n] (v: [n]f64) : f64 = f64.sum (map (\x -> x * x) v)

-- log of the multivariate gamma function Gamma_p(a).
def log_gamma_distrib (a: f64) (p: i64) : f64 =
  0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi
  + f64.sum (map (\j -> f64.lgamma (a - 0.5 * f64.i64 j)) (iota p))

def log_wishart_prior [k] [d] [lt] (gamma: f64) (m: i64)
                                   (q: [k][d]f64) (l: [k][lt]f64) : f64 =
  let n_w = d + m + 1
  let c = f64.i64 (n_w * d) * (f64.log gamma - 0.5 * f64.log 2.0)
          - log_gamma_distrib (0.5 * f64.i64 n_w) d
  let per_component =
    map2 (\qk lk ->
            let frob = sqnorm (map f64.exp qk) + sqnorm lk
            in -0.5 * gamma * gamma * frob + f64.i64 m * f64.sum qk)
         q l
  in f64.sum per_component + f64.i64 k * c

def gmm_objective [n] [d] [k] [lt]
                  (x: [n][d]f64) (gamma: f64) (m: i64)
                  (alpha: [k]f64) (mu: [k][d]f64) (q: [k][d]f64) (l: [k][lt]f64) : f64 =
  let sum_qs = map f64.sum q
  -- exp q once, not once per point.
  let exp_q = map (map f64.exp) q
  let offs = map (\i -> tri_index d i 0) (iota d)
  let per_point (xi: [d]f64) : f64 =
    logsumexp (map4 (\ak sk muk (exp_qk, lk) ->
                       let y = map2 (-) xi muk
                       in ak + sk - 0.5 * sqnorm (qtimes offs exp_qk lk y))
                    alpha sum_qs mu (zip exp_q l))
  let constant = -(f64.i64 n * f64.i64 d * 0.5 * f64.log (2.0 * f64.pi))
  in constant + f64.sum (map per_point x)
     - f64.i64 n * logsumexp alpha
     + log_wishart_prior gamma m q l

entry objective [n] [d] [k] [lt]
                (x: [n][d]f64) (gamma: f64) (m: i64)
                (alpha: [k]f64) (mu: [k][d]f64) (q: [k][d]f64) (l: [k][lt]f64) : f64 =
  gmm_objective x gamma m alpha mu q l

entry jacobian [n] [d] [k] [lt]
               (x: [n][d]f64) (gamma: f64) (m: i64)
               (alpha: [k]f64) (mu: [k][d]f64) (q: [k][d]f64) (l: [k][lt]f64)
             : ([k]f64, [k][d]f64, [k][d]f64, [k][lt]f64) =
  vjp (\(a, mu', q', l') -> gmm_objective x gamma m a mu' q' l')
      (alpha, mu, q, l) 1.0
