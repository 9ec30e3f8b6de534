-- An entry point may not return a function, but the type given to a
-- consuming function is checked first, as Futhark does: the declared type
-- hides the consumption.
-- ==
-- error: Expression does not have expected type: it is a consuming function

def clear (xs: *[]f32) : f32 = let xs[0] = 0 in xs[0]

entry observe : []f32 -> f32 = clear
