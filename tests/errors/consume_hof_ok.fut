-- Uniqueness and higher-order functions, used correctly: a consuming
-- function passed for a consuming parameter; a lambda with a unique
-- parameter applied to a copy; consuming the payload of a local sum value;
-- a function returning a copy of (or an element of) a top-level array;
-- `for … in` over rows with a fresh accumulator; updates before binding a
-- function.
-- ==
-- input { [5, 6, 7] } output { [0, 6, 7] [6, 6, 7] [1, 6, 7] 3 [1, 2, 3] 10 }

def table : []i32 = [1, 2, 3]

def apply_u (f: *[]i32 -> *[]i32) (x: *[]i32) : *[]i32 = f x

def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0

def first (i: i64) : i32 = table[i]

def fresh_table (_u: ()) : []i32 = copy table

type~ buffer = #empty | #full ([]i32)

def main (xs: *[]i32) : ([]i32, []i32, []i32, i32, []i32, i32) =
  let bump = \(ys: *[]i32) -> ys with [0] = ys[0] + 1
  let b = bump (copy xs)
  let o : buffer = #full (copy xs)
  let c = match o
          case #full ys -> ys with [0] = 1
          case #empty -> copy xs
  let s = loop s = 0 for row in [[1, 2], [3, 4]] do s + row[0] + row[1]
  let xs2 = copy xs
  let xs2[1] = 6
  let g = \(k: i32) -> k + xs2[1]
  let _ = g 0
  let a = apply_u reset xs
  in (a, b, c, first 2, fresh_table (), s)
