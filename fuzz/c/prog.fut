-- The program whose server runtime fuzz/c/harness.c fuzzes: entry points
-- over i32/f64/bool arrays of rank 1 to 3, scalars, a record and opaque
-- values (a tuple and a sum type), so that `restore`, `call`, `project` and
-- `new` have every kind of value to work on.
type pt = {x: f64, y: i32}

type shape = #circle f64 | #square i32

entry sum1 (xs: []i32) : i32 = i32.sum xs

entry sum2 (xss: [][]f64) : f64 = f64.sum (flatten xss)

entry count3 (bsss: [][][]bool) : i64 = i64.sum (map i64.bool (flatten (flatten bsss)))

entry rows [n][m] (xss: [n][m]i32) : [m]i32 = if n > 0 then xss[0] else replicate m 0

entry mk (x: f64) (y: i32) : pt = {x, y}

entry norm (p: pt) : f64 = p.x + f64.i32 p.y

entry pair (n: i64) (xs: []f64) : (i64, []f64) = (n, xs)

entry unpair (p: (i64, []f64)) : f64 = f64.i64 p.0 + f64.sum p.1

entry circle (r: f64) : shape = #circle r

entry area (s: shape) : f64 = match s case #circle r -> r * r case #square k -> f64.i32 (k * k)

entry take_n (n: i64) (xs: []f64) : []f64 = take (i64.min n (length xs)) xs

entry cube (n: i64) : [][][]bool = tabulate_3d n 2 2 (\i j k -> (i + j + k) % 2 == 0)
