-- Functions may not be stored in arrays.
-- ==
-- error: found to be functional

def main (x: i32) : i32 =
  let fs = [(\(y: i32) -> y + 1), (\(y: i32) -> y * 2)]
  in fs[0] x
