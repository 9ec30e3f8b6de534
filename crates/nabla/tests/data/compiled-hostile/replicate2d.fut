-- An n by m array of ones: n * m is computed from the input.
entry main (n: i64) (m: i64) : [][]i8 = replicate n (replicate m 1i8)
