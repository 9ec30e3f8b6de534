-- A `let` may not bind a function when its expression performs an in-place
-- update.
-- ==
-- error: binds a function, but the bound expression performs an in-place update

def main (xs: *[]i32) (y: i32) : i32 =
  let f = let xs[0] = y in \(z: i32) -> z + xs[0]
  in f 1
