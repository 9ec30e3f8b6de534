-- Functions may not be returned from the cases of a `match`.
-- ==
-- error: match-results may not be of function type

type op = #inc | #dec

def pick (o: op) =
  match o
  case #inc -> (\(x: i32) -> x + 1)
  case #dec -> (\(x: i32) -> x - 1)

def main (x: i32) : i32 = pick #inc x
