-- A functor ascribed a functor type must accept every argument the type's
-- parameter allows: here the functor needs `t = i64`, the type allows any
-- `t`.
-- ==
-- error: but module type requires\s+type t = i64

module Op = (\(X: { type t = i64  val x : t }) -> { def y = X.x })
            : (X: { type t  val x : t }) -> { val y : X.t }

def main (x: i32) = x
