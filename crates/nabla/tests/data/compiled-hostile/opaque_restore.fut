-- An opaque type (a tuple with a 2-D array) for the C API's restore test.
entry pair (n: i64) (xss: [][]f64) : (i64, [][]f64) = (n, xss)

entry rows (p: (i64, [][]f64)) : i64 = p.0 + length p.1
