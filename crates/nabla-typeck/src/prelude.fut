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
def tail [n] 't (x: [n]t): [n-1]t = x[1:]
def init [n] 't (x: [n]t): [n-1]t = x[0:n-1]
def take [n] 't (i: i64) (x: [n]t): [i]t = x[0:i]
def drop [n] 't (i: i64) (x: [n]t): [n-i]t = x[i:]
-- As in the current Futhark prelude, the split point `n` comes from the
-- context (the result type at the call, usually via a size coercion).
def split [n] [m] 't (xs: [n + m]t): ([n]t, [m]t) = (xs[0:n], xs[n:] :> [m]t)
def indices [n] 't (_: [n]t): *[n]i64 = iota n
-- `rep x` is `replicate n x` with `n` from the context (the type the
-- result must have), as in Futhark's prelude.
def rep 't [n] (x: t): *[n]t = replicate n x
def null [n] 't (_: [n]t): bool = n == 0
-- `manifest` asks Futhark for a row-major copy; here every array is one.
def manifest 't (a: t): *t = copy a

def flatten_4d [n] [m] [l] [k] 't (xs: [n][m][l][k]t): [n * m * l * k]t =
  flatten (flatten_3d xs)
def unflatten_4d [n] [m] [l] [k] 't (xs: [n * m * l * k]t): [n][m][l][k]t =
  map (map unflatten) (unflatten_3d (xs :> [n * m * (l * k)]t))

-- `reduce_by_index` into a 2-D or 3-D destination: an index tuple outside
-- the destination is ignored, as Futhark's prelude documents.
def reduce_by_index_2d 'a [k] [n] [m] (dest: *[n][m]a) (f: a -> a -> a) (ne: a)
                       (is: [k](i64, i64)) (as: [k]a): *[n][m]a =
  let flat = map (\(i, j) -> if i >= 0 && i < n && j >= 0 && j < m then i * m + j else -1) is
  in unflatten (reduce_by_index (flatten dest) f ne flat as)
def reduce_by_index_3d 'a [k] [n] [m] [l] (dest: *[n][m][l]a) (f: a -> a -> a) (ne: a)
                       (is: [k](i64, i64, i64)) (as: [k]a): *[n][m][l]a =
  let flat = map (\(i, j, h) ->
                    if i >= 0 && i < n && j >= 0 && j < m && h >= 0 && h < l
                    then (i * m + j) * l + h else -1) is
  in unflatten_3d (reduce_by_index (flatten_3d dest) f ne flat as)

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

-- Exclusive prefix scan: element `i` of the result combines `ne` and
-- the elements before `i` (`ne` itself at 0). The same requirements on
-- `op` and `ne` as `scan`.
def exscan [n] 'a (op: a -> a -> a) (ne: a) (as: [n]a): *[n]a =
  scan op ne (map (\i -> if i == 0 then ne else as[i - 1]) (iota n))

-- The stream SOACs. Any split of the array into chunks is allowed (the
-- `op` of the reductions must be associative, `f 0 []` the neutral
-- element); here the whole array is one chunk.
def reduce_stream [n] 'a 'b (_op: b -> b -> b) (f: (k: i64) -> [k]a -> b) (as: [n]a): b =
  f n as
def reduce_stream_per [n] 'a 'b (op: b -> b -> b) (f: (k: i64) -> [k]a -> b) (as: [n]a): b =
  reduce_stream op f as
def map_stream [n] 'a 'b (f: (k: i64) -> [k]a -> [k]b) (as: [n]a): *[n]b =
  copy (f n as)
def map_stream_per [n] 'a 'b (f: (k: i64) -> [k]a -> [k]b) (as: [n]a): *[n]b =
  map_stream f as

-- `flatmap f as` applies `f` to each element, giving an array of any
-- length and a value, and returns the lengths (`shape`), a flag array
-- marking the first element of each non-empty segment, the offset of
-- each segment (the exclusive prefix sum of the lengths), the
-- concatenation of the arrays, and the values. The arrays are scattered
-- in place into one buffer, filled first with an element of the first
-- non-empty segment (no element of type `b` exists otherwise).
def flatmap [n] 'a 'b 'c (f: a -> ?[m].([m]b, c)) (as: [n]a)
    : ?[t].([n]i64, [t]bool, [n]i64, [t]b, [n]c) =
  let (shape, vals) = unzip (map (\x -> let (r, c) = f x in (length r, c)) as)
  let offsets = exscan (+) 0 shape
  let total = reduce (+) 0 shape
  let starts = map2 (\o k -> if k > 0 then o else -1) offsets shape
  let flags = spread total false starts (replicate n true)
  let data =
    if total == 0
    then map (\x -> (f x).0[0]) as[0:0]
    else let first = reduce (\i j -> if i < j then i else j) n
                            (map2 (\i k -> if k > 0 then i else n) (iota n) shape)
         let buf = replicate total (f as[first]).0[0]
         in loop buf for i < n do
              let (r, _) = f as[i]
              in scatter buf (map (+ offsets[i]) (indices r)) r
  in (shape, flags, offsets, data :> [total]b, vals)

-- `flatmap'` is `flatmap` for a function giving only an array.
def flatmap' [n] 'a 'b (f: a -> []b) (as: [n]a): ?[t].([n]i64, [t]bool, [n]i64, [t]b) =
  let (shape, flags, offsets, data, _) = flatmap (\x -> (f x, ())) as
  in (shape, flags, offsets, data)

-- ---------------------------------------------------------------------
-- Vector forms of jvp/vjp (maintained by the AD work in nabla-interp).
-- `jmp f x dxs` is `jvp f x` applied to each tangent of `dxs`; `mjp f x
-- ybars` is `vjp f x` applied to each output adjoint of `ybars`; the `2`
-- variants also return the primal result `f x`, once.  Written with `map`:
-- one jvp/vjp per seed, except that static AD (the default) differentiates
-- a `jmp` for all its seeds at once (the primal once), and the optimiser
-- moves an `mjp`'s forward sweep (the primal, writing the checkpoints of
-- its loops) out of the map, so only the return sweep runs per seed.

def jmp 'a 'b [k] (f: a -> b) (x: a) (dxs: [k]a): [k]b =
  map (\dx -> jvp f x dx) dxs
def jmp2 'a 'b [k] (f: a -> b) (x: a) (dxs: [k]a): (b, [k]b) =
  (f x, map (\dx -> jvp f x dx) dxs)
def mjp 'a 'b [k] (f: a -> b) (x: a) (ybars: [k]b): [k]a =
  map (\ybar -> vjp f x ybar) ybars
def mjp2 'a 'b [k] (f: a -> b) (x: a) (ybars: [k]b): (b, [k]a) =
  (f x, map (\ybar -> vjp f x ybar) ybars)

-- ---------------------------------------------------------------------
-- The rest of Futhark's `prelude.fut`.

-- Conversions between `i32` and the floats (as `f32.i32`, `i32.f32`,
-- `f64.i32`, `i32.f64`; a float converts to an integer by truncation).
def r32 (x: i32): f32 = f32.i32 x
def t32 (x: f32): i32 = i32.f32 x
def r64 (x: i32): f64 = f64.i32 x
def t64 (x: f64): i32 = i32.f64 x

-- Boolean negation, as `!x`.
def not (x: bool): bool = !x

-- Identity functions. In Futhark `opaque` hides its argument from the
-- optimiser, `trace` prints it and `break` stops `futhark repl` there;
-- here all three are the identity.
def opaque 't (x: t): t = x
def trace 't (x: t): t = x
def break 't (x: t): t = x

-- ---------------------------------------------------------------------
-- Module types of the built-in numeric modules (`i8` … `f64`), so that
-- generic code can take them as functor arguments:
-- `module mk (R: real) = { … }` applied to `f64`.  They list what the
-- built-in modules offer (checked by the module pass, nabla-modules).

module type from_prim = {
  type t
  val i8: i8 -> t
  val i16: i16 -> t
  val i32: i32 -> t
  val i64: i64 -> t
  val u8: u8 -> t
  val u16: u16 -> t
  val u32: u32 -> t
  val u64: u64 -> t
  val f16: f16 -> t
  val f32: f32 -> t
  val f64: f64 -> t
  val bool: bool -> t
}

module type numeric = {
  include from_prim
  val +: t -> t -> t
  val -: t -> t -> t
  val *: t -> t -> t
  val /: t -> t -> t
  val %: t -> t -> t
  val **: t -> t -> t
  val to_i64: t -> i64
  val ==: t -> t -> bool
  val <: t -> t -> bool
  val >: t -> t -> bool
  val <=: t -> t -> bool
  val >=: t -> t -> bool
  val !=: t -> t -> bool
  val neg: t -> t
  val max: t -> t -> t
  val min: t -> t -> t
  val abs: t -> t
  val sgn: t -> t
  val highest: t
  val lowest: t
  val sum [n]: [n]t -> t
  val product [n]: [n]t -> t
  val maximum [n]: [n]t -> t
  val minimum [n]: [n]t -> t
}

module type integral = {
  include numeric
  val //: t -> t -> t
  val %%: t -> t -> t
  val &: t -> t -> t
  val |: t -> t -> t
  val ^: t -> t -> t
  val not: t -> t
  val <<: t -> t -> t
  val >>: t -> t -> t
  val >>>: t -> t -> t
  val num_bits: i32
  val get_bit: i32 -> t -> i32
  val set_bit: i32 -> t -> i32 -> t
  val popc: t -> i32
  val mul_hi: t -> t -> t
  val mad_hi: t -> t -> t -> t
  val clz: t -> i32
  val ctz: t -> i32
}

module type size = {
  include integral
}

module type real = {
  include numeric
  val recip: t -> t
  val from_fraction: i64 -> i64 -> t
  val to_f64: t -> f64
  val sqrt: t -> t
  val rsqrt: t -> t
  val cbrt: t -> t
  val exp: t -> t
  val sin: t -> t
  val cos: t -> t
  val tan: t -> t
  val asin: t -> t
  val acos: t -> t
  val atan: t -> t
  val sinh: t -> t
  val cosh: t -> t
  val tanh: t -> t
  val asinh: t -> t
  val acosh: t -> t
  val atanh: t -> t
  val atan2: t -> t -> t
  val hypot: t -> t -> t
  val gamma: t -> t
  val lgamma: t -> t
  val erf: t -> t
  val erfc: t -> t
  val lerp: t -> t -> t -> t
  val log: t -> t
  val log2: t -> t
  val log10: t -> t
  val log1p: t -> t
  val ceil: t -> t
  val floor: t -> t
  val trunc: t -> t
  val round: t -> t
  val fma: t -> t -> t -> t
  val mad: t -> t -> t -> t
  val isinf: t -> bool
  val isnan: t -> bool
  val inf: t
  val nan: t
  val pi: t
  val e: t
}

module type float = {
  include real
  type int_t
  val from_bits: int_t -> t
  val to_bits: t -> int_t
  val num_bits: i32
  val get_bit: i32 -> t -> i32
  val set_bit: i32 -> t -> i32 -> t
  val epsilon: t
  val nextafter: t -> t -> t
  val ldexp: t -> i32 -> t
  val copysign: t -> t -> t
}
