-- A program in several files: imports through a `lib/github.com/…`
-- package path (which imports a sibling package through `..`), a
-- functor from the imported file applied to `f64` and `f32`, and a module
-- bound to `import "…"`.
-- ==
-- input { [3.0, 4.0] } output { 5.0 [11.0, 7.0] 25.0f32 [112.0, 116.0] }

import "lib/github.com/example/linalg/linalg"

-- A `twice` of this file does not change what the library's functor uses.
def twice (x: f64) : f64 = x + 100.0

module L64 = mk_linalg f64
module L32 = mk_linalg f32
module V64 = Vectors.mk_vector f64

entry main (x: [2]f64) : (f64, [2]f64, f32, [2]f64) =
  (L64.norm x,
   L64.matvec [[1.0, 2.0], [1.0, 1.0]] x,
   L32.V.dot (map f32.f64 x) (map f32.f64 x),
   map twice (L64.quad x))
