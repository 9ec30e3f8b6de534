-- A partial application holds its arguments: `get` aliases `table`, so it
-- may not be called after `table` is updated in place.
-- ==
-- error: Using "get", which aliases variable "table", but this was consumed

def lookup (ys: []i64) (i: i64) : i64 = ys[i]

def main (n: i64) : i64 =
  let table = iota n
  let get = lookup table
  let table[1] = 0
  in get 1
