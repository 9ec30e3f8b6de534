-- Escape-time iteration counts for points of the Mandelbrot set.
-- ==
-- input { [0.0, 1.0, -1.0, 0.5, -0.75, 0.3, 2.0, 0.25, -1.5, 0.26]
--         [0.0, 1.0, 0.0, 0.5, 0.1, 0.0, 2.0, 0.5, 0.0, 0.0] 50 }
-- output { [50, 2, 50, 5, 33, 12, 1, 50, 50, 30] }
-- input { [0.0, 1.0, -1.0, 0.5, -0.75, 0.3, 2.0, 0.25, -1.5, 0.26]
--         [0.0, 1.0, 0.0, 0.5, 0.1, 0.0, 2.0, 0.5, 0.0, 0.0] 100 }
-- output { [100, 2, 100, 5, 33, 12, 1, 100, 100, 30] }

def escape (cr: f64) (ci: f64) (limit: i32) : i32 =
  let (_, _, it) =
    loop (zr, zi, i) = (0.0, 0.0, 0)
    while i < limit && zr * zr + zi * zi <= 4.0 do
      (zr * zr - zi * zi + cr, 2.0 * zr * zi + ci, i + 1)
  in it

def main [n] (crs: [n]f64) (cis: [n]f64) (limit: i32) : [n]i32 =
  map2 (\r i -> escape r i limit) crs cis
