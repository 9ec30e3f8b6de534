-- Matching on integers needs a final catch-all case.
-- ==
-- error: Unmatched cases.*no case matches `2`

def name (x: i32) : i32 =
  match x
  case 0 -> 10
  case 1 -> 20

def main (x: i32) : i32 = name x
