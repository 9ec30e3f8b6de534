-- Module types with abstract and parametric types, `val` specifications
-- with size parameters, ascription (`module M: S = …`), refinement with
-- `with`, and nested module specifications.
-- ==
-- input { 5i64 } output { 15i64 [5i64, 5i64, 5i64] 2.5 }

module type container = {
  type elem
  type c 'a
  val wrap 'a: a -> c a
  val size 'a: c a -> i64
  val fill [n]: [n]i64 -> elem -> [n]elem
}

module type with_sub = {
  module Sub: { val half: f64 -> f64 }
}

module Counter : container with elem = i64 = {
  type elem = i64
  type c 'a = (i64, a)
  def wrap 'a (x: a) : c a = (1, x)
  def size 'a (x: c a) : i64 = x.0 * 3
  def fill [n] (xs: [n]i64) (v: elem) : [n]elem = map (\_ -> v) xs
}

module Outer : with_sub = {
  module Sub = { def half (x: f64) = x / 2.0 }
}

entry main (n: i64) : (i64, []i64, f64) =
  (Counter.size (Counter.wrap true) * n + Counter.size (Counter.wrap 1.5) - 3, Counter.fill [1, 2, 3] n, Outer.Sub.half (f64.i64 n))
