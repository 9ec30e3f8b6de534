-- A projection section may index after a field: `(.a[i])` is
-- `\r -> r.a[i]`, and `(.a[i].b)` goes on projecting.
-- ==
-- input { [10, 20, 30] [[1, 2], [3, 4]] } output { 20 4 [7, 8] }

def main (xs: []i32) (yss: [][]i32) : (i32, i32, []i32) =
  let r = {a = xs, b = {c = yss}}
  let ps = [{q = [{w = 7}, {w = 9}]}, {q = [{w = 8}, {w = 0}]}]
  in ((.a[1]) r, (.b.c[1, 1]) r, map (.q[0].w) ps)
