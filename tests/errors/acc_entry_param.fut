-- Entry points may neither take nor return accumulators.
-- ==
-- error: entry point `main` takes an accumulator

entry main (a: *intrinsics.acc ([]i32)) = intrinsics.acc_write a 0 1
