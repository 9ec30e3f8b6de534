-- nabla's prelude: the parts of Futhark's prelude that are not intrinsics.
-- Types follow Futhark's prelude documentation.

def (|>) '^a '^b (x: a) (f: a -> b): b = f x
def (<|) '^a '^b (f: a -> b) (x: a): b = f x
def (>->) '^a '^b '^c (f: a -> b) (g: b -> c) (x: a): c = g (f x)
def (<-<) '^a '^b '^c (g: b -> c) (f: a -> b) (x: a): c = g (f x)

def id '^a (x: a): a = x
def const '^a '^b (x: a) (_: b): a = x
def flip '^a '^b '^c (f: a -> b -> c) (b: b) (a: a): c = f a b
def curry '^a '^b '^c (f: (a, b) -> c) (a: a) (b: b): c = f (a, b)
def uncurry '^a '^b '^c (f: a -> b -> c) (p: (a, b)): c = f p.0 p.1

def iterate 'a (n: i32) (f: a -> a) (x: a): a =
  loop x for _i < n do f x
def iterate_until 'a (p: a -> bool) (f: a -> a) (x: a): a =
  loop x while !(p x) do f x
def iterate_while 'a (p: a -> bool) (f: a -> a) (x: a): a =
  loop x while p x do f x

def tabulate 'a (n: i64) (f: i64 -> a): *[n]a = map1 f (iota n)
def tabulate_2d 'a (n: i64) (m: i64) (f: i64 -> i64 -> a): *[n][m]a =
  map1 (\i -> map1 (f i) (iota m)) (iota n)
def tabulate_3d 'a (n: i64) (m: i64) (o: i64) (f: i64 -> i64 -> i64 -> a): *[n][m][o]a =
  map1 (\i -> map1 (\j -> map1 (f i j) (iota o)) (iota m)) (iota n)

def head [n] 't (x: [n]t): t = x[0]
def last [n] 't (x: [n]t): t = x[n-1]
def tail [n] 't (x: [n]t): []t = x[1:]
def init [n] 't (x: [n]t): []t = x[0:n-1]
def take [n] 't (i: i64) (x: [n]t): [i]t = x[0:i]
def drop [n] 't (i: i64) (x: [n]t): []t = x[i:]
-- As in the current Futhark prelude, the split point `n` comes from the
-- context (the result type at the call, usually via a size coercion).
def split [n] [m] 't (xs: [n + m]t): ([n]t, [m]t) = (xs[0:n], xs[n:])
def indices [n] 't (_: [n]t): *[n]i64 = iota n

def foldl [n] 'a 'b (f: a -> b -> a) (acc: a) (bs: [n]b): a =
  loop acc for b in bs do f acc b
def foldr [n] 'a 'b (f: b -> a -> a) (acc: a) (bs: [n]b): a =
  loop acc for b in reverse bs do f b acc

def all [n] 'a (f: a -> bool) (as: [n]a): bool = reduce (&&) true (map f as)
def any [n] 'a (f: a -> bool) (as: [n]a): bool = reduce (||) false (map f as)
def and [n] (xs: [n]bool): bool = reduce (&&) true xs
def or [n] (xs: [n]bool): bool = reduce (||) false xs

def spread 't [n] (k: i64) (x: t) (is: [n]i64) (vs: [n]t): *[k]t =
  scatter (replicate k x) is vs

-- `filter` keeps the elements satisfying `p`, in order: the offsets of the
-- kept elements come from a prefix sum, and `scatter` moves them into place.
def filter [n] 'a (p: a -> bool) (as: [n]a): *[]a =
  let flags = map (\x -> if p x then 1i64 else 0i64) as
  let offsets = scan (+) 0 flags
  let m = if n == 0 then 0 else offsets[n-1]
  let is = map2 (\f o -> if f == 1 then o - 1 else -1) flags offsets
  in scatter (copy as[0:m]) is as

def partition [n] 'a (p: a -> bool) (as: [n]a): ([]a, []a) =
  (filter p as, filter (\x -> !(p x)) as)

def partition2 [n] 'a (p1: a -> bool) (p2: a -> bool) (as: [n]a): ([]a, []a, []a) =
  (filter p1 as,
   filter (\x -> !(p1 x) && p2 x) as,
   filter (\x -> !(p1 x) && !(p2 x)) as)

-- ---------------------------------------------------------------------
-- Vector forms of jvp/vjp (maintained by the AD work in nabla-interp).
-- `jmp f x dxs` is `jvp f x` applied to each tangent of `dxs`; `mjp f x
-- ybars` is `vjp f x` applied to each output adjoint of `ybars`; the `2`
-- variants also return the primal result `f x`, once.  Written with `map`
-- (the interpreter runs one jvp/vjp per seed).

def jmp 'a 'b [k] (f: a -> b) (x: a) (dxs: [k]a): [k]b =
  map (\dx -> jvp f x dx) dxs
def jmp2 'a 'b [k] (f: a -> b) (x: a) (dxs: [k]a): (b, [k]b) =
  (f x, map (\dx -> jvp f x dx) dxs)
def mjp 'a 'b [k] (f: a -> b) (x: a) (ybars: [k]b): [k]a =
  map (\ybar -> vjp f x ybar) ybars
def mjp2 'a 'b [k] (f: a -> b) (x: a) (ybars: [k]b): (b, [k]a) =
  (f x, map (\ybar -> vjp f x ybar) ybars)
