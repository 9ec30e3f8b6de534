-- A random-number library in the style of Futhark packages: a module type
-- with a nested module specification (`module int: integral`), a module
-- ascribed to it with a refinement of a qualified type (`with int.t =
-- u32`) whose `int` is the built-in `u32`, a curried functor over a
-- built-in and a user module, and `local open`.
-- ==
-- input { 7 } output { 0.913493264912044 }
-- input { 2 } output { 0.5506782041747771 }

module type rng_engine = {
  module int: integral
  type rng
  val rng_from_seed [n]: [n]i32 -> rng
  val rand: rng -> (rng, int.t)
  val min: int.t
  val max: int.t
}

module lcg : rng_engine with int.t = u32 = {
  module int = u32
  type rng = u32
  def rng_from_seed [n] (seed: [n]i32) : rng = u32.i32 (reduce (+) 0 seed) | 1
  def rand (x: rng) : (rng, u32) =
    let y = x * 1664525u32 + 1013904223u32
    in (y, y)
  def min = 0u32
  def max = u32.highest
}

module uniform_real (R: real) (E: rng_engine) = {
  def rand (g: E.rng) : (E.rng, R.t) =
    let (g', x) = E.rand g
    let t = E.int.to_i64 x
    in (g', R.(i64 t / i64 (E.int.to_i64 E.max)))
}

module dist = uniform_real f64 lcg

local open dist

entry main (seed: i32) : f64 =
  let g = lcg.rng_from_seed [seed]
  let (g, _) = lcg.rand g
  let (_, x) = rand g
  in x
