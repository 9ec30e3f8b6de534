-- foldl (f: a -> b -> a) and foldr (f: b -> a -> a): sequential folds.
-- ==
-- entry: fl
-- input { [1, 2, 3] } output { 123 -6 }
-- input { empty([0]i32) } output { 0 0 }

entry fl (xs: []i32) : (i32, i32) = (foldl (\acc x -> acc * 10 + x) 0 xs, foldl (-) 0 xs)

-- ==
-- entry: fr
-- input { [1, 2, 3] } output { 321 2 }
-- input { empty([0]i32) } output { 0 0 }

entry fr (xs: []i32) : (i32, i32) = (foldr (\x acc -> acc * 10 + x) 0 xs, foldr (-) 0 xs)

-- The accumulator and element types may differ.
-- ==
-- entry: count
-- input { [true, false, true, true] } output { 3i64 }

entry count (bs: []bool) : i64 = foldl (\n b -> if b then n + 1 else n) 0i64 bs
