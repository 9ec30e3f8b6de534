-- Nothing decides the second size of an empty array of rows.
-- ==
-- error: Ambiguous size "k"

def main (b: bool) =
  let [k] (grid: [0][k]f32) = []
  in if b then k else 0
