-- `import "lib/util"` makes the library's definitions (functions and
-- types) available.
-- ==
-- input { 3 } output { 81 3 9 }
-- input { -2 } output { 16 -2 4 }

import "lib/util"

def main (x: i32) : (i32, i32, i32) =
  let p : pair i32 = (x, square x)
  let (a, b) = swap_pair p
  in (twice square x, b, a)
