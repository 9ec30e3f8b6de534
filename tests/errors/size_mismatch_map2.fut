-- Sizes are checked statically, as Futhark does: `map2` of arrays whose
-- sizes are two different size parameters is a type error.
-- ==
-- error: Sizes "n" and "m" do not match

def main [n][m] (xs: [n]i32) (ys: [m]i32) : [n]i32 = map2 (+) xs ys
