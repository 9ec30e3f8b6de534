-- Attributes on expressions and declarations have no semantic effect.
-- ==
-- input { 2 } output { 24 }
-- input { -1 } output { 6 }

#[noinline]
def helper (x: i32) : i32 = x * 2

def main (n: i32) : i32 =
  let s = #[unroll] loop acc = 0 for i < 4 do acc + i * n
  let t = #[sequential] reduce (+) 0 (map helper [1, 2, 3])
  let xs = [10, 20]
  let u = #[unsafe] xs[0] - 10
  in s + t + u
