-- Each weight scales a row of the same m numbers; the reduction sums the
-- squared weights and, columnwise, the scaled rows. The C backend runs
-- the map and the reduction as one loop: each row is made in one scratch
-- row (on the stack where it is short, on the heap from 257 elements on)
-- and added into the accumulator row in place. The result: the sum of
-- the squares, then the sum and the last element of the row of sums,
-- (Σw)·t for t = 0 … m-1.

entry scaled_sums (ws: []f64) (m: i64) : (f64, f64, f64) =
  let ts = map f64.i64 (iota m)
  let (squares, sums) =
    reduce (\(a, r) (b, q) -> (a + b, map2 (+) r q)) (0, replicate m 0)
           (map (\w -> (w * w, map (\t -> w * t) ts)) ws)
  in (squares, f64.sum sums, sums[m - 1])

-- ==
-- entry: scaled_sums
-- input { [1.0, 2.0, 3.0] 3i64 }
-- output { 14.0 18.0 12.0 }
-- input { [1.0, 2.0, 3.0] 300i64 }
-- output { 14.0 269100.0 1794.0 }
-- input { [0.5] 1i64 }
-- output { 0.25 0.0 0.0 }
