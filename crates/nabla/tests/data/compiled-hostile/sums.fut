entry sum (xs: []i64) : i64 = reduce (+) 0 xs

entry dot (xs: []f64) (ys: []f64) : f64 = f64.sum (map2 (*) xs ys)

entry ones (n: i64) : []f64 = replicate n 1
