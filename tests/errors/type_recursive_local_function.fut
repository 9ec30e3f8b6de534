-- A local function cannot call itself either.
-- ==
-- error: cannot be recursive

def main (n: i32) : i32 =
  let count (k: i32) : i32 = if k == 0 then 0 else 1 + count (k - 1)
  in count n
