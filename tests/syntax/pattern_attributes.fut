-- Attributes on patterns have no semantic effect: on parameters, in
-- `let`, tuple and record patterns, loops and `match` cases.
-- ==
-- input { [1, 2, 3] } output { 9 }
-- input { empty([0]i32) } output { 0 }

def square (#[trace] x: i32) : i32 = x * x

def main (#[unused] xs: []i32) : i32 =
  let #[noinline] (a, #[trace(b)] b) = (i32.sum (map square xs), i32.sum xs)
  let {first = #[unused] f, second} = {first = a, second = b}
  let total = loop #[sequential] acc = f for #[unused] x in xs do acc + x - 1
  in match total + second - a
     case #[unused] 0 -> total
     case #[unused] (#[unused] t) -> t
