-- The result of calling a function parameter may alias whatever the
-- function holds, and a function parameter is never consumable.
-- ==
-- error: Consuming variable "gen", which is not consumable

def fill (gen: i64 -> []i64) (n: i64) : []i64 =
  let xs = gen n
  let xs[0] = 1
  in xs
