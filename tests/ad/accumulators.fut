-- jvp and vjp through the source language's accumulators (Futhark's
-- `intrinsics.scatter_stream`, `hist_stream` with `+` and with an operator
-- mixing components, `acc_write`):
-- writes into a differentiated destination (the written cells lose the
-- destination's derivative), out-of-bounds writes (ignored), histograms of
-- scalars, rows (`map2 (+)`) and pairs, a loop writing inside a stream
-- nested in a map. Each fK : [6]f64 -> f64 is written out by hand as a
-- polynomial (or, for f2, with sines) in the comments (f6 multiplies complex
-- numbers: an operator that mixes components, run as a loop); the values
-- at x = [0.5, -1.25, 2, 0.75, -0.5, 1.5] (tangent dx = [1, 0.5, -1, 2,
-- 0.25, -0.75]) come from those formulas (f2 by the complex-step method).
-- crates/nabla/tests/static_ad.rs also checks every fK against central
-- finite differences and jvp against vjp at other points.

type~ acc 't = intrinsics.acc t

def put [n] 't (a: *acc ([n]t)) (i: i64) (v: t) : *acc ([n]t) =
  intrinsics.acc_write a i v

-- d = [x0, x4², x2, x5²] (cells 1 and 3 overwritten; the writes at 6 and
-- 7 are out of bounds): f1 = x0 + 2x4² + 3x2 + 4x5².
def f1 (x: [6]f64) : f64 =
  let d =
    intrinsics.scatter_stream (copy x[0:4])
                              (\(a: *acc ([]f64)) (i, v) -> put (put a (2 * i + 1) (v * v)) (i + 6) v)
                              (zip (iota 2) (x[4:6] :> [2]f64))
  in f64.sum (map2 (*) d [1, 2, 3, 4])

-- h0 = x0² + x3² + sin x2 + sin x5, h1 = x1² + x4² + sin x1 + sin x4,
-- h2 = x2² + x5² + sin x0 + sin x3: f2 = h0 h1 + h2.
def f2 (x: [6]f64) : f64 =
  let h =
    intrinsics.hist_stream (replicate 3 0)
                           (+)
                           0
                           (\(a: *acc ([3]f64)) (i, v) ->
                              put (put a (i % 3) (v * v)) (2 - i % 3) (f64.sin v))
                           (zip (iota 6) x)
  in h[0] * h[1] + h[2]

-- Rows m = [[x0, x1], [x2, x3], [x4, x5]] added (twice) into a copy of
-- the first two: h = [[3x0 + 2x4, 3x1 + 2x5], [3x2, 3x3]];
-- f3 = h00 h11 - h01 h10.
def f3 (x: [6]f64) : f64 =
  let m = unflatten (x :> [3 * 2]f64)
  let h =
    intrinsics.hist_stream (copy m[0:2])
                           (map2 (+))
                           [0, 0]
                           (\(a: *acc ([][2]f64)) (i, r) -> put a (i % 2) (map (* 2) r))
                           (zip (iota 3) m)
  in h[0, 0] * h[1, 1] - h[0, 1] * h[1, 0]

-- Pairs (x_i, i x_i) summed per parity of i: s0 = x0 + x2 + x4,
-- s1 = x1 + x3 + x5, t0 = 2x2 + 4x4, t1 = x1 + 3x3 + 5x5;
-- f4 = s0 t1 + s1 t0.
def f4 (x: [6]f64) : f64 =
  let (s, t) =
    unzip (intrinsics.hist_stream (replicate 2 (0, 0))
                                  (\(a, b) (c, d) -> (a + c, b + d))
                                  (0, 0)
                                  (\(a: *acc ([2](f64, f64))) (i, v) -> put a (i % 2) (v, v * f64.i64 i))
                                  (zip (iota 6) x))
  in s[0] * t[1] + s[1] * t[0]

-- For k = 0, 1: a row of four x_k overwritten by a loop inside the
-- stream: [x2 x_k, 2 x3 x_k, x4 x_k, 2 x5 x_k];
-- f5 = 2 (x2 x5 + x3 x4)(x0² + x1²).
def f5 (x: [6]f64) : f64 =
  let rows =
    map (\k ->
           intrinsics.scatter_stream (replicate 4 x[k])
                                     (\(a: *acc ([4]f64)) j ->
                                        loop a for l < 2 do
                                          put a (2 * j + l) (x[2 * j + l + 2] * x[k] * f64.i64 (l + 1)))
                                     (iota 2))
        (iota 2)
  in f64.sum (map (\r -> r[0] * r[3] + r[1] * r[2]) rows)

-- Complex numbers z_i = (x_i, x_{i+3}) multiplied per parity of i (an
-- operator mixing the components: the stream runs as a loop):
-- b0 = z0 z2 = (x0 x2 - x3 x5, x0 x5 + x2 x3), b1 = z1 = (x1, x4);
-- f6 = re b0 + 2 im b0 + re b1 im b1.
def f6 (x: [6]f64) : f64 =
  let b =
    intrinsics.hist_stream (replicate 2 (1, 0))
                           (\(a, b) (c, d) -> (a * c - b * d, a * d + b * c))
                           (1, 0)
                           (\(a: *acc ([2](f64, f64))) i -> put a (i % 2) (x[i], x[i + 3]))
                           (iota 3)
  in b[0].0 + 2 * b[0].1 + b[1].0 * b[1].1

def pick (k: i32) (x: [6]f64) : f64 =
  if k == 1 then f1 x
  else if k == 2 then f2 x
  else if k == 3 then f3 x
  else if k == 4 then f4 x
  else if k == 5 then f5 x
  else f6 x

-- ==
-- entry: primal
-- input { 1 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 16.0 }
-- input { 2 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 8.455516892162908 }
-- input { 3 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 5.625 }
-- input { 4 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 19.0 }
-- input { 5 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 9.515625 }
-- input { 6 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] } output { 5.0 }
entry primal (k: i32) (x: [6]f64) : f64 = pick k x

-- ==
-- entry: grad
-- input { 1 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [1.0, 0.0, 3.0, 0.0, -2.0, 12.0] }
-- input { 2 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [1.2616724039305836, -5.940777325728144, 3.8401622272850746,
--           1.3078236319341372, -0.3328888107230138, 3.0271694406149146] }
-- input { 3 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [6.75, -18.0, 2.25, 1.5, 4.5, -12.0] }
-- input { 4 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [8.5, 4.0, 10.5, 8.0, 12.5, 12.0] }
-- input { 5 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [5.25, -13.125, 5.4375, -1.8125, 2.71875, 7.25] }
-- input { 6 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] }
-- output { [5.0, -0.5, 2.0, 2.5, -1.25, 0.25] }
entry grad (k: i32) (x: [6]f64) : [6]f64 = vjp (pick k) x 1

-- ==
-- entry: tangent
-- input { 1 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { -11.5 }
-- input { 2 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { -5.286830505492228 }
-- input { 3 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { 8.625 }
-- input { 4 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { 10.125 }
-- input { 5 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { -15.1328125 }
-- input { 6 [0.5, -1.25, 2.0, 0.75, -0.5, 1.5] [1.0, 0.5, -1.0, 2.0, 0.25, -0.75] } output { 7.25 }
entry tangent (k: i32) (x: [6]f64) (dx: [6]f64) : f64 = jvp (pick k) x dx

-- Integers are differentiated too (as Futhark does): a histogram of the
-- values at their own positions, added to a copy of them, doubles the
-- diagonal of the Jacobian; where two values fall in one bucket both
-- reach it.
def twice [n] (xs: [n]i32) : [n]i32 =
  intrinsics.hist_stream (copy xs)
                         (+)
                         0
                         (\(a: *acc ([n]i32)) x -> put a (i64.i32 x) x)
                         xs

-- ==
-- entry: jacobian_rows jacobian_columns
-- input { [0, 1, 2] }
-- output { [[2, 0, 0], [0, 2, 0], [0, 0, 2]] }
-- input { [1, 1, 0] }
-- output { [[1, 0, 1], [1, 2, 0], [0, 0, 1]] }
entry jacobian_rows [n] (xs: [n]i32) : [n][n]i32 =
  map (\i -> vjp twice xs (replicate n 0 with [i] = 1)) (iota n)

entry jacobian_columns [n] (xs: [n]i32) : [n][n]i32 =
  transpose (map (\i -> jvp twice xs (replicate n 0 with [i] = 1)) (iota n))
