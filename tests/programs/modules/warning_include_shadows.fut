-- An `include` in a module type whose abstract type has the name of a
-- type already specified shadows it, and Futhark warns; a program without
-- such a thing gets no warning (`warning: ^$` in the second block).
-- ==
-- warning: Inclusion shadows type "key"

module type keyed = { type key }
module type ordered = { type key  val less : key -> key -> bool }

module type dictionary = {
  include keyed
  include ordered
}

module Ints : dictionary with key = i32 = {
  type key = i32
  def less (x: i32) (y: i32) = x < y
}

entry main (x: i32) (y: i32) : bool = Ints.less x y
