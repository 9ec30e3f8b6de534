-- A consuming function may not be given a type that hides the
-- consumption.
-- ==
-- error: does not have expected type: it is a consuming function

def clear (xs: *[]f32) : f32 = let xs[0] = 0 in xs[0]

def observe : []f32 -> f32 = clear

def main (xs: []f32) : f32 = observe xs
