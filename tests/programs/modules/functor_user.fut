-- A parametric module (functor) applied to user modules; the argument may
-- have more members than the parameter's module type asks for, and may be
-- an anonymous structure.
-- ==
-- input { [1, 2, 3] } output { 6 7 [2, 4, 6] 4 }

module type monoid = {
  type t
  val zero: t
  val op: t -> t -> t
}

module mk_fold (M: monoid) = {
  def fold (xs: []M.t) : M.t = reduce M.op M.zero xs
  def twice (x: M.t) : M.t = M.op x x
}

module Sum = {
  type t = i32
  def zero : t = 0
  def op (a: t) (b: t) : t = a + b
  def unused = 42
}

module Max = {
  type t = i32
  def zero = i32.lowest
  def op = i32.max
}

module SumFold = mk_fold Sum
module MaxFold = mk_fold Max
module ProdFold = mk_fold { type t = i32  def zero = 1i32  def op (a: i32) (b: i32) = a * b }

entry main (xs: []i32) : (i32, i32, []i32, i32) =
  (SumFold.fold xs, MaxFold.fold xs + ProdFold.fold xs - 2, map SumFold.twice xs, ProdFold.twice 2)
