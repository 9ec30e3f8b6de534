-- As in Futhark, `open` inside a module (or a functor's body) makes the
-- opened names members of that module; `local open` only brings them into
-- scope.
-- ==
-- input { 5 } output { 12 7 10 5 }

module type has_base = { val base : i32 }

module Seven : has_base = { def base = 7i32 }

module AddBase (B: has_base) = {
  open B
  def plus (x: i32) = x + base
}

module Both = AddBase Seven

-- A functor whose body opens another application's result.
module Twice (B: has_base) = {
  module Inner = AddBase B
  open Inner
  def twice (x: i32) = 2 * x
}

module T = Twice Seven

module Private = {
  local open Seven
  def seen = base - 2
}

entry main (x: i32) : (i32, i32, i32, i32) =
  (Both.plus x, Both.base, T.twice x, Private.seen)
