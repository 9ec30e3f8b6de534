-- Loop parameters may not be functions.
-- ==
-- error: a loop parameter may not be of function type

def main (n: i32) (x: i32) : i32 =
  let f = loop f = (\(y: i32) -> y) for _i < n do (\y -> f y + 1)
  in f x
