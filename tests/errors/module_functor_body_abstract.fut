-- A functor's body is checked against its parameter's module type, not
-- against the modules it is applied to: `R.t` is abstract in the body, so
-- `x + 1.0` is an error even though `mk_stats` is only applied to `f64`.
-- ==
-- error: found `mk_stats.R.t`

module mk_stats (R: real) = {
  def mean [n] (xs: [n]R.t) : R.t = R.(sum xs / i64 n)
  def shifted (x: R.t) : R.t = x + 1.0
}

module S = mk_stats f64

def main (xs: []f64) : f64 = S.mean xs
