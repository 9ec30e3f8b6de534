-- Functions may not be returned from the branches of an `if`.
-- ==
-- error: if-results may not be of function type

def choose (up: bool) : i32 -> i32 =
  if up then (\x -> x + 1) else (\x -> x - 1)

def main (up: bool) (x: i32) : i32 = choose up x
