-- Near the boundary: a loop updating its parameter in place and returning
-- it (or a copy of an outer array); a lambda with a unique result that
-- returns a fresh array.
-- ==
-- input { [5, 6, 7] } output { [5, 6, 7] [1, 1, 1] [6, 7, 8] }

def main (xs: []i32) : ([]i32, []i32, []i32) =
  let a = loop acc = copy xs for i < 3 do
            if i == 1 then copy xs else acc with [i] = acc[i]
  let b = loop acc = copy xs for i < 3 do
            let acc[i] = 1
            in acc
  let fresh = \(x: []i32) : *[]i32 -> map (+1) x
  in (a, b, fresh xs)
