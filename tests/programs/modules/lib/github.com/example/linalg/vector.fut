-- A library file (no test block): a generic vector module over any
-- `real` module, in a `futhark pkg` style layout.

module mk_vector (R: real) = {
  type t = R.t
  def dot [n] (xs: [n]t) (ys: [n]t) : t = R.sum (map2 (R.*) xs ys)
  def scale [n] (k: t) (xs: [n]t) : [n]t = map (R.* k) xs
}
