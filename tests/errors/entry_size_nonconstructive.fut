-- An entry point's size parameter must be used directly as an array size.
-- ==
-- error: size parameter `\[x\]` only used non-constructively

entry main [x] (a: [x + 1]i32) : i32 = a[x]
