-- Entry points may not take functions as parameters.
-- ==
-- error: entry point `apply` takes a function

entry apply (f: i32 -> i32) (x: i32) : i32 = f x
