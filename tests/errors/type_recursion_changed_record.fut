-- A record holding a function counts as higher-order: the recursive call
-- must pass the parameter itself, not a new record.
-- ==
-- error: passed unchanged

def go (r: {f: i64 -> i64, k: i64}) (n: i64) : i64 =
  if n == 0 then r.f r.k else go {f = r.f, k = r.k + 1} (n - 1)

def main (n: i64) = go {f = \x -> x * 2, k = 1} n
