-- An array may not be used after an in-place update has consumed it.
-- ==
-- error: consum

def main (a: *[]i32) =
  let b = a with [0] = 10
  in a[0] + b[0]
