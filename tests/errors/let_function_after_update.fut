-- A `let` may not bind a function when evaluating its expression consumes
-- something (here, an in-place update).
-- ==
-- error: Let-bound expression of higher-order type contains consumption

def main (xs: *[]i32) (y: i32) : i32 =
  let f = let xs[0] = y in \(z: i32) -> z + xs[0]
  in f 1
