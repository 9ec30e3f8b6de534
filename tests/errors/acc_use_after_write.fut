-- An accumulator is consumed by a write: using it again is an error (a
-- write returns the accumulator to use next).
-- ==
-- error: Using variable "a", but this was consumed

def main (xs: *[4]i32) : [4]i32 =
  intrinsics.scatter_stream xs
                            (\(a: *intrinsics.acc ([4]i32)) i ->
                               let _ = intrinsics.acc_write a i 1
                               in intrinsics.acc_write a (i + 1) 2)
                            (iota 2)
