-- Loops whose initial values or iterated arrays have unknown sizes: the
-- body runs after them, so it may use those sizes (the causality check
-- must accept these).
-- ==
-- input { [1f64, 2f64, 6f64] }
-- output { [6f64, 291f64, 1682211f64] 12f64 [8f64, 24f64] }

def main (xs: []f64) =
  let ys = loop ys = filter (> 0) xs for i < 3 do map (\y -> y * y + f64.i64 i) ys
  let zs = loop acc = 0f64 for z in filter (< 5) xs do acc + f64.sum (map (+ z) (filter (< 5) xs))
  let ws = loop (w, k) = (filter (> 1) xs, 0i64) while k < length w do (map (* 2) w, k + 1)
  in (ys, zs, ws.0)
