-- Programs near the boundary of the static rules, all valid: a size
-- parameter used in one parameter and the result; the same name for a size
-- and a value elsewhere; `_`-names bound but not used; functions inside
-- records passed to and returned from functions (not from branches);
-- `if` choosing between the *results* of functions; loops over records of
-- arrays; exhaustive matches by wildcard, by all constructors, and on
-- nested tuples of booleans.
-- ==
-- input { 3i64 true } output { [1, 2, 3] 7 3 3 }
-- input { 2i64 false } output { [1, 2] 3 4 0 }

type colour = #red | #green | #blue
type opt = #none | #some bool

def iota1 [n] (_xs: [n]i32) : [n]i32 = map (\i -> i32.i64 i + 1) (iota n)

def ops (k: i32) = {apply = \(x: i32) -> x + k, k}

def code (c: colour) : i32 =
  match c
  case #red -> 1
  case #green -> 2
  case #blue -> 4

def both (p: (bool, bool)) : i32 =
  match p
  case (true, true) -> 3
  case (true, false) -> 2
  case (false, _) -> 0

def opt_code (o: opt) : i32 =
  match o
  case #some true -> 2
  case #some false -> 1
  case #none -> 0

def main (n: i64) (b: bool) : ([]i32, i32, i32, i32) =
  let xs = iota1 (replicate n 0i32)
  let r = ops 2
  let f = r.apply
  let y = if b then f 5 else f 1
  let _unused = 17
  let (s, _) = loop (s, acc) = (0, {v = xs}) for x in xs do (s + x, acc)
  let c = code (if b then #red else #green)
  in (xs, y, (if b then s - 3 else s) + c - 1 + 0 * both (b, b), both (b, true) + opt_code #none)
