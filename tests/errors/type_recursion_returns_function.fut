-- The result of a recursive function may not contain a function.
-- ==
-- error: not first-order

def adder (n: i64) : (i64, i64 -> i64) =
  (n, \x -> x + (if n == 0 then 0 else (adder (n - 1)).0))

def main (n: i64) (x: i64) = (adder n).1 x
