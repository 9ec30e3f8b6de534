-- Custom reverse-mode derivatives: `with_vjp f f' x` is `f x`; a vjp
-- calls `f' result adjoint` for the adjoint of x (`with_vjp_tape`: `f`
-- returns (tape, result) and `f'` gets (tape, adjoint)); a jvp ignores
-- the rule and differentiates `f`; free variables of `f` get no adjoint
-- (futhark-internals.md §2). Most rules here differ from the true
-- derivative, so a test fails if the rule is ignored. Values by hand.

-- A straight-through estimator: round forward, identity backward.
def ste (x: f64) = with_vjp (\x -> f64.round x) (\_ g -> g) x

-- d/dx (ste x · x) = 1·x + round x with the rule; jvp: 0·x + round x.
-- ==
-- entry: ste_primal
-- input { 2.6 } output { 3.0 }
-- input { -1.2 } output { -1.0 }

entry ste_primal (x: f64) = ste x

-- ==
-- entry: ste_grad
-- input { 2.6 } output { 5.6 }
-- input { -1.2 } output { -2.2 }

entry ste_grad (x: f64) = vjp (\x -> ste x * x) x 1

-- ==
-- entry: ste_jvp
-- input { 2.6 } output { 3.0 }
-- input { -1.2 } output { -1.0 }

entry ste_jvp (x: f64) = jvp (\x -> ste x * x) x 1

-- A clipped gradient: the adjoint of x² is clipped to [-1, 1] instead of
-- being 2x·ȳ.  d/dx (10 · clip x) = clip(10) = 1; d/dx (0.05 · clip x) =
-- 0.05; the jvp is the true 10 · 2x.
-- ==
-- entry: clipped
-- input { 3.0 } output { 1.0 0.05 60.0 }
-- input { -0.5 } output { 1.0 0.05 -10.0 }

def clip (x: f64) = with_vjp (\x -> x * x) (\_ g -> f64.min 1 (f64.max (-1) g)) x

entry clipped (x: f64) =
  (vjp (\x -> 10 * clip x) x 1, vjp (\x -> 0.05 * clip x) x 1, jvp (\x -> 10 * clip x) x 1)

-- The rule sees the primal result: exp with the rule r·ȳ (the true
-- derivative); and a wrong rule 2r·ȳ, which the gradient must show.
-- ==
-- entry: sees_result
-- input { 0.5 } output { 1.6487212707001282 3.2974425414002564 1.6487212707001282 }

def myexp (x: f64) = with_vjp f64.exp (\r g -> r * g) x
def wrongexp (x: f64) = with_vjp f64.exp (\r g -> 2 * r * g) x

entry sees_result (x: f64) = (vjp myexp x 1, vjp wrongexp x 1, jvp wrongexp x 1)

-- with_vjp_tape: the tape (x + 1) instead of the true 2x for x².
-- d/dx (3 · f x) = 3 (x + 1); jvp: 3 · 2x.
-- ==
-- entry: tape
-- input { 2.0 } output { 4.0 9.0 12.0 }

def sq_tape (x: f64) = with_vjp_tape (\x -> (x + 1, x * x)) (\(t, g) -> t * g) x

entry tape (x: f64) = (sq_tape x, vjp (\x -> 3 * sq_tape x) x 1, jvp (\x -> 3 * sq_tape x) x 1)

-- Tuples: two arguments and two results; the rule scales the two result
-- adjoints by 10 and 100 and ignores the function.  The rule's free
-- variable c and f's free variable c get no adjoint.
-- ==
-- entry: pairs
-- input { 2.0 3.0 } output { 10.0 100.0 20.0 0.0 300.0 0.0 }

def fake (c: f64) (x: f64, y: f64) : (f64, f64) =
  with_vjp (\(x, y) -> (x * y * c, x + y)) (\_ (gp, gs) -> (gp * 10, gs * 100 * c)) (x, y)

entry pairs (x: f64) (y: f64) =
  let (a, b) = vjp (fake 1) (x, y) (1, 1)
  let (gx, gc) = vjp (\(x, c) -> (fake c (x, y)).0 * 2) (x, 2) 1
  let (gy, gc2) = vjp (\(y, c) -> (fake c (x, y)).1) (y, 3) 1
  in (a, b, gx, gc, gy, gc2)

-- A sort whose adjoint uses the permutation (the tape: each element's
-- rank), as Futhark's radix-sort example; the rule is the true derivative
-- here, so vjp and jvp agree.  Weighted sum of the sorted values with
-- weights 1, 2, 3: the gradient is each element's weight by rank.
-- ==
-- entry: sort_grad sort_jvp
-- input { [3.0, 1.0, 2.0] } output { [3.0, 1.0, 2.0] }
-- input { [0.5, -4.0, 7.0] } output { [2.0, 1.0, 3.0] }

def ranks [n] (xs: [n]f64) : [n]i64 =
  map2 (\x i -> i64.sum (map2 (\y j -> if y < x || (y == x && j < i) then 1 else 0) xs (iota n)))
       xs (iota n)

def sort [n] (xs: [n]f64) : [n]f64 =
  with_vjp_tape (\xs -> let r = ranks xs in (r, scatter (replicate n 0) r xs))
                (\(r, g) -> map (\k -> g[k]) r)
                xs

def weighted [n] (xs: [n]f64) = f64.sum (map2 (*) (sort xs) (map (\i -> f64.i64 (i + 1)) (iota n)))

entry sort_grad [n] (xs: [n]f64) = vjp weighted xs 1

entry sort_jvp [n] (xs: [n]f64) : [n]f64 =
  map (\i -> jvp weighted xs (map (\j -> if j == i then 1 else 0) (iota n))) (iota n)

-- ==
-- entry: sort_primal
-- input { [3.0, 1.0, 2.0, 1.0] } output { [1.0, 1.0, 2.0, 3.0] }

entry sort_primal (xs: []f64) = sort xs

-- Inside a map: the gradient of Σ ste(x)·x is x + round x per element.
-- ==
-- entry: in_map
-- input { [0.6, 1.4, -2.7] } output { [1.6, 2.4, -5.7] }

entry in_map (xs: []f64) = vjp (\xs -> f64.sum (map (\x -> ste x * x) xs)) xs 1

-- Inside a loop: three clipped squarings; each step passes the adjoint
-- clipped to [-1, 1] (5 · 1 = 5 is clipped to 1 at the last step, then
-- stays 1); the jvp is the true 8x⁷ · 5.
-- ==
-- entry: in_loop
-- input { 0.6 } output { 1.0 1.1197439999999999 }

entry in_loop (x: f64) =
  let f x = 5 * (loop y = x for _i < 3 do clip y)
  in (vjp f x 1, jvp f x 1)

-- Nested: the inner vjp applies the rule; the outer one differentiates the
-- inner's code, whose primal is f itself (round: derivative 0) and whose
-- rule (the identity) gives 1.  So d/dx (x + round x) = 1, and with ste
-- applied by the outer vjp too, d/dx (ste x · (x + round x)) = (x + round x)
-- + round x · 1.
-- ==
-- entry: nested
-- input { 0.6 } output { 1.0 2.6 1.0 }

entry nested (x: f64) =
  ( vjp (\x -> vjp (\y -> ste y * y) x 1) x 1
  , vjp (\x -> ste x * vjp (\y -> ste y * y) x 1) x 1
  , jvp (\x -> vjp (\y -> ste y * y) x 1) x 1 )

-- Second derivatives through a rule that is the true derivative (exp):
-- the rule's use of the primal result is differentiated, so all mixes of
-- modes give exp x.
-- ==
-- entry: second
-- input { 0.6 } output { 1.8221188003905089 1.8221188003905089 1.8221188003905089 }

entry second (x: f64) =
  (vjp (\x -> vjp myexp x 1) x 1, jvp (\x -> vjp myexp x 1) x 1, vjp (\x -> jvp myexp x 1) x 1)

-- In a while loop (its iterations counted, then run as a for loop in the
-- return sweep) and in both branches of an if: y ↦ 2 · clip y thrice
-- passes the clipped adjoint 1 back each step (the true derivative at 0.3
-- is 2³ · 8 · 0.3⁷ ≈ 0.014); the then-branch is ste (3x) (derivative 3
-- with the rule, 0 truly), the else-branch clip x.
-- ==
-- entry: in_while_and_if
-- input { 0.3 } output { 1.0 3.0 }
-- input { -0.3 } output { 1.0 1.0 }

entry in_while_and_if (x: f64) =
  ( vjp (\x -> let (y, _) = loop (y, k) = (x, 0i32) while k < 3 do (clip y * 2, k + 1) in y) x 1
  , vjp (\x -> if x > 0 then ste (x * 3) else clip x) x 1 )

-- Named functions as f and f', and a with_vjp inside a function that the
-- differentiated function calls twice: the rule 100ȳ + r gives
-- (100 + 1) + 2 · (100 + 8) at x = 1; the jvp is 3x² + 2 · 3(2x)².
-- ==
-- entry: named
-- input { 1.0 } output { 317.0 27.0 }

def cube (x: f64) = x * x * x
def odd_rule (r: f64) (g: f64) = g * 100 + r
def h (x: f64) = with_vjp cube odd_rule x
def twice_h (x: f64) = h x + h (2 * x)

entry named (x: f64) = (vjp twice_h x 1, jvp twice_h x 1)
