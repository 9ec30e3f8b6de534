-- Closures and partial applications used before the arrays they hold are
-- updated; a loop whose two parameters swap values (both are then consumed);
-- a size in a parameter's type that consumes a fresh array.
-- ==
-- input { 3i64 } output { 3i64 [2i64, 1i64, 2i64] [1i64, 1i64, 2i64] 0i64 }

def lookup (ys: []i64) (i: i64) : i64 = ys[i]

def count (xs: *[]i64) : i64 = length xs

def first (ys: [count (iota 3)]i64) : i64 = ys[0]

def main (n: i64) : (i64, []i64, []i64, i64) =
  let xs = iota n
  let at = \(i: i64) -> xs[i]
  let get = lookup xs
  let s = at 1 + get 2
  let xs[0] = 0
  let (a, b) = loop (a, b) = (copy xs, iota n) for i < 2 do (b with [0] = i + 1, a)
  in (s, a, b, first ([0i64, 1, 2] :> [count (iota 3)]i64))
