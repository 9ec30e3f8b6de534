-- A consuming function may not be passed for a parameter whose type does
-- not consume (`f: a -> b`).
-- ==
-- error: consuming function .* expected function type does not consume

def apply 'a 'b (f: a -> b) (x: a) : b = f x

def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0

def main (xs: *[]i32) : []i32 = apply reset xs
