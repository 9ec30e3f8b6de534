-- The components of an argument for a consuming tuple parameter must not
-- alias each other.
-- ==
-- error: components may alias each other

def fill (t: *([]i64, []i64)) : []i64 =
  let (a, b) = t
  let a[0] = 1
  let b[0] = 2
  in map2 (+) a b

def main (n: i64) : []i64 =
  let x = iota n
  in fill (x, x)
