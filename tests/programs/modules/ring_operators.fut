-- A user module type with operators (a ring), implemented by complex numbers
-- (operators defined infix in the module) and by an anonymous structure;
-- a functor uses the operators through the local open `R.(c + x * acc)`.
-- ==
-- input { 1.0 2.0 } output { -3.0 4.0 -1.0 1.0 17 }

module type ring = {
  type t
  val +: t -> t -> t
  val *: t -> t -> t
  val zero: t
  val one: t
}
module complex : ring with t = (f64, f64) = {
  type t = (f64, f64)
  def (a: t) + (b: t) : t = (a.0 f64.+ b.0, a.1 f64.+ b.1)
  def (a: t) * (b: t) : t = (a.0 f64.* b.0 f64.- a.1 f64.* b.1, a.0 f64.* b.1 f64.+ a.1 f64.* b.0)
  def zero : t = (0.0, 0.0)
  def one : t = (1.0, 0.0)
}
module poly (R: ring) = {
  def eval (cs: []R.t) (x: R.t) : R.t = foldr (\c acc -> R.(c + x * acc)) R.zero cs
  def pow (x: R.t) (n: i32) : R.t = loop acc = R.one for _i < n do R.(acc * x)
}
module P = poly complex
module Q = poly { type t = i32  def (+) (a: i32) (b: i32) = a i32.+ b  def (*) (a: i32) (b: i32) = a i32.* b  def zero = 0i32  def one = 1i32 }
entry main (re: f64) (im: f64) : (f64, f64, f64, f64, i32) =
  let (a, b) = P.pow (re, im) 2
  let (c, d) = P.eval [(1.0, 0.0), (0.0, 1.0)] (re, im)
  in (a, b, c, d, Q.eval [1, 2, 3] 2)
