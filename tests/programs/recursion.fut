-- Recursive top-level functions: Futhark puts a function (a definition with
-- parameters) in scope in its own body. Each entry exercises one form:
-- an inferred result type, recursion at other sizes and types, calls from
-- inside a map, a recursive operator, one inside a module, a redefinition
-- whose body means itself, and higher-order recursion (specialised to the
-- functions passed, with what they capture as extra arguments).
-- ==
-- entry: factorial
-- input { 0i64 } output { 1i64 }
-- input { 20i64 } output { 2432902008176640000i64 }

-- ==
-- entry: halves
-- input { [1, 2, 3, 4, 5, 6, 7] } output { 28 }
-- input { empty([0]i32) } output { 0 }

-- ==
-- entry: counts
-- input { [1, 2, 3] [0.5, 1.5] } output { 3i64 2i64 1.5 3 }

-- ==
-- entry: powers_of_two
-- input { 0i64 } output { 1i64 }
-- input { 5i64 } output { 16i64 }

-- ==
-- entry: sort
-- input { [5, 3, 9, 1, 3, 7, 0] } output { [0, 1, 3, 3, 5, 7, 9] }
-- input { empty([0]i32) } output { empty([0]i32) }

-- ==
-- entry: misc
-- input { 3i64 4i64 2.0 } output { 7i64 16.0 4i64 }

-- ==
-- entry: higher_order
-- input { 3i64 2.0 [10.0, 20.0] } output { 8.0 30.0 21.0 }

-- ==
-- entry: through_local_function
-- input { 4i64 5i64 } output { 20i64 }
-- input { 0i64 5i64 } output { 0i64 }

-- ==
-- entry: deep
-- input { 20000i64 } output { 20000i64 }

-- The result type is inferred through the recursive use.
def fact (n: i64) = if n <= 1 then 1 else n * fact (n - 1)

entry factorial (n: i64) = fact n

-- Each recursive call is at another size (`n / 2`, `n - n / 2`).
def sum_halves [n] (xs: [n]i32) : i32 =
  if n == 0 then 0
  else if n == 1 then xs[0]
  else sum_halves (take (n / 2) xs) + sum_halves (drop (n / 2) xs)

entry halves (xs: []i32) = sum_halves xs

-- Polymorphic, used at two types; and one whose element type is
-- generalised (no annotation at all).
def count 't (xs: []t) : i64 = if length xs == 0 then 0 else 1 + count (tail xs)

def last_of xs = if length xs == 1 then xs[0] else last_of (tail xs)

entry counts (xs: []i32) (ys: []f64) =
  (count xs, count (zip ys ys), last_of ys, last_of xs)

-- Calls from inside a map's lambda: f 0 = 1, f n = f 0 + ... + f (n-1).
def f (n: i64) : i64 = if n == 0 then 1 else i64.sum (map (\i -> f i) (iota n))

entry powers_of_two (n: i64) = f n

-- Quicksort: each call makes arrays of sizes known only at run time.
def qsort (xs: []i32) : []i32 =
  if length xs <= 1 then xs
  else let p = xs[0]
       let (lt, ge) = partition (< p) (tail xs)
       in qsort lt ++ [p] ++ qsort ge

entry sort (xs: []i32) = qsort xs

-- A recursive operator, one inside a module, and one shadowing an opened
-- definition: in the body of the second `steps`, `steps` is the second one
-- itself (the first would give 1000). A file may not define a name twice.
def (x: i64) <+> (n: i64) : i64 = if n == 0 then x else (x + 1) <+> (n - 1)

module M = {
  def pow (x: f64) (n: i64) : f64 = if n == 0 then 1 else x * pow x (n - 1)
}

module Old = {
  def steps (n: i64) : i64 = n * 1000
}

open Old

def steps (n: i64) : i64 = if n == 0 then 0 else 1 + steps (n - 1)

entry misc (a: i64) (b: i64) (x: f64) = (a <+> b, M.pow x b, steps b)

-- Higher-order recursion: one specialisation per function passed; the
-- closures capture a scalar and an array.
def iter (n: i64) (g: f64 -> f64) (x: f64) : f64 = if n == 0 then x else iter (n - 1) g (g x)

entry higher_order (n: i64) (a: f64) (ws: []f64) =
  (iter n (\x -> x * a) 1, iter n (\x -> x + ws[0]) 0, iter 1 (\x -> x + ws[1] + 1) 0)

-- The recursive call is in a local function that captures the function
-- parameter: t g 0 = 0, t g n = g n + t g (n - 1).
def tree (g: i64 -> i64) (n: i64) : i64 =
  let h (x: i64) = g x + tree g (n - 1)
  in if n == 0 then 0 else h n

entry through_local_function (n: i64) (k: i64) = tree (\x -> x * k - x * (k - 1) + x) n

-- Deeper than any loop of calls nabla ran before recursion.
def depth (n: i64) : i64 = if n == 0 then 0 else 1 + depth (n - 1)

entry deep (n: i64) = depth n
