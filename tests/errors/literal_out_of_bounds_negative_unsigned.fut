-- A negated literal is checked as the negative literal it denotes: -1 is
-- no u32.
-- ==
-- error: Literal -1 out of bounds for inferred type u32

def main (xs: []u32) = map (\x -> x * -1) xs
