-- filter, partition and partition2 (all stable).
-- ==
-- entry: f
-- input { [1, 2, 3, 4, -2, -3] } output { [2, 4, -2] }
-- input { [1, 3] } output { empty([0]i32) }
-- input { empty([0]i32) } output { empty([0]i32) }

entry f (xs: []i32) : []i32 = filter (\x -> x % 2 == 0) xs

-- ==
-- entry: p
-- input { [3, -1, 0, 5, -2] } output { [3, 5] [-1, 0, -2] }
-- input { [1, 2] } output { [1, 2] empty([0]i32) }

entry p (xs: []i32) : ([]i32, []i32) = partition (> 0) xs

-- ==
-- entry: p2
-- input { [3, -1, 0, 5, -2, 0] } output { [-1, -2] [0, 0] [3, 5] }
-- input { [7] } output { empty([0]i32) empty([0]i32) [7] }

entry p2 (xs: []i32) : ([]i32, []i32, []i32) = partition2 (< 0) (== 0) xs
