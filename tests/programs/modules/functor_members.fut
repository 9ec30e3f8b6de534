-- Members of the prelude's module types reached through functor
-- parameters: integral's `not` (bitwise complement), real's `recip` and
-- `rsqrt`, float's `ldexp`.
-- ==
-- input { 0u8 5i32 4.0 3.0f32 }
-- output { 255u8 -6 0.25 0.5 24.0f32 }

module mk_int (I: integral) = {
  def complement (x: I.t) : I.t = I.not x
}

module mk_real (R: real) = {
  def inv (x: R.t) : R.t = R.recip x
  def inv_sqrt (x: R.t) : R.t = R.rsqrt x
}

module mk_float (F: float) = {
  def times8 (x: F.t) : F.t = F.ldexp x 3
}

module U8 = mk_int u8
module I32 = mk_int i32
module R64 = mk_real f64
module F32 = mk_float f32

entry main (a: u8) (b: i32) (x: f64) (y: f32) : (u8, i32, f64, f64, f32) =
  (U8.complement a, I32.complement b, R64.inv x, R64.inv_sqrt x, F32.times8 y)
