-- A size bound by `let [n]` must be the size of something in the pattern.
-- ==
-- error: size parameter `\[n\]` is not the size of any parameter

def main (x: i32) : i32 =
  let [n] (y: i32) = x
  in y
