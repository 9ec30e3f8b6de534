-- A small generic library in the style of Futhark packages: a radix sort
-- over any `integral` module (using its `num_bits`, `get_bit` and
-- conversions), a comparison-based insertion sort functor over an ordered
-- type, and a module type for keys with a nested module.
-- ==
-- input { [5u8, 3u8, 9u8, 1u8, 3u8] [3, -2, 7, 0] }
-- output { [1u8, 3u8, 3u8, 5u8, 9u8] [-2, 0, 3, 7] [7, 3, 0, -2] }

module mk_radix_sort (I: integral) = {
  local def step [n] (xs: [n]I.t) (b: i32) : [n]I.t =
    let bits = map (\x -> I.get_bit b x) xs
    let zeros = map (1 -) bits
    let offsets0 = scan (+) 0 zeros
    let total0 = if n == 0 then 0 else offsets0[n - 1]
    let offsets1 = map (+ total0) (scan (+) 0 bits)
    let dest = map3 (\bit o0 o1 -> if bit == 0 then i64.i32 (o0 - 1) else i64.i32 (o1 - 1)) bits offsets0 offsets1
    in scatter (copy xs) dest xs

  def sort [n] (xs: [n]I.t) : [n]I.t =
    loop xs for b < I.num_bits do step xs b
}

module type ordered = {
  type t
  val lte: t -> t -> bool
}

module mk_insertion_sort (O: ordered) = {
  def sort [n] (xs: [n]O.t) : [n]O.t =
    loop xs = copy xs for i in 1..<n do
      let (xs, _) =
        loop (xs, j) = (xs, i) while j > 0 && !(O.lte xs[j - 1] xs[j]) do
          let tmp = xs[j]
          let xs[j] = xs[j - 1]
          let xs[j - 1] = tmp
          in (xs, j - 1)
      in xs
}

module U8Sort = mk_radix_sort u8
module Ascending = mk_insertion_sort { type t = i32  def lte (a: i32) (b: i32) = a <= b }
module Descending = mk_insertion_sort { type t = i32  def lte = (>=) }

entry main (bytes: []u8) (ints: []i32) : ([]u8, []i32, []i32) =
  (U8Sort.sort bytes, Ascending.sort ints, Descending.sort ints)
