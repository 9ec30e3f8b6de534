-- Only parameters of unique type (`*[]t`) may be updated in place.
-- ==
-- error: consum

def main (xs: []i32) : []i32 =
  let xs[0] = 42
  in xs
