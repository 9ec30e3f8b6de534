-- The function given to a stream may not read the array the stream
-- consumes (its cells change while the function runs).
-- ==
-- error: Argument is consumed, but aliases variable "xs"

def main (xs: *[4]i32) : [4]i32 =
  intrinsics.scatter_stream xs
                            (\(a: *intrinsics.acc ([4]i32)) i -> intrinsics.acc_write a i (xs[i] + 1))
                            (iota 2)
