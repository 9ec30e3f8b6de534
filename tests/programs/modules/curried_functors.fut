-- Curried functors (two parameters, applied at once or one at a time),
-- a higher-order functor taking a functor, an anonymous functor
-- `\(X: S) -> …`, a functor whose result is ascribed, and a functor
-- defined inside a module, and a functor returning a functor.
-- ==
-- input { 3 } output { 10 13 6 16 9 }

module type value = { val v: i32 }
module type adder = { val add: i32 -> i32 }

module mk_pair (A: value) (B: value) = {
  def sum = A.v + B.v
}

module Three = { def v = 3i32 }
module Seven = { def v = 7i32 }
module Ten = { def v = 10i32 }

module P = mk_pair Three Seven
module Partial = mk_pair Three
module Q = Partial Ten

module apply_twice (F: (X: value) -> adder) (V: value) = {
  module Once = F V
  def twice (x: i32) = Once.add (Once.add x)
}

module adder_of (X: value) : adder = {
  def add (y: i32) = y + X.v
  def hidden = 0i32
}

module T = apply_twice adder_of Three
module U = apply_twice (\(X: value) -> { def add (y: i32) = y * X.v }) Three

-- A functor whose body is an anonymous functor: curried by hand.
module pair_lambda (A: value) = \(B: value) -> { def sum = A.v * B.v }
module Z = pair_lambda Three Ten

module Factory = {
  module scale (X: value) = { def by (y: i32) = y * X.v }
}
module ScaleThree = Factory.scale Three

entry main (x: i32) : (i32, i32, i32, i32, i32) =
  (P.sum, Q.sum, T.twice 0, U.twice x - 11, ScaleThree.by x + Z.sum - 30)
