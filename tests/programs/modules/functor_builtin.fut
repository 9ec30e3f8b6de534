-- Generic numeric code: functors whose parameters have the prelude's
-- module types (`real`, `integral`, `numeric`, `float`), applied to the
-- built-in modules `f64`, `f32`, `i32` and `i64`.
-- ==
-- input { [1.0, 2.0, 4.5] } output { 2.5 2.5f32 1.5811388300841898 7i64 3 3u64 }

module mk_stats (R: real) = {
  def mean (xs: []R.t) : R.t = R.(sum xs / i64 (length xs))
  def rms (xs: []R.t) : R.t = R.sqrt (R.sum (map (\x -> x R.* x) xs) R./ R.i64 (length xs))
}

module mk_ints (I: integral) = {
  def half_sum (xs: []I.t) : I.t = I.(sum xs // i32 2)
}

module mk_num (N: numeric) = {
  def span (xs: []N.t) : N.t = N.maximum xs N.- N.minimum xs
}

module mk_bits (F: float) = {
  def bits (x: F.t) : F.int_t = F.to_bits x
}

module S64 = mk_stats f64
module S32 = mk_stats f32
module I64 = mk_ints i64
module N32 = mk_num i32
module B64 = mk_bits f64

entry main (xs: []f64) : (f64, f32, f64, i64, i32, u64) =
  (S64.mean xs,
   S32.mean (map f32.f64 xs),
   S64.rms [1.0, 2.0, 1.0, 2.0],
   I64.half_sum [5, 10],
   N32.span [4, 1, 2],
   B64.bits 1.0 >> 60)
