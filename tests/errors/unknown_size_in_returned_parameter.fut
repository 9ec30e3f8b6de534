-- The returned function takes an array of length `width`, a local
-- computed inside the function: once `width` goes out of scope, no caller
-- could build an argument of that length.
-- ==
-- error: Unknown size "width" in parameter

def scaler (wide: bool) =
  let width = if wide then 8i64 else 4i64
  in \(row: [width]f32) -> f32.sum row
