-- Module types matched as Futhark matches them: a refinement inside a
-- module type naming an earlier specification, an included module type
-- refined by its own type, a specified type defined in terms of a value,
-- a member more general (or more unique, or consuming less) than its
-- specification, an existential result matched by a known size, and a
-- functor ascribed a functor type.
-- ==
-- input { 4i64 } output { 10.0 [0i64, 1i64, 2i64, 3i64] 8i64 [2i64, 1i64] 3i32 [7i32, 7i32] }

module type arrow = { type a  type b  val f : a -> b }

module type twice = {
  module F: arrow
  module G: arrow with a = F.b
}

module Both : twice with F.a = i64 with G.b = f64 = {
  module F = { type a = i64  type b = f64  def f (x: i64) = f64.i64 x }
  module G = { type a = f64  type b = f64  def f (x: f64) = x + 6.0 }
}

module type has_elem = { type elem }

module type elem_twice = {
  type elem
  include has_elem with elem = elem
  val dup : elem -> (elem, elem)
}

module Pair : elem_twice with elem = i64 = {
  type elem = i64
  def dup (x: i64) = (x, x)
}

type ints [n] = [n]i64

module type counted = {
  val k : i64
  type k_ints = ints [k]
  val first : k_ints
}

module Four : counted = {
  def k = 4i64
  type k_ints = ints [k]
  def first : k_ints = iota k
}

module type shapes = {
  val ident 'a : a -> a
  val fresh [n] : [n]i64 -> [n]i64
  val keep [n] : *[n]i64 -> [n]i64
  val pair : i64 -> []i64
}

module Shapes : shapes = {
  def ident 'b (x: b) = x
  def fresh [n] (xs: [n]i64) : *[n]i64 = copy xs
  def keep [n] (xs: [n]i64) = xs
  def pair (x: i64) : [2]i64 = [x, x - 1]
}

module type adder = { val add : i32 -> i32 }

module Twice = (\(A: adder) -> { def add (x: i32) = A.add (A.add x) })
  : (A: adder) -> adder

module Inc = { def add (x: i32) = x + 1 }
module Inc2 = Twice Inc

entry main (n: i64) : (f64, [4]i64, i64, []i64, i32, [2]i32) =
  let (p, q) = Pair.dup n
  in ( Both.G.f (Both.F.f n)
     , copy Four.first
     , Shapes.ident (p + q)
     , Shapes.keep (Shapes.pair (Shapes.fresh [2i64])[0])
     , Inc2.add 1
     , replicate 2 7 )
