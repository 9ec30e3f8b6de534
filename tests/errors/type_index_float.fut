-- An index of a type still being inferred may only become a signed integer
-- type: here the lambda's parameter, used as an index, is given f64 values.
-- ==
-- error: mismatched types|signed integer

def main (xs: []i32) = map (\i -> xs[i]) [1.0, 2.0]
