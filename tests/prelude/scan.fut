-- scan (inclusive prefix scan), with commutative and non-commutative
-- operators.
-- ==
-- entry: psum
-- input { [1, 2, 3, 4] } output { [1, 3, 6, 10] }
-- input { empty([0]i32) } output { empty([0]i32) }
-- input { [-1, 5, -10] } output { [-1, 4, -6] }

entry psum (xs: []i32) : []i32 = scan (+) 0 xs

-- ==
-- entry: pmax
-- input { [3, 1, 4, 1, 5] } output { [3, 3, 4, 4, 5] }

entry pmax (xs: []i32) : []i32 = scan i32.max i32.lowest xs

-- ==
-- entry: affine
-- input { [2, 3, 1] [1, 4, 5] } output { [2, 6, 6] [1, 7, 12] }

entry affine [n] (as: [n]i32) (bs: [n]i32) : ([n]i32, [n]i32) =
  unzip (scan (\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs))

-- ==
-- entry: fprod
-- input { [0.5, 4.0, 0.25] } output { [0.5, 2.0, 0.5] }

entry fprod (xs: []f64) : []f64 = scan (*) 1.0 xs
