-- iterate (n is an i32), iterate_until, iterate_while.
-- ==
-- entry: it
-- input { 3 1 } output { 8 }
-- input { 0 5 } output { 5 }

entry it (n: i32) (x: i32) : i32 = iterate n (* 2) x

-- ==
-- entry: itu
-- input { 1 } output { 243 }
-- input { 200 } output { 200 }

entry itu (x: i32) : i32 = iterate_until (> 100) (* 3) x

-- ==
-- entry: itw
-- input { 40 } output { 5 }
-- input { 7 } output { 7 }
-- input { -8 } output { -1 }

entry itw (x: i32) : i32 = iterate_while (\y -> y % 2 == 0) (/ 2) x
