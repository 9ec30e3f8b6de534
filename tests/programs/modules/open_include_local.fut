-- `open` brings a module's members into scope, `include` also makes them
-- members of the enclosing module, `local` hides a declaration from the
-- module's users, and later declarations shadow opened names.
-- ==
-- input { 4 } output { 8 5 16 7 40 }

module Base = {
  def double (x: i32) = x * 2
  def inc (x: i32) = x + 1
}

module Extended = {
  include Base
  local def helper (x: i32) = x * x
  def square (x: i32) = helper x
}

module WithLocal = {
  local module Hidden = { def k = 7 }
  def seven = Hidden.k
}

open Base

def times_ten (x: i32) = Extended.double (x * 5)

entry main (x: i32) : (i32, i32, i32, i32, i32) =
  (double x, inc x, Extended.square x, WithLocal.seven, times_ten x)
