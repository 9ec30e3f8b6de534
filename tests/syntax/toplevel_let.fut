-- The deprecated (but still accepted) top-level `let` form for constants
-- and functions.
-- ==
-- input { 4 } output { 21 }
-- input { -1 } output { -4 }

let base = 5

let times_base (x: i32) : i32 = x * base

def main (x: i32) : i32 = times_base x + 1
