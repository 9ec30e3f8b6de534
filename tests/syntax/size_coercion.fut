-- Size coercion `e :> t` (checked at run time) and type ascription
-- `e : t`.
-- ==
-- input { [1, -2, 3, 4] } output { 22 }
-- input { [-1, -2] } output { 0 }
-- input { [5] } output { 0 }

def main (xs: []i32) : i32 =
  let ys = filter (> 0) xs
  let zs = map (* 2) ys
  let k = length ys
  let ws = iota k
  in reduce (+) 0 (map2 (\a b -> a * i32.i64 b) (zs :> [k]i32) ws)

-- ==
-- entry: coerce_ok
-- input { [1, 2, 3] 3i64 } output { [1, 2, 3] }
-- input { [1, 2, 3] 2i64 } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

entry coerce_ok [n] (xs: [n]i32) (m: i64) : [m]i32 = xs :> [m]i32

-- ==
-- entry: ascribe
-- input { 2 } output { 5i64 [0i64, 1i64, 2i64] 2.5f32 }

entry ascribe (x: i32) : (i64, [3]i64, f32) =
  let a = (3 : i64) + i64.i32 x
  let b = (iota 3 : [3]i64)
  let c : f32 = 2.5
  in (a, b, c)
