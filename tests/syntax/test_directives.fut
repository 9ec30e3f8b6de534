-- The directives of Futhark's test-block language that a program in the
-- corpus can carry in both backends: `tags`, `structure` blocks (recorded,
-- not checked), a `compiled` dataset and an `auto output` dataset (both
-- run only by `nabla test --backend=c`; `auto output` is then compared
-- with the interpreter's result), and named datasets.
-- ==
-- tags { directives no_opencl }
-- structure { Screma 1 }
-- structure mc { SegRed 1 }
-- entry: sum_squares
-- "small" input { [1, 2, 3] } output { 14 }
-- compiled input { [4, 5] } output { 41 }
-- "generated" input { [3, 4, 12] } auto output
-- random input { [10]i32 } auto output

entry sum_squares (xs: []i32) : i32 = reduce (+) 0 (map (\x -> x * x) xs)
