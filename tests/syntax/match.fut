-- match with literal, wildcard, tuple, record and constructor patterns.
-- ==
-- input { 0 0 true } output { 12.0 100 0 0 }
-- input { 1 3 false } output { 6.0 3 2 4 }
-- input { 2 -1 true } output { 0.0 300 -2 1 }
-- input { 5 0 true } output { 0.0 100 0 50 }

type shape = #circle f64 | #rect f64 f64 | #point

def area (s: shape) : f64 =
  match s
  case #circle r -> 3.0 * r * r
  case #rect w h -> w * h
  case #point -> 0.0

def lit (x: i32) : i32 =
  match x
  case 0 -> 100
  case 1 -> 200
  case -1 -> 300
  case _ -> x

def tup (p: (i32, bool)) : i32 =
  match p
  case (0, _) -> 0
  case (n, true) -> n * 2
  case (n, false) -> n - 1

def recm (r: {a: i32, b: i32}) : i32 =
  match r
  case {a = 0, b} -> b
  case {a, b = 0} -> a * 10
  case {a, b} -> a + b

def main (k: i32) (x: i32) (b: bool) : (f64, i32, i32, i32) =
  let s : shape =
    if k == 0 then #circle 2.0
    else if k == 1 then #rect 2.0 (f64.i32 x)
    else #point
  in (area s, lit x, tup (x, b), recm {a = k, b = x})
