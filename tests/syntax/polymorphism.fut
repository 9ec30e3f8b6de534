-- Polymorphic functions with type parameters 'a, and a lifted type
-- parameter '^a instantiated with a function type.
-- ==
-- input { 5 1.5 } output { 7 6.0 true 10 5 }
-- input { -3 -0.25 } output { -1 -1.0 false -6 -3 }

def twice 'a (f: a -> a) (x: a) : a = f (f x)

def id2 't (x: t) : t = x

def fst3 'a 'b 'c (t: (a, b, c)) : a = t.0

def app '^a 'b (f: a) (k: a -> b) : b = k f

def main (x: i32) (y: f64) : (i32, f64, bool, i32, i32) =
  ( twice (+ 1) x
  , twice (* 2.0) y
  , id2 (x > 0)
  , app (\z -> z * 2) (\g -> g x)
  , fst3 (x, y, true)
  )

-- The same polymorphic function used at several types.
-- ==
-- entry: multi
-- input { [1, 2, 3] [true, false] } output { [3, 2, 1] [false, true] 3i64 2i64 }

def rev 't (xs: []t) : []t = xs[::-1]
def len 't (xs: []t) : i64 = length xs

entry multi (xs: []i32) (bs: []bool) : ([]i32, []bool, i64, i64) =
  (rev xs, rev bs, len xs, len bs)
