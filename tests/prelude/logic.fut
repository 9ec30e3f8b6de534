-- all, any, and, or (including their values on empty arrays).
-- ==
-- input { [1, 2, 3] } output { true false true true }
-- input { [-1, 6, 11] } output { false true false false }
-- input { empty([0]i32) } output { true false true false }

def main (xs: []i32) : (bool, bool, bool, bool) =
  (all (> 0) xs, any (> 5) xs, and (map (< 10) xs), or (map (== 3) xs))
