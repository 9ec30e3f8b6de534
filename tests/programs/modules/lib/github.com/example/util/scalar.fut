-- A library file (no test block) of another package, imported by the
-- linalg package through `..`.

module mk_scalar (R: real) = {
  def square (x: R.t) : R.t = x R.* x
}
