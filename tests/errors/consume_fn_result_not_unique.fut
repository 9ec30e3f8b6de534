-- A function whose result may alias a free array may not be passed where a
-- function with a unique result is expected: the caller would update the
-- free array in place.
-- ==
-- error: Argument of functional type does not have expected type: the expected function type declares a unique

def bump (mk: () -> *[]i64) : *[]i64 = mk () with [0] = 1

def main (xs: []i64) : []i64 =
  let share () : []i64 = xs
  in bump share
