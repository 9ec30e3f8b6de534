-- Histogram of values into fixed-width bins, with hist and with
-- reduce_by_index (which must agree).
-- ==
-- input { [1, 5, 12, 7, 19, 0, 3] 5 4i64 } output { [3, 2, 1, 1] [3, 2, 1, 1] }
-- input { [25, -1, 4] 5 4i64 } output { [1, 0, 0, 0] [1, 0, 0, 0] }

def main [n] (xs: [n]i32) (width: i32) (nbins: i64) : ([nbins]i32, [nbins]i32) =
  let bins = map (\x -> i64.i32 (x / width)) xs
  let ones = replicate n 1
  in (hist (+) 0 nbins bins ones, reduce_by_index (replicate nbins 0) (+) 0 bins ones)
