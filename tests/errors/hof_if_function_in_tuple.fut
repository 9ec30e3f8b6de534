-- A function inside a tuple counts too: the `if` returns a function.
-- ==
-- error: If-expression returns type .*, but if-results may not be of function type

def main (b: bool) (x: i32) : i32 =
  let (k, f) = if b then (1, (\(y: i32) -> y * 2)) else (2, (\(y: i32) -> y * 3))
  in f (x + k)
