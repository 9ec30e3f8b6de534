-- Partially applying `apply_first` to a function whose third parameter's
-- size is its first parameter would make `b` the function type
-- `[len]f64 -> f64`: a function whose parameter has the size of a
-- parameter that is gone.
-- ==
-- error: Existential size would appear in function parameter

def apply_first '^a '^b (f: i64 -> a -> b) (x: a) : b = f 3 x

def weighted (len: i64) (w: f64) (xs: [len]f64) : f64 = w * f64.sum xs

def main (ys: [3]f64) = apply_first weighted 2 ys
