-- Operator sections: (+), (*2), (2-), (/2), qualified (f32.*), and
-- projection sections (.0), (.a).
-- ==
-- input { [1, -3, 4] } output { [2, -6, 8] [1, 5, -2] [2, -2, 5] [0, -2, 2] 2 }
-- input { empty([0]i32) } output { empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) 0 }

def main (xs: []i32) : ([]i32, []i32, []i32, []i32, i32) =
  (map (*2) xs, map (2-) xs, map (+ 1) xs, map (/2) xs, reduce (+) 0 xs)

-- ==
-- entry: fprod
-- input { [1.5f32, 2.0f32, -4.0f32] } output { -12.0f32 }
-- input { empty([0]f32) } output { 1.0f32 }

entry fprod (ys: []f32) : f32 = reduce (f32.*) 1f32 ys

-- ==
-- entry: proj
-- input { [1, 2, 3] } output { [1, 2, 3] [3, 6, 9] [2, 3, 4] }

entry proj (xs: []i32) : ([]i32, []i32, []i32) =
  let ps = map (\x -> (x, x + 1)) xs
  let rs = map (\x -> {a = x * 3, b = x}) xs
  in (map (.0) ps, map (.a) rs, map (.1) ps)
