-- Entry points may not return functions: a function inside the result
-- counts (a result of function type itself is taken apart into more
-- parameters, see tests/syntax/entry_function_value.fut).
-- ==
-- error: Entry point functions may not be higher-order: the entry point `adder` returns

entry adder (x: i32) : (i32, i32 -> i32) = (x, \y -> x + y)
