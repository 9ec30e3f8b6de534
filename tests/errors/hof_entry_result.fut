-- Entry points may not return functions.
-- ==
-- error: entry point `adder` returns a function

entry adder (x: i32) : i32 -> i32 = \y -> x + y
