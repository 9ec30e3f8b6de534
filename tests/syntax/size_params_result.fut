-- A size parameter named only in the result type takes its value from the
-- type the context gives the result: an ascription, a declared type, or
-- an array of known size the result is combined with. Also for a
-- constant with a size parameter.
-- ==
-- entry: ascribed
-- input { 3i64 } output { [7, 7, 7] }
-- input { 0i64 } output { empty([0]i32) }

def fill [n] (x: i32) : [n]i32 = replicate n x

entry ascribed (k: i64) : []i32 = fill 7 : [k]i32

-- ==
-- entry: zipped
-- input { [1, 2, 3] } output { [3, 4, 5] }

entry zipped [m] (xs: [m]i32) : [m]i32 = map2 (+) xs (fill 2)

-- ==
-- entry: counted
-- input { 4i64 } output { [0i64, 1i64, 2i64, 3i64] }

def upto [n] : [n]i64 = iota n

entry counted (k: i64) : [k]i64 = upto
