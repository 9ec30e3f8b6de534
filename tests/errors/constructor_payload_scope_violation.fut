-- A size parameter of a local function cannot become the size in the
-- payload of a sum type from the enclosing function.
-- ==
-- error: "k".*scope-violation

def outer v =
  let g (k: i64) (ys: [k]f64) =
    map2 (+) ys (match v
                 case #some (zs: [k]f64) -> zs
                 case #none -> ys)
  let _ = (v : (#some ([]f64) | #none))
  in g
