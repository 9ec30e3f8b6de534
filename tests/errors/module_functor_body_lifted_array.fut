-- A functor's body is checked against its parameter's module type even
-- if the functor is never applied: an array of a lifted abstract type may
-- contain functions.
-- ==
-- error: Cannot create array with elements of lifted type .* \(might contain function\)

module Table = \(P: { type^ cell }) -> { def none : []P.cell = [] }

def main (x: i32) = x
