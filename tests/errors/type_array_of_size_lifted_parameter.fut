-- Arrays of size-lifted types could be irregular.
-- ==
-- error: Cannot create array with elements of size-lifted type "row" \(might cause irregular array\).

type~ row = []f64

def rows (xs: [2]row) = xs

def main (x: i32) = x
