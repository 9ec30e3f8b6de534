-- A recursive call must pass its higher-order parameters unchanged. The
-- `g` passed here is a local variable that hides the parameter `g`.
-- ==
-- error: passed unchanged

def go (g: i64 -> i64) (n: i64) : i64 =
  let g = \x -> g x + 1
  in if n == 0 then g 0 else go g (n - 1)

def main (n: i64) = go (\x -> x) n
