-- A recursive function with a higher-order parameter may not be used as a
-- value in its own body (here passed to a pipe), only applied.
-- ==
-- error: higher-order parameter

def down (f: i64 -> i64) (n: i64) : i64 =
  if n <= 0 then f 0 else (n - 1) |> down f

def main (n: i64) = down (\x -> x + 1) n
