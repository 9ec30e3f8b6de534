-- A functor's result type hides its abstract types (each application
-- makes new ones); a refinement `with t = …` keeps a type transparent.
-- ==
-- error: expected `Pair.key`, found `i64`

module type keyed = {
  type key
  type value
  val make: value -> key
  val read: key -> value
}

module mk_keyed (V: { type t val default: t }) : keyed with value = V.t = {
  type key = i64
  type value = V.t
  def make (_: value) : key = 7
  def read (_: key) : value = V.default
}

module Pair = mk_keyed { type t = f64 def default = 1.5f64 }

-- `value` is `f64` outside (refined), but `key` stays abstract.
def ok (x: f64) : f64 = Pair.read (Pair.make x) + x

def main (k: i64) : f64 = Pair.read k
