-- Backtick infix application, user-defined operators (prefix and infix
-- definition forms), and their fixity (taken from the leading
-- characters).
-- ==
-- input { 3 5 } output { 13 25 2 306 }
-- input { -2 7 } output { 8 27 9 -192 }

def (+^) (a: i32, b: i32) (c: i32, d: i32) : (i32, i32) = (a + c, b + d)

def (x: i32) **^ (y: i32) : i32 = x * 100 + y

def dist (a: i32) (b: i32) : i32 = i32.abs (a - b)

def main (a: i32) (b: i32) : (i32, i32, i32, i32) =
  let (p, q) = (a, b) +^ (10, 20)
  in (p, q, a `dist` b, 1 + a **^ b)

-- ==
-- entry: sumpairs
-- input { [1, 2] [3, 4] } output { 3 7 }
-- input { empty([0]i32) empty([0]i32) } output { 0 0 }

entry sumpairs [n] (xs: [n]i32) (ys: [n]i32) : (i32, i32) =
  reduce (+^) (0, 0) (zip xs ys)

-- Built-in precedence and associativity.
-- ==
-- entry: precedence
-- input { 5 } output { 7 3 2 -10 true 13 }
-- input { 100 } output { 7 3 2 -200 true 108 }

entry precedence (x: i32) : (i32, i32, i32, i32, bool, i32) =
  ( 1 + 2 * 3
  , 10 - 4 - 3
  , 2 * 3 % 4
  , -x * 2
  , x > 0 && x < 10 || x == 100
  , x + (12 & 9) - (1 << 2) + 4
  )
