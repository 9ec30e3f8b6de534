-- Entry points may not have type parameters.
-- ==
-- error: entry point `dup` has the type parameter

entry dup 't (x: t) : (t, t) = (x, x)
