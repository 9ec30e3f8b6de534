-- if-then-else as an expression, nested, and in tuple components.
-- ==
-- input { -4 } output { -1 -2 }
-- input { 0 } output { 0 0 }
-- input { 7 } output { 1 22 }
-- input { -3 } output { -1 -8 }

def classify (x: i32) : i32 =
  if x < 0 then -1 else if x == 0 then 0 else 1

def main (x: i32) : (i32, i32) =
  (classify x, if x % 2 == 0 then x / 2 else 3 * x + 1)
