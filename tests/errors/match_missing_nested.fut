-- Exhaustiveness looks inside tuples and payloads: `(#some false, false)`
-- is not matched.
-- ==
-- error: no case matches `\(#some false, false\)`

type opt = #none | #some bool

def f (p: (opt, bool)) : i32 =
  match p
  case (#none, _) -> 0
  case (#some true, _) -> 1
  case (_, true) -> 2

def main (b: bool) : i32 = f (#some b, b)
