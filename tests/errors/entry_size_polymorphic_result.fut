-- An entry point's result may not have a size that no parameter gives.
-- ==
-- error: Entry point functions must not be size-polymorphic in their return type: the size `\[n\]`

entry main [n] (x: i32) : [n]i32 = replicate n x
