-- `map` may not produce an array of functions: its result's element type
-- parameter is not lifted.
-- ==
-- error: found to be functional.*argument 1 of `map`

def main (xs: []i32) : i32 =
  let fs = map (\(x: i32) -> \(y: i32) -> x + y) xs
  in length fs |> i32.i64
