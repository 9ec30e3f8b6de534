-- Entry points defined as function values: an entry point whose body is a
-- function (a prelude function, a partial application, a section, a
-- lambda) takes the remaining parameters of its type, as Futhark's do.
-- ==
-- entry: total
-- input { [1.5, 2.0, 4.25] } output { 7.75 }
-- input { empty([0]f64) } output { 0.0 }

-- ==
-- entry: squares
-- input { [1, -2, 3] } output { [1, 4, 9] }

-- ==
-- entry: add_curried
-- input { 2 40 } output { 42 }

-- ==
-- entry: scale
-- input { 3.0 [1.0, -2.0] } output { [3.0, -6.0] }

-- ==
-- entry: first_n
-- input { 4i64 } output { [0i64, 1i64, 2i64, 3i64] }

-- ==
-- entry: dot_with
-- input { [1, 2, 3] [4, 5, 6] } output { 32 }
-- input { [1, 2] [4, 5, 6] } error: .

-- ==
-- entry: swap_add
-- input { 10 3 } output { 7 13 }

def plus (x: i32) (y: i32) = x + y

entry total = f64.sum

entry squares = map (\(x: i32) -> x * x)

entry add_curried (x: i32) = plus x

-- Annotated through the arrow: `k` and the array come from the type.
entry scale : f64 -> []f64 -> []f64 = \k -> map (* k)

-- A named parameter whose value is a size of the result.
entry first_n = iota

entry dot_with (xs: []i32) = \(ys: []i32) -> reduce (+) 0 (map2 (*) xs ys)

-- A function of its first parameter returning a tuple.
entry swap_add (a: i32) = \(b: i32) -> (a - b, a + b)
