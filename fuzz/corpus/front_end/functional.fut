-- const, id, curry, uncurry, flip.
-- ==
-- input { 3 8 } output { 3 8 -5 38 5 [3, 3] }
-- input { 0 -1 } output { 0 -1 1 -1 -1 [0, 0] }

def main (x: i32) (y: i32) : (i32, i32, i32, i32, i32, []i32) =
  ( const x y
  , id y
  , curry (\(a, b) -> a - b) x y
  , uncurry (\a b -> a * 10 + b) (x, y)
  , flip (-) x y
  , map (const x) [true, false]
  )
