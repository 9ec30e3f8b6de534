-- assert: passes through the value when the condition holds and fails
-- at run time otherwise.
-- ==
-- input { 5 } output { 20 }
-- input { 100 } output { 1 }
-- input { 0 } error: [Aa]ssert
-- input { -1 } error: [Aa]ssert

def main (x: i32) : i32 = assert (x > 0) (100 / x)
