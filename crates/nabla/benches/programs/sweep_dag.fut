-- Every value feeds two later operations, so the computation is a DAG whose
-- number of paths doubles each step: a recursive reverse sweep would take
-- 2^200 steps, a linear one about 800.
def f (x: f64) = loop y = x for _i < 200 do y * y * 0.5 + y * 0.25

entry main (x: f64) = (vjp f x 1, jvp f x 1)
