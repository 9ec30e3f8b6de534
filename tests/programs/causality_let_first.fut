-- Programs the causality check must accept: an unknown size bound with
-- `let` before its use, sizes computed by an argument used by the
-- function applied to it, and loop parameters whose sizes change.
-- ==
-- input { [1i64, 20i64, 3i64, 40i64] 2i64 }
-- output { [0i64, 1i64, 1i64, 3i64] 8i64 10i64 }

def grow (k: i64) : []i64 =
  loop acc = iota k for j < 2 do acc ++ (if j == 0 then [1] else [3])

def main (xs: []i64) (k: i64) =
  let small = filter (< 10) xs
  let padded = ([0] ++) small
  let total = length (xs[1:]) + length (filter (> 10) xs) + length (grow k)
  let grown = loop ys = small for i < 2 do ys ++ ys
  let loops = length grown
  in (grow k, total - 1, loops + i64.sum padded - 2)
