-- A decimal literal that would be an infinity at its type is rejected.
-- ==
-- error: Literal 3.5e38 out of bounds for inferred type f32

def main (x: f32) = x < 3.5e38
