-- Passing an argument of the wrong type is a compile-time error.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif

def f (x: i32) : i32 = x + 1

def main (b: bool) : i32 = f b
