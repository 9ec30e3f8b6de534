-- Derivatives of scalar primitives at chosen points and at the edges
-- documented in crates/nabla-interp/src/ad/rules.rs; integers (wrapping),
-- bools (their tangent is false) and conversions (applied to tangents and
-- adjoints, Jensen 2024, §3.4).  Values by hand / Python's math module.

-- ==
-- entry: basics
-- input { 0.5 } output { 1.6275825618903728 1.6275825618903728 0.8775825618903728 1.6487212707001282 }

entry basics (x: f64) =
  ( jvp (\y -> y * y * y + f64.sin y) x 1
  , vjp (\y -> y * y * y + f64.sin y) x 1
  , jvp f64.sin x 1
  , vjp f64.exp x 1 )

-- jvp2 and vjp2 return the primal result too.
-- ==
-- entry: pairs
-- input { 3.0 } output { 9.0 12.0 9.0 6.0 }

entry pairs (x: f64) =
  let (a, b) = jvp2 (\y -> y * y) x 2
  let (c, d) = vjp2 (\y -> y * y) x 1
  in (a, b, c, d)

-- Edges: x ** y at x = 0 (∂/∂y taken as 0) and at y = 0 (∂/∂x = 0);
-- abs at 0 is 0; min/max ties go to the first operand; sqrt at 0 is inf;
-- hypot at the origin 0; floor, round and sgn have derivative 0.
-- ==
-- entry: edges
-- input { } output { 0.0 0.0 0.0 0.6931471805599453 0.0 1.0 0.0 1.0 0.0 f64.inf 0.0 0.0 0.0 0.0 0.0 }

entry edges =
  let (p1, p2) = vjp (\(x, y) -> x ** y) (0f64, 2f64) 1
  let (p3, p4) = vjp (\(x, y) -> x ** y) (2f64, 0f64) 1
  let (m1, m2) = vjp (\(x, y) -> f64.min x y) (1f64, 1f64) 1
  let (n1, n2) = vjp (\(x, y) -> f64.max x y) (1f64, 1f64) 1
  let (h1, h2) = vjp (\(x, y) -> f64.hypot x y) (0f64, 0f64) 1
  in ( p1, p2, p3, p4, jvp f64.abs 0 1, m1, m2, n1, n2, jvp f64.sqrt 0 1, h1, h2
     , vjp f64.floor 2.5 1, jvp f64.round 2.5 1, jvp f64.sgn (-2) 1 )

-- Integers: wrapping arithmetic; Futhark's rule for integer division
-- (∂/∂x = 1 quot y, ∂/∂y = -(x quot y²)).
-- ==
-- entry: ints
-- input { } output { 30 -1294967296 0i64 -1i64 12i64 }

entry ints =
  let (dx, dy) = vjp (\(x: i64, y: i64) -> x / y) (7, 2) 1
  in (jvp (\(x: i32) -> x * x * 3) 5 1, jvp (\(x: i32) -> x * 1000000) 7 3000, dx, dy,
      jvp (\(x: i64) -> x ** 3) 2 1)

-- Bools: tangents are false; comparisons are constants.
-- ==
-- entry: bools
-- input { } output { false false false }

entry bools =
  let (_, t) = jvp2 (\(b: bool) -> !b) true false
  in (t, jvp (\(x: f64) -> x > 1) 2 1, vjp (\(b: bool) -> b && true) true false)

-- Conversions apply to tangents and, backwards, to adjoints.
-- ==
-- entry: convs
-- input { } output { 1i32 2i32 4607182418800017408u64 2.0 2.0f32 }

entry convs =
  ( jvp (\(x: f64) -> i32.f64 x) 2.7 1.9
  , vjp (\(x: i32) -> f64.i32 x) 3 2.5
  , jvp f64.to_bits 1 1
  , vjp (\(x: f64) -> f64.f32 (f32.f64 x) * 2) 1.5 1
  , jvp (\(x: f32) -> x * 2) 1.5 1 )

-- Special functions: d lgamma = digamma, d gamma = gamma·digamma,
-- d erf = 2/√π·e^(-x²); and a second derivative (trigamma).
-- ==
-- entry: special
-- input { 2.0 } output { 0.42278433509846713 0.42278433509846713 0.020666985354092053 0.6449340668482264 }

entry special (x: f64) =
  ( jvp f64.lgamma x 1, vjp f64.gamma x 1, jvp f64.erf x 1
  , jvp (\y -> vjp f64.lgamma y 1) x 1 )

-- Tuples, records, arrays and sum types as parameters and results: the
-- tangent/adjoint has the type of the value.  (A sum type's tag is not
-- differentiated: the adjoint carries the primal argument's constructor,
-- here #some, and its payload; see sums.fut.)
-- ==
-- entry: structured
-- input { [1.0, 2.0, 3.0] } output { [2.0, 4.0, 6.0] 18.0 [6.0, 3.0, 2.0] 6.0 }

type opt = #some f64 | #zz
entry structured (xs: [3]f64) =
  let r = jvp (\(v: [3]f64, s: f64) -> {w = map (* s) v, p = reduce (*) 1 v})
              (xs, 2) (xs, 0)
  let (g, h) = vjp (\(v: [3]f64, o: opt) -> match o case #some a -> a * reduce (*) 1 v case #zz -> 0)
                   (xs, #some 1) 1
  let hs = match h case #some a -> a case #zz -> -1
  in (r.w, r.p, g, hs)
