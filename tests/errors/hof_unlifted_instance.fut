-- A type parameter that is not lifted (`'a`) may not stand for a function
-- type; only `'^a` may.
-- ==
-- error: Type `\(i32\) -> i32` found to be functional

def pick 'a (b: bool) (x: a) (y: a) : a = if b then x else y

def main (b: bool) (n: i32) : i32 =
  let f = pick b (\(x: i32) -> x + 1) (\(x: i32) -> x * 2)
  in f n
