-- A type ascription with another size is a type error (a size coercion
-- `:>` is what converts sizes, checked at run time).
-- ==
-- error: sizes `m` and `n` differ|sizes `n` and `m` differ

def main [n][m] (xs: [n]i32) (_: [m]i32) : [m]i32 = (xs : [m]i32)
