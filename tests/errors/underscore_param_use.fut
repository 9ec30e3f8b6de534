-- Also a parameter whose name begins with `_` cannot be used.
-- ==
-- error: `_y` cannot be used

def first (x: i32) (_y: i32) : i32 = x + _y

def main (a: i32) : i32 = first a a
