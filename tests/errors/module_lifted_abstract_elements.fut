-- An abstract type specified size-lifted (`type~`) may hide arrays of
-- varying size, so it cannot be an array element (here: `tabulate`'s
-- non-lifted element type).
-- ==
-- error: is lifted

module rows (P: {type~ row val make : i64 -> row}) = {
  def table (n: i64) = tabulate n P.make
}

module R = rows {type~ row = []i64 def make (i: i64) : []i64 = iota i}

def main (n: i64) : i64 = length (R.table n)
