-- `map` may not produce an array of functions: its result's element type
-- parameter is not lifted.
-- ==
-- error: found to be functional.*Cannot apply "map" to argument #1

def main (xs: []i32) : i32 =
  let fs = map (\(x: i32) -> \(y: i32) -> x + y) xs
  in length fs |> i32.i64
