-- The names bound by one `let` pattern must be distinct.
-- ==
-- error: `lo` is also bound earlier

def main (xs: []i32) : i32 =
  let (lo, lo) = (i32.minimum xs, i32.maximum xs)
  in lo
