-- f64 arithmetic, comparisons, and the f64 module's basic functions.
-- ==
-- entry: arith
-- input { 7.5 2.0 } output { 9.5 5.5 15.0 3.75 1.5 56.25 }
-- input { 1.0 4.0 } output { 5.0 -3.0 4.0 0.25 1.0 1.0 }
-- input { 2.0 0.5 } output { 2.5 1.5 1.0 4.0 0.0 1.4142135623730951 }

entry arith (a: f64) (b: f64) : (f64, f64, f64, f64, f64, f64) =
  (a + b, a - b, a * b, a / b, a % b, a ** b)

-- ==
-- entry: cmp
-- input { 1.5 -2.0 } output { false true true -2.0 1.5 }
-- input { 3.0 3.0 } output { false true false 3.0 3.0 }

entry cmp (a: f64) (b: f64) : (bool, bool, bool, f64, f64) =
  (a < b, a >= b, a != b, f64.min a b, f64.max a b)

-- 0.1 + 0.2 is not 0.3 in double precision.
-- ==
-- entry: inexact
-- input { 0.1 0.2 0.3 } output { false true }

entry inexact (a: f64) (b: f64) (c: f64) : (bool, bool) =
  (a + b == c, f64.abs (a + b - c) < 1e-15)

-- ==
-- entry: basics
-- input { -2.5 } output { 2.5 -1.0 2.5 -3.0 -2.0 -2.0 -2.0 }
-- input { 2.5 } output { 2.5 1.0 -2.5 2.0 3.0 2.0 2.0 }
-- input { 3.5 } output { 3.5 1.0 -3.5 3.0 4.0 4.0 3.0 }
-- input { -2.7 } output { 2.7 -1.0 2.7 -3.0 -2.0 -3.0 -2.0 }
-- input { 0.0 } output { 0.0 0.0 0.0 0.0 0.0 0.0 0.0 }

entry basics (x: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  (f64.abs x, f64.sgn x, f64.neg x, f64.floor x, f64.ceil x, f64.round x, f64.trunc x)

-- ==
-- entry: reds
-- input { [0.5, 0.25, 1.0] } output { 1.75 0.125 1.0 0.25 }
-- input { [1.0, -5.0, 3.5] } output { -0.5 -17.5 3.5 -5.0 }

entry reds (xs: []f64) : (f64, f64, f64, f64) =
  (f64.sum xs, f64.product xs, f64.maximum xs, f64.minimum xs)

-- ==
-- entry: special
-- input { 1.0 } output { false true true false true true 3.141592653589793 2.718281828459045 }

entry special (x: f64) : (bool, bool, bool, bool, bool, bool, f64, f64) =
  ( f64.isnan x
  , f64.isnan f64.nan
  , f64.isinf f64.inf
  , f64.isinf x
  , f64.isinf f64.highest && f64.highest > 0
  , f64.isinf f64.lowest && f64.lowest < 0
  , f64.pi
  , f64.e
  )

-- ==
-- entry: nan_cmp
-- input { 0.0 } output { false false true }

entry nan_cmp (z: f64) : (bool, bool, bool) =
  let n = z / z
  in (n == n, n < 1.0, n != n)
