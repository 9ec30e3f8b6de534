-- A top-level constant is shared by every use, so it cannot be unique.
-- ==
-- error: A top-level constant cannot have a unique type

def zeros : *[]i64 = replicate 3 0

def main (i: i64) : i64 = zeros[i]
