-- Opaque ascription, used as it is meant to be: values of an abstract type
-- are made and read only through the module's functions. Covers an
-- abstract type with a type parameter, `val`s with size parameters and a
-- named parameter, an operator, a type the module type defines in terms
-- of an abstract one, a submodule specification naming the enclosing
-- module type's type, a functor result refined with `with`, and a
-- built-in module ascribed to a module type.
-- ==
-- input { 3i32 } output { 7i32 3i64 10.0 4.0 2.0 }

module type counter = {
  type t
  type^ step = t -> t
  val zero: t
  val incr: step
  val (<+>): t -> t -> t
  val get: t -> i32
  val many: (n: i64) -> t -> [n]t
  val total [n]: [n]t -> t
  module Show: { val twice: t -> i32 }
}

module Counter : counter = {
  type t = i32
  type^ step = t -> t
  def zero = 0i32
  def incr (x: t) = x + 1
  def (<+>) (x: t) (y: t) = x + y
  def get (x: t) = x
  def many (n: i64) (x: t) : [n]t = replicate n x
  def total [n] (xs: [n]t) = i32.sum xs
  module Show = { def twice (x: t) = 2 * x }
}

module type bag = {
  type~ bag 'a
  val empty 'a: () -> bag a
  val add 'a: a -> bag a -> bag a
  val size 'a: bag a -> i64
}

module Bag : bag = {
  type~ bag 'a = []a
  def empty 'a () : bag a = []
  def add 'a (x: a) (b: bag a) : bag a = b ++ [x]
  def size 'a (b: bag a) = length b
}

module type scaled = {
  type num
  type factor
  val factor: f64 -> factor
  val scale: factor -> num -> num
}

module mk_scaled (R: real) : scaled with num = R.t = {
  type num = R.t
  type factor = R.t
  def factor (x: f64) = R.f64 x
  def scale (k: factor) (x: num) = R.(k * x)
}

module S64 = mk_scaled f64

module Root : { type t  val f64: f64 -> t  val sqrt: t -> t  val to_f64: t -> f64 } = f64

entry main (k: i32) : (i32, i64, f64, f64, f64) =
  let c = Counter.incr (Counter.incr Counter.zero)
  let c = Counter.total (Counter.many 3 c) Counter.<+> Counter.incr Counter.zero
  let b = Bag.add true (Bag.add false (Bag.add true (Bag.empty ())))
  in ( Counter.get c + Counter.Show.twice Counter.zero * k
     , Bag.size b
     , S64.scale (S64.factor 2.5) 4.0
     , Root.to_f64 (Root.f64 4.0)
     , Root.to_f64 (Root.sqrt (Root.f64 4.0)) )
