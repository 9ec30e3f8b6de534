-- Returned functions whose parameter sizes callers can name: a size
-- parameter of the enclosing function, or no size at all.
-- ==
-- input { [1f32, 2f32, 3f32] }
-- output { 12f32 6f32 }

def weigh [n] (weights: [n]f32) = \(row: [n]f32) -> f32.sum (map2 (*) weights row)

def total (scale: f32) =
  let s = scale * 2
  in \(row: []f32) -> s * f32.sum row

def main [n] (xs: [n]f32) = (weigh (replicate n 2) xs, total 0.5 xs)
