-- Reductions of every length around the C backend's groups of four
-- partial results (lanes): 0 to 9 elements, so that every number of
-- leftover elements occurs, with operators that are exactly associative
-- (integer +, *, min, max, bitwise, logical) and with float +, whose
-- grouping Futhark leaves open (the inputs are exact in binary, so any
-- grouping gives the same sum).
-- ==
-- entry: lengths
-- input { 0i64 } output { 0i64 1i64 9223372036854775807i64 -9223372036854775808i64 0i64 true false 0.0 }
-- input { 1i64 } output { 1i64 1i64 1i64 1i64 1i64 false true 0.75 }
-- input { 3i64 } output { 6i64 6i64 1i64 3i64 0i64 false true 3.5 }
-- input { 4i64 } output { 10i64 24i64 1i64 4i64 4i64 false true 5.5 }
-- input { 5i64 } output { 15i64 120i64 1i64 5i64 1i64 false true 8.25 }
-- input { 7i64 } output { 28i64 5040i64 1i64 7i64 0i64 false true 15.0 }
-- input { 8i64 } output { 36i64 40320i64 1i64 8i64 8i64 false true 19.0 }
-- input { 9i64 } output { 45i64 362880i64 1i64 9i64 1i64 false true 23.75 }

-- For xs = 1..n: the sum, product, minimum, maximum, xor, whether all are
-- even, whether any is odd, and the float sum of x / 2 + 0.25 * (x % 2).
entry lengths (n: i64) =
  let xs = map (+ 1) (iota n)
  let fs = map (\x -> f64.i64 x / 2.0 + 0.25 * f64.i64 (x % 2)) xs
  in ( reduce (+) 0 xs
     , reduce (*) 1 xs
     , reduce i64.min i64.highest xs
     , reduce i64.max i64.lowest xs
     , reduce (^) 0 xs
     , reduce (&&) true (map (\x -> x % 2 == 0) xs)
     , reduce (||) false (map (\x -> x % 2 == 1) xs)
     , reduce (+) 0.0 fs )

-- i32 addition wraps, whatever the grouping.
-- ==
-- entry: wrapping
-- input { [2147483647, 1, 2147483647, 3, 5] } output { 7 }
entry wrapping (xs: []i32) : i32 = reduce (+) 0 xs

-- Wrapping sums of squares of large i32s, long enough for two groups of
-- lanes (GCC 12 at -O3 -march=native once got this wrong in the C backend
-- when each lane was kept as a signed i32).
-- ==
-- entry: squares
-- input { [527858757, 1038467225, 1904202612, 639840853, 1721854523, -1661267722, -1088461400, 187951464, 317574981, -1216636254] }
-- output { 1261668461 }
entry squares (xs: []i32) : i32 = reduce (+) 0 (map (\x -> x * x) xs)
