-- A record update keeps the aliases of the fields it does not replace: the
-- result still holds `ys`.
-- ==
-- error: Using "r", which aliases variable "ys", but this was consumed

def main (xs: []i64) (ys: *[]i64) : ([]i64, []i64) =
  let r = (ys, xs) with 1 = xs
  let ys[0] = 0
  in r
