-- A loop body may not consume a variable bound outside the loop (it would
-- be consumed again by the next iteration); it must be a loop parameter.
-- ==
-- error: consum

def main (n: i64) : i64 =
  let hist = replicate 4 0i64
  in loop s = 0i64 for i < n do
       let h = hist with [i % 4] = i
       in s + h[i % 4]
