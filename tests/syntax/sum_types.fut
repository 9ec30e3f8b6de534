-- Sum types: constructors with and without payloads, parametric sum
-- types, arrays of sum values, and equality on sum values.
-- ==
-- input { 7 2 } output { 3 9 14 false }
-- input { 7 0 } output { -1 7 14 true }
-- input { -7 2 } output { -4 -5 -14 false }

type opt 'a = #some a | #none

def safe_div (a: i32) (b: i32) : opt i32 =
  if b == 0 then #none else #some (a / b)

def get_or (d: i32) (o: opt i32) : i32 =
  match o
  case #some v -> v
  case #none -> d

type expr = #lit i32 | #add i32 i32 | #neg i32

def eval (e: expr) : i32 =
  match e
  case #lit x -> x
  case #add x y -> x + y
  case #neg x -> -x

def main (a: i32) (b: i32) : (i32, i32, i32, bool) =
  let r = safe_div a b
  let es : [3]expr = [#lit a, #add a b, #neg b]
  in (get_or (-1) r, eval es[1], reduce (+) 0 (map eval es), r == #none)
