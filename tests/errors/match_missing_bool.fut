-- A `match` on booleans must cover both values.
-- ==
-- error: no case matches `false`

def main (b: bool) : i32 =
  match b
  case true -> 1
