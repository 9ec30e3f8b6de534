-- A recursive function with a higher-order parameter may appear in its own
-- body only applied to all its arguments: here it is applied to one of two.
-- ==
-- error: not fully saturated

def twice_down (f: i64 -> i64) (n: i64) : i64 =
  if n <= 0 then f 0 else let again = twice_down f in again (n - 2)

def main (n: i64) = twice_down (\x -> x + 1) n
