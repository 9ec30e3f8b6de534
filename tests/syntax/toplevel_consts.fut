-- Top-level constants (with and without type annotations), including an
-- array constant and constants defined in terms of other constants.
-- ==
-- input { 0i64 } output { 31 }
-- input { 3i64 } output { 61 }

def scale : i32 = 10
def table : [4]i32 = [1, 2, 3, 4]
def offset = scale * 2 + 1

def main (i: i64) : i32 = table[i] * scale + offset
