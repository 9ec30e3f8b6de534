-- concat, ++, rotate (b[i] = a[(i+r) mod n]) and reverse.
-- ==
-- entry: cat
-- input { [1, 2] [3] } output { [1, 2, 3] }
-- input { empty([0]i32) [5] } output { [5] }

entry cat (xs: []i32) (ys: []i32) : []i32 = concat xs ys

-- ==
-- entry: pp
-- input { [1] [2, 3] } output { [1, 2, 3, 0] }

entry pp (xs: []i32) (ys: []i32) : []i32 = xs ++ ys ++ [0]

-- ==
-- entry: rot
-- input { 1i64 [1, 2, 3, 4] } output { [2, 3, 4, 1] }
-- input { -1i64 [1, 2, 3, 4] } output { [4, 1, 2, 3] }
-- input { 5i64 [1, 2, 3, 4] } output { [2, 3, 4, 1] }
-- input { -5i64 [1, 2, 3, 4] } output { [4, 1, 2, 3] }
-- input { 0i64 [1, 2, 3, 4] } output { [1, 2, 3, 4] }

entry rot (r: i64) (xs: []i32) : []i32 = rotate r xs

-- ==
-- entry: rev
-- input { [1, 2, 3] } output { [3, 2, 1] }
-- input { empty([0]i32) } output { empty([0]i32) }

entry rev (xs: []i32) : []i32 = reverse xs

-- ==
-- entry: rev2d
-- input { [[1, 2], [3, 4]] } output { [[3, 4], [1, 2]] }

entry rev2d (xs: [][]i32) : [][]i32 = reverse xs
