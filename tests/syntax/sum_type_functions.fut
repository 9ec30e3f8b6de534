-- Sum types whose payloads are functions (declared `type^`): the
-- constructor of such a value is always known, so `match` picks the case.
-- ==
-- input { 4 } output { 9 -4 12 }

type^ op = #unary (i32 -> i32) | #binary (i32 -> i32 -> i32) | #const i32

def run (o: op) (x: i32) : i32 =
  match o
  case #unary f -> f x
  case #binary g -> g x x
  case #const c -> c

-- A function taking an `op` and returning a record holding one.
def twice (o: op) = {first = o, n = 2}

def main (x: i32) : (i32, i32, i32) =
  let r = twice (#unary (+ 5))
  let p : (op, op) = (#const (-x), #binary (\a b -> a * b - x))
  in ( run r.first x
     , match p case (#const c, _) -> c case _ -> 0
     , run p.1 x
     )
