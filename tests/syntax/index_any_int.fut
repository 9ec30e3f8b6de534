-- Indices and slice bounds of any integer type (Futhark converts them to
-- i64): indexing, slicing, in-place updates and `with`.
-- ==
-- input { [10, 20, 30, 40] 2i32 1u8 } output { 30 20 [20, 30] [10, 20, 99, 40] [10, 7, 30, 40] 40 }
-- input { [10, 20, 30, 40] 5i32 1u8 } error: out of bounds|[Ii]ndex

def main (xs: []i32) (i: i32) (j: u8) : (i32, i32, []i32, []i32, []i32, i32) =
  let a = xs[i]
  let ys = copy xs
  let ys[i] = 99
  let zs = copy xs with [j] = 7
  in (a, xs[j], xs[j:i + 1], ys, zs, xs[i16.i32 i + 1i16])
