-- Reading inputs (and expected outputs) from files in Futhark's binary
-- data format: 'b', version 2, rank, 4-character type name, i64
-- dimensions, little-endian payload.  The second input file is gzipped;
-- its expected output is in the text format.
-- ==
-- input @ data/binary_small.in output @ data/binary_small.out
-- input @ data/binary_gz.in.gz output @ data/binary_gz.out

def main [n] [m] (xs: [n]f64) (mat: [n][m]i32) (flags: [n]bool) : (f64, [m]i32, i64) =
  ( f64.sum xs
  , reduce (map2 (+)) (replicate m 0) mat
  , i64.sum (map (\b -> if b then 1 else 0) flags)
  )
