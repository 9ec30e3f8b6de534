-- An f32 and a 2-D array (any shape, empty ones included): their total.
entry main (x: f32) (ys: [][]f32) : f32 = x + f32.sum (flatten ys)
