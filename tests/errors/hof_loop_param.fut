-- Loop parameters may not be functions.
-- ==
-- error: loop parameter may not be \(or contain\) a function

def main (n: i32) (x: i32) : i32 =
  let f = loop f = (\(y: i32) -> y) for _i < n do (\y -> f y + 1)
  in f x
