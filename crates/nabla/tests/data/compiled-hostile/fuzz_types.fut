-- Entry points over several kinds of values, for the server fuzz test.
type pt = {x: f64, y: i32}

entry sum2 (xs: [][]f32) : f32 = f32.sum (flatten xs)

entry mk (x: f64) (y: i32) : pt = {x, y}

entry norm (p: pt) : f64 = p.x + f64.i32 p.y

entry count (bs: []bool) (n: i64) : i64 = n + i64.sum (map i64.bool bs)

entry depth (xs: [][][]u8) : i64 = length xs + i64.sum (map length xs)
