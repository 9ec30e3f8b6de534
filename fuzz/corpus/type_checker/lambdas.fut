-- Anonymous functions, partial application and currying.
-- ==
-- input { [1, 2, 3] } output { [2, 5, 10] [121, 221, 321] 321 [0, 0, 0] 6 }
-- input { [-1] } output { [2] [-79] 321 [0] -1 }

def add3 (a: i32) (b: i32) (c: i32) : i32 = a + b * 10 + c * 100

def main (xs: []i32) : ([]i32, []i32, i32, []i32, i32) =
  let f = add3 1
  let g = f 2
  let h = \(x: i32) : i32 -> g x
  let mul = \x -> \y -> x * y
  let sub = \a b -> a - b
  in ( map (\x -> x * x + 1) xs
     , map (add3 1 2) xs
     , h 3
     , map2 sub xs xs
     , reduce (mul) 1 xs
     )
