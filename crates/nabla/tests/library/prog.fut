-- A program for the library and server tests (nabla c --library / --server).
type point = {x: f64, y: f64}

entry sum (xs: []f64) : f64 = f64.sum xs

entry scale (k: f64) (xs: *[]f64) : *[]f64 = map (* k) xs

entry count_up (n: i64) : (i64, []i32) = (n + 1, map i32.i64 (iota n))

entry mk (a: f64) (b: f64) : point = {x = a, y = b}

entry norm (p: point) : f64 = f64.sqrt (p.x * p.x + p.y * p.y)

entry swap (p: point) : point = {x = p.y, y = p.x}

entry get (xs: []i32) (i: i64) : i32 = xs[i]

entry dot [n] (xs: [n]f64) (ys: [n]f64) : f64 = f64.sum (map2 (*) xs ys)

entry flags (n: i64) : [][]bool = tabulate_2d n 2 (\i j -> (i + j) % 2 == 0)

entry sized (n: i64) (xs: [n]f64) : f64 = f64.sum xs

entry zeros (n: i64) : []f64 = replicate n 0f64
