-- A name that begins with `_` may be bound, but not used.
-- ==
-- error: `_count` cannot be used

def main (xs: []i32) : i64 =
  let _count = length xs
  in _count + 1
