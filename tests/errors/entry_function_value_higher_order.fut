-- An entry point defined as a function value takes the parameters of its
-- type; those may not be functions either.
-- ==
-- error: Entry point functions may not be higher-order: the entry point `twice` is a function whose parameter

entry twice = \(f: i32 -> i32) (x: i32) -> f (f x)
