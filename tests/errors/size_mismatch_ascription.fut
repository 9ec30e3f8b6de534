-- A type ascription with another size is a type error (a size coercion
-- `:>` is what converts sizes, checked at run time).
-- ==
-- error: Sizes "m" and "n" do not match

def main [n][m] (xs: [n]i32) (_: [m]i32) : [m]i32 = (xs : [m]i32)
