-- The condition of a `while` loop is evaluated after every iteration, so it
-- may not read an array that the loop's initial value consumes.
-- ==
-- error: Loop body uses variable "xs" \(or an alias\), but this is consumed by the initial loop argument

def main (n: i64) : []i64 =
  let xs = iota n
  in loop acc = xs while acc[0] < xs[n - 1] do
       acc with [0] = acc[0] + 1
