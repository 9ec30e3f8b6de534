-- rep (replicate with the length from the context) and the stream SOACs
-- (any chunking: the result must not depend on it).
-- ==
-- entry: reps
-- input { [1, 2, 3] } output { [0, 0, 0] [true, true, true] }

entry reps [n] (xs: [n]i32) : ([n]i32, [n]bool) =
  (rep 0, map2 (\_ b -> b) xs (rep true))

-- ==
-- entry: streams
-- input { [1, 2, 3, 4] } output { 10 10 [2, 4, 6, 8] [2, 3, 4, 5] }
-- input { empty([0]i32) } output { 0 0 empty([0]i32) empty([0]i32) }

def chunk_sum (k: i64) (c: [k]i32) : i32 = foldl (+) 0 c
def chunk_inc (k: i64) (c: [k]i32) : [k]i32 = map (+ 1) c

entry streams [n] (xs: [n]i32) : (i32, i32, [n]i32, [n]i32) =
  (reduce_stream (+) (\_ c -> i32.sum c) xs,
   reduce_stream_per (+) chunk_sum xs,
   map_stream (\_ c -> map (* 2) c) xs,
   map_stream_per chunk_inc xs)
