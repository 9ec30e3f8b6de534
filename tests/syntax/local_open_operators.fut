-- Inside a local open of a numeric module `T.(…)`, the operators are T's:
-- their operands have type T even where nothing else says so (unannotated
-- parameters, literals that would default to i32).
-- ==
-- entry: same
-- input { 1.5 1.5 } output { true 3.0 }
-- input { 1.5 2.0 } output { false 3.5 }

entry same x y = (f64.(x == y), f64.(x + y))

-- ==
-- entry: literals
-- input { } output { 3u16 1u16 255u8 -1i8 }

entry literals = (u16.(7 // 2), u16.(7 %% 2), u8.(0 - 1), i8.(0 - 1))

-- ==
-- entry: derivative
-- input { 2.0 } output { 4.0 false }

entry derivative x = (jvp (\a -> f64.(a * a)) x 1, f64.(x < x))
