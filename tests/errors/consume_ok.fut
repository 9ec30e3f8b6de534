-- Programs that respect the uniqueness rules: updates of copies, of fresh
-- arrays, of unique parameters and loop parameters; observing an array
-- before it is consumed; consumption in only one branch of an `if`.
-- ==
-- input { [1, 2, 3] true } output { [7, 2, 3] [1, 9, 3] 1 [0i64, 1i64, 2i64] }
-- input { [1, 2, 3] false } output { [7, 2, 3] [1, 2, 3] 1 [0i64, 1i64, 2i64] }

def put (xs: *[]i32) (i: i64) (v: i32) : *[]i32 = xs with [i] = v

def main (a: *[]i32) (c: bool) : ([]i32, []i32, i32, []i64) =
  let first = a[0]
  let b = copy a
  let a = put a 0 7
  let b = if c then b with [1] = 9 else b
  let n = length b
  let idx = loop acc = replicate n 0i64 for i < n do acc with [i] = i
  in (a, b, first, idx)
