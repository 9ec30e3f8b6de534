-- Functions with dependent types passed where dependent function types
-- are expected: the parameter names differ, or the argument is a
-- lambda whose result size is its parameter, or a library function.
-- ==
-- input { 4i64 }
-- output { [0i64, 1i64, 2i64, 3i64] [2f32, 2f32, 2f32, 2f32] 6i64 [0i64, 1i64, 2i64] }

def build 't (make: (k: i64) -> [k]t) (n: i64) : [n]t =
  make n

def count_with (f: (len: i64) -> [len]i64 -> i64) (n: i64) : i64 =
  f n (iota n)

def total (m: i64) (xs: [m]i64) : i64 = i64.sum xs

def main (n: i64) =
  let a = build iota n
  let b = build (\k -> replicate k 2f32) n
  let c = count_with total n
  let d = map (\k -> k) (iota (n - 1))
  in (a, b, c, d)
