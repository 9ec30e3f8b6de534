-- `main` (the entry point of a program without `entry` declarations) may
-- not take an accumulator either.
-- ==
-- error: entry point `main` takes an accumulator

def main (a: *intrinsics.acc ([]i32)) = intrinsics.acc_write a 0 1
