-- A function that consumes its argument may not be passed to a
-- higher-order function such as `map`.
-- ==
-- error: consuming function .* expected function type does not consume

def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0

def main (xss: *[][]i32) : [][]i32 = map reset xss
