-- A recursive function's calls of itself consume what its declared
-- parameters say: here the recursive call consumes `xs`, which is used
-- after it.
-- ==
-- error: Using variable "xs", but this was consumed

def zero_down (xs: *[]i32) (n: i64) : i32 =
  if n == 0 then 0
  else let r = zero_down xs (n - 1)
       in r + xs[0]
