-- The pipe and composition operators |>, <|, >->, <-<.
-- ==
-- input { 3 } output { 8 8 8 7 16 }
-- input { -1 } output { 0 0 0 -1 0 }

def inc (x: i32) = x + 1
def dbl (x: i32) = x * 2

def main (x: i32) : (i32, i32, i32, i32, i32) =
  ( x |> inc |> dbl
  , dbl <| inc <| x
  , (inc >-> dbl) x
  , (inc <-< dbl) x
  , [x, x, x, x] |> map inc |> reduce (+) 0
  )
