-- Higher-order functions: functions as arguments and results, functions
-- stored in tuples, composition of closures.
-- ==
-- input { 2 } output { 7 67 -5 12 }
-- input { 0 } output { 1 13 -9 0 }

def compose (f: i32 -> i32) (g: i32 -> i32) : i32 -> i32 = \x -> f (g x)

def apply_n (n: i32) (f: i32 -> i32) (x: i32) : i32 =
  loop x for _i < n do f x

def adder (k: i32) : i32 -> i32 = \x -> x + k

def main (x: i32) : (i32, i32, i32, i32) =
  let fs = (\y -> y + 1, \y -> y * 3)
  let h = compose fs.0 fs.1
  let add_x = adder x
  in ( h x
     , apply_n 3 h x
     , (compose (compose (+ 1) (* 2)) (\y -> y - 5)) x
     , reduce (+) 0 (map add_x [1, 2, 3]) - 6 + x * 3
     )
