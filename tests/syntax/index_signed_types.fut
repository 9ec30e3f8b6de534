-- An element index may be of any signed integer type (Futhark's rule),
-- also where its type is fixed only after the indexing is checked: the
-- lambda parameter `i` is used as an index before `map` meets the array of
-- `i32` it ranges over.
-- ==
-- input { [10, 20, 30] [2, 0, 1] [1i8] [-1i16] }
-- output { [30, 10, 20] 20 10 }
-- input { [10, 20, 30] [3] [0i8] [0i16] }
-- error: [Oo]ut of bounds|[Ii]ndex

def main (xs: []i32) (is: []i32) (js: []i8) (ks: []i16) =
  (map (\i -> xs[i]) is, xs[js[0]], xs[ks[0] + 1])
