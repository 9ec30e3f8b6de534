-- `!` is a prefix operator: it cannot be defined as an infix operator.
-- ==
-- error: cannot be used as infix

def a ! b = a + b

def main (x: i32) : i32 = x
