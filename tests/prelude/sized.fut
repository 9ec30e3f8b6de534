-- sized n xs: a size coercion, failing at run time on a mismatch.
-- ==
-- input { 3i64 [1, 2, 3] } output { [2, 4, 6] }
-- input { 2i64 [1, 2, 3] } error: [Ss]ize|[Ss]hape|[Cc]oerc|match

def main [n] (m: i64) (xs: [n]i32) : [m]i32 =
  let ys = sized m xs
  in map2 (+) ys (sized m xs)
