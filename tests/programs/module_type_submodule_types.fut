-- A module type whose type is defined by a type of one of its own module
-- specifications (`type elem = Field.t`), and a functor whose body returns
-- a value of its parameter's abstract vector type from a function: in the
-- body the vector is abstract, so the result aliases no array, even
-- though the argument's vector is one.
-- ==
-- input { [1.5f32, 2f32, 4f32] }
-- output { [3f32, 4f32, 8f32] 0f32 }

module type field = {
  type t
  val zero : t
  val (+) : t -> t -> t
  val (*) : t -> t -> t
  val from_i32 : i32 -> t
}

module type vector_space = {
  module Field : field
  type elem = Field.t
  type vector
  val origin : vector
  val scale : elem -> vector -> vector
  val sum : vector -> elem
}

module f32_field : field with t = f32 = {
  type t = f32
  def zero : f32 = 0
  def (+) (a: f32) (b: f32) = a f32.+ b
  def (*) (a: f32) (b: f32) = a f32.* b
  def from_i32 (i: i32) = f32.i32 i
}

module fixed_vectors (F: field) (Len: {val n : i64}) = {
  module Field = F
  type elem = F.t
  type vector = [Len.n]F.t
  def origin : vector = replicate Len.n F.zero
  def scale (k: elem) (v: vector) : vector = map (k F.*) v
  def sum (v: vector) : elem = reduce (F.+) F.zero v
}

module state (V: vector_space) = {
  type state = {position: V.vector, weight: V.elem}
  -- The result holds `V.origin`, of the abstract type `V.vector`.
  def start (w: V.elem) : state = {position = V.origin, weight = w}
  def doubled (v: V.vector) : V.vector = V.scale (V.Field.from_i32 2) v
}

module Three = {def n : i64 = 3}
module V3 = fixed_vectors f32_field Three
module S = state V3

entry main (xs: [3]f32) : ([]f32, f32) =
  let s = S.start 1
  in (S.doubled (xs :> [Three.n]f32), (V3.sum s.position))
