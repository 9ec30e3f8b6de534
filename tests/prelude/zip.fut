-- zip, zip2 ... zip5 and unzip, unzip2 ... unzip5.
-- ==
-- entry: z
-- input { [1, 2] [3, 4] } output { [13, 24] }

entry z [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map (\(a, b) -> a * 10 + b) (zip xs ys)

-- ==
-- entry: z2
-- input { [1, 2] [3, 4] } output { [-2, -2] }

entry z2 [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map (\(a, b) -> a - b) (zip2 xs ys)

-- ==
-- entry: z3
-- input { [1, 2] [3, 4] [5, 6] } output { [16, 26] }

entry z3 [n] (a: [n]i32) (b: [n]i32) (c: [n]i32) : [n]i32 =
  map (\(x, y, z) -> x + y * z) (zip3 a b c)

-- ==
-- entry: z4
-- input { [1] [2] [3] [4] } output { [1234] }

entry z4 [n] (a: [n]i32) (b: [n]i32) (c: [n]i32) (d: [n]i32) : [n]i32 =
  map (\(w, x, y, z) -> w * 1000 + x * 100 + y * 10 + z) (zip4 a b c d)

-- ==
-- entry: z5
-- input { [1, 0] [2, 0] [3, 0] [4, 0] [5, 1] } output { [12345, 1] }

entry z5 [n] (a: [n]i32) (b: [n]i32) (c: [n]i32) (d: [n]i32) (e: [n]i32) : [n]i32 =
  map (\(v, w, x, y, z) -> v * 10000 + w * 1000 + x * 100 + y * 10 + z) (zip5 a b c d e)

-- ==
-- entry: uz
-- input { [1, 2, 3] } output { [2, 3, 4] [1, 4, 9] }

entry uz (xs: []i32) : ([]i32, []i32) = unzip (map (\x -> (x + 1, x * x)) xs)

-- ==
-- entry: uz2
-- input { [1, 2, 3] } output { [2, 3, 4] [1, 4, 9] }

entry uz2 (xs: []i32) : ([]i32, []i32) = unzip2 (map (\x -> (x + 1, x * x)) xs)

-- ==
-- entry: uz3
-- input { [1, 2] } output { [1, 2] [2, 4] [false, true] }

entry uz3 (xs: []i32) : ([]i32, []i32, []bool) = unzip3 (map (\x -> (x, x * 2, x > 1)) xs)

-- ==
-- entry: uz4
-- input { [1, 2] } output { [1, 2] [-1, -2] [1, 4] [1.0, 2.0] }

entry uz4 (xs: []i32) : ([]i32, []i32, []i32, []f64) =
  unzip4 (map (\x -> (x, -x, x * x, f64.i32 x)) xs)

-- ==
-- entry: uz5
-- input { [1, 10] } output { [1, 10] [2, 11] [3, 12] [4, 13] [5, 14] }

entry uz5 (xs: []i32) : ([]i32, []i32, []i32, []i32, []i32) =
  unzip5 (map (\x -> (x, x + 1, x + 2, x + 3, x + 4)) xs)
