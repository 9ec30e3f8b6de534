-- iota, indices, replicate, tabulate, tabulate_2d, tabulate_3d.
-- ==
-- entry: io
-- input { 5i64 } output { [0i64, 1i64, 2i64, 3i64, 4i64] }
-- input { 0i64 } output { empty([0]i64) }

entry io (n: i64) : []i64 = iota n

-- ==
-- entry: ind
-- input { [1.5, 2.5, 3.5] } output { [0i64, 1i64, 2i64] }

entry ind (xs: []f64) : []i64 = indices xs

-- ==
-- entry: rep
-- input { 3i64 7 } output { [7, 7, 7] }
-- input { 0i64 1 } output { empty([0]i32) }

entry rep (n: i64) (x: i32) : []i32 = replicate n x

-- ==
-- entry: rep2
-- input { 2i64 3i64 } output { [[true, true, true], [true, true, true]] }

entry rep2 (n: i64) (m: i64) : [][]bool = replicate n (replicate m true)

-- ==
-- entry: tab
-- input { 4i64 } output { [0i64, 1i64, 4i64, 9i64] }

entry tab (n: i64) : []i64 = tabulate n (\i -> i * i)

-- ==
-- entry: tab2
-- input { 2i64 3i64 } output { [[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]] }

entry tab2 (n: i64) (m: i64) : [][]i64 = tabulate_2d n m (\i j -> i * 10 + j)

-- ==
-- entry: tab3
-- input { 2i64 2i64 2i64 }
-- output { [[[0i64, 1i64], [10i64, 11i64]], [[100i64, 101i64], [110i64, 111i64]]] }

entry tab3 (n: i64) (m: i64) (k: i64) : [][][]i64 =
  tabulate_3d n m k (\i j l -> i * 100 + j * 10 + l)
