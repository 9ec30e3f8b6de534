-- The three loop forms (for-upto, for-in, while), tuple pattern loop
-- parameters, and `loop x for ...` without an initialiser.
-- ==
-- entry: fib
-- input { 0 } output { 0 }
-- input { 1 } output { 1 }
-- input { 10 } output { 55 }
-- input { 20 } output { 6765 }
-- input { 47 } output { -1323752223 }

entry fib (n: i32) : i32 =
  let (a, _) = loop (a, b) = (0, 1) for i < n do (b, a + b)
  in a

-- ==
-- entry: sum_sq
-- input { [1, 2, 3] } output { 14 }
-- input { empty([0]i32) } output { 0 }
-- input { [-4] } output { 16 }

entry sum_sq (xs: []i32) : i32 =
  loop acc = 0 for x in xs do acc + x * x

-- ==
-- entry: dot_loop
-- input { [1, 2, 3] [4, 5, 6] } output { 32 }
-- input { [2] [-3] } output { -6 }

entry dot_loop [n] (xs: [n]i32) (ys: [n]i32) : i32 =
  loop s = 0 for (a, b) in zip xs ys do s + a * b

-- ==
-- entry: collatz
-- input { 1 } output { 0 }
-- input { 6 } output { 8 }
-- input { 27 } output { 111 }

entry collatz (n: i32) : i32 =
  let (_, steps) =
    loop (x, steps) = (n, 0) while x != 1 do
      (if x % 2 == 0 then x / 2 else 3 * x + 1, steps + 1)
  in steps

-- ==
-- entry: noinit
-- input { 1 3 } output { 12 }
-- input { 5 0 } output { 5 }
-- input { -1 2 } output { -3 }

entry noinit (x: i32) (n: i32) : i32 =
  loop x for i < n do x * 2 + i

-- A loop whose counter is an i64 and which indexes an array with it.
-- ==
-- entry: rev_loop
-- input { [1, 2, 3, 4] } output { [4, 3, 2, 1] }
-- input { [9] } output { [9] }

entry rev_loop [n] (xs: [n]i32) : [n]i32 =
  loop ys = copy xs for i < n / 2 do
    let t = ys[i]
    let ys[i] = ys[n - 1 - i]
    let ys[n - 1 - i] = t
    in ys
