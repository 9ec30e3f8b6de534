-- The components of an argument for a consuming tuple parameter must not
-- alias each other.
-- ==
-- error: Argument passed for consuming parameter is self-aliased

def fill (t: *([]i64, []i64)) : []i64 =
  let (a, b) = t
  in map2 (+) (a with [0] = 1) b

def main (n: i64) : []i64 =
  let x = iota n
  in fill (x, x)
